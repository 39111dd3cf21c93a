"""What only some transformers versions have, beside the lesson of modeling_bert.py.

BERT as the paper and Google's code have it is in modeling_bert.py. transformers 4.x added
options around it, and 5.x dropped most of them again; they live here so that the model
file reads as BERT, and each class's docstring there says which of them it calls:

- **relative positions** (4.x, ``position_embedding_type="relative_key"`` or
  ``"relative_key_query"``): one learned vector per signed distance, whose scores are added
  to QKᵀ before scaling (``DistanceEmbedding``);
- **head masks and pruning** (3.x-4.x): a multiplier per head on the attention
  probabilities, and the removal of heads for good (``eager_attention_with_extras``,
  ``prune_attention_heads``);
- **the decoder** (4.x-5.x, ``is_decoder``, ``add_cross_attention``): causal
  self-attention with a key/value cache, and cross-attention over an encoder's states
  (``decoder_keys_and_values``, ``cross_attention``, ``cross_attention_mask``).

A reader of BERT can skip this file. Every function here is called from one place in
modeling_bert.py, and computes what transformers 4.57.6 computes (tests/parity).

transformers: the same code inline in 4.x's ``modeling_bert.py`` classes
"""

from __future__ import annotations

import logging
from typing import Protocol, TypedDict

import torch
from torch import nn

from .masking_utils import invert_attention_mask
from .modeling_outputs import ModelOutput
from .pytorch_utils import prune_linear_layer

logger = logging.getLogger(__name__)


class BertModelKwargs(TypedDict, total=False):
    """The keywords a task model passes to its ``BertModel`` unchanged (``**kwargs``): each
    named here, and an unknown one refused by ``BertModel.forward``'s signature (a TypeError
    naming it). transformers 4.x named them in every head; 5.x groups its output switches
    the same way.

    transformers: ``utils.generic.TransformersKwargs`` (5.x, its output switches)
    """

    head_mask: torch.Tensor | None  # (N,) or (L, N): 1 keeps a head, 0 silences it (4.x)
    encoder_hidden_states: torch.Tensor | None  # a decoder's: the encoder's output, (B, S_enc, H)
    encoder_attention_mask: torch.Tensor | None  # a decoder's: the encoder's padding, (B, S_enc)
    output_attentions: bool | None  # every layer's attention probabilities, (B, N, T, S) each
    output_hidden_states: bool | None  # the embeddings and every layer's output, (B, T, H) each


class SelfAttentionKwargs(TypedDict, total=False):
    """What ``BertAttention`` passes to its ``BertSelfAttention`` unchanged: transformers
    4.x's head mask and decoder inputs, and whether to return the probabilities.

    transformers: none (4.x names them in ``BertAttention.forward``; 5.x passes ``**kwargs``)
    """

    head_mask: torch.Tensor | None  # (1, N, 1, 1): 1 keeps a head, 0 silences it
    encoder_hidden_states: torch.Tensor | None  # cross-attention's keys and values come from these
    past_key_value: tuple[torch.Tensor, ...] | None  # this layer's cache, or an encoder's prefix
    output_attentions: bool


class DecoderConfig(Protocol):
    """The config fields ``decoder_cache`` reads (a BertConfig has them), named by shape so
    that this module stays below configuration_bert in the import graph.

    transformers: none
    """

    is_decoder: bool
    use_cache: bool

#: The position embedding types that add relative-distance scores (Shaw et al., 2018;
#: "relative_key_query" is method 4 of Huang et al., 2020).
RELATIVE_POSITIONS = ("relative_key", "relative_key_query")


# --------------------------------------------------------------------------------------
# Relative positions (transformers 4.x)
# --------------------------------------------------------------------------------------


