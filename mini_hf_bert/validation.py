"""Checks on what a caller passes to a model: a config's values, input shapes, id ranges, labels.

Every forward in ``modeling_bert.py`` makes one call here and then reads as the
computation alone. The checks exist so that a mistake reads as a sentence about the
argument ("token_type_ids must lie in [0, type_vocab_size=2), got values in [0, 5]")
rather than an IndexError from deep inside ``nn.Embedding``. transformers has no such
module: its forwards check little, and a bad id fails inside the embedding.

Shapes use the legend of ``modeling_bert.py``: B batch, T sequence, H hidden, K choices.
"""

from __future__ import annotations

import functools
import logging
import math
from typing import Any, Protocol

import torch

from .activations import ACT2FN
from .pytorch_utils import check_shape

logger = logging.getLogger(__name__)

#: The values ``position_embedding_type`` may take (transformers 3.x/4.x).
POSITION_EMBEDDING_TYPES = ("absolute", "relative_key", "relative_key_query")
#: The largest size a config may give: torch indexes tensor dimensions with 64-bit ints,
#: and no BERT comes near 2**31 (the largest vocabularies hold about 250,000 tokens).
MAX_SIZE = 2**31 - 1
#: The losses BertForSequenceClassification knows (None: inferred from the labels per call).
PROBLEM_TYPES = (None, "regression", "single_label_classification", "multi_label_classification")
#: Config fields that are sizes, flags and probabilities, checked as such.
SIZE_FIELDS = ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
               "max_position_embeddings", "type_vocab_size")
FLAG_FIELDS = ("is_decoder", "add_cross_attention", "use_cache", "tie_word_embeddings", "output_attentions",
               "output_hidden_states", "return_dict", "torchscript")
PROBABILITY_FIELDS = ("hidden_dropout_prob", "attention_probs_dropout_prob")


class ConfigError(ValueError):
    """A configuration value that cannot describe a BERT model.

    transformers: none (it raises ValueError and OSError)
    """


class CheckedConfig(Protocol):
    """The fields of the model's config that the checks read: a BertConfig has them all.
    Named by their shape rather than imported, so that this module, which the model file
    imports, stays below configuration_bert (and its file I/O) in the import graph."""

    vocab_size: int
    hidden_size: int
    num_hidden_layers: int
    num_attention_heads: int
    max_position_embeddings: int
    type_vocab_size: int
    is_decoder: bool
    add_cross_attention: bool
    pad_token_id: int | None


#: The label CrossEntropyLoss ignores by default (its ``ignore_index``), as in transformers.
IGNORE_INDEX = -100


def values_are_checkable(tensor: torch.Tensor) -> bool:
    """Whether a check may read a tensor's values: only in eager mode on the CPU.

    Reading values (``int(ids.max())``) is free on the CPU, but on an accelerator it waits
    for the device (a host sync on every forward), and inside ``torch.compile``,
    ``torch.export`` or ``torch.jit.trace`` it is a data-dependent branch: a graph break,
    a failed ``fullgraph=True`` / export, or a trace that bakes one input's answer in. So
    value checks run in eager CPU use, where a bad id gets a sentence instead of an
    IndexError from inside nn.Embedding; elsewhere the embedding's own bounds check (a
    device-side assert on GPUs) remains. Shape and dtype checks always run: they read no values.
    """
    return tensor.device.type == "cpu" and not (torch.compiler.is_compiling() or torch.jit.is_tracing())


#: The index dtypes nn.Embedding looks up.
INDEX_DTYPES = (torch.int64, torch.int32)


def check_index_range(name: str, ids: torch.Tensor, size: int, field_name: str) -> None:
    """Integer ids in [0, size), ``field_name`` being the config field that sets ``size``."""
    if not isinstance(ids, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(ids).__name__}")
    if ids.dtype.is_floating_point or ids.dtype.is_complex or ids.dtype == torch.bool:
        raise TypeError(f"{name} must hold integer ids, got dtype {ids.dtype}")
    if ids.dtype not in INDEX_DTYPES:
        raise TypeError(f"{name} must be torch.int64 or torch.int32 (the index types nn.Embedding reads), "
                        f"got dtype {ids.dtype}; convert it with .long()")
    if values_are_checkable(ids) and ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= size):
        raise ValueError(
            f"{name} must lie in [0, {field_name}={size}), got values in [{int(ids.min())}, {int(ids.max())}]"
        )


