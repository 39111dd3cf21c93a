"""BERT configuration: the hyper-parameters that fix every tensor shape in the model.

Mirrors ``transformers.models.bert.configuration_bert.BertConfig``: the same field
names and defaults, so a HuggingFace ``config.json`` reads and writes unchanged, and
Google's original ``bert_config.json`` (a subset of the same keys) reads too.

Differences from transformers, on purpose:

* It is a plain dataclass, so every field is visible here with a comment, instead
  of being spread over a generic ``PretrainedConfig`` base class.
* The constructor takes no catch-all ``**kwargs``: a misspelt argument is a
  ``TypeError``, not a silently ignored attribute. Unknown keys met in a
  ``config.json`` (sentence-transformers' ``gradient_checkpointing``,
  ``transformers_version``, ...) are kept in ``extra`` and written back unchanged.
* Values are checked (``validate``), and the error names the field and says why.

transformers 5.x dropped ``position_embedding_type`` from ``BertConfig`` (absolute
positions only); 3.4 and 4.x have it, and so do the checkpoints on the hub, so it
stays here.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

import torch

from .activations import ACT2FN
from .file_utils import directory_lock, read_json, write_text

logger = logging.getLogger(__name__)

#: The values ``position_embedding_type`` may take (transformers 3.x/4.x).
POSITION_EMBEDDING_TYPES = ("absolute", "relative_key", "relative_key_query")

#: Keys of Google's ``bert_config.json`` (google-research/bert ``modeling.BertConfig``).
#: Each has the same name and meaning in HuggingFace's ``config.json``.
GOOGLE_CONFIG_KEYS = (
    "vocab_size",
    "hidden_size",
    "num_hidden_layers",
    "num_attention_heads",
    "intermediate_size",
    "hidden_act",
    "hidden_dropout_prob",
    "attention_probs_dropout_prob",
    "max_position_embeddings",
    "type_vocab_size",
    "initializer_range",
)


#: The largest size a config may give: torch indexes tensor dimensions with 64-bit ints,
#: and no BERT comes near 2**31 (the largest vocabularies hold about 250,000 tokens).
MAX_SIZE = 2**31 - 1


class ConfigError(ValueError):
    """A configuration value that cannot describe a BERT model.

    transformers: none (it raises ValueError and OSError)
    """


@dataclass
class BertConfig:
    """Hyper-parameters of a BERT model (field names and defaults of transformers' ``BertConfig``).

    The defaults describe bert-base: L=12 layers, H=768 hidden, N=12 heads (head
    dim D = H / N = 64), I=3072 feed-forward.

    transformers: ``models.bert.configuration_bert.BertConfig``
    """

    model_type = "bert"  # class attribute, written to config.json as transformers does
    is_encoder_decoder = False  # transformers' flag: BERT is one stack, not an encoder-decoder pair
    sub_configs: ClassVar[dict] = {}  # transformers' composite configs name theirs here; BERT has none

    # --- sizes ---------------------------------------------------------------
    vocab_size: int = 30522  # rows of word_embeddings: the WordPiece vocabulary
    hidden_size: int = 768  # H, the width of every token vector between layers
    num_hidden_layers: int = 12  # L, number of BertLayer blocks
    num_attention_heads: int = 12  # N; each head works in D = H / N dimensions
    intermediate_size: int = 3072  # I, the feed-forward inner width (4H in Google's releases)
    max_position_embeddings: int = 512  # rows of position_embeddings: the longest input
    type_vocab_size: int = 2  # rows of token_type_embeddings: segment A / segment B
    # --- functions and regularisation ---------------------------------------
    hidden_act: str = "gelu"  # feed-forward activation, a key of activations.ACT2FN
    hidden_dropout_prob: float = 0.1  # dropout on embeddings and on every sub-layer output
    attention_probs_dropout_prob: float = 0.1  # dropout on the attention probabilities
    # Google's TF code used 1e-12 inside LayerNorm; checkpoints were trained with it,
    # so changing it changes the numbers (slightly) for every pretrained model.
    layer_norm_eps: float = 1e-12
    initializer_range: float = 0.02  # std of the normal init of Linear and Embedding weights
    # --- tokens ---------------------------------------------------------------
    pad_token_id: int | None = 0  # padding_idx of word_embeddings (its row is zero at init)
    bos_token_id: int | None = None
    eos_token_id: int | None = None
    # --- architecture switches ------------------------------------------------
    position_embedding_type: str = "absolute"  # one of POSITION_EMBEDDING_TYPES
    is_decoder: bool = False  # causal self-attention (BertLMHeadModel)
    add_cross_attention: bool = False  # cross-attention over encoder_hidden_states (needs is_decoder)
    chunk_size_feed_forward: int = 0  # 0: feed-forward over the whole sequence at once
    use_cache: bool = True  # decoder mode: return key/value caches
    classifier_dropout: float | None = None  # heads: None falls back to hidden_dropout_prob
    tie_word_embeddings: bool = True  # MLM decoder shares the word-embedding matrix
    # Attention heads removed by prune_heads, {layer: [original head indices]}; re-applied
    # when a model is built, so a pruned checkpoint's smaller matrices fit.
    pruned_heads: dict[int, list[int]] = field(default_factory=dict)
    # --- output defaults (transformers' PretrainedConfig fields) --------------
    output_attentions: bool = False
    output_hidden_states: bool = False
    return_dict: bool = True
    architectures: list[str] | None = None  # class names the checkpoint was saved from
    # --- task heads -----------------------------------------------------------
    # The classes a classifier head predicts. config.json stores id2label / label2id;
    # num_labels is derived from them (passing num_labels alone builds LABEL_0..LABEL_{n-1}).
    num_labels: int | None = None
    id2label: dict[int, str] | None = None
    label2id: dict[str, int] | None = None
    # BertForSequenceClassification's loss: "regression" (MSE), "single_label_classification"
    # (cross-entropy) or "multi_label_classification" (BCE); None = inferred per call, as transformers does.
    problem_type: str | None = None
    # The parameters' dtype when saved (transformers 5.x's field; save_pretrained records
    # it, from_pretrained(dtype="auto") reads it): a torch.dtype, written as its name.
    dtype: torch.dtype | None = None
    # --- run-time choices (not written to config.json) ------------------------
    # Which attention kernel BertSelfAttention uses: "eager" (the readable reference)
    # or "sdpa" (torch.nn.functional.scaled_dot_product_attention). transformers keeps
    # this as config._attn_implementation and does not serialise it either.
    attn_implementation: str = "sdpa"
    # What from_pretrained was given (a directory, a hub id): transformers' name_or_path.
    name_or_path: str = ""
    # --- everything else ------------------------------------------------------
    # Unknown config.json keys, kept so that a load/save round trip loses nothing.
    extra: dict[str, Any] = field(default_factory=dict)

    #: Fields that are choices of this process, or derived, not written to config.json.
    _NOT_SERIALISED = ("attn_implementation", "extra", "num_labels", "name_or_path")
    #: Keys a config.json may carry about the file's own history, not the model: which
    #: transformers wrote it and what it was loaded from. Dropped on reading, so a saved
    #: config never claims a transformers version that did not write it.
    _FILE_HISTORY_KEYS = ("transformers_version", "_name_or_path")
    #: Keys read from a config.json (into ``extra``) that say where this directory's files
    #: are, so a save elsewhere must not repeat them: ``transformers_weights`` names the
    #: weights file of the directory it came from (transformers drops it on saving too).
    _DIRECTORY_KEYS = ("transformers_weights",)

    def __post_init__(self) -> None:
        self._settle_labels()
        self.validate()
        self._settle_pruned_heads()
        object.__setattr__(self, "_built", True)

    def __setattr__(self, name: str, value: Any) -> None:
        if self.__dict__.get("_built") and name not in self.__dict__ and not name.startswith("_") \
                and not hasattr(type(self), name):
            # Not a field: kept in extra and written to config.json, as transformers keeps and
            # writes any attribute set on a config (quantization_config, peft's entries).
            self.extra[name] = value
            return
        if name == "dtype":
            value = _config_dtype(value)
        object.__setattr__(self, name, value)
        # As transformers' num_labels setter: a new count rebuilds generic labels.
        if name == "num_labels" and self.__dict__.get("_built") and (self.id2label is None or len(self.id2label) != value):
            object.__setattr__(self, "id2label", None)
            object.__setattr__(self, "label2id", None)
            self._settle_labels()

    def __getattr__(self, name: str) -> Any:
        """A config.json key kept in ``extra`` reads as an attribute (``config.transformers_weights``),
        as on transformers' configs. Only reached when no field or method has the name."""
        extra = self.__dict__.get("extra")
        if extra is not None and name in extra:
            return extra[name]
        raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")

    def _settle_pruned_heads(self) -> None:
        """JSON object keys are strings: turn pruned_heads' layer keys back into ints, and check them."""
        if not isinstance(self.pruned_heads, dict):
            raise ConfigError(f"BertConfig.pruned_heads must map layer -> list of heads, got {self.pruned_heads!r}")
        try:
            self.pruned_heads = {int(layer): sorted({int(h) for h in heads}) for layer, heads in self.pruned_heads.items()}
        except (TypeError, ValueError):
            raise ConfigError(f"BertConfig.pruned_heads must map layer -> list of head indices, got {self.pruned_heads!r}") from None
        for layer, heads in self.pruned_heads.items():
            if not 0 <= layer < self.num_hidden_layers:
                raise ConfigError(f"BertConfig.pruned_heads names layer {layer}; the model has layers 0..{self.num_hidden_layers - 1}")
            bad = [h for h in heads if not 0 <= h < self.num_attention_heads]
            if bad:
                raise ConfigError(f"BertConfig.pruned_heads[{layer}] names head {bad[0]}; layers have heads 0..{self.num_attention_heads - 1}")

    def _settle_labels(self) -> None:
        """Make num_labels, id2label and label2id agree, as transformers' PretrainedConfig does:
        JSON object keys are strings, so id2label's keys are turned back into ints; a
        num_labels that disagrees with id2label wins and rebuilds generic labels."""
        if self.id2label is not None:
            if not isinstance(self.id2label, dict):
                raise ConfigError(f"BertConfig.id2label must be a mapping of class index to name, got {self.id2label!r}")
            try:
                self.id2label = {int(k): v for k, v in self.id2label.items()}
            except (TypeError, ValueError):
                raise ConfigError(f"BertConfig.id2label keys must be class indices, got {list(self.id2label)}") from None
        if self.num_labels is None:
            self.num_labels = len(self.id2label) if self.id2label is not None else 2
        if isinstance(self.num_labels, bool) or not isinstance(self.num_labels, int) or self.num_labels <= 0:
            raise ConfigError(f"BertConfig.num_labels must be a positive int, got {self.num_labels!r}")
        if self.id2label is None or len(self.id2label) != self.num_labels:
            if self.id2label is not None:
                logger.info("num_labels=%d replaces id2label's %d labels with generic ones",
                               self.num_labels, len(self.id2label))
            self.id2label = {i: f"LABEL_{i}" for i in range(self.num_labels)}
            self.label2id = None
        if self.label2id is None:
            self.label2id = {name: i for i, name in self.id2label.items()}

    # ------------------------------------------------------------------ checks
    def validate(self) -> None:
        """Raise ConfigError naming the first field whose value cannot work, and why."""
        positive = (
            "vocab_size",
            "hidden_size",
            "num_hidden_layers",
            "num_attention_heads",
            "intermediate_size",
            "max_position_embeddings",
            "type_vocab_size",
        )
        for name in positive:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ConfigError(f"BertConfig.{name} must be an int, got {value!r} ({type(value).__name__})")
            if value <= 0:
                raise ConfigError(f"BertConfig.{name} must be positive, got {value}")
            if value > MAX_SIZE:
                raise ConfigError(f"BertConfig.{name} must be at most {MAX_SIZE} (a tensor dimension), got {value}")
        if not isinstance(self.hidden_act, str) or self.hidden_act not in ACT2FN:
            raise ConfigError(
                f"BertConfig.hidden_act {self.hidden_act!r} is not a known activation; "
                f"choose one of {sorted(ACT2FN)}"
            )
        for name in ("hidden_dropout_prob", "attention_probs_dropout_prob"):
            self._check_probability(name, getattr(self, name))
        if self.classifier_dropout is not None:
            self._check_probability("classifier_dropout", self.classifier_dropout)
        for name in ("layer_norm_eps", "initializer_range"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ConfigError(f"BertConfig.{name} must be a finite number, got {value!r}")
        if self.layer_norm_eps <= 0:
            raise ConfigError(f"BertConfig.layer_norm_eps must be positive, got {self.layer_norm_eps}")
        if self.initializer_range < 0:
            raise ConfigError(f"BertConfig.initializer_range must be >= 0, got {self.initializer_range}")
        if self.pad_token_id is not None:
            if isinstance(self.pad_token_id, bool) or not isinstance(self.pad_token_id, int):
                raise ConfigError(f"BertConfig.pad_token_id must be an int or None, got {self.pad_token_id!r}")
            if not 0 <= self.pad_token_id < self.vocab_size:
                raise ConfigError(
                    f"BertConfig.pad_token_id ({self.pad_token_id}) must index a row of the vocabulary "
                    f"[0, vocab_size={self.vocab_size})"
                )
        if self.position_embedding_type not in POSITION_EMBEDDING_TYPES:
            raise ConfigError(
                f"BertConfig.position_embedding_type {self.position_embedding_type!r} is not one of "
                f"{POSITION_EMBEDDING_TYPES}"
            )
        if isinstance(self.chunk_size_feed_forward, bool) or not isinstance(self.chunk_size_feed_forward, int):
            raise ConfigError(
                f"BertConfig.chunk_size_feed_forward must be an int, got {self.chunk_size_feed_forward!r}"
            )
        if self.chunk_size_feed_forward < 0:
            raise ConfigError(
                f"BertConfig.chunk_size_feed_forward must be >= 0 (0 = no chunking), got {self.chunk_size_feed_forward}"
            )
        for name in ("is_decoder", "add_cross_attention", "use_cache", "tie_word_embeddings",
                     "output_attentions", "output_hidden_states", "return_dict"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(f"BertConfig.{name} must be true or false, got {getattr(self, name)!r}")
        if self.add_cross_attention and not self.is_decoder:
            raise ConfigError("BertConfig.add_cross_attention=True needs is_decoder=True: only a decoder cross-attends")
        problem_types = (None, "regression", "single_label_classification", "multi_label_classification")
        if self.problem_type not in problem_types:
            raise ConfigError(f"BertConfig.problem_type {self.problem_type!r} is not one of {problem_types}")
        if not isinstance(self.attn_implementation, str):
            raise ConfigError(f"BertConfig.attn_implementation must be a string, got {self.attn_implementation!r}")

    def validate_for_model(self) -> None:
        """``validate``, plus what only a model needs: sizes that must fit one another.

        Kept apart from ``validate`` because transformers and Google accept such a config
        and refuse the *model* (Google's own tests write ``hidden_size=37`` with 12 heads).
        """
        self.validate()
        if self.hidden_size % self.num_attention_heads != 0:
            raise ConfigError(
                f"BertConfig.hidden_size ({self.hidden_size}) must be divisible by num_attention_heads "
                f"({self.num_attention_heads}) to build a model: each head gets hidden_size / num_attention_heads dimensions"
            )

    # ------------------------------------------------- transformers' config API
    @property
    def use_return_dict(self) -> bool:
        """transformers' name for ``return_dict`` (its ``PretrainedConfig.use_return_dict``)."""
        return self.return_dict

    @property
    def _attn_implementation(self) -> str:
        """transformers' name for ``attn_implementation`` (its tests and tools set this one)."""
        return self.attn_implementation

    @_attn_implementation.setter
    def _attn_implementation(self, value: str) -> None:
        self.attn_implementation = value

    def __iter__(self) -> Iterator[str]:
        """The field names, as iterating a transformers config yields its attributes."""
        return iter(self.field_names())

    def get_text_config(self, decoder: bool | None = None, encoder: bool | None = None) -> "BertConfig":
        """The config of the text model: for BERT, itself (transformers asks every config
        this, for multimodal ones; Trainer and sentence-transformers call it)."""
        return self

    def update(self, values: dict[str, Any]) -> None:
        """Set several fields from a dict, as transformers' ``PretrainedConfig.update``;
        keys that are not fields go to ``extra``. The result is checked as a whole."""
        if not isinstance(values, dict):
            raise TypeError(f"BertConfig.update takes a dict, got {type(values).__name__}")
        before = dataclasses.replace(self)
        for key, value in values.items():
            if key in self.field_names():
                setattr(self, key, value)
            else:
                self.extra[key] = value
        try:
            if "num_labels" in values or "id2label" in values:
                if "num_labels" in values and "id2label" not in values:
                    self.id2label = None
                self.label2id = values.get("label2id")
                self._settle_labels()
            self.validate()
            self._settle_pruned_heads()
        except ConfigError:
            for f in dataclasses.fields(self):  # refused: leave the config as it was
                setattr(self, f.name, getattr(before, f.name))
            raise

    @staticmethod
    def _check_probability(name: str, value: Any) -> None:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
            raise ConfigError(f"BertConfig.{name} must be a probability in [0, 1], got {value!r}")

    # --------------------------------------------------------- dict / json
    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        """The names a config.json key must have to land in a typed field (not in ``extra``)."""
        return tuple(f.name for f in dataclasses.fields(cls) if f.name != "extra")

    @classmethod
    def from_dict(cls, values: dict[str, Any], **overrides: Any) -> "BertConfig":
        """Build a config from a ``config.json`` dict; unknown keys go to ``extra``.

        ``overrides`` must name real fields (a typo raises TypeError).
        """
        if not isinstance(values, dict):
            raise ConfigError(f"a BERT config must be a JSON object, got {type(values).__name__}")
        known = set(cls.field_names())
        for name in overrides:
            if name not in known:
                raise TypeError(f"BertConfig has no field {name!r}")
        kwargs: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for key, value in values.items():
            if key in known and key not in cls._NOT_SERIALISED:
                kwargs[key] = value
            elif key != "model_type" and key not in cls._FILE_HISTORY_KEYS:
                extra[key] = value
        if values.get("model_type", cls.model_type) != cls.model_type:
            raise ConfigError(f"config has model_type {values['model_type']!r}; BertConfig reads model_type 'bert'")
        kwargs.update(overrides)
        return cls(**kwargs, extra=extra)

    def to_dict(self) -> dict[str, Any]:
        """The ``config.json`` content: every field, then the kept unknown keys."""
        out: dict[str, Any] = {"model_type": self.model_type}
        for f in dataclasses.fields(self):
            if f.name not in self._NOT_SERIALISED:
                out[f.name] = getattr(self, f.name)
        out["dtype"] = None if self.dtype is None else str(self.dtype).removeprefix("torch.")
        for key, value in self.extra.items():
            if key not in self._DIRECTORY_KEYS:
                out.setdefault(key, value)
        return out

    def to_diff_dict(self) -> dict[str, Any]:
        """The fields whose values differ from a default ``BertConfig()``: what
        ``BertConfig(**config.to_diff_dict())`` needs to rebuild this config."""
        default = type(self)()
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if f.name not in self._NOT_SERIALISED and getattr(self, f.name) != getattr(default, f.name)}

    def to_json_string(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n"

    def to_json_file(self, json_file_path: str | os.PathLike) -> str:
        """Write ``to_json_string()`` to ``json_file_path``, whole or not at all; return the path."""
        return write_text(os.fspath(json_file_path), self.to_json_string())

    @classmethod
    def from_json_file(cls, path: str | os.PathLike, check_model: bool = False, **overrides: Any) -> "BertConfig":
        """Read an HF ``config.json`` or a Google ``bert_config.json`` (detected by its keys).

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
    def from_google_dict(cls, values: dict[str, Any], **overrides: Any) -> "BertConfig":
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
        **overrides: Any,
    ) -> "BertConfig":
        """Read the config of a checkpoint: a directory with ``config.json`` (or Google's
        ``bert_config.json``), the JSON file itself, a Google checkpoint prefix or ``.zip``,
        or a hub id (the local cache, or downloaded as ``from_pretrained`` would).
        ``subfolder``: the config is in this folder of the directory (transformers' argument).
        ``overrides`` replace fields (``num_labels=3``); ``name_or_path`` records the source."""
        from .checkpoints.resolve import resolve_config

        source = os.fspath(pretrained_model_name_or_path)
        if subfolder:
            source = os.path.join(source, subfolder)
        with resolve_config(source, revision, cache_dir, local_files_only) as path:
            config = cls.from_json_file(path, **overrides)
        config.name_or_path = source
        return config

    def save_pretrained(self, directory: str | os.PathLike) -> str:
        """Write ``config.json`` into ``directory`` (created if needed), whole or not at all
        (``file_utils.write_text``); return its path."""
        path = os.path.join(os.fspath(directory), "config.json")
        os.makedirs(directory, exist_ok=True)
        with directory_lock(directory, exclusive=True):
            return write_text(path, self.to_json_string())


def _config_dtype(value: Any) -> torch.dtype | None:
    """``BertConfig.dtype`` from what a caller or a config.json gives: a torch dtype, its
    name (``"float16"``, ``"torch.float16"``) or None."""
    if value is None or isinstance(value, torch.dtype):
        return value
    candidate = getattr(torch, value.removeprefix("torch."), None) if isinstance(value, str) else None
    if not isinstance(candidate, torch.dtype):
        raise ConfigError(f"BertConfig.dtype must be a torch dtype or its name (e.g. 'float32'), got {value!r}")
    return candidate


def is_google_config(values: dict[str, Any]) -> bool:
    """True for the dict of a Google ``bert_config.json``: no ``model_type``, Google's keys only.

    Multilingual releases add pooler_* and ``directionality`` keys, which transformers
    ignores too; they are allowed here and kept in ``extra``.

    transformers: none (its conversion script takes any bert_config.json on trust)
    """
    if "model_type" in values:
        return False
    google_extras = {"directionality", "pooler_fc_size", "pooler_num_attention_heads",
                     "pooler_num_fc_layers", "pooler_size_per_head", "pooler_type"}
    return set(values) <= set(GOOGLE_CONFIG_KEYS) | google_extras and "hidden_size" in values
