"""The tokenizer a learner reads (``BertTokenizer``, tokenization_bert.py: BasicTokenizer then
WordpieceTokenizer, in plain Python) against the table-driven ``BertTokenizerFast``
(tokenization_bert_fast.py): the same wordpieces, ids, offsets and word ids, and offsets that
each cover exactly the text their piece came from, by the plain version's own normalization.
On 160 sentences (the tokenizer corpus, its Chinese set, and standard-library prose) under
every setting, on random Unicode, and through every call (pairs, windows, padding). And the
plain one is what runs: a breakpoint in ``WordpieceTokenizer.tokenize`` fires on a call."""

from __future__ import annotations

import os
import sys

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mini_hf_bert import AutoTokenizer, BertTokenizer, BertTokenizerFast
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
def tokenizers(request, minilm_dir) -> tuple[BertTokenizer, BertTokenizerFast]:
    vocab = os.path.join(minilm_dir, "vocab.txt")
    return BertTokenizer(vocab, **SETTINGS[request.param]), BertTokenizerFast(vocab, **SETTINGS[request.param])


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


def assert_equal(tokenizers: tuple[BertTokenizer, BertTokenizerFast], text: str) -> None:
    tokenizer, fast_tokenizer = tokenizers
    fast = fast_tokenizer._ordinary_tokens(text, 0, 0)
    assert tokenizer._ordinary_tokens(text, 0, 0) == fast  # pieces, spans, word ids, word count
    assert tokenizer._normalize(text, 5) == fast_tokenizer._normalize(text, 5)
    assert [tokenizer._word_start(text, i, len(text)) for i in range(len(text))] == \
        [fast_tokenizer._word_start(text, i, len(text)) for i in range(len(text))]
    fast = fast[0]
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
def test_sentences_fast_equals_plain(tokenizers, text):
    assert_equal(tokenizers, text)


@PROPERTY
@given(text=st.text(UNICODE, max_size=40))
def test_random_unicode_fast_equals_plain(tokenizers, text):
    assert_equal(tokenizers, text)


@PROPERTY
@given(text=st.text(st.sampled_from("abc XYZ.,!é≠中\u0301\u00a0\t\x00[foo]Hello,ßİ\u1fed\u0890"), max_size=60))
def test_tricky_characters_fast_equals_plain(tokenizers, text):
    assert_equal(tokenizers, text)


#: Every output a call can ask for, the windows and pairs included.
CALLS = {
    "plain": dict(),
    "pairs, offsets, word ids": dict(text_pair=True, return_offsets_mapping=True),
    "windows": dict(truncation=True, max_length=24, stride=6, return_overflowing_tokens=True,
                    return_offsets_mapping=True, padding=True),
}


@pytest.mark.parametrize("call", list(CALLS))
def test_every_call_gives_the_same_encoding(tokenizers, call):
    tokenizer, fast = tokenizers
    options = dict(CALLS[call])
    if options.pop("text_pair", False):
        options["text_pair"] = TEXTS[1::2][:40]
        texts = TEXTS[::2][:40]
    else:
        texts = TEXTS
    ours, theirs = tokenizer(texts, **options), fast(texts, **options)
    assert dict(ours) == dict(theirs)
    assert [ours.word_ids(i) for i in range(len(ours["input_ids"]))] == [theirs.word_ids(i) for i in range(len(theirs["input_ids"]))]


def _functions_run(call) -> set[str]:
    """The qualified names of the tokenization_bert.py functions a call runs: where a
    debugger's breakpoint there would fire."""
    watched = BertTokenizer.__init__.__code__.co_filename
    ran = set()

    def profile(frame, event, arg):
        if event == "call" and frame.f_code.co_filename == watched:
            ran.add(frame.f_code.co_qualname)

    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
    return ran


def test_a_breakpoint_in_the_classes_a_learner_reads_fires(minilm_dir):
    tokenizer = BertTokenizer.from_pretrained(minilm_dir)
    ran = _functions_run(lambda: tokenizer("Héllo, [MASK]世界!", "unaffable"))
    assert {"BasicTokenizer.tokenize", "BasicTokenizer._run_split_on_punc", "WordpieceTokenizer.tokenize"} <= ran
    fast = BertTokenizerFast.from_pretrained(minilm_dir)
    assert "WordpieceTokenizer.tokenize" not in _functions_run(lambda: fast("Héllo, [MASK]世界!", "unaffable"))


def test_auto_and_pipelines_give_the_fast_one(minilm_dir):
    from mini_hf_bert import pipeline

    assert type(AutoTokenizer.from_pretrained(minilm_dir)) is BertTokenizerFast
    assert type(AutoTokenizer.from_pretrained(minilm_dir, use_fast=False)) is BertTokenizer
    assert type(pipeline("feature-extraction", model=minilm_dir).tokenizer) is BertTokenizerFast
    # Both give offsets and word ids, what callers (transformers' pipelines and collators) check is_fast for.
    assert BertTokenizer.from_pretrained(minilm_dir).is_fast and BertTokenizerFast.from_pretrained(minilm_dir).is_fast


@pytest.mark.parametrize("strategy", ["first", "average", "max"])
def test_word_aggregation_takes_either_tokenizer(minilm_dir, strategy):
    """transformers refuses word aggregation with a slow tokenizer, which has no offsets (its
    test_pt_ignore_subwords_slow_tokenizer_raises, which needs a hub model); ours has them,
    so the pipeline takes it, and the two answer alike. (transformers' own pipeline takes
    either: tests/integrations/test_transformers_tools.py.)"""
    from mini_hf_bert import BertConfig, BertForTokenClassification, pipeline

    torch.manual_seed(0)
    model = BertForTokenClassification(BertConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                                                  intermediate_size=37, vocab_size=30522, num_labels=3)).eval()
    answers = [pipeline("token-classification", model=model, tokenizer=kind.from_pretrained(minilm_dir),
                        aggregation_strategy=strategy, ignore_labels=[])(TEXTS[:20])
               for kind in (BertTokenizer, BertTokenizerFast)]
    assert answers[0] == answers[1] and sum(len(a) for a in answers[0]) > 20
