"""Tokenizer behaviour transformers 5.23 has and ours lacked, each compared with it:
``truncation_side="left"`` (it was silently ignored), ``padding_side`` / ``truncation_side``
as constructor arguments, a batch of ``(text, pair)`` tuples and of pre-split pairs,
``pad_token_type_id``, the refusal of a truncation length that is no multiple of
``pad_to_multiple_of``, ``max_length`` with padding but no truncation, the "longer than
the specified maximum" warning, 5.x's ``extra_special_tokens``, and a vocabulary without
``[PAD]`` / ``[MASK]``."""

from __future__ import annotations

import logging

import pytest
import transformers
from hypothesis import given
from hypothesis import strategies as st

from mini_hf_bert import BertTokenizer

from .test_tokenizer_surface import LONG, PROPERTY, _rows_equal, fast_or_none, pair  # noqa: F401 - pair is a fixture


@pytest.fixture
def sided(pair):  # noqa: F811
    """The module's tokenizers, their sides reset after each test."""
    yield pair
    for tokenizer in pair:
        tokenizer.truncation_side = tokenizer.padding_side = "right"


@PROPERTY
@given(first=LONG, second=st.one_of(st.none(), LONG), max_length=st.integers(1, 14), stride=st.integers(0, 6),
       truncation=st.sampled_from([True, "only_first", "only_second"]), overflow=st.booleans(),
       padding_side=st.sampled_from(["right", "left"]))
def test_left_truncation_keeps_the_end_as_transformers(sided, first, second, max_length, stride, truncation,
                                                       overflow, padding_side):
    ours, fast = sided
    for tokenizer in sided:
        tokenizer.truncation_side, tokenizer.padding_side = "left", padding_side
    options = dict(max_length=max_length, stride=stride, truncation=truncation, return_overflowing_tokens=overflow,
                   return_offsets_mapping=True, padding=True)
    expected = fast_or_none(fast, first, second, **options)
    if expected is None:
        with pytest.raises(ValueError):
            ours(first, second, **options)
        return
    _rows_equal(ours(first, second, **options), expected)


