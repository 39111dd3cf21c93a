"""What every configuration has around its own fields, as transformers'
``configuration_utils.py`` (``PretrainedConfig``): the fields transformers keeps on every
config (output switches, the task heads' labels, the dtype a checkpoint was saved in),
reading and writing ``config.json`` (and Google's ``bert_config.json``), the names
transformers' tools call (``use_return_dict``, ``_attn_implementation``, ``update``,
``to_diff_dict``, ``get_text_config``), and the checks (``validation.check_config``).

``configuration_bert.BertConfig`` adds BERT's own fields; that is the class to read.

Differences from transformers, on purpose:

* A plain dataclass, with no ``__setattr__`` / ``__getattr__`` of its own. An attribute
  that is not a field (sentence-transformers' ``gradient_checkpointing``, a key of an
  older ``config.json``, ``quantization_config``) is an ordinary attribute, kept in
  ``config.json`` when saved: ``extra`` lists them.
* No catch-all ``**kwargs``: a misspelt argument is a ``TypeError``, not a silently
  ignored attribute.
* Values are checked (``validate``), and the error names the field and says why.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar, Unpack

import torch

from .checkpoints.resolve import resolve_config
from .file_utils import directory_lock, read_json, write_text
from .hub_options import SaveOptions, no_upload, take_transformers_keywords
from .validation import ConfigError, check_config, check_model_sizes

logger = logging.getLogger(__name__)

#: Keys of Google's ``bert_config.json`` (google-research/bert ``modeling.BertConfig``).
#: Each has the same name and meaning in HuggingFace's ``config.json``.
GOOGLE_CONFIG_KEYS = (
    "vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size", "hidden_act",
    "hidden_dropout_prob", "attention_probs_dropout_prob", "max_position_embeddings", "type_vocab_size",
    "initializer_range",
)
#: Keys Google's multilingual releases add, which transformers ignores too (kept as attributes).
GOOGLE_EXTRA_KEYS = ("directionality", "pooler_fc_size", "pooler_num_attention_heads", "pooler_num_fc_layers",
                     "pooler_size_per_head", "pooler_type")
#: Fields that are choices of this process, not read from config.json nor written to it.
RUN_TIME_FIELDS = ("attn_implementation", "name_or_path")
#: And num_labels, derived from id2label, is not written either (transformers writes id2label).
NOT_SERIALISED = (*RUN_TIME_FIELDS, "num_labels")
#: Keys a config.json may carry about the file's own history, not the model: which
#: transformers wrote it and what it was loaded from. Dropped on reading, so a saved
#: config never claims a transformers version that did not write it.
FILE_HISTORY_KEYS = ("transformers_version", "_name_or_path")
#: Keys that say where one directory's files are, so a save elsewhere must not repeat them:
#: ``transformers_weights`` names the weights file of the directory it came from
#: (transformers drops it on saving too).
DIRECTORY_KEYS = ("transformers_weights",)


@dataclass(kw_only=True)
class Transformers4Fields:
    """The keyword arguments of transformers 4.x's ``PretrainedConfig`` that 5.x dropped,
    with 4.57.6's defaults: a 4.x call (``BertConfig(torchscript=True, num_beams=4)``) or
    config.json keeps working, and a misspelt name is still a TypeError. ``torchscript`` and
    the generation settings act (outputs as tuples; ``generate()``'s defaults); the others
    are what a config says about its checkpoint (``finetuning_task``, ``tokenizer_class``,
    ...), kept, saved and read by no BERT layer. Written to config.json only when set.

    transformers: ``configuration_utils.PretrainedConfig.__init__`` (4.57.6)
    """

    # 4.x's name for dtype (PretrainedConfig.dtype); not a field of its own, and not written.
    torch_dtype: dataclasses.InitVar[torch.dtype | str | None] = None
    # TorchScript's tracer needs tuples, not output dataclasses: with True, a model returns
    # tuples unless a call asks return_dict=True (4.x's use_return_dict).
    torchscript: bool = False
    # --- what a checkpoint records about itself (no BERT layer reads these)
    finetuning_task: str | None = None
    tokenizer_class: str | None = None
    prefix: str | None = None
    task_specific_params: dict[str, Any] | None = None
    sep_token_id: int | None = None
    # --- encoder-decoder pairs (transformers' EncoderDecoderModel reads these on its own config)
    decoder_start_token_id: int | None = None
    cross_attention_hidden_size: int | None = None
    tie_encoder_decoder: bool = False
    # --- TensorFlow-only switches of 4.x
    tf_legacy_loss: bool = False
    use_bfloat16: bool = False
    # --- generation: defaults of generate() (4.x: PretrainedConfig._get_global_generation_defaults)
    max_length: int = 20
    min_length: int = 0
    do_sample: bool = False
    early_stopping: bool | str = False
    num_beams: int = 1
    num_beam_groups: int = 1
    diversity_penalty: float = 0.0
    temperature: float = 1.0
    top_k: int = 50
    top_p: float = 1.0
    typical_p: float = 1.0
    repetition_penalty: float = 1.0
    length_penalty: float = 1.0
    no_repeat_ngram_size: int = 0
    encoder_no_repeat_ngram_size: int = 0
    bad_words_ids: list[list[int]] | None = None
    num_return_sequences: int = 1
    output_scores: bool = False
    return_dict_in_generate: bool = False
    forced_bos_token_id: int | None = None
    forced_eos_token_id: int | None = None
    remove_invalid_values: bool = False
    exponential_decay_length_penalty: tuple[int, float] | None = None
    suppress_tokens: list[int] | None = None
    begin_suppress_tokens: list[int] | None = None


class LabelCount:
    """``config.num_labels``: how many classes a classifier head predicts, ``len(id2label)``.
    Setting another count makes generic labels ``LABEL_0 .. LABEL_{n-1}``, as transformers'
    ``num_labels`` setter does. A dataclass field whose default is this descriptor: the
    constructor's ``num_labels=`` goes through ``__set__`` too (after ``id2label``).

    transformers: ``configuration_utils.PreTrainedConfig.num_labels`` (a property)
    """

    def __get__(self, config: PretrainedConfig | None, owner: type | None = None) -> int | None:
        if config is None:
            return None  # the field's default: no count given (two classes, unless id2label says)
        return len(config.id2label) if config.id2label is not None else None

    def __set__(self, config: PretrainedConfig, count: int | None) -> None:
        if count is None:
            return
        if config.id2label is not None and not isinstance(config.id2label, dict):
            raise ConfigError(f"BertConfig.id2label must be a mapping of class index to name, got {config.id2label!r}")
        if isinstance(count, bool) or not isinstance(count, int) or count <= 0:
            raise ConfigError(f"BertConfig.num_labels must be a positive int, got {count!r}")
        if config.id2label is None or len(config.id2label) != count:
            if config.id2label is not None:
                logger.info("num_labels=%d replaces id2label's %d labels with generic ones", count, len(config.id2label))
            config.id2label = {i: f"LABEL_{i}" for i in range(count)}
            config.label2id = {name: i for i, name in config.id2label.items()}


@dataclass(kw_only=True)
class PretrainedConfig(Transformers4Fields):
    """The fields transformers keeps on every config, and the file I/O; subclassed by
    ``BertConfig``, whose own fields come first (and positionally, as transformers' order).
    The fields only 4.x has are ``Transformers4Fields``'.

    transformers: ``configuration_utils.PretrainedConfig``
    """

    model_type: ClassVar[str] = ""
    is_encoder_decoder: ClassVar[bool] = False  # transformers' flag: one stack, not an encoder-decoder pair
    sub_configs: ClassVar[dict] = {}  # transformers' composite configs name theirs here

    # (transformers keeps the fields BERT's layers read here too: output_attentions,
    # output_hidden_states, chunk_size_feed_forward, pruned_heads, problem_type; ours are
    # in BertConfig, where a reader of the model looks for them)
    # --- output default: a forward's return_dict falls back to this
    return_dict: bool = True
    # --- what a checkpoint was saved from
    architectures: list[str] | None = None  # class names
    # The parameters' dtype when saved (transformers 5.x's field; save_pretrained records
    # it, from_pretrained(dtype="auto") reads it): a torch.dtype, written as its name.
    dtype: torch.dtype | None = None
    # --- task heads: the classes a classifier predicts. config.json stores id2label /
    # label2id; num_labels is their count (passing num_labels alone builds LABEL_0..).
    id2label: dict[int, str] | None = None
    label2id: dict[str, int] | None = None
    num_labels: int | None = LabelCount()
    # --- run-time choices, not written to config.json
    # Which attention the layers use: "eager" (the readable reference), "sdpa"
    # (torch's scaled_dot_product_attention) or "fast" (modeling_bert_fast.py).
    # transformers keeps this as config._attn_implementation and does not save it either.
    attn_implementation: str = "sdpa"
    name_or_path: str = ""  # what from_pretrained was given (a directory, a hub id)

    def __post_init__(self, torch_dtype: torch.dtype | str | None) -> None:
        if self.dtype is None:  # given both, dtype wins, as in 4.57.6
            self.dtype = torch_dtype
        self.validate()

    # ------------------------------------------------------------------ checks
    def validate(self) -> None:
        """Settle what JSON cannot say (integer keys, a dtype's name) and raise ConfigError
        naming the first field whose value cannot work, and why (``validation.check_config``)."""
        if self.id2label is None:
            self.num_labels = 2
        self.id2label, self.label2id, self.pruned_heads, self.dtype = check_config(self)

    def validate_for_model(self) -> None:
        """``validate``, plus what only a model needs: sizes that must fit one another.

        Kept apart from ``validate`` because transformers and Google accept such a config
        and refuse the *model* (Google's own tests write ``hidden_size=37`` with 12 heads).
        """
        self.validate()
        check_model_sizes(self)

    # ------------------------------------------------- transformers' config API
    @property
    def use_return_dict(self) -> bool:
        """Whether a forward given no ``return_dict`` returns its output dataclass: ``return_dict``,
        unless ``torchscript`` asks for tuples (transformers 4.x's ``use_return_dict``)."""
        return self.return_dict and not self.torchscript

    @property
    def _attn_implementation(self) -> str:
        """transformers' name for ``attn_implementation`` (its tests and tools set this one)."""
        return self.attn_implementation

    @_attn_implementation.setter
    def _attn_implementation(self, value: str) -> None:
        self.attn_implementation = value

    @property
    def extra(self) -> dict[str, Any]:
        """The attributes that are not fields (keys of a config.json this class does not
        know, or set on it by a library), in the order they were set: saved with the fields."""
        names = set(self.field_names())
        return {key: value for key, value in vars(self).items() if key not in names}

    def __iter__(self) -> Iterator[str]:
        """The field names, as iterating a transformers config yields its attributes."""
        return iter(self.field_names())

    def get_text_config(self, decoder: bool | None = None, encoder: bool | None = None) -> PretrainedConfig:
        """The config of the text model: for BERT, itself (transformers asks every config
        this, for multimodal ones; Trainer and sentence-transformers call it)."""
        return self

    def update(self, values: dict[str, Any]) -> None:
        """Set several fields from a dict, as transformers' ``PretrainedConfig.update``;
        keys that are not fields become attributes. The result is checked as a whole, and
        a refused update leaves the config as it was."""
        if not isinstance(values, dict):
            raise TypeError(f"BertConfig.update takes a dict, got {type(values).__name__}")
        before = dict(vars(self))
        try:
            if "id2label" in values:
                self.id2label = values["id2label"]
                self.label2id = None
            for key, value in values.items():
                if key != "id2label":
                    self._set_key(key, value)
            self.validate()
        except ConfigError:
            vars(self).clear()
            vars(self).update(before)
            raise

    def replace(self, **changes: Any) -> PretrainedConfig:
        """A copy with ``changes`` to its fields, the attributes that are not fields kept
        too (``dataclasses.replace`` copies fields only)."""
        copy = dataclasses.replace(self, **changes)
        for key, value in self.extra.items():
            setattr(copy, key, value)
        return copy

    def _set_key(self, key: str, value: Any) -> None:
        """A field, or an attribute that is not one; never a method or property of the
        class (``update``, ``extra``, ``_attn_implementation``): a file must not replace those.
        A plain class value (``is_encoder_decoder``) may be given, as transformers writes it."""
        found = inspect.getattr_static(type(self), key, None) if isinstance(key, str) else None
        if not isinstance(key, str) or key not in self.field_names() and (callable(found) or hasattr(type(found), "__get__")):
            raise ConfigError(f"config key {key!r} names {type(self).__name__}.{key}, not a setting; "
                              "a config.json cannot set it")
        setattr(self, key, value)

    # --------------------------------------------------------- dict / json
    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        """The names a config.json key must have to land in a typed field."""
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def from_dict(cls, values: dict[str, Any], **overrides: Any) -> PretrainedConfig:
        """Build a config from a ``config.json`` dict; unknown keys become attributes.

        ``overrides`` must name real fields (a typo raises TypeError).
        """
        if not isinstance(values, dict):
            raise ConfigError(f"a BERT config must be a JSON object, got {type(values).__name__}")
        known = set(cls.field_names())
        for name in overrides:
            if name not in known:
                raise TypeError(f"BertConfig has no field {name!r}")
        if values.get("model_type", cls.model_type) != cls.model_type:
            raise ConfigError(f"config has model_type {values['model_type']!r}; BertConfig reads model_type 'bert'")
        kwargs = {key: value for key, value in values.items() if key in known and key not in RUN_TIME_FIELDS}
        if "torch_dtype" in values:  # transformers 4.x wrote the dtype under this name
            kwargs["torch_dtype"] = values["torch_dtype"]
        if "id2label" in kwargs:  # a saved classifier's labels say how many there are
            kwargs.pop("num_labels", None)
        config = cls(**(kwargs | overrides))
        for key, value in values.items():
            if key not in known and key not in ("model_type", "torch_dtype") and key not in FILE_HISTORY_KEYS:
                config._set_key(key, value)
        return config

    def to_dict(self) -> dict[str, Any]:
        """The ``config.json`` content: every field, then the other attributes."""
        out: dict[str, Any] = {"model_type": self.model_type}
        transformers4 = {f.name: f.default for f in dataclasses.fields(Transformers4Fields)}
        for name in self.field_names():
            value = getattr(self, name)
            if name not in NOT_SERIALISED and (name not in transformers4 or value != transformers4[name]):
                out[name] = value
        out["dtype"] = None if self.dtype is None else str(self.dtype).removeprefix("torch.")
        for key, value in self.extra.items():
            if key not in DIRECTORY_KEYS:
                out.setdefault(key, value)
        return out

    def to_diff_dict(self) -> dict[str, Any]:
        """The fields whose values differ from a default config: what
        ``BertConfig(**config.to_diff_dict())`` needs to rebuild this one."""
        default = type(self)()
        return {name: getattr(self, name) for name in self.field_names()
                if name not in NOT_SERIALISED and getattr(self, name) != getattr(default, name)}

    def to_json_string(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n"

    def to_json_file(self, json_file_path: str | os.PathLike) -> str:
        """Write ``to_json_string()`` to ``json_file_path``, whole or not at all; return the path."""
        return write_text(os.fspath(json_file_path), self.to_json_string())

    @classmethod
    def from_json_file(cls, path: str | os.PathLike, check_model: bool = False, **overrides: Any) -> PretrainedConfig:
        """Read an HF ``config.json`` or a Google ``bert_config.json`` (told apart by its keys).

        ``check_model=True`` also applies ``validate_for_model`` (for a caller about to build
        the model), so that error names the file too."""
        path = os.fspath(path)
        unknown = [name for name in overrides if name not in cls.field_names()]
        if unknown:  # the caller's typo, not the file's: a TypeError about the argument
            raise TypeError(f"BertConfig has no field {unknown[0]!r}")
        values = read_json(path, ConfigError, "config file", missing=FileNotFoundError)
        if not isinstance(values, dict):
            raise ConfigError(f"{path}: a BERT config must be a JSON object, got {type(values).__name__}")
        try:
            config = cls.from_google_dict(values, **overrides) if is_google_config(values) else cls.from_dict(values, **overrides)
            if check_model:
                config.validate_for_model()
            return config
        except ConfigError as e:
            raise ConfigError(f"{path}: {e}") from None
        except TypeError as e:  # a value of the wrong JSON type, e.g. "hidden_size": "768"
            raise ConfigError(f"{path}: {e}") from None

    @classmethod
    def from_google_dict(cls, values: dict[str, Any], **overrides: Any) -> PretrainedConfig:
        """Read the dict of a Google ``bert_config.json``.

        google-research/bert's ``gelu`` is the tanh approximation; transformers maps a
        Google config's ``"gelu"`` to the exact erf GELU, and every converted checkpoint
        on the hub has been run that way since. We follow transformers (outputs differ
        from Google's TF by ~1e-3); pass ``hidden_act="gelu_new"`` for Google's exact
        behaviour.
        """
        if values.get("hidden_act") == "gelu" and "hidden_act" not in overrides:
            logger.info(
                "Google config: hidden_act 'gelu' is read as the exact erf GELU, as transformers does; "
                "google-research/bert computed the tanh approximation (pass hidden_act='gelu_new' for that)"
            )
        return cls.from_dict(values, **overrides)

    @classmethod
    def from_pretrained(
        cls,
        pretrained_model_name_or_path: str | os.PathLike,
        *,
        revision: str = "main",
        cache_dir: str | os.PathLike | None = None,
        local_files_only: bool = False,
        subfolder: str = "",
        token: str | bool | None = None,
        force_download: bool = False,
        **overrides: Any,
    ) -> PretrainedConfig:
        """Read the config of a checkpoint: a directory with ``config.json`` (or Google's
        ``bert_config.json``), the JSON file itself, a Google checkpoint prefix or ``.zip``,
        or a hub id (the local cache, or downloaded as ``from_pretrained`` would).
        ``subfolder``: the config is in this folder of the directory (transformers' argument).
        ``overrides`` replace fields (``num_labels=3``); ``name_or_path`` records the source."""
        token = take_transformers_keywords(overrides, f"{cls.__name__}.from_pretrained", token)  # _from_auto=, ...
        source = os.fspath(pretrained_model_name_or_path)
        if subfolder:
            source = os.path.join(source, subfolder)
        # config.json (or Google's bert_config.json) in a directory, beside a Google checkpoint
        # prefix, inside a .zip or in the hub's cache; or the config the weights of a form
        # that keeps none imply (a SavedModel, a KerasHub preset).
        with resolve_config(source, revision, cache_dir, local_files_only, token, force_download) as path:
            config = cls.from_json_file(path, **overrides)
        config.name_or_path = source
        return config

    def save_pretrained(self, directory: str | os.PathLike, push_to_hub: bool = False,
                        **options: Unpack[SaveOptions]) -> str:
        """Write ``config.json`` into ``directory`` (created if needed), whole or not at all
        (``file_utils.write_text``); return its path. ``push_to_hub`` and transformers' other
        saving keywords: as ``hub_options.no_upload`` says."""
        no_upload(options, push_to_hub, f"{type(self).__name__}.save_pretrained")
        path = os.path.join(os.fspath(directory), "config.json")
        os.makedirs(directory, exist_ok=True)
        with directory_lock(directory, exclusive=True):
            return write_text(path, self.to_json_string())


def is_google_config(values: dict[str, Any]) -> bool:
    """True for the dict of a Google ``bert_config.json``: no ``model_type``, Google's keys only.

    Multilingual releases add pooler_* and ``directionality`` keys, which transformers
    ignores too; they are allowed here and kept as attributes.

    transformers: none (its conversion script takes any bert_config.json on trust)
    """
    if "model_type" in values:
        return False
    return set(values) <= set(GOOGLE_CONFIG_KEYS) | set(GOOGLE_EXTRA_KEYS) and "hidden_size" in values
