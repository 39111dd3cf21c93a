"""Attention masks: the 0/1 padding mask a tokenizer returns -> the additive mask that
attention adds to its scores; and head masks, one multiplier per head and layer.

transformers 5.x builds these in ``masking_utils.py`` (``create_bidirectional_mask``,
``create_causal_mask``), the name kept here; 4.x had them as ``ModuleUtilsMixin`` methods
in ``modeling_utils.py`` and in ``modeling_attn_mask_utils.py``, which 5.x deprecates. The
function names are 4.x's (``get_extended_attention_mask``, ``invert_attention_mask``)
because those are the ones the source notes and most BERT code call.

Shapes use the legend of ``modeling_bert.py``: B batch, T query sequence, S key sequence.
"""

from __future__ import annotations

import torch

from .pytorch_utils import check_shape


def get_extended_attention_mask(
    attention_mask: torch.Tensor,
    input_shape: tuple[int, int],
    dtype: torch.dtype = torch.float32,
    is_decoder: bool = False,
    prefix_length: int = 0,
) -> torch.Tensor:
    """Turn a 0/1 "may attend" mask into the additive mask attention adds to its scores.

    M = (1 − m) · finfo(dtype).min: 0 where a query may attend a key, the most negative
    finite number where it may not, so that softmax(QKᵀ/√D + M) gives masked keys the
    weight e^min = 0.

    Why ``finfo(dtype).min`` and not ``-10000.0``: transformers 3.4 (the version the seed
    notes annotate) used -10000, a number fp16 can hold (its most negative is -65504), but
    a soft mask: a masked key regains weight once the row's own scores fall near -10000,
    as they did for a T5 trained from scratch (transformers issue #14859); transformers
    4.x switched to the dtype's own minimum (PR #17306). A query whose keys are *all*
    masked (a fully padded row) tells them apart: -10000 shifts every score of the row by
    the same amount, and softmax ignores a constant shift, so the row is softmax of the
    scores as if unmasked; each score plus ``finfo.min`` rounds to ``finfo.min`` itself,
    so the row is uniform. Not ``-inf``: softmax(-inf, ..., -inf) = NaN.

    Args:
        attention_mask: (B, S) — 1 for tokens to attend, 0 for padding — or
            (B, T, S) — one row of allowed keys per query. bool or any number type.
        input_shape: (B, T), the batch and sequence of the queries.
        dtype: the model's floating dtype; fixes the fill value.
        is_decoder: for a 2D mask, also forbid attending to later positions (causal).
            With a key/value cache, S > T and the first S - T keys are the past,
            visible to every query. A 3D mask is used as given.
        prefix_length: an encoder's P prefix positions (peft's prefix tuning) before the
            T input positions: its 2D mask then covers S = P + T keys.

    Returns:
        (B, 1, 1, S) for a 2D encoder mask, else (B, 1, T, S); the 1 broadcasts over heads.

    transformers 4.x: ``modeling_utils.ModuleUtilsMixin.get_extended_attention_mask`` (5.x: ``masking_utils.create_bidirectional_mask``)
    """
    if not isinstance(attention_mask, torch.Tensor):
        raise TypeError(f"attention_mask must be a torch.Tensor, got {type(attention_mask).__name__}")
    if not dtype.is_floating_point:
        raise ValueError(f"dtype must be a floating dtype, got {dtype}")
    batch_size, seq_length = input_shape
    if attention_mask.dim() == 3:
        check_shape("attention_mask", attention_mask, (batch_size, seq_length, None), "(batch, from_seq, to_seq)")
        keep = attention_mask[:, None, :, :]  # (B, 1, T, S)
    elif attention_mask.dim() == 2:
        if attention_mask.shape[0] != batch_size or (
            attention_mask.shape[1] != prefix_length + seq_length if not is_decoder
            else attention_mask.shape[1] < seq_length
        ):
            want = f"({batch_size}, {prefix_length + seq_length})" if not is_decoder else f"({batch_size}, >= {seq_length})"
            raise ValueError(
                f"attention_mask must be (batch, seq) = {want} to match the input, got shape {tuple(attention_mask.shape)}"
            )
        if is_decoder:
            keep = _causal_keep_mask(attention_mask, seq_length)  # (B, 1, T, S)
        else:
            keep = attention_mask[:, None, None, :]  # (B, 1, 1, S)
    else:
        raise ValueError(
            f"attention_mask must be 2D (batch, seq) or 3D (batch, from_seq, to_seq), got shape "
            f"{tuple(attention_mask.shape)}"
        )
    keep = keep.to(dtype)
    return (1.0 - keep) * torch.finfo(dtype).min