def test_left_truncation_example():
    vocab = {t: i for i, t in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b", "c", "d", "e"])}
    ours = BertTokenizer(vocab=vocab, truncation_side="left")
    assert ours.convert_ids_to_tokens(ours("a b c d e", max_length=5, truncation=True)["input_ids"]) == \
        ["[CLS]", "c", "d", "e", "[SEP]"]


def test_sides_are_constructor_arguments_as_transformers(minilm_dir):
    ours = BertTokenizer.from_pretrained(minilm_dir, padding_side="left", truncation_side="left")
    theirs = transformers.AutoTokenizer.from_pretrained(minilm_dir, padding_side="left", truncation_side="left")
    assert (ours.padding_side, ours.truncation_side) == (theirs.padding_side, theirs.truncation_side) == ("left", "left")
    texts = ["a much longer text than the other one here", "short"]
    _rows_equal(ours(texts, padding=True, truncation=True, max_length=6),
                theirs(texts, padding=True, truncation=True, max_length=6))
    with pytest.raises(ValueError, match="truncation_side='middle': expected 'right' or 'left'"):
        BertTokenizer.from_pretrained(minilm_dir, truncation_side="middle")
    assert ours.pad_token_type_id == theirs.pad_token_type_id == 0


def test_a_batch_of_pairs_as_tuples_and_pre_split(pair):  # noqa: F811
    ours, fast = pair
    batch = [("A question?", "Its context, which is longer."), ("Second one", "and its pair")]
    _rows_equal(ours(batch, padding=True), fast(batch, padding=True))
    words = [(["A", "question", "?"], ["Its", "context"]), (["Second"], ["and", "its", "pair"])]
    _rows_equal(ours(words, is_split_into_words=True, padding=True), fast(words, is_split_into_words=True, padding=True))
    single_words = [["two", "texts"], ["not", "a pair"]]  # a word first: each item is one text
    _rows_equal(ours(single_words, is_split_into_words=True, padding=True),
                fast(single_words, is_split_into_words=True, padding=True))


def test_pad_to_multiple_of_and_max_length_as_transformers(pair):  # noqa: F811
    ours, fast = pair
    text = "a b c d e f g h i j k l m n o p"
    for padding in (True, "max_length"):
        with pytest.raises(ValueError, match=r"truncation length \(12\) is not a multiple of pad_to_multiple_of \(8\)"):
            fast(text, max_length=12, pad_to_multiple_of=8, padding=padding, truncation=True)
        with pytest.raises(ValueError, match=r"truncation length \(12\) is not a multiple of pad_to_multiple_of \(8\)"):
            ours(text, max_length=12, pad_to_multiple_of=8, padding=padding, truncation=True)
        # max_length with padding and no truncation is the padding width, not a truncation
        _rows_equal(ours(text, max_length=12, pad_to_multiple_of=8, padding=padding),
                    fast(text, max_length=12, pad_to_multiple_of=8, padding=padding))


def test_a_text_longer_than_the_model_is_warned_about_once(minilm_dir, caplog):
    ours = BertTokenizer.from_pretrained(minilm_dir)
    with caplog.at_level(logging.WARNING, logger="mini_hf_bert"):
        ours("word " * 600)
        ours("word " * 700)
        ours("word " * 600, truncation=True)
    warnings = [r for r in caplog.records if "longer than the specified maximum" in r.getMessage()]
    assert len(warnings) == 1 and "(602 > 512)" in warnings[0].getMessage()


def test_extra_special_tokens_as_transformers_5(minilm_dir, tmp_path):
    ours = BertTokenizer.from_pretrained(minilm_dir, extra_special_tokens=["<ent>", "</ent>"])
    theirs = transformers.AutoTokenizer.from_pretrained(minilm_dir, extra_special_tokens=["<ent>", "</ent>"])
    text = "Paris is <ent>big</ent>."
    assert ours(text)["input_ids"] == theirs(text)["input_ids"]
    assert ours.extra_special_tokens == list(theirs.extra_special_tokens) == ["<ent>", "</ent>"]
    assert ours.decode(ours(text)["input_ids"], skip_special_tokens=True) == \
        theirs.decode(theirs(text)["input_ids"], skip_special_tokens=True)
    theirs.save_pretrained(tmp_path)  # 5.x writes "extra_special_tokens" to tokenizer_config.json
    assert BertTokenizer.from_pretrained(tmp_path)(text)["input_ids"] == theirs(text)["input_ids"]


def test_a_vocabulary_without_pad_and_mask_is_accepted_as_transformers(tmp_path):
    (tmp_path / "vocab.txt").write_text("[UNK]\n[CLS]\n[SEP]\nhello\nworld\n")
    ours = BertTokenizer(str(tmp_path / "vocab.txt"))
    theirs = transformers.BertTokenizer(str(tmp_path / "vocab.txt"))
    assert (ours.pad_token_id, ours.mask_token_id, len(ours)) == (theirs.pad_token_id, theirs.mask_token_id, len(theirs))
    batch = ["hello [MASK]", "hello world world"]
    _rows_equal(ours(batch, padding=True), theirs(batch, padding=True))
    ours.save_pretrained(tmp_path / "saved")
    again = BertTokenizer.from_pretrained(tmp_path / "saved")
    assert again(batch, padding=True)["input_ids"] == ours(batch, padding=True)["input_ids"]


@pytest.mark.parametrize("flags", [dict(lstrip=True), dict(rstrip=True), dict(lstrip=True, rstrip=True), {}])
def test_lstrip_and_rstrip_added_tokens_as_transformers(minilm_dir, tmp_path, flags):
    """The match takes the whitespace beside the token: the same ids, offsets that cover it;
    saved and read back with the flags."""
    ours = BertTokenizer.from_pretrained(minilm_dir)
    theirs = transformers.BertTokenizer.from_pretrained(minilm_dir)
    ours.add_tokens([transformers.AddedToken("[NEW]", special=True, normalized=False, **flags)])
    theirs.add_tokens([transformers.AddedToken("[NEW]", special=True, normalized=False, **flags)])
    for text in ["hello  [NEW]  world", "[NEW] x", "x [NEW]", "a\t[NEW]\nb", "[NEW][NEW]"]:
        _rows_equal(ours(text, return_offsets_mapping=True), theirs(text, return_offsets_mapping=True))
    ours.save_pretrained(tmp_path)
    again = BertTokenizer.from_pretrained(tmp_path)
    assert again("hello  [NEW]  world", return_offsets_mapping=True)["offset_mapping"] == \
        theirs("hello  [NEW]  world", return_offsets_mapping=True)["offset_mapping"]


def test_bos_eos_and_the_id_setters_as_transformers(minilm_dir):
    ours = BertTokenizer.from_pretrained(minilm_dir, bos_token="<BOS>", add_bos_token=True)
    theirs = transformers.BertTokenizer.from_pretrained(minilm_dir, bos_token="<BOS>", add_bos_token=True)
    assert (ours.bos_token, ours.bos_token_id, ours.eos_token, ours.eos_token_id) == \
        (theirs.bos_token, theirs.bos_token_id, theirs.eos_token, theirs.eos_token_id)
    assert ours("hello world")["input_ids"] == theirs("hello world")["input_ids"]  # BERT's template has no BOS slot
    for tokenizer in (ours, theirs):
        tokenizer.sep_token_id = 7592
        tokenizer.extra_special_tokens_ids = [2088]
    assert (ours.sep_token, ours.extra_special_tokens) == (theirs.sep_token, list(theirs.extra_special_tokens))
    assert ours.sep_token == "hello" and ours.extra_special_tokens == ["world"]


def test_padding_side_for_one_call_as_transformers(pair):  # noqa: F811
    ours, theirs = pair
    batch = ["a", "a b c"]
    for side in ("left", "right"):
        _rows_equal(ours(batch, padding=True, padding_side=side), theirs(batch, padding=True, padding_side=side))
    assert ours.padding_side == "right"  # the call did not change the tokenizer