# --------------------------------------------------------------------------------------
# Model inputs
# --------------------------------------------------------------------------------------


#: The labels of BERT's task models: what ``output_switches`` lets an encoder be handed and ignore.
LABEL_KEYWORDS = ("labels", "next_sentence_label", "start_positions", "end_positions")


def output_switches(model: torch.nn.Module, kwargs: dict[str, Any], group: type) -> tuple[bool, bool, bool]:
    """``(output_attentions, output_hidden_states, return_dict)`` of a call: each as given in
    ``kwargs``, or the config's default where it is absent or None. A keyword that ``group``
    (the TypedDict of the forward's ``**kwargs``) does not name is refused, naming it, as a
    signature would; but not a task's labels (``LABEL_KEYWORDS``), which transformers' tools
    hand an encoder with the rest of a batch (generate for an encoder-decoder does), and
    which an encoder has no use for, as in transformers.

    transformers: ``utils.generic.check_model_inputs`` (5.x, the decorator that reads them)
    """
    accepted = group.__required_keys__ | group.__optional_keys__
    unknown = sorted(set(kwargs) - accepted - set(LABEL_KEYWORDS))
    if unknown:
        raise TypeError(f"{type(model).__name__}.forward() got an unexpected keyword argument {unknown[0]!r} "
                        f"(by keyword it takes {', '.join(sorted(accepted))})")
    config = model.config

    def switch(name: str, default: bool) -> bool:
        return default if kwargs.get(name) is None else kwargs[name]

    return (switch("output_attentions", config.output_attentions),
            switch("output_hidden_states", config.output_hidden_states), switch("return_dict", config.use_return_dict))


def check_model_inputs(
    config: CheckedConfig,
    input_ids: torch.Tensor | None,
    inputs_embeds: torch.Tensor | None,
    token_type_ids: torch.Tensor | None,
    position_ids: torch.Tensor | None,
    past_key_values: tuple | None = None,
    encoder_hidden_states: torch.Tensor | None = None,
    attention_mask: torch.Tensor | None = None,
    dtype: torch.dtype | None = None,
) -> tuple[int, int, int]:
    """Everything ``BertModel.forward`` is given, checked against the config (``dtype``:
    the model's parameters', which ``inputs_embeds`` must not outrank).

    Returns:
        (B, T, P): batch size, new sequence length, and positions already in the cache.
    """
    if encoder_hidden_states is not None and not config.add_cross_attention:
        raise ValueError(
            "encoder_hidden_states were given, but this model has no cross-attention layers: build it "
            "with is_decoder=True and add_cross_attention=True to attend over an encoder's output"
        )
    past_length = _check_cache(config, past_key_values)
    if torch.is_tensor(inputs_embeds) and inputs_embeds.dim() != 3:
        raise ValueError(
            f"inputs_embeds must be (batch, seq, hidden_size), got shape {tuple(inputs_embeds.shape)}. It is the 5th "
            "positional argument, as in transformers 5.x; transformers 3.x and 4.x read the 5th as head_mask: pass "
            "a head mask by keyword, head_mask=..."
        )
    if (input_ids is None) == (inputs_embeds is None):
        raise ValueError("pass exactly one of input_ids or inputs_embeds")
    if input_ids is not None:
        check_shape("input_ids", input_ids, (None, None), "(batch, seq)")
        check_index_range("input_ids", input_ids, config.vocab_size, "vocab_size")
        batch_size, seq_length = input_ids.shape
    else:
        check_shape("inputs_embeds", inputs_embeds, (None, None, config.hidden_size), "(batch, seq, hidden_size)")
        _check_embeddings_dtype(inputs_embeds, dtype)
        batch_size, seq_length = inputs_embeds.shape[:2]
    if seq_length == 0:
        raise ValueError("the input has sequence length 0: there is nothing to encode (a tokenizer gives at least "
                         "[CLS] [SEP])")
    if attention_mask is not None:
        check_attention_mask_values(attention_mask)
    elif input_ids is not None:
        warn_if_padding_without_mask(config, input_ids)
    if position_ids is None and past_length + seq_length > config.max_position_embeddings:
        raise ValueError(
            f"sequence length {past_length + seq_length} exceeds max_position_embeddings="
            f"{config.max_position_embeddings}: there are no position embeddings past that; truncate the input"
        )
    if token_type_ids is not None:
        check_shape("token_type_ids", token_type_ids, (batch_size, seq_length), "(batch, seq)")
        check_index_range("token_type_ids", token_type_ids, config.type_vocab_size, "type_vocab_size")
    if position_ids is not None:
        if position_ids.dim() != 2 or position_ids.shape[0] not in (1, batch_size) or position_ids.shape[1] != seq_length:
            raise ValueError(
                f"position_ids must be (batch, seq) = ({batch_size}, {seq_length}) or (1, {seq_length}), "
                f"got shape {tuple(position_ids.shape)}"
            )
        check_index_range("position_ids", position_ids, config.max_position_embeddings, "max_position_embeddings")
    if encoder_hidden_states is not None:
        check_shape("encoder_hidden_states", encoder_hidden_states, (batch_size, None, config.hidden_size),
                    "(batch, encoder_seq, hidden_size)")
    return batch_size, seq_length, past_length


