"""mini_hf_bert's BertTokenizer against transformers 4.57.6's two: BertTokenizerFast (the same
Rust tokenizer 5.x calls BertTokenizer: exact equality) and BertTokenizer (the pure-Python
one: equal outside the cases docs/tokenizer.md documents)."""

from __future__ import annotations

import os

import pytest
import transformers

from mini_hf_bert import BertTokenizer
from mini_hf_bert.checkpoints.bundled import default_checkpoint_dir
from tests.core.tokenizer_corpus import CHINESE, CORPUS, LEGACY_DIFFERS, PAIRS

DIRECTORY = default_checkpoint_dir()


@pytest.fixture(scope="module", params=[True, False], ids=["uncased", "cased"])
def tokenizers(request):
    lower = request.param
    return (
        BertTokenizer.from_pretrained(DIRECTORY, do_lower_case=lower),
        transformers.BertTokenizerFast.from_pretrained(DIRECTORY, do_lower_case=lower),
        transformers.BertTokenizer(os.path.join(DIRECTORY, "vocab.txt"), do_lower_case=lower),
    )


@pytest.mark.parametrize("text", CORPUS + CHINESE)
def test_corpus_equals_4x_fast_and_slow(tokenizers, text):
    ours, fast, slow = tokenizers
    assert dict(ours(text, return_offsets_mapping=True)) == dict(fast(text, return_offsets_mapping=True))
    casing = "uncased" if ours.do_lower_case else "cased"
    if LEGACY_DIFFERS.get(text, (None,))[0] != casing:
        assert ours(text)["input_ids"] == slow(text)["input_ids"]
        assert ours.decode(slow(text)["input_ids"]) == fast.decode(slow(text)["input_ids"])


@pytest.mark.parametrize("first, second", PAIRS)
@pytest.mark.parametrize("strategy", ["longest_first", "only_first", "only_second"])
def test_pairs_equal_4x_fast(tokenizers, first, second, strategy):
    ours, fast, _ = tokenizers
    try:
        expected = fast(first, second, truncation=strategy, max_length=12)
    except Exception as error:
        assert "Truncation error" in str(error) or "too short" in str(error)
        with pytest.raises(ValueError, match="too short to truncate"):
            ours(first, second, truncation=strategy, max_length=12)
        return
    assert dict(ours(first, second, truncation=strategy, max_length=12)) == dict(expected)


def test_sequence_helpers_equal_4x(tokenizers):
    ours, fast, slow = tokenizers
    a, b = [7592, 2088], [2129]
    for reference in (fast, slow):
        assert ours.build_inputs_with_special_tokens(a, b) == reference.build_inputs_with_special_tokens(a, b)
        assert ours.create_token_type_ids_from_sequences(a, b) == reference.create_token_type_ids_from_sequences(a, b)
    # 4.x's fast tokenizer computes this mask only for ids that already hold the special tokens.
    assert ours.get_special_tokens_mask(a, b) == slow.get_special_tokens_mask(a, b)
