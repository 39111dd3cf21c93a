"""The files of a BERT tokenizer, read and written: ``vocab.txt`` (checked line by line),
``tokenizer_config.json``, ``special_tokens_map.json``, a ``tokenizer.json`` of the fast
tokenizer, and Google's checkpoint directories, whose case is read from their name or
their vocabulary. ``BertTokenizer`` (``tokenization_bert.py``) calls these; the algorithm
does not depend on them.

transformers: none (its ``tokenization_utils_base.PreTrainedTokenizerBase.from_pretrained``
and ``save_pretrained`` do this for every tokenizer)
"""

from __future__ import annotations

import logging
import os
import re
import shutil
from collections.abc import Collection
from typing import Any, NamedTuple

from .file_utils import (
    MAX_METADATA_BYTES,
    SAVING_PREFIX,
    directory_lock,
    make_directory_in,
    move_files_in,
    naming_final_paths,
    not_a_regular_file,
    read_file,
    remove_abandoned_staging,
    write_json,
    write_text,
)
from .checkpoints.resolve import directory_vocabulary
from .tokenization_utils_base import (
    _OPTIONAL_SPECIAL_TOKEN_KEYS,
    _SPECIAL_TOKEN_KEYS,
    SPECIAL_TOKENS_MAP_FILE,
    TOKENIZER_CONFIG_FILE,
    TOKENIZER_FILE,
    VERY_LARGE_INTEGER,
    AddedToken,
    TokenizerFileError,
    _added_token_entry,
    _added_tokens_of_config,
    _is_kind,
    _read_json,
)

logger = logging.getLogger(__name__)

VOCAB_FILES_NAMES = {"vocab_file": "vocab.txt"}
VOCAB_FILE = VOCAB_FILES_NAMES["vocab_file"]
CHAT_TEMPLATE_FILE = "chat_template.jinja"

#: Google's releases say cased or uncased only in their directory name: the names
#: google-research/bert's ``validate_case_matches_checkpoint`` lists, and the later
#: releases named alike (the 24 small BERTs, whole-word masking: wwm_uncased_..., wwm_cased_...).
_UNCASED_NAME = re.compile(r"^(uncased|multilingual|chinese|wwm_uncased)_")
_CASED_NAME = re.compile(r"^(cased|multi_cased|wwm_cased)_")
#: A vocabulary built from lower-cased text holds (almost) no token that lower-casing
#: changes: such a token could never be produced. bert-base-cased's has thousands ("The",
#: "John", "##A"); the uncased one none. Above this share of the vocabulary, it is cased.
_CASED_VOCAB_SHARE = 0.01

#: The tokenizer_config.json keys read, and what each must be.
_TOKENIZER_CONFIG_KEYS = {
    "do_lower_case": "true or false", "do_basic_tokenize": "true or false", "never_split": "a list of strings",
    "tokenize_chinese_chars": "true or false", "strip_accents": "true or false", "model_max_length": "a number",
    "clean_up_tokenization_spaces": "true or false", "unk_token": "a string", "sep_token": "a string",
    "pad_token": "a string", "cls_token": "a string", "mask_token": "a string", "bos_token": "a string",
    "eos_token": "a string",
}


class VocabularyNotFoundError(FileNotFoundError, TokenizerFileError):
    """No vocabulary file at the path given: a FileNotFoundError, and the ValueError that
    transformers' Python tokenizer raises for it.

    transformers: none (``BertTokenizerLegacy`` raises ValueError)
    """


