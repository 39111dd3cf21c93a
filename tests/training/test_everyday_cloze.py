"""tools/data/everyday_zh.tsv, the everyday sentences the Chinese BERT is asked to complete:
well formed, spelled in the model's vocabulary, covering every category, and taken from no
corpus the model reads."""

from __future__ import annotations

import collections
import re

import pytest

from mini_hf_bert.checkpoints.bundled import chinese_checkpoint_dir
from mini_hf_bert.checkpoints.convert import tokenizer_for
from tools.everyday_cloze import MASK, load_sentences

CATEGORIES = ("daily life", "school", "food", "weather", "geography", "science", "idioms", "numbers")
MIN_ITEMS, MIN_PER_CATEGORY = 150, 10
#: The categories a student's own sentences are richest in, and where the model failed them
#: most: at least this many items each.
MIN_IN = {"idioms": 20, "food": 20, "daily life": 20}
#: A run of this many characters shared with the corpus would mean the sentence was copied
#: (an ordinary phrase such as 一年有十二个月 is shorter).
COPIED_CHARACTERS = 12


@pytest.fixture(scope="module")
def items():
    return load_sentences()


def test_every_category_is_covered(items):
    counts = collections.Counter(item.category for item in items)
    assert len(items) >= MIN_ITEMS and set(counts) == set(CATEGORIES), counts
    assert min(counts.values()) >= MIN_PER_CATEGORY, counts
    assert all(counts[category] >= least for category, least in MIN_IN.items()), counts
    assert len({item.sentence for item in items}) == len(items)  # no sentence twice


def test_every_character_is_in_the_chinese_vocabulary(items):
    tokenizer = tokenizer_for(chinese_checkpoint_dir())
    for item in items:
        tokens = tokenizer.tokenize(item.sentence)
        assert tokens.count(MASK) == 1 and tokenizer.unk_token not in tokens, (item, tokens)
        assert tokenizer.convert_tokens_to_ids(item.answer) != tokenizer.unk_token_id, item


def test_no_sentence_is_taken_from_the_corpus(items):
    from mini_hf_bert.training.pretraining_data import fixed_split

    train, held_out = fixed_split("chinese")
    text = "\n".join("".join(sentence) for document in train + held_out for sentence in document)
    for item in items:
        words = re.sub(r"[，。！？：、“”]", "", item.filled)
        windows = {words[i:i + COPIED_CHARACTERS] for i in range(max(1, len(words) - COPIED_CHARACTERS + 1))}
        copied = [w for w in windows if len(w) == COPIED_CHARACTERS and w in text]
        assert copied == [], (item, copied)


@pytest.mark.parametrize("line, problem", [
    ("food\t没有遮盖的句子。\t饭", "one [MASK]"),
    ("food\t两个[MASK][MASK]。\t饭", "one [MASK]"),
    ("food\t吃[MASK]。\t米饭", "one answer character"),
    ("food\t吃[MASK]。", "tab-separated"),
])
def test_a_bad_line_names_the_file_and_line(tmp_path, line, problem):
    path = tmp_path / "bad.tsv"
    path.write_text("# comment\n" + line + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(f"{path}:2: expected") + ".*" + re.escape(problem)):
        load_sentences(str(path))
