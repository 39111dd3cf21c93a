"""mini_hf_bert's BertTokenizer against transformers' (5.x: the Rust-backed BertTokenizer and
the pure-Python BertTokenizerLegacy) on the real uncased bert vocabulary shipped with
all-MiniLM-L6-v2: an uncased and a cased configuration, a written corpus, a Chinese-heavy
set, text pairs under every truncation strategy, and hypothesis on random Unicode.
Equality is exact: ids, token types, attention masks, offsets, decoded text."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
import torch
import transformers
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from transformers.models.bert.tokenization_bert_legacy import BertTokenizerLegacy

import mini_hf_bert
from mini_hf_bert import BertTokenizer, TokenizerFileError
from mini_hf_bert.tokenization_bert import (
    BasicTokenizer,
    WordpieceTokenizer,
    load_vocab,
)

from .tokenizer_corpus import CHINESE, CORPUS, FAST_VS_LEGACY, LEGACY_DIFFERS, PAIRS
from ..paths import ROOT


@pytest.fixture(scope="module")
def vocab_file(minilm_dir) -> str:
    return os.path.join(minilm_dir, "vocab.txt")


@pytest.fixture(scope="module", params=["uncased", "cased"])
def pair(request, minilm_dir, vocab_file):
    """(ours, transformers 5 fast, transformers 5 legacy) for one configuration."""
    lower = request.param == "uncased"
    ours = BertTokenizer.from_pretrained(minilm_dir, do_lower_case=lower)
    fast = transformers.BertTokenizer.from_pretrained(minilm_dir, do_lower_case=lower)
    legacy = BertTokenizerLegacy(vocab_file, do_lower_case=lower, model_max_length=512)
    assert ours.do_lower_case == lower and json.loads(fast._tokenizer.normalizer.__getstate__())["lowercase"] == lower
    return ours, fast, legacy


def _same(ours_encoding, their_encoding):
    theirs = {k: their_encoding[k] for k in ours_encoding}
    assert set(ours_encoding) == set(their_encoding.keys()), (set(ours_encoding), set(their_encoding.keys()))
    for key, value in ours_encoding.items():
        if isinstance(value, torch.Tensor):
            assert torch.equal(value, theirs[key]), key
        else:
            assert value == theirs[key], key


# ------------------------------------------------------------------ the corpus


@pytest.mark.parametrize("text", CORPUS + CHINESE)
def test_corpus_equals_transformers(pair, text):
    ours, fast, _ = pair
    _same(ours(text, return_offsets_mapping=True), fast(text, return_offsets_mapping=True))
    assert ours.tokenize(text) == fast.tokenize(text)


@pytest.mark.parametrize("text", CORPUS + CHINESE)
def test_decode_equals_transformers(pair, text):
    ours, fast, _ = pair
    ids = fast(text)["input_ids"]
    for skip in (False, True):
        assert ours.decode(ids, skip_special_tokens=skip) == fast.decode(ids, skip_special_tokens=skip)


def test_chinese_text_splits_into_characters(pair):
    ours, _, _ = pair
    assert ours.basic_tokenizer.tokenize("中文测试") == ["中", "文", "测", "试"]
    assert ours.tokenize("中文") == ["中", "文"]


@pytest.mark.parametrize("strategy", ["longest_first", "only_first", "only_second", True])
@pytest.mark.parametrize("max_length", [6, 9, 12, 16, 40])
@pytest.mark.parametrize("first, second", PAIRS)
def test_pairs_under_each_truncation_strategy(pair, first, second, strategy, max_length):
    ours, fast, _ = pair
    try:
        expected = fast(first, second, truncation=strategy, max_length=max_length, return_offsets_mapping=True)
    except Exception as error:  # the fast tokenizer refuses: the sequence to cut is too short
        assert "Truncation error" in str(error)
        with pytest.raises(ValueError, match="too short to truncate|no text_pair"):
            ours(first, second, truncation=strategy, max_length=max_length)
        return
    _same(ours(first, second, truncation=strategy, max_length=max_length, return_offsets_mapping=True), expected)


@pytest.mark.parametrize("padding", [True, "longest", "max_length"])
def test_batches_padding_and_tensors(pair, padding):
    ours, fast, _ = pair
    texts = [p[0] for p in PAIRS]
    pairs = [p[1] for p in PAIRS]
    kwargs = dict(padding=padding, truncation=True, max_length=24, return_tensors="pt", return_offsets_mapping=True)
    _same(ours(texts, pairs, **kwargs), fast(texts, pairs, **kwargs))
    _same(ours(texts, padding=padding, max_length=24, truncation=True), fast(texts, padding=padding, max_length=24, truncation=True))


def test_single_text_tensors_have_a_batch_axis(pair):
    ours, fast, _ = pair
    ours_out, fast_out = ours("hello there", return_tensors="pt"), fast("hello there", return_tensors="pt")
    _same(ours_out, fast_out)
    assert ours_out["input_ids"].shape == (1, 4)


def test_model_max_length_is_the_default_limit(pair):
    ours, fast, _ = pair
    long_text = "word " * 600
    _same(ours(long_text, truncation=True), fast(long_text, truncation=True))
    assert len(ours(long_text, truncation=True)["input_ids"]) == 512


def test_special_tokens_mask_and_length(pair):
    ours, fast, _ = pair
    kwargs = dict(return_special_tokens_mask=True, return_length=True)
    _same(ours(["a b", "c"], ["d", "e f g"], padding=True, **kwargs), fast(["a b", "c"], ["d", "e f g"], padding=True, **kwargs))


def test_helpers_match(pair):
    """5.x's fast BertTokenizer dropped the sequence helpers; its legacy one keeps them."""
    ours, fast, legacy = pair
    a, b = [7592, 2088], [2129]
    assert ours.build_inputs_with_special_tokens(a, b) == legacy.build_inputs_with_special_tokens(a, b)
    assert ours.build_inputs_with_special_tokens(a) == legacy.build_inputs_with_special_tokens(a)
    assert ours.create_token_type_ids_from_sequences(a, b) == legacy.create_token_type_ids_from_sequences(a, b)
    assert ours.create_token_type_ids_from_sequences(a) == legacy.create_token_type_ids_from_sequences(a)
    assert ours.get_special_tokens_mask(a, b) == legacy.get_special_tokens_mask(a, b)
    assert ours.get_special_tokens_mask(a) == legacy.get_special_tokens_mask(a)
    tokens = ours.tokenize("unaffable hello")
    assert ours.convert_tokens_to_ids(tokens) == fast.convert_tokens_to_ids(tokens)
    assert ours.convert_ids_to_tokens(ours.convert_tokens_to_ids(tokens)) == tokens
    assert ours.convert_tokens_to_string(tokens) == fast.convert_tokens_to_string(tokens)
    assert ours.vocab_size == fast.vocab_size == len(ours) == 30522
    for name in ("unk", "sep", "pad", "cls", "mask"):
        assert getattr(ours, f"{name}_token_id") == getattr(fast, f"{name}_token_id")
    assert sorted(ours.all_special_tokens) == sorted(fast.all_special_tokens)