def read_vocab_lines(vocab_file: str | os.PathLike) -> list[str]:
    """The tokens of a ``vocab.txt``, one per line, each problem a TokenizerFileError
    naming the file (and the line, where there is one).

    transformers: none (``load_vocab`` reads the lines unchecked)
    """
    path = os.fspath(vocab_file)
    try:
        data = read_file(path, MAX_METADATA_BYTES)
    except FileNotFoundError:
        raise VocabularyNotFoundError(f"{path}: no such vocabulary file") from None
    except IsADirectoryError:
        raise TokenizerFileError(f"{path}: is a directory, not a vocabulary file") from None
    except OSError as e:
        raise TokenizerFileError(f"{path}: cannot be read as a vocabulary file ({e.strerror})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise TokenizerFileError(f"{path}: line {line} is not UTF-8; a vocab.txt is one UTF-8 token per line") from None
    if "\0" in text:
        raise TokenizerFileError(f"{path}: contains NUL bytes; not a vocab.txt (one token per line)")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the final newline ends the last line; it does not start an empty token
    if not lines:
        raise TokenizerFileError(f"{path}: is empty; a vocab.txt holds one token per line")
    return [line.rstrip("\r") for line in lines]


def infer_do_lower_case(directory: str, vocab: Collection[str]) -> tuple[bool, str]:
    """Whether a Google checkpoint was trained lower-cased, and where that was read.

    From the directory's name when it is one of Google's release names (as
    google-research/bert's ``validate_case_matches_checkpoint`` reads it); otherwise from
    the vocabulary: a cased one holds many tokens that lower-casing changes.

    transformers: none (google-research/bert: ``tokenization.validate_case_matches_checkpoint``)
    """
    name = os.path.basename(os.path.normpath(directory))
    if _UNCASED_NAME.match(name):
        return True, f"Google's release name {name!r}"
    if _CASED_NAME.match(name):
        return False, f"Google's release name {name!r}"
    changed = sum(1 for token in vocab if not (token.startswith("[") and token.endswith("]")) and token.lower() != token)
    cased = changed > _CASED_VOCAB_SHARE * len(vocab)
    return not cased, f"the vocabulary: {changed} of its {len(vocab)} tokens change under lower-casing"


class TokenizerFiles(NamedTuple):
    """What a tokenizer directory holds: the vocabulary (a file, or a tokenizer.json's
    dict), the ``__init__`` arguments, and the added tokens with the file they came from.

    transformers: none
    """

    vocab_file: str | None
    vocab: dict[str, int] | None
    kwargs: dict[str, Any]
    added: list[tuple[int, AddedToken]]
    extra: list[str]
    source: str
    chat_template: str | None = None


def read_tokenizer_directory(directory: str, overrides: dict[str, Any]) -> TokenizerFiles:
    """A saved tokenizer, a hub snapshot or a Google checkpoint directory -> its files'
    settings, ``overrides`` (``from_pretrained``'s keyword arguments) on top.

    transformers: none (``PreTrainedTokenizerBase.from_pretrained`` reads the same files)
    """
    kwargs: dict[str, Any] = {}
    for name in (TOKENIZER_CONFIG_FILE, VOCAB_FILE, TOKENIZER_FILE, CHAT_TEMPLATE_FILE):
        path = os.path.join(directory, name)
        problem = not_a_regular_file(path) if os.path.lexists(path) else None
        if problem:  # passing over it would silently load another tokenizer (lower-cased, say)
            raise TokenizerFileError(f"{path}: {problem}")
    config_path = os.path.join(directory, TOKENIZER_CONFIG_FILE)
    form = None if os.path.isfile(config_path) or os.path.isfile(os.path.join(directory, VOCAB_FILE)) \
        else directory_vocabulary(directory)
    if form is not None:  # a TF Hub SavedModel or a KerasHub preset: its vocabulary and casing, its own way
        vocab_file, casing = form
        if casing is not None:
            kwargs["do_lower_case"] = casing
        kwargs.update(overrides)
        return TokenizerFiles(vocab_file, None, kwargs, [], [], vocab_file)
    config: dict = {}
    if os.path.isfile(config_path):
        config = _read_json(config_path)
        for key, kind in _TOKENIZER_CONFIG_KEYS.items():
            value = config.get(key)
            if isinstance(value, dict):  # AddedToken serialised as {"content": ...}
                value = value.get("content")
            if value is not None and not _is_kind(value, kind):
                raise TokenizerFileError(f"{config_path}: {key} must be {kind}, got {value!r}")
            if value is not None or key == "strip_accents":
                kwargs[key] = value
        if isinstance(kwargs.get("model_max_length"), (int, float)) and kwargs["model_max_length"] >= VERY_LARGE_INTEGER:
            kwargs["model_max_length"] = None
    vocab_path = os.path.join(directory, VOCAB_FILE)
    json_path = os.path.join(directory, TOKENIZER_FILE)
    if not os.path.isfile(config_path) and os.path.isfile(os.path.join(directory, "bert_config.json")):
        if os.path.isfile(vocab_path) and "do_lower_case" not in overrides:
            kwargs["do_lower_case"], reason = infer_do_lower_case(directory, read_vocab_lines(vocab_path))
            logger.info("%s: no tokenizer_config.json; do_lower_case=%s (%s)", directory, kwargs["do_lower_case"], reason)
    kwargs.update(overrides)
    added, extra, source = [], [], config_path
    if os.path.isfile(config_path):
        added, extra = _added_tokens_of_config(config_path, config)
    chat_template = _chat_template(directory, config, config_path)
    if os.path.isfile(vocab_path):
        return TokenizerFiles(vocab_path, None, kwargs, added, extra, source, chat_template)
    if not os.path.isfile(json_path):
        raise FileNotFoundError(f"{directory}: no vocab.txt or tokenizer.json in this directory")
    vocab, normalizer, json_added = _read_tokenizer_json(json_path)
    for ours, theirs in (("do_lower_case", "lowercase"), ("strip_accents", "strip_accents"),
                         ("tokenize_chinese_chars", "handle_chinese_chars")):
        if ours not in overrides and theirs in normalizer:
            kwargs[ours] = normalizer[theirs]
    return TokenizerFiles(None, vocab, kwargs, added or json_added, extra, json_path if not added else config_path,
                          chat_template)


def _chat_template(directory: str, config: dict, config_path: str) -> str | None:
    """The chat template a directory gives: ``chat_template.jinja`` (transformers 5.x writes
    it), else tokenizer_config.json's ``chat_template`` (4.x), else None."""
    path = os.path.join(directory, CHAT_TEMPLATE_FILE)
    if os.path.isfile(path):  # read_tokenizer_directory has refused one that is no regular file
        try:
            return read_file(path, MAX_METADATA_BYTES).decode("utf-8")
        except UnicodeDecodeError:
            raise TokenizerFileError(f"{path}: not UTF-8 text") from None
    template = config.get("chat_template")
    if template is not None and not isinstance(template, str):
        raise TokenizerFileError(f"{config_path}: chat_template must be a string (a Jinja template), got {template!r}")
    return template


def _read_tokenizer_json(path: str) -> tuple[dict[str, int], dict, list[tuple[int, AddedToken]]]:
    """The WordPiece vocabulary, BertNormalizer settings and added tokens of a ``tokenizer.json``."""
    data = _read_json(path)
    model = data.get("model") if isinstance(data.get("model"), dict) else {}
    vocab = model.get("vocab")
    if model.get("type") != "WordPiece" or not isinstance(vocab, dict) or not vocab:
        raise TokenizerFileError(f"{path}: not a WordPiece tokenizer.json (model.type {model.get('type')!r})")
    if not all(isinstance(k, str) and isinstance(v, int) for k, v in vocab.items()):
        raise TokenizerFileError(f"{path}: model.vocab must map token strings to integer ids")
    normalizer = data.get("normalizer") if isinstance(data.get("normalizer"), dict) else {}
    if normalizer.get("type") != "BertNormalizer":
        logger.warning("%s: normalizer %r is not BertNormalizer; using BERT's", path, normalizer.get("type"))
        normalizer = {}
    entries = data.get("added_tokens") or []
    if not isinstance(entries, list):
        raise TokenizerFileError(f"{path}: added_tokens must be a list")
    added = [_added_token_entry(e, e.get("id") if isinstance(e, dict) else None, path) for e in entries]
    return vocab, normalizer, added


def tokenizer_json(tokenizer) -> dict[str, Any]:
    """The ``tokenizer.json`` of a ``BertTokenizer``, in the HuggingFace tokenizers library's
    format: the pipeline transformers' ``BertConverter`` builds (BertNormalizer,
    BertPreTokenizer, ``[CLS] A [SEP] (B [SEP])``, WordPiece), the vocabulary, and the added
    tokens (the special tokens of the vocabulary first, as the converter registers them).

    transformers: ``convert_slow_tokenizer.BertConverter`` (4.x), written by ``tokenizers``
    """
    cls, sep = tokenizer.cls_token, tokenizer.sep_token
    added = {}
    for token in tokenizer.all_special_tokens:
        if token in tokenizer.vocab:
            added[tokenizer.vocab[token]] = AddedToken(token, special=True, normalized=False)
    added.update(tokenizer.added_tokens_decoder)
    entries = [{"id": index, "content": token.content, "single_word": False, "lstrip": token.lstrip,
                "rstrip": token.rstrip, "normalized": tokenizer._is_normalized(token), "special": token.special}
               for index, token in sorted(added.items())]

    def piece(kind: str, name: str, type_id: int) -> dict:
        return {kind: {"id": name, "type_id": type_id}}

    return {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": entries,
        "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": tokenizer.tokenize_chinese_chars,
                       "strip_accents": tokenizer.strip_accents, "lowercase": tokenizer.do_lower_case},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [piece("SpecialToken", cls, 0), piece("Sequence", "A", 0), piece("SpecialToken", sep, 0)],
            "pair": [piece("SpecialToken", cls, 0), piece("Sequence", "A", 0), piece("SpecialToken", sep, 0),
                     piece("Sequence", "B", 1), piece("SpecialToken", sep, 1)],
            "special_tokens": {token: {"id": token, "ids": [tokenizer.convert_tokens_to_ids(token)], "tokens": [token]}
                               for token in (cls, sep)},
        },
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": tokenizer.clean_up_tokenization_spaces},
        "model": {"type": "WordPiece", "unk_token": tokenizer.unk_token, "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": tokenizer.wordpiece_tokenizer.max_input_chars_per_word,
                  "vocab": dict(sorted(tokenizer.vocab.items(), key=lambda item: item[1]))},
    }


