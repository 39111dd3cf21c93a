"""The teaching tokenizer (tokenization_bert.py: BasicTokenizer then WordpieceTokenizer, in
plain Python) against the fast one BertTokenizer runs (tokenization_bert_fast.py): the same
wordpieces and ids, and offsets that each cover exactly the text their piece came from, by
the plain version's own normalization. On 160 sentences (the tokenizer corpus, its Chinese
set, and standard-library prose) under every setting, and on random Unicode."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mini_hf_bert import BertTokenizer
from tools.benchmark_tokenizer import sentences

from .tokenizer_corpus import FAST_VS_LEGACY, LEGACY_DIFFERS

SENTENCES = 160
TEXTS = sentences(SENTENCES - len(FAST_VS_LEGACY) - len(LEGACY_DIFFERS)) + list(FAST_VS_LEGACY) + list(LEGACY_DIFFERS)
#: Each a way BasicTokenizer can be set: every branch of its algorithm taken and skipped.
SETTINGS = {
    "uncased": dict(do_lower_case=True),
    "cased": dict(do_lower_case=False),
    "cased, accents stripped": dict(do_lower_case=False, strip_accents=True),
    "uncased, accents kept": dict(do_lower_case=True, strip_accents=False),
    "CJK not split": dict(tokenize_chinese_chars=False),
    "never_split": dict(never_split=["[foo]", "Hello,"]),
    "whitespace only": dict(do_basic_tokenize=False),
}
UNICODE = st.characters(exclude_categories=["Cs"])
PROPERTY = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module", params=list(SETTINGS))
def tokenizer(request, minilm_dir) -> BertTokenizer:
    return BertTokenizer(os.path.join(minilm_dir, "vocab.txt"), **SETTINGS[request.param])


def plain_pieces(tokenizer: BertTokenizer, text: str) -> list[str]:
    """The algorithm as tokenization_bert.py writes it."""
    if not tokenizer.do_basic_tokenize:
        return tokenizer.wordpiece_tokenizer.tokenize(text)
    words = tokenizer.basic_tokenizer.tokenize(text)
    return [piece for word in words for piece in tokenizer.wordpiece_tokenizer.tokenize(word)]


def plain_text_of(tokenizer: BertTokenizer, span: str) -> str:
    """What the plain BasicTokenizer makes of a stretch of text, spaces left out."""
    if not tokenizer.do_basic_tokenize:
        return "".join(span.split())
    basic = tokenizer.basic_tokenizer
    return "".join(basic.normalize(char) for char in basic._clean_text(span) if char != " ")


def assert_equal(tokenizer: BertTokenizer, text: str) -> None:
    fast, _ = tokenizer._fast.tokens(text, 0, 0)
    plain = plain_pieces(tokenizer, text)
    assert [piece for piece, _, _, _ in fast] == plain
    assert tokenizer.convert_tokens_to_ids([piece for piece, _, _, _ in fast]) == tokenizer.convert_tokens_to_ids(plain)
    never_split = tokenizer.basic_tokenizer.never_split
    previous_end = 0
    for piece, start, end, _ in fast:
        assert 0 <= start < end <= len(text), (piece, start, end)
        assert start >= previous_end or piece.startswith("##"), (piece, start, previous_end)  # in order
        previous_end = end
        span = text[start:end]
        if piece == tokenizer.wordpiece_tokenizer.unk_token or span in never_split:
            continue
        body = piece[2:] if piece.startswith("##") else piece
        # The span holds the piece's text, and no character more at either end.
        assert body in plain_text_of(tokenizer, span), (piece, span)
        assert body not in plain_text_of(tokenizer, span[1:]) and body not in plain_text_of(tokenizer, span[:-1]), (piece, span)


def test_the_sentences_are_160():
    assert len(TEXTS) == SENTENCES and len(set(TEXTS)) == SENTENCES


@pytest.mark.parametrize("text", TEXTS)
def test_sentences_fast_equals_plain(tokenizer, text):
    assert_equal(tokenizer, text)


@PROPERTY
@given(text=st.text(UNICODE, max_size=40))
def test_random_unicode_fast_equals_plain(tokenizer, text):
    assert_equal(tokenizer, text)


@PROPERTY
@given(text=st.text(st.sampled_from("abc XYZ.,!é≠中\u0301\u00a0\t\x00[foo]Hello,ßİ\u1fed\u0890"), max_size=60))
def test_tricky_characters_fast_equals_plain(tokenizer, text):
    assert_equal(tokenizer, text)
