"""Vocabularies built from a corpus: characters (BERT-Chinese) and trained WordPiece."""

from __future__ import annotations

import pytest

from mini_hf_bert import BertTokenizer
from mini_hf_bert.training.build_vocab import SPECIAL_TOKENS, build_char_vocab, train_wordpiece, write_vocab
from mini_hf_bert.training.pretraining import build_vocabulary
from mini_hf_bert.training.pretraining_data import read_documents

from .test_pretraining_data import PRETRAINING_FIXTURES


def test_wordpiece_merges_follow_the_likelihood_gain_worked_by_hand():
    """hug x10, pug x5, pun x12, bun x4, hugs x5 (N = 113 pieces). By hand, gain =
    c(ab)·ln(c(ab)·N / (c(a)·c(b))): first (##u, ##g) 22.9 beats (p, ##u) 19.4; then
    (##u, ##n) 31.3 beats (h, ##ug) 26.0; then (h, ##ug) 26.0 beats (p, ##un) 19.3."""
    documents = [["hug " * 10 + "pug " * 5 + "pun " * 12 + "bun " * 4 + "hugs " * 5]]
    vocab = train_wordpiece(documents, vocab_size=len(SPECIAL_TOKENS) + 7 + 3, min_frequency=1)
    assert vocab[:5] == list(SPECIAL_TOKENS)
    assert vocab[5:12] == ["##u", "##g", "p", "##n", "h", "##s", "b"]  # characters, most frequent first
    assert vocab[12:] == ["##ug", "##un", "hug"]


def test_wordpiece_on_real_english_spells_everything_and_shortens_it():
    documents = read_documents(f"{PRETRAINING_FIXTURES}/corpus_en.txt")
    small, large = train_wordpiece(documents, 300), train_wordpiece(documents, 900)
    assert len(small) == 300 and len(large) == 900 and len(set(large)) == 900
    text = [s for d in documents for s in d]
    lengths = []
    for vocab in (small, large):
        tokenizer = BertTokenizer(vocab={t: i for i, t in enumerate(vocab)})
        pieces = [p for s in text for p in tokenizer.tokenize(s)]
        assert "[UNK]" not in pieces  # every character of the corpus is in the alphabet
        lengths.append(len(pieces))
    assert lengths[1] < 0.8 * lengths[0]  # a larger vocabulary spells the text in fewer pieces
    tokenizer = BertTokenizer(vocab={t: i for i, t in enumerate(large)})
    assert tokenizer.tokenize("the function") == ["the", "function"]  # the commonest words are whole
    assert len(tokenizer.tokenize("returns")) <= 2


def test_char_vocab_spells_chinese_and_other_words(tmp_path):
    documents = read_documents(f"{PRETRAINING_FIXTURES}/corpus_zh.txt")
    vocab = build_char_vocab(documents)
    assert vocab[:5] == list(SPECIAL_TOKENS) and "的" in vocab and "##９" in vocab
    tokenizer = BertTokenizer(write_vocab(vocab, tmp_path / "vocab.txt"))
    assert tokenizer.tokenize("１９９８年，中国人民") == ["１", "##９", "##９", "##８", "年", "，", "中", "国", "人", "民"]
    assert build_vocabulary(documents)[:len(vocab)] == vocab  # auto: mostly Chinese -> characters
    english = read_documents(f"{PRETRAINING_FIXTURES}/corpus_en.txt")
    assert build_vocabulary(english, vocab_size=500) == train_wordpiece(english, 500)


@pytest.mark.parametrize("call,message", [
    (lambda: train_wordpiece([["a b"]], 3), "vocab_size must be an int above the 5 special tokens"),
    (lambda: train_wordpiece([[" "]], 100), "the corpus holds no text"),
    (lambda: build_char_vocab([], min_count=1), "the corpus holds no text"),
    (lambda: build_char_vocab([["ab"]], max_size=4), "max_size must be an int above the 5 special tokens"),
    (lambda: write_vocab(["a", "a"], "vocab.txt"), "the vocabulary repeats tokens"),
    (lambda: build_vocabulary([["a"]], "bpe"), "build_vocab='bpe': expected one of"),
])
def test_bad_vocabulary_arguments_are_named(call, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match=message):
        call()
