"""Everyday Chinese sentences with one character masked (tools/data/everyday_zh.tsv), and
how a masked-LM answers them: top-1 and top-5, per category.

    .venv/bin/python tools/everyday_cloze.py                  # the shipped Chinese BERT
    .venv/bin/python tools/everyday_cloze.py runs/zh/phase2   # any checkpoint with a Chinese vocabulary

The sentences were written for this project, none taken from a corpus: daily life, school,
food, weather, geography, science, idioms and numbers, each with an answer a native speaker
would not doubt. They are the test of "does the model answer ordinary sentences", where
held-out news and reviews test the text it was trained on.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

SENTENCES = os.path.join(ROOT, "tools", "data", "everyday_zh.tsv")
MASK = "[MASK]"
TOP_K = 5


@dataclass(frozen=True)
class Cloze:
    category: str
    sentence: str  # with one [MASK]
    answer: str  # one character

    @property
    def filled(self) -> str:
        return self.sentence.replace(MASK, self.answer)


def load_sentences(path: str = SENTENCES) -> list[Cloze]:
    """The items of ``path``: lines ``category<TAB>sentence<TAB>answer``; '#' starts a comment."""
    items = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip() or line.startswith("#"):
                continue
            fields = line.rstrip("\n").split("\t")
            if len(fields) != 3 or fields[1].count(MASK) != 1 or len(fields[2]) != 1:
                raise ValueError(f"{path}:{number}: expected category, a sentence with one {MASK}, and one "
                                 f"answer character, tab-separated; got {line.rstrip()!r}")
            items.append(Cloze(*fields))
    return items


def answers(checkpoint: str, items: list[Cloze], top_k: int = TOP_K) -> list[list[str]]:
    """The model's ``top_k`` characters for each item's [MASK], best first."""
    import torch

    from mini_hf_bert import BertForMaskedLM
    from mini_hf_bert.checkpoints.convert import tokenizer_for

    tokenizer = tokenizer_for(checkpoint)
    model = BertForMaskedLM.from_pretrained(checkpoint).eval()
    found = []
    with torch.inference_mode():
        for item in items:
            encoded = tokenizer(item.sentence, return_tensors="pt")
            position = int((encoded["input_ids"][0] == tokenizer.mask_token_id).nonzero()[0, 0])
            logits = model(**encoded).logits[0, position]  # (V,)
            found.append(tokenizer.convert_ids_to_tokens(logits.topk(top_k).indices.tolist()))
    return found


def main(argv: list[str] | None = None) -> int:
    from mini_hf_bert.checkpoints.bundled import chinese_checkpoint_dir

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkpoint", nargs="?", help="default: the shipped Chinese BERT")
    args = parser.parse_args(argv)
    items = load_sentences()
    guesses = answers(args.checkpoint or chinese_checkpoint_dir(), items)
    by_category: dict[str, list[tuple[bool, bool]]] = {}
    for item, top in zip(items, guesses):
        by_category.setdefault(item.category, []).append((top[0] == item.answer, item.answer in top))
    print(f"| category | items | top-1 | top-{TOP_K} |\n| --- | --- | --- | --- |")
    for category, hits in [*by_category.items(), ("all", [h for v in by_category.values() for h in v])]:
        print(f"| {category} | {len(hits)} | {sum(a for a, _ in hits) / len(hits):.3f} | "
              f"{sum(b for _, b in hits) / len(hits):.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