def warn_if_not_causal(config: CheckedConfig, model_name: str, causal: bool) -> None:
    """A warning where a head's config says the other direction: a causal LM built without
    ``is_decoder`` (it would see the future), or a masked LM built with it (it would not see
    the context to the right).

    transformers: the same warnings in ``BertLMHeadModel.__init__`` and ``BertForMaskedLM.__init__``
    """
    if config.is_decoder != causal:
        logger.warning("%s is %s: build it with is_decoder=%s", model_name,
                       "meant to be a decoder, with causal attention" if causal else "bidirectional", causal)


def warn_if_padding_without_mask(config: CheckedConfig, input_ids: torch.Tensor) -> None:
    """Warn, once per process, when ``input_ids`` start or end with the pad token and no
    attention mask was given: the padding is then attended as if it were text, and the
    outputs of the real tokens change with it. Checked on the CPU in eager mode only
    (``values_are_checkable``: elsewhere reading a value waits for the device).

    transformers 4.x: ``modeling_utils.PreTrainedModel.warn_if_padding_and_no_attention_mask``
    """
    pad = config.pad_token_id
    if pad is None or not values_are_checkable(input_ids) or not bool((input_ids[:, [0, -1]] == pad).any()):
        return
    _warn_once(f"input_ids start or end with the pad token (id {pad}) and no attention_mask was given, so the padding "
               "is attended as if it were text. We strongly recommend passing in an `attention_mask` (the tokenizer "
               "returns one with padding=True).")


@functools.lru_cache(maxsize=None)
def _warn_once(message: str) -> None:
    logger.warning(message)


def _check_embeddings_dtype(inputs_embeds: torch.Tensor, dtype: torch.dtype | None) -> None:
    if not inputs_embeds.dtype.is_floating_point:
        raise TypeError(f"inputs_embeds must hold floating-point vectors, got dtype {inputs_embeds.dtype}")
    if dtype is not None and not torch.is_autocast_enabled(inputs_embeds.device.type) \
            and torch.promote_types(inputs_embeds.dtype, dtype) != dtype:  # would turn the whole model's dtype
        raise TypeError(f"inputs_embeds must not be wider than the model's {dtype}, got dtype {inputs_embeds.dtype}; "
                        f"convert it with .to({dtype})")


def check_attention_mask_values(attention_mask: torch.Tensor) -> None:
    """A mask is a tensor of 1 (attend) and 0 (padding), booleans, or weights in between;
    its shape is checked where it is used (``masking_utils``)."""
    if not isinstance(attention_mask, torch.Tensor):
        raise TypeError(f"attention_mask must be a torch.Tensor, got {type(attention_mask).__name__}")
    if attention_mask.dtype.is_complex:
        raise TypeError(f"attention_mask must hold 1 (attend) and 0 (padding), got dtype {attention_mask.dtype}")
    if attention_mask.dtype != torch.bool and values_are_checkable(attention_mask) and attention_mask.numel():
        low, high = float(attention_mask.min()), float(attention_mask.max())
        if not (0.0 <= low and high <= 1.0):  # also catches NaN
            raise ValueError(f"attention_mask must hold 1 (attend) and 0 (padding), got values in [{low:g}, {high:g}]")


