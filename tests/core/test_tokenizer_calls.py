"""Tokenizer calls that tutorials and transformers' tools make, against transformers 5.x:
``text_target`` (DataCollatorForSeq2Seq's recipes), ``save_pretrained(legacy_format=...)``
and the ``tokenizer.json`` it writes (read back by the tokenizers library itself), and chat
templates. 4.57.6's file sets per ``legacy_format`` are in tests_transformers4."""

from __future__ import annotations

import json
import os

import pytest
import tokenizers
import torch
import transformers

from mini_hf_bert import BertTokenizer
from tools.benchmark_tokenizer import sentences

from .tokenizer_corpus import FAST_VS_LEGACY, LEGACY_DIFFERS

TARGET_CALLS = [
    dict(text="a long source text here", text_target="short summary"),
    dict(text_target=["x y", "z"]),
    dict(text=["a b c", "d"], text_target=["x y", "z w v"], padding=True, return_tensors="pt"),
    dict(text="q", text_pair="c", text_target="t", text_pair_target="u", max_length=4, truncation=True),
    dict(text=["one", "two three"], text_target=["uno", "dos tres"], max_length=3, truncation=True, padding="max_length"),
]


def _plain(value):
    return value.tolist() if isinstance(value, torch.Tensor) else value


@pytest.mark.parametrize("call", TARGET_CALLS, ids=range(len(TARGET_CALLS)))
def test_text_target_as_transformers(minilm_dir, minilm_tokenizer, call):
    ours = BertTokenizer.from_pretrained(minilm_dir)(**call)
    theirs = minilm_tokenizer(**call)
    assert set(ours) == set(theirs)
    for key in theirs:
        assert _plain(ours[key]) == _plain(theirs[key]), key


def test_text_target_feeds_transformers_seq2seq_collator(minilm_dir, minilm_tokenizer):
    batches = []
    for tokenizer in (BertTokenizer.from_pretrained(minilm_dir), minilm_tokenizer):
        features = [tokenizer("source one is long", text_target="t one"), tokenizer("s two", text_target="target two longer")]
        batches.append(transformers.DataCollatorForSeq2Seq(tokenizer, padding=True)(features))
    ours, theirs = batches
    assert set(ours) == set(theirs) and all(torch.equal(ours[k], theirs[k]) for k in theirs)
    assert (ours["labels"] == -100).any()  # the shorter labels padded with -100, not the pad id


def test_no_text_at_all_is_a_value_error(minilm_dir):
    with pytest.raises(ValueError, match="needs text, or text_target"):
        BertTokenizer.from_pretrained(minilm_dir)(text_pair="b")


@pytest.mark.parametrize("legacy_format,files", [
    (None, {"vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"}),
    (True, {"vocab.txt", "tokenizer_config.json", "special_tokens_map.json"}),
    (False, {"tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"}),
])
def test_legacy_format_chooses_the_files(minilm_dir, tmp_path, legacy_format, files):
    tokenizer = BertTokenizer.from_pretrained(minilm_dir)
    written = tokenizer.save_pretrained(tmp_path, legacy_format=legacy_format)
    assert set(os.listdir(tmp_path)) == files == {os.path.basename(p) for p in written}
    again = BertTokenizer.from_pretrained(tmp_path)
    assert again("Hello, world! 中文")["input_ids"] == tokenizer("Hello, world! 中文")["input_ids"]
    with pytest.raises(ValueError, match="legacy_format must be None, True or False"):
        tokenizer.save_pretrained(tmp_path, legacy_format="yes")


@pytest.mark.parametrize("settings", [{}, {"do_lower_case": False}, {"strip_accents": False},
                                      {"tokenize_chinese_chars": False}])
def test_written_tokenizer_json_is_read_alike_by_the_tokenizers_library(minilm_dir, tmp_path, settings):
    """The tokenizer.json written here, read by HuggingFace's tokenizers (Rust) and by
    transformers, encodes and decodes as this tokenizer does: added tokens included."""
    ours = BertTokenizer.from_pretrained(minilm_dir, **settings)
    ours.add_tokens(["hello_world", "<new>"])
    ours.add_special_tokens({"additional_special_tokens": ["<sp>"]})
    ours.save_pretrained(tmp_path, legacy_format=False)
    rust = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    theirs = transformers.BertTokenizer.from_pretrained(tmp_path)
    texts = sentences(40) + list(FAST_VS_LEGACY) + list(LEGACY_DIFFERS) + ["hello_world <new> x<sp>y Café un-affable", "  "]
    for text in texts:
        expected = ours(text, "pair text")["input_ids"]
        assert rust.encode(text, "pair text").ids == expected, text
        assert theirs(text, "pair text")["input_ids"] == expected, text
        assert theirs.decode(expected) == ours.decode(expected), text