# ------------------------------------------------------------------ property tests

# Every code point except surrogates (which cannot stand alone in a str a user gives).
UNICODE = st.characters(exclude_categories=["Cs"])
PROPERTY = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@PROPERTY
@given(text=st.text(UNICODE, max_size=40))
def test_random_unicode_equals_transformers(pair, text):
    ours, fast, _ = pair
    _same(ours(text, return_offsets_mapping=True), fast(text, return_offsets_mapping=True))


@PROPERTY
@given(text=st.text(st.sampled_from("abc XYZ.,!é中\u0301\u00a0\t\x00[MASK]ßİ"), max_size=60))
def test_random_mixtures_of_tricky_characters(pair, text):
    ours, fast, _ = pair
    _same(ours(text, return_offsets_mapping=True), fast(text, return_offsets_mapping=True))


@PROPERTY
@given(first=st.text(UNICODE, max_size=30), second=st.text(UNICODE, max_size=30),
       strategy=st.sampled_from(["longest_first", "only_first", "only_second"]), max_length=st.integers(3, 20))
def test_random_pairs_with_truncation(pair, first, second, strategy, max_length):
    ours, fast, _ = pair
    try:
        expected = fast(first, second, truncation=strategy, max_length=max_length, return_offsets_mapping=True)
    except Exception as error:
        assert "Truncation error" in str(error)
        with pytest.raises(ValueError, match="too short to truncate|no text_pair"):
            ours(first, second, truncation=strategy, max_length=max_length)
        return
    _same(ours(first, second, truncation=strategy, max_length=max_length, return_offsets_mapping=True), expected)


