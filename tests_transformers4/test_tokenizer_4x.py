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


#: encode_plus / batch_encode_plus calls as 3.x/4.x tutorials write them.
ENCODE_PLUS_CALLS = [
    dict(max_length=16, pad_to_max_length=True, return_tensors="pt"),
    dict(max_length=16, pad_to_max_length=True, truncation=True),
    dict(pad_to_max_length=True),
    dict(max_length=8, truncation=True, return_offsets_mapping=True, return_special_tokens_mask=True),
    dict(padding="max_length", max_length=20, return_attention_mask=True, return_token_type_ids=True),
    dict(add_special_tokens=False),
]


def _as_4x(options: dict) -> dict:
    """The call 4.57.6 understands: its tokenizers dropped pad_to_max_length (the fast one
    raises TypeError, the Python one ignores it), which transformers 3.4 read as
    padding="max_length" given a max_length, else "longest" (_get_padding_truncation_strategies);
    its padding argument was still False then, so a max_length also turned truncation on."""
    options = dict(options)
    if options.pop("pad_to_max_length", False) and options.get("padding", False) is False:
        options["padding"] = "max_length" if options.get("max_length") is not None else "longest"
        if options.get("max_length") is not None and not options.get("truncation"):
            options["truncation"] = "longest_first"
    return options


def _same(ours, theirs, pair_without_specials: bool = False):
    assert set(ours) == set(theirs), (set(ours), set(theirs))
    for key, value in ours.items():
        if pair_without_specials and key == "token_type_ids":
            # 4.57.6's fast tokenizer types such a pair 0 throughout; 5.x's, and ours, give the
            # second segment 1 (tests/core/test_tokenizer.py holds us to 5.x)
            continue
        other = theirs[key]
        assert (value.tolist() if hasattr(value, "tolist") else value) == \
            (other.tolist() if hasattr(other, "tolist") else other), key


@pytest.mark.parametrize("options", ENCODE_PLUS_CALLS)
def test_encode_plus_equals_4x(tokenizers, options):
    ours, fast, slow = tokenizers
    first, second = PAIRS[0]
    for reference in (fast, slow):
        if "return_offsets_mapping" in options and reference is slow:
            continue  # 4.x's Python tokenizer has no offsets
        _same(ours.encode_plus(first, **options), reference.encode_plus(first, **_as_4x(options)))
        _same(ours.encode_plus(first, second, **options), reference.encode_plus(first, second, **_as_4x(options)),
              options.get("add_special_tokens") is False)


@pytest.mark.parametrize("options", ENCODE_PLUS_CALLS)
def test_batch_encode_plus_equals_4x(tokenizers, options):
    ours, fast, _ = tokenizers
    texts = [first for first, _ in PAIRS]
    _same(ours.batch_encode_plus(texts, **options), fast.batch_encode_plus(texts, **_as_4x(options)))
    _same(ours.batch_encode_plus(list(PAIRS), **options), fast.batch_encode_plus(list(PAIRS), **_as_4x(options)),
          options.get("add_special_tokens") is False)
    words = [text.split() for text in texts]
    _same(ours.batch_encode_plus(words, is_split_into_words=True, **options),
          fast.batch_encode_plus(words, is_split_into_words=True, **_as_4x(options)))


@pytest.mark.parametrize("legacy_format", [None, True, False])
def test_legacy_format_writes_the_files_4x_writes(tmp_path, legacy_format):
    """4.57.6's fast tokenizer: vocab.txt for the legacy format, tokenizer.json for the
    unified one, both by default; and what it wrote reads back as the same tokenizer."""
    ours, theirs = BertTokenizer.from_pretrained(DIRECTORY), transformers.BertTokenizerFast.from_pretrained(DIRECTORY)
    ours.save_pretrained(tmp_path / "ours", legacy_format=legacy_format)
    theirs.save_pretrained(tmp_path / "theirs", legacy_format=legacy_format)
    assert set(os.listdir(tmp_path / "ours")) == set(os.listdir(tmp_path / "theirs"))
    text = "Hello, world! Café 中文 un-affable"
    for directory in ("ours", "theirs"):
        ids = theirs(text)["input_ids"]
        assert BertTokenizer.from_pretrained(tmp_path / directory)(text)["input_ids"] == ids
        assert transformers.BertTokenizerFast.from_pretrained(tmp_path / directory)(text)["input_ids"] == ids


def test_text_target_equals_4x(tokenizers):
    ours, fast, _ = tokenizers
    for call in (dict(text="source text", text_target="target"), dict(text_target=["a b", "c"]),
                 dict(text=["x y z", "w"], text_target=["t", "u v"], padding=True, max_length=4, truncation=True)):
        assert dict(ours(**call)) == dict(fast(**call)), call