def test_chat_templates_as_transformers(minilm_dir, minilm_tokenizer, tmp_path):
    ours = BertTokenizer.from_pretrained(minilm_dir)
    conversation = [{"role": "user", "content": "Hello there"}, {"role": "assistant", "content": "Hi!"}]
    for tokenizer in (ours, minilm_tokenizer):  # BERT has no template: transformers' ValueError
        with pytest.raises(ValueError, match="tokenizer.chat_template is not set"):
            tokenizer.apply_chat_template(conversation)
    template = ("{% for m in messages %}{{ cls_token }}{{ m.role }}: {{ m.content }}{{ sep_token }}{% endfor %}"
                "{% if add_generation_prompt %}assistant:{% endif %}")
    for options in ({"tokenize": False}, {}, {"return_dict": False},
                    {"add_generation_prompt": True, "return_tensors": "pt", "padding": True}):
        a = ours.apply_chat_template(conversation, chat_template=template, **options)
        b = minilm_tokenizer.apply_chat_template(conversation, chat_template=template, **options)
        if isinstance(b, (str, list)):
            assert a == b
        else:
            assert {k: _plain(v) for k, v in a.items()} == {k: _plain(v) for k, v in b.items()}
    ours.chat_template = template
    for save_jinja_files in (True, False):
        directory = tmp_path / str(save_jinja_files)
        ours.save_pretrained(directory, save_jinja_files=save_jinja_files)
        assert os.path.isfile(directory / "chat_template.jinja") == save_jinja_files
        assert ("chat_template" in json.loads((directory / "tokenizer_config.json").read_text())) != save_jinja_files
        assert transformers.BertTokenizer.from_pretrained(directory).chat_template == template
        assert BertTokenizer.from_pretrained(directory).chat_template == template


def test_chat_template_misuse(minilm_dir, tmp_path):
    tokenizer = BertTokenizer.from_pretrained(minilm_dir)
    template = "{% for m in messages %}{{ m.content }}{% endfor %}"
    with pytest.raises(ValueError, match="conversation is empty"):
        tokenizer.apply_chat_template([], chat_template=template)
    with pytest.raises(TypeError, match="conversation must be a list of messages"):
        tokenizer.apply_chat_template("hello", chat_template=template)
    with pytest.raises(TypeError, match="chat_template must be a str"):
        tokenizer.apply_chat_template([{"role": "user", "content": "x"}], chat_template=["x"])
    with pytest.raises(ValueError, match="the chat template failed on this conversation: stop here"):
        tokenizer.apply_chat_template([{"role": "user", "content": "x"}], chat_template="{{ raise_exception('stop here') }}")
    with pytest.raises(ValueError, match="access to attribute '__class__'"):  # the sandbox holds
        tokenizer.apply_chat_template([{"role": "user", "content": "x"}], chat_template="{{ ''.__class__.__mro__ }}")
    with pytest.raises(TypeError, match="unexpected keyword argument 'paddin'"):
        tokenizer.apply_chat_template([{"role": "user", "content": "x"}], chat_template=template, paddin=True)
    tokenizer.save_pretrained(tmp_path)
    config = json.loads((tmp_path / "tokenizer_config.json").read_text())
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({**config, "chat_template": 42}))
    with pytest.raises(ValueError, match="tokenizer_config.json: chat_template must be a string"):
        BertTokenizer.from_pretrained(tmp_path)
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config))
    (tmp_path / "chat_template.jinja").write_bytes(b"\xff\xfe")
    with pytest.raises(ValueError, match="chat_template.jinja: not UTF-8 text"):
        BertTokenizer.from_pretrained(tmp_path)