@PROPERTY
@given(ids=st.lists(st.integers(0, 30521), max_size=30))
def test_random_ids_decode_alike(pair, ids):
    ours, fast, _ = pair
    for skip in (False, True):
        assert ours.decode(ids, skip_special_tokens=skip) == fast.decode(ids, skip_special_tokens=skip)


# ------------------------------------------------------ where fast and legacy disagree

def _fast_words(fast, text: str) -> list[str]:
    backend = fast.backend_tokenizer
    return [w for w, _ in backend.pre_tokenizer.pre_tokenize_str(backend.normalizer.normalize_str(text))]


@pytest.mark.parametrize("case", sorted(FAST_VS_LEGACY))
def test_documented_fast_vs_legacy_differences(minilm_dir, vocab_file, case):
    casing, level, text = FAST_VS_LEGACY[case]
    lower = casing == "uncased"
    ours = BertTokenizer.from_pretrained(minilm_dir, do_lower_case=lower)
    fast = transformers.BertTokenizer.from_pretrained(minilm_dir, do_lower_case=lower)
    legacy = BertTokenizerLegacy(vocab_file, do_lower_case=lower)
    if level == "tokens":
        ours_out, fast_out, legacy_out = ours.tokenize(text), fast.tokenize(text), legacy.tokenize(text)
    elif level == "words":
        ours_out, fast_out = ours.basic_tokenizer.tokenize(text), _fast_words(fast, text)
        legacy_out = legacy.basic_tokenizer.tokenize(text)
    else:
        ours_out, fast_out, legacy_out = (t(*text, truncation=True, max_length=6)["input_ids"] for t in (ours, fast, legacy))
    assert ours_out == fast_out
    assert ours_out != legacy_out  # the difference is real
    with open(os.path.join(ROOT, "docs", "tokenizer.md"), encoding="utf-8") as f:
        row = next((line for line in f if line.startswith(f"| {case} |")), None)
    assert row is not None, f"docs/tokenizer.md has no row for {case!r}"
    if level == "tokens":  # the row shows what each tokenizer gives, as they give it today
        assert f"`{' '.join(ours_out)}`" in row and f"`{' '.join(legacy_out)}`" in row, (row, ours_out, legacy_out)
        with open(os.path.join(ROOT, "docs", "zh", "tokenizer.md"), encoding="utf-8") as f:
            zh_rows = [line for line in f if line.startswith("| ")]  # its rows name the case in Chinese
        assert any(f"`{' '.join(ours_out)}`" in r and f"`{' '.join(legacy_out)}`" in r for r in zh_rows), case


@pytest.mark.parametrize("text", CORPUS + CHINESE)
def test_corpus_equals_the_legacy_tokenizer_too(pair, text):
    """Outside the documented cases the legacy Python tokenizer agrees as well."""
    ours, _, legacy = pair
    casing, case = LEGACY_DIFFERS.get(text, (None, None))
    if casing == ("uncased" if ours.do_lower_case else "cased"):
        assert case in FAST_VS_LEGACY and ours(text)["input_ids"] != legacy(text)["input_ids"]
    else:
        assert ours(text)["input_ids"] == legacy(text)["input_ids"]


# ------------------------------------------------------------------ the parts


def test_basic_and_wordpiece_tokenizers(vocab_file):
    basic = BasicTokenizer(do_lower_case=True)
    assert basic.tokenize(" \tHeLLo!How  \n Are yoU?  ") == ["hello", "!", "how", "are", "you", "?"]
    assert basic.tokenize("H\u00e9llo") == ["hello"]
    assert BasicTokenizer(do_lower_case=False).tokenize("HäLLo!how") == ["HäLLo", "!", "how"]
    assert BasicTokenizer(do_lower_case=True, strip_accents=False).tokenize("HäLLo") == ["hällo"]
    assert BasicTokenizer(do_lower_case=False, strip_accents=True).tokenize("HäLLo") == ["HaLLo"]
    assert BasicTokenizer(do_lower_case=False, never_split=["[UNK]"]).tokenize("HeLLo [UNK]") == ["HeLLo", "[UNK]"]
    assert BasicTokenizer(tokenize_chinese_chars=False).tokenize("中文") == ["中文"]
    vocab = load_vocab(vocab_file)
    wordpiece = WordpieceTokenizer(vocab, "[UNK]")
    theirs = transformers.models.bert.tokenization_bert_legacy.WordpieceTokenizer(vocab, "[UNK]")
    for text in ("unaffable", "tokenization wordpiece greedy", "x" * 100, "x" * 101, "\u2603\u2603q"):
        assert wordpiece.tokenize(text) == theirs.tokenize(text)
    assert wordpiece.tokenize("x" * 101) == ["[UNK]"]  # longer than max_input_chars_per_word
    assert wordpiece.tokenize("\u2603\u2603q") == ["[UNK]"]  # a word with no match is [UNK] whole
    assert len(wordpiece.tokenize("x" * 100)) > 1