def _check_cache(config: CheckedConfig, past_key_values: tuple | None) -> int:
    """The number of positions P before the input: a decoder's cache, or an encoder's prefix
    (peft's prefix tuning: learned keys and values every token attends to). Either must
    have one (K, V) entry per layer, each (B, N, P, D)."""
    if past_key_values is None:
        return 0
    if not isinstance(past_key_values, (tuple, list)) or len(past_key_values) != config.num_hidden_layers:
        what = "a previous call with use_cache=True returned" if config.is_decoder else "a prefix has them"
        raise ValueError(
            f"past_key_values must hold one (K, V[, cross K, cross V]) tuple per layer "
            f"({config.num_hidden_layers}), as {what}"
        )
    head_dim = config.hidden_size // config.num_attention_heads
    for layer, entry in enumerate(past_key_values):
        if not isinstance(entry, (tuple, list)) or len(entry) < 2 or not all(
                isinstance(t, torch.Tensor) and t.dim() == 4 and t.shape[-1] == head_dim for t in entry[:2]):
            raise ValueError(f"past_key_values[{layer}] must start with K and V, each (batch, heads, positions, "
                             f"{head_dim})")
    return past_key_values[0][0].shape[2]  # (B, N, P, D)


def check_multiple_choice_inputs(input_ids: torch.Tensor | None, inputs_embeds: torch.Tensor | None) -> int:
    """(B, K, T) ids or (B, K, T, H) vectors; returns K, the number of choices."""
    reference = input_ids if input_ids is not None else inputs_embeds
    if reference is None:
        raise ValueError("pass exactly one of input_ids or inputs_embeds")
    expected_dim = 3 if input_ids is not None else 4
    if reference.dim() != expected_dim:
        what = ("input_ids must be (batch, num_choices, seq)" if input_ids is not None
                else "inputs_embeds must be (batch, num_choices, seq, hidden)")
        raise ValueError(f"{what}, got shape {tuple(reference.shape)}")
    return reference.shape[1]


# --------------------------------------------------------------------------------------
# Labels
# --------------------------------------------------------------------------------------


def check_labels(name: str, labels: torch.Tensor, shape: tuple[int, ...], integer: bool) -> None:
    """Labels must have the expected shape and kind; say which and what was expected."""
    if not isinstance(labels, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(labels).__name__}")
    if integer and (labels.dtype.is_floating_point or labels.dtype == torch.bool):
        raise TypeError(f"{name} must hold integer class ids, got dtype {labels.dtype}")
    if tuple(labels.shape) != shape:
        raise ValueError(f"{name} must have shape {shape} to match the logits, got {tuple(labels.shape)}")


def check_class_labels(name: str, labels: torch.Tensor, shape: tuple[int, ...], num_classes: int) -> None:
    """Integer class ids of ``shape``, each in [0, num_classes) or -100 (ignored)."""
    check_labels(name, labels, shape, integer=True)
    if not values_are_checkable(labels):
        return
    valid = (labels == IGNORE_INDEX) | ((labels >= 0) & (labels < num_classes))
    if not bool(valid.all()):
        bad = labels[~valid][0].item()
        raise ValueError(f"{name} must be in [0, {num_classes}) or -100 (ignored), got {bad}")


def check_pretraining_labels(
    labels: torch.Tensor, next_sentence_label: torch.Tensor, prediction_shape: tuple[int, int, int]
) -> None:
    """MLM labels (B, T) in [0, V) or -100, and NSP labels (B,) in {0, 1}."""
    batch_size, seq_length, vocab_size = prediction_shape
    check_class_labels("labels", labels, (batch_size, seq_length), vocab_size)
    check_class_labels("next_sentence_label", next_sentence_label, (batch_size,), 2)