def invert_attention_mask(
    encoder_attention_mask: torch.Tensor, encoder_shape: tuple[int, int], dtype: torch.dtype = torch.float32
) -> torch.Tensor:
    """The encoder's 0/1 padding mask, as cross-attention adds it: (B, S_enc) -> (B, 1, 1, S_enc)
    or (B, T, S_enc) -> (B, 1, T, S_enc), 0 to keep and finfo(dtype).min to drop (transformers
    4.x's ``invert_attention_mask``; never causal).

    transformers 4.x: ``modeling_utils.ModuleUtilsMixin.invert_attention_mask``
    """
    if encoder_attention_mask.dim() == 2:
        check_shape("encoder_attention_mask", encoder_attention_mask, encoder_shape, "(batch, encoder_seq)")
        keep = encoder_attention_mask[:, None, None, :]  # (B, 1, 1, S_enc)
    elif encoder_attention_mask.dim() == 3:
        check_shape("encoder_attention_mask", encoder_attention_mask, (encoder_shape[0], None, encoder_shape[1]),
                    "(batch, seq, encoder_seq)")
        keep = encoder_attention_mask[:, None, :, :]  # (B, 1, T, S_enc)
    else:
        raise ValueError(
            f"encoder_attention_mask must be 2D (batch, encoder_seq) or 3D, got shape {tuple(encoder_attention_mask.shape)}"
        )
    return (1.0 - keep.to(dtype)) * torch.finfo(dtype).min


def _causal_keep_mask(attention_mask: torch.Tensor, seq_length: int) -> torch.Tensor:
    """(B, S) padding mask -> (B, 1, T, S): query i may see key j iff j is not padding and
    j <= i + (S - T), the past keys of a cache being visible to all."""
    batch_size, key_length = attention_mask.shape
    past = key_length - seq_length
    query_pos = torch.arange(seq_length, device=attention_mask.device)[:, None] + past  # (T, 1)
    key_pos = torch.arange(key_length, device=attention_mask.device)[None, :]  # (1, S)
    causal = (key_pos <= query_pos).to(attention_mask.dtype)  # (T, S)
    # Multiply 0/1 masks before converting to additive, so a key that is both padding
    # and in the future gets min once, not 2 * min (= -inf in fp32: NaN after softmax).
    return causal[None, None, :, :] * attention_mask[:, None, None, :]  # (B, 1, T, S)


def get_head_mask(
    head_mask: torch.Tensor | None, num_hidden_layers: int, num_attention_heads: int, dtype: torch.dtype
) -> list[torch.Tensor | None]:
    """(N,) or (L, N) head mask -> one (1, N, 1, 1) multiplier per layer, broadcast over
    (B, N, T, S) attention probabilities; None -> [None] * L.

    1 keeps a head, 0 silences it (Michel et al., 2019, "Are Sixteen Heads Really Better than One?").

    transformers 4.x: ``modeling_utils.ModuleUtilsMixin.get_head_mask`` (5.x has no head masks)
    """
    if head_mask is None:
        return [None] * num_hidden_layers
    if not isinstance(head_mask, torch.Tensor):
        raise TypeError(f"head_mask must be a torch.Tensor, got {type(head_mask).__name__}")
    shape = tuple(head_mask.shape)
    if shape == (num_attention_heads,):
        head_mask = head_mask.expand(num_hidden_layers, -1)  # (L, N): the same mask for every layer
    elif shape != (num_hidden_layers, num_attention_heads):
        raise ValueError(
            f"head_mask must be (num_heads,) = ({num_attention_heads},) or (num_layers, num_heads) = "
            f"({num_hidden_layers}, {num_attention_heads}), got shape {shape}"
        )
    head_mask = head_mask.to(dtype)
    return [head_mask[i][None, :, None, None] for i in range(num_hidden_layers)]  # L x (1, N, 1, 1)