def test_save_and_reload_round_trip(tmp_path, minilm_dir):
    ours = BertTokenizer.from_pretrained(minilm_dir)
    ours.save_pretrained(tmp_path)
    again = BertTokenizer.from_pretrained(tmp_path)
    theirs = transformers.BertTokenizer.from_pretrained(tmp_path)
    for text in CORPUS[:8]:
        assert again(text) == ours(text)
        assert dict(theirs(text)) == dict(ours(text))


# ------------------------------------------------------------------ the forms it loads from


def test_tokenizer_json_only_directory(tmp_path, minilm_dir):
    shutil.copy(os.path.join(minilm_dir, "tokenizer.json"), tmp_path / "tokenizer.json")
    ours = BertTokenizer.from_pretrained(tmp_path)
    assert ours.vocab == load_vocab(os.path.join(minilm_dir, "vocab.txt"))
    assert ours("Héllo")["input_ids"] == [101, 7592, 102]


def test_google_checkpoint_directory_reads_case_from_its_name(tmp_path, vocab_file):
    for name, lower in (("uncased_L-2_H-128_A-2", True), ("cased_L-12_H-768_A-12", False), ("multi_cased_L-12", False)):
        directory = tmp_path / name
        directory.mkdir()
        shutil.copy(vocab_file, directory / "vocab.txt")
        (directory / "bert_config.json").write_text("{}")
        assert BertTokenizer.from_pretrained(directory).do_lower_case is lower


def test_cached_hub_id(tmp_path, monkeypatch, minilm_dir):
    from ..checkpoints.test_hub import write_cache

    files = {n: open(os.path.join(minilm_dir, n), "rb").read() for n in ("vocab.txt", "tokenizer_config.json")}
    write_cache(tmp_path / "cache", "sentence-transformers/all-MiniLM-L6-v2", files)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    ours = BertTokenizer.from_pretrained("sentence-transformers/all-MiniLM-L6-v2")
    assert ours.model_max_length == 512 and ours("hello")["input_ids"] == [101, 7592, 102]
    with pytest.raises(FileNotFoundError, match="not in the local HuggingFace cache"):
        BertTokenizer.from_pretrained("someone/not-cached")


# ------------------------------------------------------------------ bad input


@pytest.mark.parametrize("value", [None, 42, 3.5, b"bytes", ["ok", None], ["ok", 7]])
def test_non_str_input_is_a_type_error(minilm_dir, minilm_tokenizer, value):
    ours = BertTokenizer.from_pretrained(minilm_dir)
    if value is None:  # no text at all: a ValueError, as transformers' (text and text_target both None)
        for tokenizer in (ours, minilm_tokenizer):
            with pytest.raises(ValueError, match="text_target"):
                tokenizer(value)
    else:
        with pytest.raises(TypeError, match=r"text(\[1\])? must be a str"):
            ours(value)
    if not isinstance(value, list):
        with pytest.raises(TypeError, match="text must be a str"):
            ours.tokenize(value)


def test_bad_arguments(minilm_dir):
    ours = BertTokenizer.from_pretrained(minilm_dir)
    with pytest.raises(ValueError, match="padding='sideways'"):
        ours("a", padding="sideways")
    with pytest.raises(ValueError, match="truncation='middle'"):
        ours("a", truncation="middle")
    with pytest.raises(ValueError, match="return_tensors='tf': expected None, 'pt' or 'np'"):
        ours("a", return_tensors="tf")
    with pytest.raises(ValueError, match="rows of one length.*padding=True"):
        ours(["a", "b c d"], return_tensors="pt")
    with pytest.raises(TypeError, match="both be a str or both be a list"):
        ours(["a"], "b")
    with pytest.raises(ValueError, match="text has 2 entries but text_pair has 1"):
        ours(["a", "b"], ["c"])
    with pytest.raises(ValueError, match="only_second.*no text_pair"):
        ours("a b c d e f", truncation="only_second", max_length=4)
    with pytest.raises(IndexError, match="token id 99999 is outside the vocabulary"):
        ours.decode([101, 99999])
    with pytest.raises(TypeError, match="exactly one of vocab_file"):
        BertTokenizer()