def check_sequence_classification_labels(labels: torch.Tensor, logits: torch.Tensor, problem_type: str) -> None:
    """Labels as ``problem_type`` needs them, for (B, C) logits."""
    batch_size, num_labels = logits.shape
    if problem_type == "regression":
        if not labels.dtype.is_floating_point:
            raise TypeError(f"labels for regression must be floats, got dtype {labels.dtype}")
        if num_labels == 1 and labels.numel() != batch_size:
            raise ValueError(
                f"labels for regression must have shape ({batch_size},) or ({batch_size}, 1), got {tuple(labels.shape)}"
            )
        if num_labels > 1:
            check_labels("labels", labels, (batch_size, num_labels), integer=False)
    elif problem_type == "single_label_classification":
        check_class_labels("labels", labels, (batch_size,), num_labels)
    else:  # multi_label_classification
        check_labels("labels", labels, (batch_size, num_labels), integer=False)


def check_span_positions(
    start_positions: torch.Tensor, end_positions: torch.Tensor, batch_size: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """(B,) or (B, 1) answer-span token indices -> two (B,) tensors."""
    checked = []
    for name, positions in (("start_positions", start_positions), ("end_positions", end_positions)):
        if isinstance(positions, torch.Tensor) and positions.dim() > 1:
            positions = positions.squeeze(-1)  # (B, 1) from multi-GPU gathering, as transformers accepts
        check_labels(name, positions, (batch_size,), integer=True)
        checked.append(positions)
    return checked[0], checked[1]


# --------------------------------------------------------------------------------------
# The config
# --------------------------------------------------------------------------------------


def check_config(config) -> tuple[dict[int, str], dict[str, int], dict[int, list[int]], torch.dtype | None]:
    """Raise ConfigError naming the first field of a BertConfig whose value cannot work, and
    why. Returns what JSON cannot say, settled: id2label with int keys, label2id, pruned_heads
    with int keys and sorted heads, and the dtype as a torch.dtype.

    transformers: none (its configs take any value; a model fails later, or not at all)
    """
    for name in SIZE_FIELDS:
        value = getattr(config, name)
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"BertConfig.{name} must be an int, got {value!r} ({type(value).__name__})")
        if value > MAX_SIZE:
            raise ConfigError(f"BertConfig.{name} must be at most {MAX_SIZE} (a tensor dimension), got {value}")
    if not isinstance(config.hidden_act, str) or config.hidden_act not in ACT2FN:
        raise ConfigError(f"BertConfig.hidden_act {config.hidden_act!r} is not a known activation; "
                          f"choose one of {sorted(ACT2FN)}")
    for name in PROBABILITY_FIELDS + (("classifier_dropout",) if config.classifier_dropout is not None else ()):
        value = getattr(config, name)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
            raise ConfigError(f"BertConfig.{name} must be a probability in [0, 1], got {value!r}")
    for name in ("layer_norm_eps", "initializer_range"):
        value = getattr(config, name)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ConfigError(f"BertConfig.{name} must be a finite number, got {value!r}")
    if config.layer_norm_eps <= 0:
        raise ConfigError(f"BertConfig.layer_norm_eps must be positive, got {config.layer_norm_eps}")
    if config.initializer_range < 0:
        raise ConfigError(f"BertConfig.initializer_range must be >= 0, got {config.initializer_range}")
    if config.pad_token_id is not None:
        if isinstance(config.pad_token_id, bool) or not isinstance(config.pad_token_id, int):
            raise ConfigError(f"BertConfig.pad_token_id must be an int or None, got {config.pad_token_id!r}")
        if config.vocab_size > 0 and not 0 <= config.pad_token_id < config.vocab_size:
            raise ConfigError(f"BertConfig.pad_token_id ({config.pad_token_id}) must index a row of the vocabulary "
                              f"[0, vocab_size={config.vocab_size})")
    if config.position_embedding_type not in POSITION_EMBEDDING_TYPES:
        raise ConfigError(f"BertConfig.position_embedding_type {config.position_embedding_type!r} is not one of "
                          f"{POSITION_EMBEDDING_TYPES}")
    chunk = config.chunk_size_feed_forward
    if isinstance(chunk, bool) or not isinstance(chunk, int):
        raise ConfigError(f"BertConfig.chunk_size_feed_forward must be an int, got {chunk!r}")
    if chunk < 0:
        raise ConfigError(f"BertConfig.chunk_size_feed_forward must be >= 0 (0 = no chunking), got {chunk}")
    for name in FLAG_FIELDS:
        if not isinstance(getattr(config, name), bool):
            raise ConfigError(f"BertConfig.{name} must be true or false, got {getattr(config, name)!r}")
    if config.add_cross_attention and not config.is_decoder:
        raise ConfigError("BertConfig.add_cross_attention=True needs is_decoder=True: only a decoder cross-attends")
    if config.problem_type not in PROBLEM_TYPES:
        raise ConfigError(f"BertConfig.problem_type {config.problem_type!r} is not one of {PROBLEM_TYPES}")
    if not isinstance(config.attn_implementation, str):
        raise ConfigError(f"BertConfig.attn_implementation must be a string, got {config.attn_implementation!r}")
    id2label, label2id = _labels(config.id2label, config.label2id)
    return id2label, label2id, _pruned_heads(config), _dtype(config.dtype)