def test_train_new_from_iterator_learns_transformers_vocabulary(minilm_dir, minilm_tokenizer):
    """The same set of pieces as transformers' (the tokenizers library's WordPiece trainer)
    on 160 sentences, and the same tokens for text it did not see. 600 pieces: there the
    tokenizers library's own runs agree (at 1000 its tie-breaking varies from run to run)."""
    texts = sentences(160)
    ours = BertTokenizer.from_pretrained(minilm_dir).train_new_from_iterator(texts, vocab_size=600, show_progress=False)
    theirs = minilm_tokenizer.train_new_from_iterator(texts, vocab_size=600)
    assert set(ours.vocab) == set(theirs.get_vocab()) and len(ours) == 600
    assert [ours.convert_ids_to_tokens(i) for i in range(5)] == [theirs.convert_ids_to_tokens(i) for i in range(5)]
    for text in list(FAST_VS_LEGACY)[:20] + ["Loading official checkpoints through one weight map, 中文 text."]:
        assert ours.tokenize(text) == theirs.tokenize(text), text
    again = BertTokenizer.from_pretrained(minilm_dir).train_new_from_iterator(iter([texts[:80], texts[80:]]), 600,
                                                                              show_progress=False)
    assert again.vocab == ours.vocab  # batches or single texts, and every run: the same ids


def test_train_new_from_iterator_keeps_settings_and_renames_specials(minilm_dir, tmp_path):
    cased = BertTokenizer.from_pretrained(minilm_dir, do_lower_case=False)
    new = cased.train_new_from_iterator(["Hello World", "Hello there"] * 5, vocab_size=60, show_progress=False,
                                        new_special_tokens=["<extra>"], special_tokens_map={"[UNK]": "<unk>"})
    assert new.do_lower_case is False and new.unk_token == "<unk>" and "<extra>" in new.additional_special_tokens
    assert [new.convert_ids_to_tokens(i) for i in range(6)] == ["[PAD]", "<unk>", "[CLS]", "[SEP]", "[MASK]", "<extra>"]
    assert "Hello" in new.vocab and "hello" not in new.vocab
    new.save_pretrained(tmp_path)
    assert BertTokenizer.from_pretrained(tmp_path)("Hello <extra>")["input_ids"] == new("Hello <extra>")["input_ids"]


@pytest.mark.parametrize("call, error, message", [
    (dict(text_iterator=[["a"], 3]), TypeError, "text_iterator item 1 must be a str or a list of str"),
    (dict(text_iterator=["a b"], vocab_size=3), ValueError, "vocab_size must be an int above the 5 special tokens"),
    (dict(text_iterator=[" "]), ValueError, "the corpus holds no text"),
    (dict(text_iterator=["a"], min_frequency=-1), ValueError, "min_frequency must be an int >= 0"),
    (dict(text_iterator=["a"], special_tokens_map=["x"]), TypeError, "special_tokens_map must be a dict"),
])
def test_train_new_from_iterator_refuses_what_cannot_work(minilm_dir, call, error, message):
    arguments = {"vocab_size": 50, "show_progress": False, **call}
    with pytest.raises(error, match=message):
        BertTokenizer.from_pretrained(minilm_dir).train_new_from_iterator(**arguments)


def test_legacy_format_false_never_leaves_an_older_vocab_in_charge(minilm_dir, tmp_path):
    """legacy_format=False writes no vocab.txt, and from_pretrained reads a vocab.txt first: over
    an older save's, the save is refused naming it, nothing written (no file it did not write deleted)."""
    BertTokenizer.from_pretrained(minilm_dir).save_pretrained(tmp_path)
    before = {name: (tmp_path / name).read_bytes() for name in os.listdir(tmp_path)}
    other = BertTokenizer.from_pretrained(minilm_dir, do_lower_case=False)
    with pytest.raises(ValueError, match="vocab.txt: save_pretrained\\(legacy_format=False\\) writes tokenizer.json only"):
        other.save_pretrained(tmp_path, legacy_format=False)
    assert {name: (tmp_path / name).read_bytes() for name in os.listdir(tmp_path)} == before


def test_train_new_from_iterator_bounds_each_text(minilm_dir):
    from mini_hf_bert import Limits

    tokenizer = BertTokenizer.from_pretrained(minilm_dir, limits=Limits(text_chars=1000))
    with pytest.raises(ValueError, match="text_iterator item 1: 2000 characters, more than the 1000"):
        tokenizer.train_new_from_iterator(["short", "x" * 2000], 50, show_progress=False)