def test_missing_vocab_file(tmp_path):
    with pytest.raises(FileNotFoundError, match=f"{tmp_path / 'vocab.txt'}: no such vocabulary file"):
        BertTokenizer(tmp_path / "vocab.txt")
    with pytest.raises(FileNotFoundError, match="no vocab.txt or tokenizer.json in this directory"):
        BertTokenizer.from_pretrained(tmp_path)
    with pytest.raises(FileNotFoundError, match="no such directory"):
        BertTokenizer.from_pretrained(tmp_path / "nope")


@pytest.mark.parametrize("content, message", [
    (b"", "is empty"),
    (b"[PAD]\n\xff\xfe\n", "line 2 is not UTF-8"),
    (b"\x00\x01\x02binary", "contains NUL bytes"),
])
def test_malformed_vocab_file(tmp_path, content, message):
    path = tmp_path / "vocab.txt"
    path.write_bytes(content)
    with pytest.raises(TokenizerFileError, match=f"{path}: {message}"):
        BertTokenizer(path)


def test_vocab_without_special_tokens_gets_them_added_as_transformers(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("hello\nworld\n[UNK]\n")
    ours, theirs = BertTokenizer(path), transformers.BertTokenizer(str(path))
    assert [ours.convert_tokens_to_ids(t) for t in ("[SEP]", "[PAD]", "[CLS]", "[MASK]")] == \
        [theirs.convert_tokens_to_ids(t) for t in ("[SEP]", "[PAD]", "[CLS]", "[MASK]")]
    assert ours(["hello world [MASK]", "hello"], padding=True)["input_ids"] == \
        theirs(["hello world [MASK]", "hello"], padding=True)["input_ids"]


def test_malformed_tokenizer_json(tmp_path):
    (tmp_path / "tokenizer.json").write_text("{not json")
    with pytest.raises(TokenizerFileError, match="tokenizer.json: not valid JSON"):
        BertTokenizer.from_pretrained(tmp_path)
    (tmp_path / "tokenizer.json").write_text(json.dumps({"model": {"type": "BPE", "vocab": {"a": 0}}}))
    with pytest.raises(TokenizerFileError, match="not a WordPiece tokenizer.json"):
        BertTokenizer.from_pretrained(tmp_path)


# ------------------------------------------------------------------ without transformers

HIDE_TRANSFORMERS = """
import importlib.abc, runpy, sys
class Hide(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in ("transformers", "tokenizers", "huggingface_hub"):
            raise ModuleNotFoundError(f"No module named {name!r}")
sys.meta_path.insert(0, Hide())
sys.argv = ["mini_hf_bert"] + sys.argv[1:]
runpy.run_module("mini_hf_bert", run_name="__main__")
"""


@pytest.mark.parametrize("args, code, expected", [
    (["demo"], 0, "Cosine similarity of the mean-pooled last_hidden_state"),
    (["inspect", "MINILM"], 0, "recognised model.safetensors"),
    (["parity"], 2, "error: the parity check needs transformers installed"),
    (["convert", "tests/fixtures/tf/bert_pretraining", "OUT"], 0, "wrote"),
])
def test_commands_run_without_transformers(tmp_path, minilm_dir, args, code, expected):
    script = tmp_path / "hidden.py"
    script.write_text(HIDE_TRANSFORMERS)
    args = [minilm_dir if a == "MINILM" else str(tmp_path / "out") if a == "OUT" else a for a in args]
    result = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == code, result.stderr
    assert expected in result.stdout + result.stderr
    if args == ["demo"]:
        assert "transformers is not installed: the parity table against it is left out" in result.stdout
        assert "Traceback" not in result.stderr


def test_model_and_tokenizer_import_no_transformers():
    code = ("import sys, mini_hf_bert; t = mini_hf_bert.BertTokenizer; "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('transformers', 'tokenizers')]; "
            "assert not bad, bad")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr


def test_package_exports():
    assert mini_hf_bert.BertTokenizer is BertTokenizer