def write_tokenizer_directory(tokenizer, save_directory: str | os.PathLike, legacy_format: bool | None = None,
                              save_jinja_files: bool = True) -> list[str]:
    """Write a ``BertTokenizer``'s files (the directory created if needed), each whole or not
    at all, under the directory's lock (a reader sees one save's set): ``tokenizer_config.json``,
    ``special_tokens_map.json``, and as transformers 4.x's ``legacy_format`` says, ``vocab.txt``
    (True), ``tokenizer.json`` (False), or both (None, its default). A chat template goes to
    ``chat_template.jinja``, or with ``save_jinja_files=False`` into tokenizer_config.json,
    as transformers does.

    transformers: none (``PreTrainedTokenizerBase.save_pretrained``)
    """
    if legacy_format not in (None, True, False):
        raise ValueError(f"legacy_format must be None, True or False, got {legacy_format!r}")
    directory = os.fspath(save_directory)
    vocab_path = os.path.join(directory, VOCAB_FILE)
    ordered = sorted(tokenizer.vocab.items(), key=lambda item: item[1])
    if [i for _, i in ordered] != list(range(len(ordered))):
        raise ValueError("the vocabulary's ids are not 0..n-1 without gaps; it cannot be written as vocab.txt")
    specials = {key: getattr(tokenizer, key) for key in (*_OPTIONAL_SPECIAL_TOKEN_KEYS, *_SPECIAL_TOKEN_KEYS)
                if getattr(tokenizer, key) is not None}
    config = {
        "tokenizer_class": "BertTokenizer", "do_lower_case": tokenizer.do_lower_case,
        "do_basic_tokenize": tokenizer.do_basic_tokenize,
        "never_split": sorted(tokenizer.basic_tokenizer.never_split) or None,
        "tokenize_chinese_chars": tokenizer.tokenize_chinese_chars, "strip_accents": tokenizer.strip_accents,
        "clean_up_tokenization_spaces": tokenizer.clean_up_tokenization_spaces, **specials,
    }
    if tokenizer.model_max_length < VERY_LARGE_INTEGER:
        config["model_max_length"] = tokenizer.model_max_length
    if tokenizer._added:  # transformers 4.x and 5.x both read these two keys
        config["added_tokens_decoder"] = {
            str(index): {"content": token.content, "lstrip": token.lstrip, "normalized": tokenizer._is_normalized(token),
                         "rstrip": token.rstrip, "single_word": False, "special": token.special}
            for index, token in sorted(tokenizer.added_tokens_decoder.items())
        }
    if tokenizer.additional_special_tokens:
        config["additional_special_tokens"] = list(tokenizer.additional_special_tokens)
    if tokenizer.chat_template is not None and not save_jinja_files:
        config["chat_template"] = tokenizer.chat_template
    files: dict[str, str | dict] = {}  # name -> text, or JSON to write
    if legacy_format is not False:
        files[VOCAB_FILE] = "".join(token + "\n" for token, _ in ordered)
    files |= {TOKENIZER_CONFIG_FILE: config, SPECIAL_TOKENS_MAP_FILE: specials}
    if legacy_format is not True:
        files[TOKENIZER_FILE] = tokenizer_json(tokenizer)
    if tokenizer.chat_template is not None and save_jinja_files:
        files[CHAT_TEMPLATE_FILE] = tokenizer.chat_template
    os.makedirs(directory, exist_ok=True)
    with directory_lock(directory, exclusive=True):
        if legacy_format is False and os.path.lexists(vocab_path):  # read first by from_pretrained: it would win
            raise ValueError(f"{vocab_path}: save_pretrained(legacy_format=False) writes tokenizer.json only, and "
                             f"from_pretrained reads this vocab.txt before it (an older save's); save into another "
                             f"directory, or with legacy_format=None to write both")
        # All files staged first, then moved in together: a reader, or a save stopped
        # half-way, never pairs one save's vocab.txt with another's tokenizer_config.json.
        remove_abandoned_staging(directory)
        staging = make_directory_in(directory, SAVING_PREFIX)
        try:
            with naming_final_paths(staging, directory):  # the moving-in marker too
                for name, content in files.items():
                    (write_text if isinstance(content, str) else write_json)(os.path.join(staging, name), content)
                move_files_in(staging, directory, list(files))
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return [os.path.join(directory, name) for name in files]
