"""The count model (the bar a pre-trained BERT must clear) and the one-[MASK] test."""

from __future__ import annotations

import pytest
import torch

from mini_hf_bert import BertConfig, BertForMaskedLM, BertTokenizer
from tools.mask_benchmark import (
    EDGE,
    CountModel,
    MaskedSentence,
    bert_guesser,
    count_model_guesser,
    masked_sentences,
    top_k_accuracy,
)

SENTENCES = [list("北京是中国的首都"), list("东京是日本的首都"), list("中国的首都很大"), list("他的书"), list("他的书"),
             list("我的家")]


def test_the_trigram_comes_first_then_both_bigrams_then_either_then_frequency():
    model = CountModel(SENTENCES)
    assert model.top_k("的", "都", 1) == ["首"]  # 的首都 three times
    # (的, ?, 很): no trigram, and no c follows 的 and precedes 很 (only 都 precedes 很, and 的都
    # was never seen), so "either" ranks c by count(的, c) + count(c, 很): 首 3, 书 2, then 家 1
    # and 都 1 (a tie, broken by the character's order); the commonest character, 的, fills the fifth.
    assert model.top_k("的", "很", 5) == ["首", "书", "家", "都", "的"]
    both = CountModel([list("甲乙丙"), list("甲丁戊"), list("己丁丙"), list("庚丁丙")])
    # (甲, ?, 丙): no trigram 甲?丙 except 甲乙丙 -> 乙; after it, 丁 has both bigrams (甲丁, 丁丙).
    assert both.top_k("甲", "丙", 2) == ["乙", "丁"]
    # past every level, the commonest characters fill the list, none twice
    guesses = model.top_k("猫", "狗", 4)
    assert len(guesses) == len(set(guesses)) == 4 and guesses[0] == "的"


def test_the_sentence_edges_are_neighbours_too():
    model = CountModel([list("我来了"), list("我去了")])
    assert model.top_k(EDGE, "来", 1) == ["我"] and model.top_k("来", EDGE, 1) == ["了"]


def test_seen_says_whether_the_trigram_was_counted():
    model = CountModel(SENTENCES)
    assert model.seen(MaskedSentence(tuple("北京是中国的首都"), 6))  # 的首都 was counted
    assert not model.seen(MaskedSentence(tuple("中国的首府"), 3))  # 首 before 府: never
    assert model.seen(MaskedSentence(tuple("他的家"), 2))  # only the neighbours count: 的 家 [edge], as in 我的家
    assert not model.seen(MaskedSentence(tuple("他的书房"), 2))  # 书 was counted before the edge, not before 房
    assert model.seen(MaskedSentence(tuple("我的家"), 2)) and model.seen(MaskedSentence(tuple("我的家"), 0))  # edges too


def test_masked_sentences_mask_one_chinese_character_and_skip_short_sentences():
    tokenizer = BertTokenizer(vocab={t: i for i, t in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *"中国的首都是北京，。", "2", "##0"])})
    items = masked_sentences(["北京是中国的首都。", "中国。", "2020，北京。"], tokenizer, 10, seed=0)
    assert len(items) == 1  # the others have fewer than 8 tokens
    item = items[0]
    assert item.tokens == tuple("北京是中国的首都。") and item.answer in "北京是中国的首都"
    assert masked_sentences(["北京是中国的首都。"] * 5, tokenizer, 3, seed=1) != [] and \
        len(masked_sentences(["北京是中国的首都。"] * 5, tokenizer, 3, seed=1)) == 3


def test_top_k_accuracy_counts_hits():
    items = [MaskedSentence(tuple("甲乙丙"), 1), MaskedSentence(tuple("甲丁丙"), 1)]
    model = CountModel([list("甲乙丙")] * 3 + [list("甲丁丙")])
    assert top_k_accuracy(count_model_guesser(model, 2), items, k=2) == {"top1": 0.5, "top2": 1.0}
    with pytest.raises(ValueError, match="no masked sentences"):
        top_k_accuracy(count_model_guesser(model), [])


VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *"甲乙丙丁"]


def _fixed_guesses(first: str, second: str) -> tuple[BertForMaskedLM, BertTokenizer]:
    """A masked-LM whose output bias decides alone: ``first`` everywhere, then ``second``."""
    torch.manual_seed(0)
    model = BertForMaskedLM(BertConfig(vocab_size=len(VOCAB), hidden_size=16, num_hidden_layers=1,
                                       num_attention_heads=2, intermediate_size=32)).eval()
    with torch.no_grad():
        model.cls.predictions.bias.zero_()
        model.cls.predictions.bias[VOCAB.index(first)] = 100.0
        model.cls.predictions.bias[VOCAB.index(second)] = 50.0
    return model, BertTokenizer(vocab={t: i for i, t in enumerate(VOCAB)})


def test_bert_guesser_reads_the_logits_at_the_mask():
    model, tokenizer = _fixed_guesses("丁", "乙")
    items = [MaskedSentence(tuple("甲乙丙"), 0), MaskedSentence(tuple("甲乙丙丙丙"), 4)]
    guesses = bert_guesser(model, tokenizer, 2)(items)
    assert guesses == [["丁", "乙"], ["丁", "乙"]]
    assert top_k_accuracy(bert_guesser(model, tokenizer, 2), [MaskedSentence(tuple("甲丁丙"), 1)], k=2)["top1"] == 1.0


def test_masked_character_accuracy_and_unk_rate():
    from tools.mask_benchmark import masked_character_accuracy, unk_rate

    model, tokenizer = _fixed_guesses("甲", "乙")
    sentences = ["甲甲甲甲甲甲甲甲甲甲", "乙乙乙乙乙乙乙乙乙乙", "丙丙丙丙丙丙丙丙丙丙", "短"]
    result = masked_character_accuracy(model, tokenizer, sentences, mask_share=0.2, seed=0, k=2)
    assert result["positions"] == 6  # 2 of 10 in each of the three long sentences; the short one is left out
    assert result["top1"] == pytest.approx(2 / 6) and result["top2"] == pytest.approx(4 / 6)
    assert result["commonest_character_guess"] == pytest.approx(2 / 6)
    assert unk_rate(tokenizer, ["甲乙猫", "丙丁"]) == pytest.approx(1 / 5)
