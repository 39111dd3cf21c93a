"""Checks on what a caller passes to a model: input shapes, id ranges, labels.

Every forward in ``modeling_bert.py`` makes one call here and then reads as the
computation alone. The checks exist so that a mistake reads as a sentence about the
argument ("token_type_ids must lie in [0, type_vocab_size=2), got values in [0, 5]")
rather than an IndexError from deep inside ``nn.Embedding``. transformers has no such
module: its forwards check little, and a bad id fails inside the embedding.

Shapes use the legend of ``modeling_bert.py``: B batch, T sequence, H hidden, K choices.
"""

from __future__ import annotations

from typing import Protocol

import torch

from .pytorch_utils import check_shape


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
