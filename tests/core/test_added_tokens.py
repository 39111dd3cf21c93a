"""add_tokens / add_special_tokens and resize_token_embeddings(len(tokenizer)), equal to
transformers' BertTokenizer (the fast one) and its resize_token_embeddings."""

from __future__ import annotations

import json
import os

import pytest
import torch
import transformers
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mini_hf_bert
from mini_hf_bert import AddedToken, BertTokenizer
from mini_hf_bert.parity.compare import FP32_ATOL, MEAN_RESIZING_ATOL
from mini_hf_bert.tokenization_utils_base import TokenizerFileError

from ..conftest import make_model_pair, small_config_kwargs

NEW = ["Newword", "北京大学", "hello", "ab cd", "[NEW]", "é", "Café"]
SPECIAL = ["<ent>", "[E1]", "[/E1]"]
PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
TEXT = st.lists(st.sampled_from(["Newword", "NEWWORD", "newwordx", "北京大学", "北京", "hello", "ab", "cd", "ab cd",
                                 "[NEW]", "[new]", "é", "café", "CAFÉ", "<ent>", "<ENT>", "[E1]", "[/E1]", "[MASK]",
                                 "x", " ", "\t", ",", "unaffable"]), max_size=12).map("".join)


@pytest.fixture(scope="module", params=["uncased", "cased"])
def grown(request, minilm_dir):
    lower = request.param == "uncased"
    pair = (BertTokenizer.from_pretrained(minilm_dir, do_lower_case=lower),
            transformers.BertTokenizer.from_pretrained(minilm_dir, do_lower_case=lower))
    for tokenizer in pair:
        assert tokenizer.add_tokens(NEW) == len(NEW)
        assert tokenizer.add_special_tokens({"additional_special_tokens": SPECIAL}) == len(SPECIAL)
    return pair


def test_the_vocabulary_grows_alike(grown):
    ours, fast = grown
    assert len(ours) == len(fast) == ours.vocab_size + len(NEW) + len(SPECIAL) - 1  # "hello" is in vocab.txt
    assert ours.get_vocab() == fast.get_vocab()
    assert ours.all_special_tokens == fast.all_special_tokens and ours.all_special_ids == fast.all_special_ids
    assert ours.convert_tokens_to_ids(NEW + SPECIAL) == fast.convert_tokens_to_ids(NEW + SPECIAL)
    ids = list(range(ours.vocab_size - 2, len(ours)))
    assert ours.convert_ids_to_tokens(ids) == fast.convert_ids_to_tokens(ids)
    assert ours.add_tokens("Newword") == fast.add_tokens("Newword") == 0  # already added


@PROPERTY
@given(first=TEXT, second=st.one_of(st.none(), TEXT))
def test_random_texts_with_added_tokens_alike(grown, first, second):
    ours, fast = grown
    a = ours(first, second, return_offsets_mapping=True, return_special_tokens_mask=True)
    b = fast(first, second, return_offsets_mapping=True, return_special_tokens_mask=True)
    assert dict(a) == dict(b)
    assert a.word_ids() == b.word_ids() and a.sequence_ids() == b.sequence_ids()
    assert ours.tokenize(first) == fast.tokenize(first)
    for skip in (False, True):
        assert ours.decode(a["input_ids"], skip_special_tokens=skip) == fast.decode(b["input_ids"], skip_special_tokens=skip)


def test_named_special_tokens_and_special_added_tokens(minilm_dir):
    ours, fast = BertTokenizer.from_pretrained(minilm_dir), transformers.BertTokenizer.from_pretrained(minilm_dir)
    for tokenizer in (ours, fast):
        assert tokenizer.add_special_tokens({"pad_token": "[PAD2]"}) == 1
        assert tokenizer.add_tokens([AddedToken("ab", special=True)] if tokenizer is ours
                                    else [transformers.AddedToken("ab", special=True)]) == 1
    assert ours.pad_token == "[PAD2]" and ours.pad_token_id == fast.pad_token_id == ours.vocab_size
    a, b = ours(["ab abc xab", "x"], padding=True), fast(["ab abc xab", "x"], padding=True)
    assert dict(a) == dict(b)
    assert ours.batch_decode(a["input_ids"], skip_special_tokens=True) == fast.batch_decode(b["input_ids"], skip_special_tokens=True)
    assert ours.all_special_tokens == fast.all_special_tokens


def test_added_tokens_survive_save_and_load_both_ways(grown, tmp_path):
    ours, fast = grown
    texts = ["Newword <ent> x [E1]y [/E1]", "HELLO ab cd 北京大学在北京", "café"]
    expected = fast(texts)["input_ids"]
    ours.save_pretrained(tmp_path / "ours")
    fast.save_pretrained(tmp_path / "theirs")  # tokenizer.json only, in 5.x
    for directory in ("ours", "theirs"):
        loaded = BertTokenizer.from_pretrained(tmp_path / directory, do_lower_case=ours.do_lower_case)
        assert loaded(texts)["input_ids"] == expected, directory
        assert loaded.all_special_tokens == fast.all_special_tokens
    reloaded = transformers.BertTokenizer.from_pretrained(tmp_path / "ours")
    assert reloaded(texts)["input_ids"] == expected and reloaded.all_special_tokens == fast.all_special_tokens