def _labels(id2label, label2id) -> tuple[dict[int, str], dict[str, int]]:
    """id2label with int keys (JSON's are strings), and label2id (built from it where absent)."""
    if not isinstance(id2label, dict):
        raise ConfigError(f"BertConfig.id2label must be a mapping of class index to name, got {id2label!r}")
    if not id2label:
        raise ConfigError("BertConfig.id2label is empty: a classifier head needs at least one class")
    try:
        id2label = {int(k): v for k, v in id2label.items()}
    except (TypeError, ValueError):
        raise ConfigError(f"BertConfig.id2label keys must be class indices, got {list(id2label)}") from None
    return id2label, label2id if label2id is not None else {name: i for i, name in id2label.items()}


def _pruned_heads(config) -> dict[int, list[int]]:
    """pruned_heads with int layer keys (JSON's are strings) and sorted heads, each in range.
    A negative layer counts from the end, as 4.x's ``encoder.layer[-1]`` applies it; it is
    stored under the layer's own index, its heads joined to any given there."""
    if not isinstance(config.pruned_heads, dict):
        raise ConfigError(f"BertConfig.pruned_heads must map layer -> list of heads, got {config.pruned_heads!r}")
    layers = config.num_hidden_layers
    pruned: dict[int, list[int]] = {}
    for key, heads in config.pruned_heads.items():
        try:
            layer, heads = int(key), {int(h) for h in heads}
        except (TypeError, ValueError):
            raise ConfigError(f"BertConfig.pruned_heads must map layer -> list of head indices, got {config.pruned_heads!r}") from None
        if not -layers <= layer < layers:
            raise ConfigError(f"BertConfig.pruned_heads names layer {layer}; the model has layers 0..{layers - 1}")
        layer %= layers
        pruned[layer] = sorted(set(pruned.get(layer, [])) | heads)
    for layer, heads in pruned.items():
        bad = [h for h in heads if not 0 <= h < config.num_attention_heads]
        if bad:
            raise ConfigError(f"BertConfig.pruned_heads[{layer}] names head {bad[0]}; layers have heads 0..{config.num_attention_heads - 1}")
    return pruned


def _dtype(value) -> torch.dtype | None:
    """``BertConfig.dtype`` from what a caller or a config.json gives: a torch dtype, its
    name (``"float16"``, ``"torch.float16"``) or None."""
    if value is None or isinstance(value, torch.dtype):
        return value
    candidate = getattr(torch, value.removeprefix("torch."), None) if isinstance(value, str) else None
    if not isinstance(candidate, torch.dtype):
        raise ConfigError(f"BertConfig.dtype must be a torch dtype or its name (e.g. 'float32'), got {value!r}")
    return candidate


def check_model_sizes(config) -> None:
    """What only a model needs of a config: positive sizes that fit one another. Checked
    when a model is built, not when a config is (transformers and Google accept such a
    config, ``BertConfig(hidden_size=0)`` included, and the model fails or is empty).

    transformers: none (``BertSelfAttention.__init__`` raises the same ValueError)
    """
    for name in SIZE_FIELDS:
        if getattr(config, name) <= 0:
            raise ConfigError(f"BertConfig.{name} must be positive to build a model, got {getattr(config, name)}")
    if config.hidden_size % config.num_attention_heads != 0:
        raise ConfigError(
            f"BertConfig.hidden_size ({config.hidden_size}) must be divisible by num_attention_heads "
            f"({config.num_attention_heads}) to build a model: each head gets hidden_size / num_attention_heads dimensions"
        )
