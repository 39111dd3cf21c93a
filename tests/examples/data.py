"""Tiny data in the layouts transformers' example scripts read from local files, and the
tiny BERT they start from (written by transformers, as a checkpoint on the hub would be).

Every sentence is drawn with a fixed seed from a small word list, so the vocabulary covers
every word and the runs are the same each time. Each task's labels follow a rule the words
carry (a word from the second half of the list, a capitalised name, the answer span), so
that a few training steps move the loss.
"""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

WORDS = ("the a one two cat dog bird fish tree house river hill runs sits eats sees jumps swims "
         "red blue green small big old new near over under quickly slowly today").split()
NAMES = ("alice", "bob", "carol", "dave")
PLACES = ("paris", "rome", "oslo", "lima")
PUNCTUATION = list(".,?")
SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
SEED = 20261207
#: Rows in each training file, and in each validation file.
TRAIN_ROWS, VALIDATION_ROWS = 16, 8


def vocabulary() -> list[str]:
    # "##s" lets WordPiece split a few plural forms, so the word-to-token maps are not all 1:1.
    return SPECIAL + sorted(set(WORDS) | set(NAMES) | set(PLACES) | {"is", "in", "who", "where", "lives"}) + \
        PUNCTUATION + ["##s"]


def _sentence(rng: random.Random, length: int = 6) -> str:
    return " ".join(rng.choice(WORDS) + ("s" if rng.random() < 0.1 else "") for _ in range(length))


def tiny_bert(directory: Path) -> Path:
    """A 2-layer BERT of hidden size 32, saved by transformers' BertForPreTraining
    and BertTokenizer: the starting point every script loads."""
    import torch
    import transformers

    directory.mkdir(parents=True, exist_ok=True)
    vocab_file = directory / "vocab.txt"
    vocab_file.write_text("\n".join(vocabulary()) + "\n", encoding="utf-8")
    # from_pretrained, not BertTokenizer(vocab_file=...): transformers 5.x's constructor ignores
    # vocab_file and builds an empty vocabulary (every word [UNK]).
    tokenizer = transformers.BertTokenizer.from_pretrained(directory)
    config = transformers.BertConfig(vocab_size=len(vocabulary()), hidden_size=32, num_hidden_layers=2,
                                     num_attention_heads=4, intermediate_size=37, max_position_embeddings=64)
    torch.manual_seed(0)
    transformers.BertForPreTraining(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def _write_csv(path: Path, rows: list[dict]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def _split(directory: Path, make, suffix: str, write) -> tuple[Path, Path]:
    rng = random.Random(SEED)
    directory.mkdir(parents=True, exist_ok=True)
    train = write(directory / f"train.{suffix}", [make(rng) for _ in range(TRAIN_ROWS)])
    validation = write(directory / f"validation.{suffix}", [make(rng) for _ in range(VALIDATION_ROWS)])
    return train, validation


def glue_pairs(directory: Path) -> tuple[Path, Path]:
    """MRPC's columns: sentence1, sentence2, label (1 when they share their first word)."""
    def row(rng):
        first, second = _sentence(rng), _sentence(rng)
        if rng.random() < 0.5:
            second = first.split()[0] + " " + second.split(" ", 1)[1]
        return {"sentence1": first, "sentence2": second, "label": int(first.split()[0] == second.split()[0])}

    return _split(directory, row, "csv", _write_csv)


def text_lines(directory: Path) -> tuple[Path, Path]:
    """Plain text, one sentence a line, as run_mlm reads a .txt file."""
    def write(path, lines):
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return path

    return _split(directory, lambda rng: _sentence(rng, rng.randint(5, 12)) + " .", "txt", write)


def _json_lines(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def ner_tags(directory: Path) -> tuple[Path, Path]:
    """CoNLL-style rows: tokens and ner_tags (strings, so the script builds the label list)."""
    def row(rng):
        tokens, tags = _sentence(rng).split(), ["O"] * 6
        where = rng.randrange(5)
        tokens[where] = rng.choice(NAMES)
        tags[where] = "B-PER"
        if rng.random() < 0.5:
            tokens[where + 1], tags[where + 1] = rng.choice(PLACES), "B-LOC"
        return {"tokens": tokens, "ner_tags": tags}

    return _split(directory, row, "json", _json_lines)


def squad(directory: Path) -> tuple[Path, Path]:
    """SQuAD v1.1's fields under a top-level "data" list (run_qa reads field="data")."""
    counter = iter(range(10**6))

    def row(rng):
        name, place = rng.choice(NAMES), rng.choice(PLACES)
        context = f"{_sentence(rng)} . {name} lives in {place} . {_sentence(rng)} ."
        return {"id": f"q{next(counter)}", "title": "tiny", "context": context,
                "question": f"where lives {name} ?", "answers": {"text": [place], "answer_start": [context.index(
                    f"in {place}") + 3]}}

    def write(path, rows):
        path.write_text(json.dumps({"data": rows}), encoding="utf-8")
        return path

    return _split(directory, row, "json", write)


def swag(directory: Path) -> tuple[Path, Path]:
    """SWAG's columns: sent1, sent2, ending0..3 and label (the ending that repeats sent1's last word)."""
    def row(rng):
        context, header = _sentence(rng), _sentence(rng, 2)
        endings = [_sentence(rng, 3) for _ in range(4)]
        label = rng.randrange(4)
        endings[label] = context.split()[-1] + " " + endings[label].split(" ", 1)[1]
        return {"sent1": context, "sent2": header, **{f"ending{i}": e for i, e in enumerate(endings)}, "label": label}

    return _split(directory, row, "csv", _write_csv)