def test_resize_token_embeddings_to_the_grown_tokenizer(minilm_dir):
    """The recipe: add tokens, resize the model to len(tokenizer), encode text using them."""
    ours_tok, fast_tok = BertTokenizer.from_pretrained(minilm_dir), transformers.BertTokenizer.from_pretrained(minilm_dir)
    for tokenizer in (ours_tok, fast_tok):
        tokenizer.add_tokens(["Newword", "北京大学"])
        tokenizer.add_special_tokens({"additional_special_tokens": ["[E1]"]})
    config = small_config_kwargs("h96-3heads-relu") | dict(vocab_size=ours_tok.vocab_size, max_position_embeddings=64)
    torch.manual_seed(0)
    theirs = transformers.BertForMaskedLM(transformers.BertConfig(**config)).eval()
    ours = mini_hf_bert.BertForMaskedLM(mini_hf_bert.BertConfig(**config)).eval()
    ours.load_state_dict(theirs.state_dict(), strict=True)
    old = ours.get_input_embeddings().weight.detach().clone()
    for model, tokenizer in ((ours, ours_tok), (theirs, fast_tok)):
        model.resize_token_embeddings(len(tokenizer))
    a, b = ours.get_input_embeddings().weight, theirs.get_input_embeddings().weight
    assert a.shape == b.shape == (len(ours_tok), config["hidden_size"])
    assert torch.equal(a[: old.shape[0]], old)
    assert torch.allclose(a[old.shape[0]:], b[old.shape[0]:], atol=MEAN_RESIZING_ATOL, rtol=0)
    assert torch.allclose(a[old.shape[0]:], old.mean(dim=0).expand(3, -1), atol=MEAN_RESIZING_ATOL, rtol=0)
    assert ours.cls.predictions.decoder.weight is a and ours.config.vocab_size == len(ours_tok)
    assert torch.equal(ours.cls.predictions.bias, theirs.cls.predictions.bias)
    batch = ours_tok(["a Newword in [E1] 北京大学", "plain text"], padding=True, return_tensors="pt")
    assert torch.equal(batch["input_ids"], fast_tok(["a Newword in [E1] 北京大学", "plain text"], padding=True,
                                                     return_tensors="pt")["input_ids"])
    with torch.no_grad():  # the new rows are two draws near the mean; with theirs, all else must agree
        a[old.shape[0]:] = b[old.shape[0]:]
        logits_a, logits_b = ours(**batch).logits, theirs(**batch).logits
    assert logits_a.shape[-1] == len(ours_tok)
    assert torch.allclose(logits_a, logits_b, atol=FP32_ATOL, rtol=0)


def test_resize_without_mean_resizing_draws_fresh_rows(minilm_dir):
    ours, _ = make_model_pair(small_config_kwargs("h96-3heads-relu"), "eager")
    old = ours.get_input_embeddings().weight.detach().clone()
    new = ours.resize_token_embeddings(old.shape[0] + 4, mean_resizing=False).weight
    assert (new[old.shape[0]:] - old.mean(dim=0)).abs().max() > 10 * MEAN_RESIZING_ATOL


@pytest.mark.parametrize("call,error,message", [
    (lambda t: t.add_tokens(""), ValueError, r"new_tokens\[0\]: an added token must hold a non-space character"),
    (lambda t: t.add_tokens([" "]), ValueError, "must hold a non-space character"),
    (lambda t: t.add_tokens([5]), TypeError, r"new_tokens\[0\] must be a str or an AddedToken, got int"),
    (lambda t: t.add_tokens([transformers.AddedToken("x", single_word=True)]), ValueError, r"single_word=True\) is not supported"),
    (lambda t: t.add_special_tokens({"foo_token": "x"}), ValueError, r"unknown keys \['foo_token'\]"),
    (lambda t: t.add_special_tokens(["x"]), TypeError, "special_tokens_dict must be a dict"),
    (lambda t: t.add_special_tokens({"additional_special_tokens": "x"}), TypeError, "additional_special_tokens must be a list"),
])
def test_misuse_is_a_clear_error(minilm_dir, call, error, message):
    with pytest.raises(error, match=message):
        call(BertTokenizer.from_pretrained(minilm_dir))


@pytest.mark.parametrize("decoder,extra,message", [
    ({"30600": {"content": "<gap>"}}, None, "added token '<gap>' has id 30600, but it would get 30522"),
    ({"30522": {"content": ""}}, None, "must be an object with a non-empty"),
    ({"x": {"content": "a"}}, None, "added token 'a' has no valid id"),
    ({"30522": {"content": "a", "special": "yes"}}, None, "its flags must be true or false"),
    ({"30522": {"content": "a", "single_word": True}}, None, "uses single_word"),
    ([1, 2], None, "added_tokens_decoder must be an object"),
    (None, ["<nowhere>"], "extra special token '<nowhere>' is neither in the vocabulary nor added"),
    (None, "x", "extra_special_tokens must be a list of strings"),
])
def test_bad_saved_added_tokens_are_named(minilm_dir, tmp_path, decoder, extra, message):
    BertTokenizer.from_pretrained(minilm_dir).save_pretrained(tmp_path)
    path = tmp_path / "tokenizer_config.json"
    config = json.loads(path.read_text())
    if decoder is not None:
        config["added_tokens_decoder"] = decoder
    if extra is not None:
        config["additional_special_tokens"] = extra
    path.write_text(json.dumps(config))
    with pytest.raises(TokenizerFileError, match=message) as raised:
        BertTokenizer.from_pretrained(tmp_path)
    assert os.fspath(path) in str(raised.value)
