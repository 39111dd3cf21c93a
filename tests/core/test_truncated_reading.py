"""Truncation reads only as far as the tokens it keeps (issue 36): the ids, offsets and
word ids stay those of a whole read, and equal transformers' (Rust) tokenizer; a text read
whole is bounded by ``Limits.text_chars``."""

from __future__ import annotations

import logging
import threading

import pytest
import transformers
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mini_hf_bert
from mini_hf_bert import AddedToken, BertTokenizer, Limits
from mini_hf_bert import tokenization_utils_base

PROPERTY = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
#: Words, every kind of boundary (spaces, tabs, newlines, ideographs, punctuation, a control
#: character, a line separator) and special tokens, so that stretches end at each kind.
PIECES = ["hello", "world", "unaffable", "Café", "x", " ", "  ", "\t", "\n", "\r", ",", ".", "!", "[", "]",
          "\x00", "\u2028", "\u3000", "世", "界", "你好", "北京大学", "[MASK]", "[SEP]", " [CLS] ", "Newword", "ab cd"]
TEXT = st.lists(st.sampled_from(PIECES), max_size=120).map("".join)
MAX_LENGTHS = st.sampled_from([1, 2, 3, 4, 7, 16, 33, 128])


def _whole_read(tokenizer: BertTokenizer, text: str, max_length: int, add_special_tokens: bool) -> dict:
    """What the tokenizer gives when it reads the whole text and then cuts it, as before:
    the rows of the same truncation over every token."""
    return tokenizer._encode_windows(tokenizer._tokens_with_offsets(text), None, add_special_tokens,
                                     "longest_first", max_length, 0, False)[0]


@pytest.fixture(scope="module")
def tokenizers(minilm_dir):
    plain = BertTokenizer.from_pretrained(minilm_dir)
    grown = BertTokenizer.from_pretrained(minilm_dir)
    grown.add_tokens(["Newword", AddedToken("<ent>", normalized=False)])
    spaced = BertTokenizer.from_pretrained(minilm_dir)
    spaced.add_tokens(["ab cd"])  # normalized, with a space: it could straddle a cut, so none is made
    chinese = mini_hf_bert.AutoTokenizer.from_pretrained(mini_hf_bert.chinese_checkpoint_dir())
    return {"plain": plain, "grown": grown, "spaced": spaced, "chinese": chinese}


@pytest.fixture()
def short_stretches(monkeypatch):
    """Stretches of a few characters, so that short texts are read in many of them."""
    monkeypatch.setattr(tokenization_utils_base, "FIRST_STRETCH_CHARS", 3)


@PROPERTY
@given(text=TEXT, max_length=MAX_LENGTHS, which=st.sampled_from(["plain", "grown", "spaced", "chinese"]),
       specials=st.booleans())
def test_a_truncated_read_gives_what_a_whole_read_gives(tokenizers, short_stretches, text, max_length, which, specials):
    tokenizer = tokenizers[which]
    logging.disable(logging.WARNING)  # "max_length leaves no room": said on each call here
    try:
        fast = tokenizer(text, truncation=True, max_length=max_length, add_special_tokens=specials,
                         return_offsets_mapping=True)
        whole = _whole_read(tokenizer, text, max_length, specials)
    finally:
        logging.disable(logging.NOTSET)
    assert fast["input_ids"] == whole["input_ids"]
    assert fast["offset_mapping"] == whole["offset_mapping"]
    assert fast.word_ids() == whole["word_ids"]


@PROPERTY
@given(text=TEXT, max_length=st.sampled_from([3, 4, 7, 16, 33, 128]))
def test_a_truncated_read_equals_transformers(tokenizers, minilm_dir, short_stretches, text, max_length):
    theirs = _transformers_tokenizer(minilm_dir)
    ours = tokenizers["plain"](text, truncation=True, max_length=max_length, return_offsets_mapping=True)
    expected = theirs(text, truncation=True, max_length=max_length, return_offsets_mapping=True)
    assert ours["input_ids"] == expected["input_ids"]
    assert ours["offset_mapping"] == [tuple(span) for span in expected["offset_mapping"]]


_THEIRS: dict[str, transformers.PreTrainedTokenizerBase] = {}


def _transformers_tokenizer(directory: str):
    if directory not in _THEIRS:
        _THEIRS[directory] = transformers.BertTokenizer.from_pretrained(directory)
    return _THEIRS[directory]


def test_words_split_into_a_list_are_read_only_as_far_as_needed(tokenizers):
    tokenizer = tokenizers["plain"]
    words = ["hello", "unaffable", "world", "Café"] * 50
    fast = tokenizer(words, is_split_into_words=True, truncation=True, max_length=9)
    whole = tokenizer._encode_windows(tokenizer._word_tokens(words), None, True, "longest_first", 9, 0, False)[0]
    assert fast["input_ids"] == whole["input_ids"] and fast.word_ids() == whole["word_ids"]


