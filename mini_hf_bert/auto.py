"""``AutoConfig``, ``AutoTokenizer``, ``AutoModel`` and ``AutoModelFor...``, as transformers'
``models/auto``: code written for transformers' Auto classes runs unchanged.

transformers picks the classes from ``config.json``'s ``model_type`` (a Google
``bert_config.json`` has none: it is BERT by construction), and each Auto class maps it to
its own class: ``AutoModel`` gives the base ``BertModel`` whatever ``architectures`` the
checkpoint was saved from, ``AutoModelForMaskedLM`` a ``BertForMaskedLM``. mini_hf_bert
implements BERT only, so a checkpoint of another model type is refused, with a message
saying so, before anything is built.

Loading is as transformers': a head the checkpoint lacks
(``AutoModelForSequenceClassification`` on a pre-training checkpoint) is initialised anew
with transformers' warning naming its weights. Weights of the encoder itself that the
checkpoint lacks are an error unless ``strict=False``, as everywhere here.
"""

from __future__ import annotations

import json
import os
from typing import Any

from .checkpoints.resolve import resolve_config
from .hub_options import take_transformers_keywords
from .configuration_bert import BertConfig
from .validation import ConfigError
from .file_utils import MAX_METADATA_BYTES, no_remote_code, read_file
from .modeling_bert import (
    BertForMaskedLM,
    BertForMultipleChoice,
    BertForNextSentencePrediction,
    BertForPreTraining,
    BertForQuestionAnswering,
    BertForSequenceClassification,
    BertForTokenClassification,
    BertLMHeadModel,
    BertModel,
    BertPreTrainedModel,
)
from .tokenization_bert import BertTokenizer
from .tokenization_bert_fast import BertTokenizerFast
from .tokenization_utils_base import TOKENIZER_CONFIG_FILE, TokenizerFileError

#: The model types these classes read, and what each tokenizer_config.json may name.
SUPPORTED_MODEL_TYPES = ("bert",)
SUPPORTED_TOKENIZER_CLASSES = ("BertTokenizer", "BertTokenizerFast")
_SUPPORTED = ("mini_hf_bert implements BERT only: config.json with model_type 'bert', "
              "or Google's bert_config.json")


def _peek(path: str, key: str) -> Any:
    """``key`` of a JSON file, or None when the file is not a readable JSON object: then
    the real reader that follows gives its own error."""
    try:
        values = json.loads(read_file(path, MAX_METADATA_BYTES).decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    return values.get(key) if isinstance(values, dict) else None


def _check_model_type(path: str) -> None:
    model_type = _peek(path, "model_type")
    if model_type is not None and model_type not in SUPPORTED_MODEL_TYPES:
        raise ConfigError(f"{path}: model_type {model_type!r} is not supported; {_SUPPORTED}")


class AutoConfig:
    """The config of any BERT checkpoint (``AutoConfig.from_pretrained``).

    transformers: ``models.auto.configuration_auto.AutoConfig``
    """

    def __init__(self) -> None:
        raise OSError("AutoConfig is used through AutoConfig.from_pretrained(...) or AutoConfig.for_model(...)")

    @classmethod
    def from_pretrained(
        cls,
        pretrained_model_name_or_path: str | os.PathLike,
        *,
        revision: str = "main",
        cache_dir: str | os.PathLike | None = None,
        local_files_only: bool = False,
        trust_remote_code: bool = False,
        token: str | bool | None = None,
        force_download: bool = False,
        **overrides: Any,
    ) -> BertConfig:
        """``BertConfig.from_pretrained`` after checking the model type; the same sources.
        ``trust_remote_code``: accepted, as by every loader here; True draws a warning."""
        no_remote_code(trust_remote_code, "BertConfig")
        token = take_transformers_keywords(overrides, "AutoConfig.from_pretrained", token)  # code_revision=, ...
        source = os.fspath(pretrained_model_name_or_path)
        with resolve_config(source, revision, cache_dir, local_files_only, token, force_download) as path:
            _check_model_type(path)
            config = BertConfig.from_json_file(path, **overrides)
        config.name_or_path = source
        return config

    @classmethod
    def for_model(cls, model_type: str, **fields: Any) -> BertConfig:
        """A fresh config of ``model_type`` (``"bert"``) with ``fields`` set."""
        if model_type not in SUPPORTED_MODEL_TYPES:
            raise ConfigError(f"model_type {model_type!r} is not supported; {_SUPPORTED}")
        return BertConfig(**fields)


class AutoTokenizer:
    """The tokenizer of any BERT checkpoint (``AutoTokenizer.from_pretrained``).

    transformers: ``models.auto.tokenization_auto.AutoTokenizer``
    """

    def __init__(self) -> None:
        raise OSError("AutoTokenizer is used through AutoTokenizer.from_pretrained(...)")

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path: str | os.PathLike, use_fast: bool = True,
                        **overrides: Any) -> BertTokenizer:
        """``BertTokenizerFast.from_pretrained`` (``use_fast=False``: ``BertTokenizer``, the
        plain-Python one; the two give the same ids and offsets), after checking that the
        directory's ``tokenizer_config.json`` (its ``tokenizer_class``) and ``config.json``
        (its ``model_type``) describe a BERT tokenizer."""
        config = overrides.pop("config", None)  # transformers picks the tokenizer class from it; here it is BERT's
        if config is not None and not isinstance(config, BertConfig):
            raise TypeError(f"AutoTokenizer.from_pretrained: config must be a BertConfig, got {type(config).__name__}; "
                            f"{_SUPPORTED}")
        trust_remote_code = overrides.pop("trust_remote_code", False)  # BertTokenizer.from_pretrained's to check
        token = take_transformers_keywords(overrides, "AutoTokenizer.from_pretrained", overrides.pop("token", None))
        overrides.update(trust_remote_code=trust_remote_code, token=token)
        source = os.fspath(pretrained_model_name_or_path)
        if os.path.isdir(source):
            tokenizer_config = os.path.join(source, TOKENIZER_CONFIG_FILE)
            tokenizer_class = _peek(tokenizer_config, "tokenizer_class") if os.path.isfile(tokenizer_config) else None
            if isinstance(tokenizer_class, str) and tokenizer_class not in SUPPORTED_TOKENIZER_CLASSES:
                raise TokenizerFileError(
                    f"{tokenizer_config}: tokenizer_class {tokenizer_class!r} is not supported; "
                    f"mini_hf_bert has BERT's WordPiece tokenizer only ({', '.join(SUPPORTED_TOKENIZER_CLASSES)})"
                )
            config = os.path.join(source, "config.json")
            if os.path.isfile(config):
                _check_model_type(config)
        return (BertTokenizerFast if use_fast else BertTokenizer).from_pretrained(source, **overrides)