class DistanceEmbedding(nn.Embedding):
    """One learned D-vector r_d per signed distance d = i - j in [-(P-1), P-1], P the
    position table's size. An ``nn.Embedding`` (2P - 1, D), so its checkpoint key is
    transformers' ``attention.self.distance_embedding.weight``.

    transformers 4.x: ``BertSelfAttention`` (its ``distance_embedding``)
    """

    def __init__(self, max_position_embeddings: int, head_size: int) -> None:
        super().__init__(2 * max_position_embeddings - 1, head_size)
        self.max_position_embeddings = max_position_embeddings

    def scores(self, query: torch.Tensor, key: torch.Tensor, position_embedding_type: str) -> torch.Tensor:
        """P_ij = q_i·r_(i−j) ("relative_key"), + k_j·r_(i−j) ("relative_key_query").

        query (B, N, T, D), key (B, N, S, D) -> (B, N, T, S), added to QKᵀ before scaling.
        """
        query_length, key_length = query.shape[2], key.shape[2]
        # With a cache the T queries are the last T of the S positions.
        positions_q = torch.arange(query_length, device=query.device)[:, None] + (key_length - query_length)  # (T, 1)
        positions_k = torch.arange(key_length, device=query.device)[None, :]  # (1, S)
        distance = positions_q - positions_k  # (T, S), i - j
        r = self(distance + self.max_position_embeddings - 1).to(query.dtype)  # (T, S, D)
        scores = torch.einsum("bntd,tsd->bnts", query, r)  # (B, N, T, S): q_i . r_{i-j}
        if position_embedding_type == "relative_key_query":
            scores = scores + torch.einsum("bnsd,tsd->bnts", key, r)  # + k_j . r_{i-j}
        return scores


# --------------------------------------------------------------------------------------
# Attention with relative positions and head masks (transformers 4.x's eager attention)
# --------------------------------------------------------------------------------------