@pytest.mark.parametrize("text", ["the quick brown fox jumps over the lazy dog. " * 450_000,  # 20 MB of words
                                  "今天天气很好，我们去公园散步吧。" * 420_000,  # 6.7 M characters of Chinese
                                  "word " * 4_000_000],  # 20 MB on one line
                         ids=["english", "chinese", "one-line"])
def test_a_long_text_cut_to_512_tokens_is_read_no_further_than_they_need(tokenizers, monkeypatch, text):
    """Counted, not timed: the characters handed to the word splitter stay within a few
    stretches of what 512 tokens take, whatever the text's length."""
    tokenizer = tokenizers["chinese" if "天" in text else "plain"]
    read = []
    ordinary = type(tokenizer)._added_and_ordinary_tokens
    monkeypatch.setattr(type(tokenizer), "_added_and_ordinary_tokens",
                        lambda self, part, offset, first_word: (read.append(len(part)), ordinary(self, part, offset, first_word))[1])
    ids = tokenizer(text, truncation=True, max_length=512)["input_ids"]
    assert len(ids) == 512
    # 512 tokens are at most ~4,000 characters of these texts: the first stretch and one more.
    assert sum(read) <= 3 * tokenization_utils_base.FIRST_STRETCH_CHARS + 100, sum(read)


def test_a_text_read_whole_is_bounded_and_the_bound_is_named(minilm_dir):
    tokenizer = BertTokenizer.from_pretrained(minilm_dir, limits=Limits(text_chars=100))
    text = "hello world " * 20  # 240 characters
    for call in (lambda: tokenizer(text), lambda: tokenizer.tokenize(text),
                 lambda: tokenizer(text, truncation=True, max_length=512, return_overflowing_tokens=True),
                 lambda: tokenizer("short", text, truncation=True, max_length=512)):
        with pytest.raises(ValueError, match=r"(text|text_pair): 240 characters, more than the 100 read whole "
                                             r"\(Limits.text_chars\); pass truncation=True"):
            call()
    assert len(tokenizer(text, truncation=True, max_length=8)["input_ids"]) == 8  # read as far as kept: allowed
    assert len(BertTokenizer.from_pretrained(minilm_dir)(text)["input_ids"]) == 42  # the default bound is far above


def test_the_default_text_bound_refuses_what_would_take_gigabytes(minilm_dir):
    tokenizer = BertTokenizer.from_pretrained(minilm_dir)
    text = "x" * (Limits().text_chars + 1)
    with pytest.raises(ValueError, match=rf"text: {len(text)} characters, more than the {Limits().text_chars} read whole"):
        tokenizer(text)


def test_fill_mask_refuses_a_book_without_reading_it(tmp_path):
    model = mini_hf_bert.BertForMaskedLM(mini_hf_bert.BertConfig(vocab_size=21128, hidden_size=32, num_hidden_layers=1,
                                                                 num_attention_heads=2, intermediate_size=37))
    fill = mini_hf_bert.pipeline("fill-mask", model=model,
                                 tokenizer=mini_hf_bert.AutoTokenizer.from_pretrained(mini_hf_bert.chinese_checkpoint_dir()))
    book = "今天天气很[MASK]。" + "我们去公园散步吧。" * 2_000_000  # 18 M characters
    raised: list[BaseException] = []
    thread = threading.Thread(target=lambda: _record(raised, lambda: fill(book)), daemon=True)
    thread.start()
    thread.join(30)
    assert not thread.is_alive(), "fill-mask still reading after 30 s"
    assert isinstance(raised[0], ValueError)
    assert str(raised[0]).startswith("inputs is more than 512 tokens long; the model takes at most 512")


def _record(raised: list, call) -> None:
    try:
        call()
    except BaseException as e:  # noqa: BLE001 - handed back to the test
        raised.append(e)


def test_fill_mask_says_which_wordpiece_stands_for_a_target_not_in_the_vocabulary(tmp_path, caplog):
    model = mini_hf_bert.BertForMaskedLM(mini_hf_bert.BertConfig(vocab_size=21128, hidden_size=32, num_hidden_layers=1,
                                                                 num_attention_heads=2, intermediate_size=37))
    fill = mini_hf_bert.pipeline("fill-mask", model=model,
                                 tokenizer=mini_hf_bert.AutoTokenizer.from_pretrained(mini_hf_bert.chinese_checkpoint_dir()))
    with caplog.at_level(logging.WARNING):
        answers = fill("今天天气很[MASK]。", targets=["好", "unaffable", " "])
    messages = [r.getMessage() for r in caplog.records]
    assert "targets: 'unaffable' is not in the model's vocabulary; scoring its first wordpiece 'u' instead" in messages
    assert "targets: ' ' is not in the model's vocabulary and holds no token; ignoring it" in messages
    assert not any("'好'" in m for m in messages)
    assert {a["token_str"] for a in answers} == {"好", "u"}