class _BaseAutoModel:
    """What every ``AutoModel...`` class does: its BERT class, built or loaded."""

    _model_class: type[BertPreTrainedModel]

    def __init__(self) -> None:
        raise OSError(f"{type(self).__name__} is used through {type(self).__name__}.from_pretrained(...) "
                      f"or {type(self).__name__}.from_config(config)")

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path: str | os.PathLike, **kwargs: Any) -> BertPreTrainedModel:
        """The checkpoint loaded into this Auto class's BERT class; the keyword arguments
        are ``from_pretrained``'s (``config=``, ``dtype=``, ``attn_implementation=``,
        ``strict=``, ``num_labels=`` ...)."""
        if kwargs.get("config") is None:
            # The model type is checked before anything is built, whatever the source form.
            source = os.fspath(pretrained_model_name_or_path)
            hub = {k: kwargs[k] for k in ("revision", "cache_dir", "local_files_only", "token", "force_download")
                   if k in kwargs}
            if kwargs.get("use_auth_token") is not None:  # transformers 4.x's name for token
                hub["token"] = kwargs["use_auth_token"]
            with resolve_config(source, **hub) as path:
                _check_model_type(path)
        return cls._model_class.from_pretrained(pretrained_model_name_or_path, **kwargs)

    @classmethod
    def from_config(cls, config: BertConfig, *, attn_implementation: str | None = None, dtype: Any = None,
                    torch_dtype: Any = None, trust_remote_code: bool = False, **init_kwargs: Any) -> BertPreTrainedModel:
        """A freshly initialised model of this Auto class's BERT class, in ``dtype`` (default
        ``config.dtype``, else float32), as transformers' ``from_config``."""
        if not isinstance(config, BertConfig):
            raise TypeError(f"from_config needs a BertConfig, got {type(config).__name__}; {_SUPPORTED}")
        no_remote_code(trust_remote_code, cls.__name__)
        return cls._model_class._from_config(config, attn_implementation, dtype, torch_dtype, **init_kwargs)


def _auto_class(name: str, model_class: type[BertPreTrainedModel], counterpart: str) -> type[_BaseAutoModel]:
    doc = (f"Any BERT checkpoint as a ``{model_class.__name__}``.\n\n"
           f"transformers: ``models.auto.modeling_auto.{counterpart}``\n")
    return type(name, (_BaseAutoModel,), {"_model_class": model_class, "__doc__": doc, "__module__": __name__})


AutoModel = _auto_class("AutoModel", BertModel, "AutoModel")
AutoModelForPreTraining = _auto_class("AutoModelForPreTraining", BertForPreTraining, "AutoModelForPreTraining")
AutoModelForMaskedLM = _auto_class("AutoModelForMaskedLM", BertForMaskedLM, "AutoModelForMaskedLM")
AutoModelForCausalLM = _auto_class("AutoModelForCausalLM", BertLMHeadModel, "AutoModelForCausalLM")
AutoModelForSequenceClassification = _auto_class(
    "AutoModelForSequenceClassification", BertForSequenceClassification, "AutoModelForSequenceClassification")
AutoModelForTokenClassification = _auto_class(
    "AutoModelForTokenClassification", BertForTokenClassification, "AutoModelForTokenClassification")
AutoModelForQuestionAnswering = _auto_class(
    "AutoModelForQuestionAnswering", BertForQuestionAnswering, "AutoModelForQuestionAnswering")
AutoModelForMultipleChoice = _auto_class("AutoModelForMultipleChoice", BertForMultipleChoice, "AutoModelForMultipleChoice")
AutoModelForNextSentencePrediction = _auto_class(
    "AutoModelForNextSentencePrediction", BertForNextSentencePrediction, "AutoModelForNextSentencePrediction")