def eager_attention_with_extras(
    module: nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    scaling: float,
    dropout: nn.Dropout,
    head_mask: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """softmax((QKᵀ + E)·scaling + M)·V, each head's probabilities times ``head_mask``.

    ``modeling_bert.eager_attention_forward`` with transformers 4.x's two additions: the
    relative-position scores E (B, N, T, S) of ``module.distance_embedding``, when the
    module has relative positions, and ``head_mask`` (1, N, 1, 1), applied after dropout
    (0 silences a head). Returns the context (B, N, T, D) and the probabilities (B, N, T, S).

    transformers 4.x: ``models.bert.modeling_bert.BertSelfAttention.forward`` (its inline attention)
    """
    scores = torch.matmul(query, key.transpose(-1, -2))  # (B, N, T, D) @ (B, N, D, S) -> (B, N, T, S)
    if module.position_embedding_type in RELATIVE_POSITIONS:
        scores = scores + module.distance_embedding.scores(query, key, module.position_embedding_type)  # (B, N, T, S)
    scores = scores * scaling
    if attention_mask is not None:
        scores = scores + attention_mask  # (B, N, T, S)
    probs = dropout(nn.functional.softmax(scores, dim=-1))  # (B, N, T, S)
    if head_mask is not None:
        probs = probs * head_mask  # (B, N, T, S) * (1, N, 1, 1)
    context = torch.matmul(probs, value)  # (B, N, T, S) @ (B, N, S, D) -> (B, N, T, D)
    return context, probs


def prune_attention_heads(attention: nn.Module, heads: list[int]) -> None:
    """Remove heads (original indices) of a ``BertAttention`` for good: Q, K, V lose their
    rows, the output projection its input columns; N and N·D shrink. Heads already pruned
    are skipped; ``attention.pruned_heads`` records the original indices removed so far.

    transformers 4.x: ``models.bert.modeling_bert.BertAttention.prune_heads``
    """
    self_attention = attention.self
    total = self_attention.num_attention_heads + len(attention.pruned_heads)
    remaining = [h for h in range(total) if h not in attention.pruned_heads]  # original index of each current head
    new = sorted(set(heads) - attention.pruned_heads)
    if not new:
        return
    head_size = self_attention.attention_head_size
    keep = [position for position, h in enumerate(remaining) if h not in new]  # positions in the current layout
    if keep:
        index = torch.cat([torch.arange(p * head_size, (p + 1) * head_size) for p in keep])  # (N'·D,)
    else:
        index = torch.zeros(0, dtype=torch.long)
    self_attention.query = prune_linear_layer(self_attention.query, index)  # (N'·D, H)
    self_attention.key = prune_linear_layer(self_attention.key, index)
    self_attention.value = prune_linear_layer(self_attention.value, index)
    attention.output.dense = prune_linear_layer(attention.output.dense, index, dim=1)  # (H, N'·D)
    self_attention.num_attention_heads = len(keep)
    self_attention.all_head_size = head_size * len(keep)
    attention.pruned_heads |= set(new)


# --------------------------------------------------------------------------------------
# The decoder: key/value cache and cross-attention (transformers 4.x; 5.x keeps them)
# --------------------------------------------------------------------------------------


def decoder_cache(config: DecoderConfig, past_key_values: object, use_cache: bool | None) -> tuple[tuple | None, bool]:
    """A call's cache and whether to extend it: ``past_key_values`` as tuples
    (``legacy_cache``), and ``use_cache`` (default ``config.use_cache``) for a decoder only.

    transformers 4.x: ``models.bert.modeling_bert.BertModel.forward`` (its ``use_cache`` lines)
    """
    use_cache = (config.use_cache if use_cache is None else use_cache) if config.is_decoder else False
    return legacy_cache(past_key_values), use_cache


def cache_allowed(encoder: nn.Module) -> bool:
    """False, with a warning, where gradient checkpointing runs in training: the layers run
    again in the backward pass, and a cache would be extended twice.

    transformers 4.x: ``models.bert.modeling_bert.BertEncoder.forward`` (its ``use_cache`` warning)
    """
    if encoder.gradient_checkpointing and encoder.training:
        logger.warning("use_cache=True cannot be combined with gradient checkpointing in training; not caching")
        return False
    return True


def legacy_cache(past_key_values: object) -> tuple | None:
    """``past_key_values`` as per-layer (K, V[, cross K, cross V]) tuples: transformers'
    ``Cache`` objects are read into them (peft's prefix tuning passes a ``DynamicCache``, whose
    ``layers`` hold ``keys`` and ``values``; generate for an encoder-decoder, an
    ``EncoderDecoderCache`` of two), an empty one is None; tuples, lists and None pass unchanged.

    transformers: none (4.x's ``EncoderDecoderCache.to_legacy_cache``)
    """
    if past_key_values is None or isinstance(past_key_values, (tuple, list)):
        return past_key_values
    self_cache = getattr(past_key_values, "self_attention_cache", past_key_values)
    cross_cache = getattr(past_key_values, "cross_attention_cache", None)
    layers = getattr(self_cache, "layers", None)
    if layers is None:  # not a Cache: check_model_inputs names what it is
        return past_key_values
    if past_key_values.get_seq_length() == 0:  # generate's first step starts from an empty one
        return None
    entries = []
    for index, layer in enumerate(layers):
        entry = (layer.keys, layer.values)
        if cross_cache is not None and past_key_values.is_updated.get(index):
            entry += (cross_cache.layers[index].keys, cross_cache.layers[index].values)
        entries.append(entry)
    return tuple(entries)


def into_cache_object(outputs: ModelOutput, cache: object, past_length: int) -> ModelOutput:
    """Where the caller passed transformers' ``Cache`` as ``past_key_values``: this call's keys
    and values appended to it (cross-attention's stored once), and the object itself returned
    as ``past_key_values``, as transformers' models do (its generate then reorders and crops
    it for beam search); with tuples given or none, the output's tuples unchanged.

    transformers: ``cache_utils.DynamicCache.update`` (called in its ``BertSelfAttention`` / ``BertCrossAttention``)
    """
    if outputs.past_key_values is None or cache is None or isinstance(cache, (tuple, list)) or not hasattr(cache, "update"):
        return outputs
    self_cache = getattr(cache, "self_attention_cache", cache)
    cross_cache = getattr(cache, "cross_attention_cache", None)
    for layer, entry in enumerate(outputs.past_key_values):
        self_cache.update(entry[0][:, :, past_length:], entry[1][:, :, past_length:], layer)  # (B, N, T, D) new
        if cross_cache is not None and len(entry) == 4 and not cache.is_updated.get(layer):
            cross_cache.update(entry[2], entry[3], layer)  # (B, N, S_enc, D), once
            cache.is_updated[layer] = True
    outputs.past_key_values = cache
    return outputs


def decoder_keys_and_values(
    attention: nn.Module,
    hidden_states: torch.Tensor,
    encoder_hidden_states: torch.Tensor | None,
    past_key_value: tuple[torch.Tensor, torch.Tensor] | None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """K and V (B, N, S, D) of a decoder's ``BertSelfAttention``, or of an encoder's given a prefix.

    Self-attention: this step's T positions after the R cached ones (S = R + T); for an
    encoder, after the R positions of a learned prefix (peft's prefix tuning).
    Cross-attention (given ``encoder_hidden_states``, as transformers 4.x tells it): the
    encoder's S positions, computed at the first step and read back from the cache after it
    (they do not change).

    transformers 4.x: ``models.bert.modeling_bert.BertSelfAttention.forward`` (its cache branches)
    """
    if encoder_hidden_states is not None and past_key_value is not None:
        return past_key_value  # the encoder's K, V: (B, N, S, D) each
    if encoder_hidden_states is not None:
        key = attention.transpose_for_scores(attention.key(encoder_hidden_states))  # (B, N, S, D)
        value = attention.transpose_for_scores(attention.value(encoder_hidden_states))  # (B, N, S, D)
        return key, value
    key = attention.transpose_for_scores(attention.key(hidden_states))  # (B, N, T, D)
    value = attention.transpose_for_scores(attention.value(hidden_states))  # (B, N, T, D)
    if past_key_value is not None:  # the layer's cache: (self K, self V[, cross K, cross V])
        key = torch.cat([past_key_value[0], key], dim=2)  # (B, N, R+T, D)
        value = torch.cat([past_key_value[1], value], dim=2)  # (B, N, R+T, D)
    return key, value


def cross_attention(
    layer: nn.Module,
    attention_output: torch.Tensor,
    encoder_hidden_states: torch.Tensor,
    encoder_attention_mask: torch.Tensor | None,
    head_mask: torch.Tensor | None,
    past_key_value: tuple[torch.Tensor, ...] | None,
    present: tuple[torch.Tensor, ...] | None,
    output_attentions: bool,
) -> tuple[torch.Tensor, torch.Tensor | None, tuple[torch.Tensor, ...] | None]:
    """A' = CrossAttention(A, enc): a decoder ``BertLayer``'s second attention block, whose
    queries are the self-attention's output (B, T, H) and whose keys and values are the
    encoder's states (B, S_enc, H) (Vaswani et al., 2017).

    Returns A' (B, T, H), the cross-attention probabilities (B, N, T, S_enc) or None, and
    the layer's cache extended to (self K, self V, cross K, cross V).

    transformers 4.x: ``models.bert.modeling_bert.BertLayer.forward`` (its cross-attention step)
    """
    cross_past = past_key_value[2:] if past_key_value is not None and len(past_key_value) == 4 else None
    attention_output, cross_probs, cross_present = layer.crossattention(
        attention_output, encoder_attention_mask, head_mask=head_mask, encoder_hidden_states=encoder_hidden_states,
        past_key_value=cross_past, output_attentions=output_attentions,
    )  # (B, T, H)
    return attention_output, cross_probs, present + cross_present


def cross_attention_mask(
    encoder_hidden_states: torch.Tensor | None, encoder_attention_mask: torch.Tensor | None, dtype: torch.dtype
) -> torch.Tensor | None:
    """The encoder's padding mask as an additive (B, 1, 1, S_enc) mask, or None.

    transformers 4.x: ``models.bert.modeling_bert.BertModel.forward`` (its ``encoder_extended_attention_mask``)
    """
    if encoder_hidden_states is None or encoder_attention_mask is None:
        return None
    return invert_attention_mask(
        encoder_attention_mask.to(encoder_hidden_states.device), tuple(encoder_hidden_states.shape[:2]), dtype=dtype
    )  # (B, 1, 1, S_enc)
