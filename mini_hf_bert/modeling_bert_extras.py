"""What only some transformers versions have, beside the lesson of modeling_bert.py.

BERT as the paper and Google's code have it is in modeling_bert.py. transformers 4.x added
options around it, and 5.x dropped most of them again. They live here so that the model
file reads as BERT: ``BertModel.forward`` sends every call here, at its top
(``forward_elsewhere``), and this module takes it when the model is a decoder or has
relative positions, or the call gives a head mask, an encoder's states or a cache
(``needs_options``); it then runs the same modules' weights through 4.x's
forward (``model_forward_with_options``, and the encoder, layer and self-attention below it):

- **relative positions** (4.x, ``position_embedding_type="relative_key"`` or
  ``"relative_key_query"``): one learned vector per signed distance, whose scores are added
  to QKᵀ before scaling (``DistanceEmbedding``, built by ``BertSelfAttention``);
- **head masks and pruning** (3.x-4.x): a multiplier per head on the attention
  probabilities, and the removal of heads for good (``eager_attention_with_extras``,
  ``prune_attention_heads``);
- **the decoder** (4.x-5.x, ``is_decoder``, ``add_cross_attention``): causal
  self-attention with a key/value cache, and cross-attention over an encoder's states
  (``decoder_keys_and_values``, ``layer_forward_with_options``, ``cross_attention_mask``);
- **an encoder's prefix** (peft's prefix tuning): keys and values every token attends to.

A reader of BERT can skip this file. It computes what transformers 4.57.6 computes
(tests/parity, tests_transformers4).

transformers: the same code inline in 4.x's ``modeling_bert.py`` classes
"""

from __future__ import annotations

import functools
import logging
from typing import Protocol, TypedDict, Unpack

import torch
from torch import nn

from .integrations.attention_functions import attention_function
from .integrations.model_forwards import ALL_MODEL_FORWARDS
from .masking_utils import get_extended_attention_mask, get_head_mask, invert_attention_mask
from .modeling_outputs import (
    BaseModelOutputWithPastAndCrossAttentions,
    BaseModelOutputWithPoolingAndCrossAttentions,
    ModelOutput,
    with_encoder_fields,
)
from .pytorch_utils import apply_chunking_to_forward, prune_linear_layer
from .validation import check_model_inputs, output_switches

logger = logging.getLogger(__name__)


class BertModelKwargs(TypedDict, total=False):
    """What ``BertModel.forward`` takes by keyword besides transformers 5.x's named
    parameters: the output switches (each default from the config) and 4.x's head mask;
    what every task model takes too, and passes on. An unknown keyword is refused, naming
    it (``modeling_utils.output_switches``).

    transformers: ``utils.generic.TransformersKwargs`` (5.x, its output switches)
    """

    output_attentions: bool | None  # every layer's attention probabilities, (B, N, T, S) each
    output_hidden_states: bool | None  # the embeddings and every layer's output, (B, T, H) each
    return_dict: bool | None  # False: the output's tuple of its fields that are not None
    head_mask: torch.Tensor | None  # (N,) or (L, N): 1 keeps a head, 0 silences it (4.x)


class TokenLossKwargs(BertModelKwargs, total=False):
    """A per-token head's keywords: BertModel's, and the count transformers' Trainer passes
    so that gradient accumulation gives the whole batch's mean loss.

    transformers: ``utils.generic.TransformersKwargs`` (5.x, its ``num_items_in_batch``)
    """

    num_items_in_batch: int | torch.Tensor | None  # the labelled tokens of all accumulated micro-batches


class CausalLMKwargs(TokenLossKwargs, total=False):
    """``BertLMHeadModel``'s keywords: a per-token head's, and targets already shifted
    (sequence-parallel training shifts before it shards).

    transformers: ``utils.generic.TransformersKwargs`` (5.x) and ``BertLMHeadModel.forward``'s ``shift_labels``
    """

    shift_labels: torch.Tensor | None  # (B, T) targets aligned with the logits (position t's is token t+1)


#: The keywords a head's loss reads, kept from what it passes on to BertModel.
LOSS_KEYWORDS = ("num_items_in_batch", "shift_labels")


class DecoderConfig(Protocol):
    """The config fields this module reads (a BertConfig has them), named by shape so that
    it stays below configuration_bert in the import graph.

    transformers: none
    """

    is_decoder: bool
    add_cross_attention: bool
    use_cache: bool
    position_embedding_type: str

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
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    scaling: float,
    dropout: nn.Dropout,
    head_mask: torch.Tensor | None = None,
    distance_embedding: DistanceEmbedding | None = None,
    position_embedding_type: str = "absolute",
) -> tuple[torch.Tensor, torch.Tensor]:
    """softmax((QKᵀ + E)·scaling + M)·V, each head's probabilities times ``head_mask``.

    ``modeling_bert.eager_attention_forward`` with transformers 4.x's two additions: the
    relative-position scores E (B, N, T, S) of ``distance_embedding``, where the attention
    has relative positions, and ``head_mask`` (1, N, 1, 1), applied after dropout (0
    silences a head). Returns the context (B, N, T, D) and the probabilities (B, N, T, S).

    transformers 4.x: ``models.bert.modeling_bert.BertSelfAttention.forward`` (its inline attention)
    """
    scores = torch.matmul(query, key.transpose(-1, -2))  # (B, N, T, D) @ (B, N, D, S) -> (B, N, T, S)
    if distance_embedding is not None:
        scores = scores + distance_embedding.scores(query, key, position_embedding_type)  # (B, N, T, S)
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


# --------------------------------------------------------------------------------------
# The forward with 4.x's options: BertModel.forward sends a call here when it needs them
# --------------------------------------------------------------------------------------


def needs_options(config: DecoderConfig, encoder_hidden_states: torch.Tensor | None, past_key_values: object,
                  options: BertModelKwargs) -> bool:
    """Whether a ``BertModel`` call needs transformers 4.x's forward: the model is a decoder
    or has relative positions, or the call gives a head mask, an encoder's states or a cache
    (a decoder's, or an encoder's prefix). Otherwise the lesson's forward runs it.

    transformers: none (4.x's forward takes every branch in every call)
    """
    return (config.is_decoder or config.position_embedding_type in RELATIVE_POSITIONS
            or options.get("head_mask") is not None or encoder_hidden_states is not None or past_key_values is not None)


def forward_elsewhere(
    model: nn.Module, input_ids: torch.Tensor | None, attention_mask: torch.Tensor | None,
    token_type_ids: torch.Tensor | None, position_ids: torch.Tensor | None, inputs_embeds: torch.Tensor | None,
    encoder_hidden_states: torch.Tensor | None, encoder_attention_mask: torch.Tensor | None,
    past_key_values: object, use_cache: bool | None, options: BertModelKwargs,
) -> ModelOutput | tuple | None:
    """The output of a ``BertModel`` call that something other than the lesson's forward
    runs, or None: the lesson runs it. The one dispatch, at the top of ``BertModel.forward``:

    1. 4.x's forward (``model_forward_with_options``) where the model or the call needs its
       options (``needs_options``);
    2. else the whole-model forward registered under ``config.attn_implementation`` in
       ``ALL_MODEL_FORWARDS`` (``"fast"``: modeling_bert_fast.py), for the calls it computes
       (it returns None for the others).

    Each checks the inputs it runs on (``validation.check_model_inputs``), so that they are
    checked once, wherever the call runs.

    transformers: none (4.x's forward takes every branch in every call)
    """
    arguments = (model, input_ids, attention_mask, token_type_ids, position_ids, inputs_embeds,
                 encoder_hidden_states, encoder_attention_mask, past_key_values, use_cache)
    if needs_options(model.config, encoder_hidden_states, past_key_values, options):
        return model_forward_with_options(*arguments, **options)
    whole_model = ALL_MODEL_FORWARDS.get(model.config._attn_implementation)  # transformers' name: its configs have it too
    return None if whole_model is None else whole_model(*arguments, **options)


def self_attention_with_options(
    attention: nn.Module,
    hidden_states: torch.Tensor,
    attention_mask: torch.Tensor | None,
    head_mask: torch.Tensor | None,
    encoder_hidden_states: torch.Tensor | None,
    past_key_value: tuple[torch.Tensor, ...] | None,
    output_attentions: bool,
) -> tuple[torch.Tensor, torch.Tensor | None, tuple[torch.Tensor, torch.Tensor] | None]:
    """``BertSelfAttention.forward`` with 4.x's options, on the module's own weights:
    (B, T, H) -> context (B, T, H), the probabilities (B, N, T, S) or None, and a decoder's
    keys and values (B, N, S, D) to cache (None for an encoder).

    transformers 4.x: ``models.bert.modeling_bert.BertSelfAttention.forward``
    """
    query = attention.transpose_for_scores(attention.query(hidden_states))  # (B, N, T, D)
    key, value = decoder_keys_and_values(attention, hidden_states, encoder_hidden_states, past_key_value)  # (B, N, S, D)
    distance_embedding = getattr(attention, "distance_embedding", None)  # relative positions' table, if built
    if output_attentions or head_mask is not None or distance_embedding is not None:
        context, probs = eager_attention_with_extras(
            query, key, value, attention_mask, attention.scaling, attention.dropout, head_mask, distance_embedding,
            attention.position_embedding_type)
    else:
        function = attention_function(attention.config._attn_implementation, eager_attention_with_extras)
        context, probs = function(query, key, value, attention_mask, attention.scaling, attention.dropout)
    batch_size, _, seq_length, _ = context.shape  # (B, N, T, D)
    context = context.transpose(1, 2).contiguous().view(batch_size, seq_length, attention.all_head_size)  # (B, T, H)
    present = (key, value) if attention.config.is_decoder else None
    return context, probs if output_attentions else None, present


def layer_forward_with_options(
    layer: nn.Module,
    hidden_states: torch.Tensor,
    attention_mask: torch.Tensor | None,
    head_mask: torch.Tensor | None,
    encoder_hidden_states: torch.Tensor | None,
    encoder_attention_mask: torch.Tensor | None,
    past_key_value: tuple[torch.Tensor, ...] | None,
    output_attentions: bool,
) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor | None, tuple[torch.Tensor, ...] | None]:
    """``BertLayer.forward`` with 4.x's options: self-attention (with a head mask, a cache or
    a prefix), then a decoder's cross-attention A' = CrossAttention(A, enc) whose queries are
    the self-attention's output and whose keys and values are the encoder's states
    (Vaswani et al., 2017), then the feed-forward.

    Returns the layer's output (B, T, H), the self- and cross-attention probabilities (each
    or None), and the layer's cache (self K, self V[, cross K, cross V]) or None.

    transformers 4.x: ``models.bert.modeling_bert.BertLayer.forward``
    """
    self_attention = layer.attention
    context, probs, present = self_attention_with_options(
        self_attention.self, hidden_states, attention_mask, head_mask, None, past_key_value, output_attentions)
    attention_output = self_attention.output(context, hidden_states)  # (B, T, H)
    cross_probs = None
    if encoder_hidden_states is not None:  # a decoder's (check_model_inputs: only with add_cross_attention)
        cross_past = past_key_value[2:] if past_key_value is not None and len(past_key_value) == 4 else None
        context, cross_probs, cross_present = self_attention_with_options(
            layer.crossattention.self, attention_output, encoder_attention_mask, head_mask, encoder_hidden_states,
            cross_past, output_attentions)
        attention_output = layer.crossattention.output(context, attention_output)  # (B, T, H)
        present = present + cross_present
    layer_output = apply_chunking_to_forward(layer.feed_forward_chunk, layer.chunk_size_feed_forward,
                                             layer.seq_len_dim, attention_output)  # (B, T, H)
    return layer_output, probs, cross_probs, present


def encoder_forward_with_options(
    encoder: nn.Module,
    hidden_states: torch.Tensor,
    attention_mask: torch.Tensor | None,
    head_masks: list[torch.Tensor | None],
    encoder_hidden_states: torch.Tensor | None,
    encoder_attention_mask: torch.Tensor | None,
    past_key_values: tuple[tuple[torch.Tensor, ...], ...] | None,
    use_cache: bool,
    output_attentions: bool,
    output_hidden_states: bool,
) -> BaseModelOutputWithPastAndCrossAttentions:
    """``BertEncoder.forward`` with 4.x's options: each layer given its head mask and cache,
    and its outputs gathered as far as they were asked for; a decoder's new cache too.

    transformers 4.x: ``models.bert.modeling_bert.BertEncoder.forward``
    """
    use_cache = use_cache and cache_allowed(encoder)
    all_hidden_states = [hidden_states] if output_hidden_states else None
    all_attentions = [] if output_attentions else None
    all_cross_attentions = [] if output_attentions and encoder_hidden_states is not None else None
    next_cache = [] if use_cache else None
    for i, layer in enumerate(encoder.layer):
        layer_inputs = (hidden_states, attention_mask, head_masks[i], encoder_hidden_states, encoder_attention_mask,
                        past_key_values[i] if past_key_values is not None else None, output_attentions)
        forward = functools.partial(layer_forward_with_options, layer)
        if layer.gradient_checkpointing and encoder.training:  # recomputed in the backward pass (Chen et al., 2016)
            hidden_states, probs, cross_probs, present = layer._gradient_checkpointing_func(forward, *layer_inputs)
        else:
            hidden_states, probs, cross_probs, present = forward(*layer_inputs)
        for kept, value in ((all_hidden_states, hidden_states), (all_attentions, probs),
                            (all_cross_attentions, cross_probs), (next_cache, present)):
            if kept is not None:
                kept.append(value)

    def as_tuple(kept: list | None) -> tuple | None:
        return tuple(kept) if kept is not None else None

    return BaseModelOutputWithPastAndCrossAttentions(
        hidden_states, as_tuple(next_cache), as_tuple(all_hidden_states), as_tuple(all_attentions),
        as_tuple(all_cross_attentions))


def model_forward_with_options(
    model: nn.Module,
    input_ids: torch.Tensor | None,
    attention_mask: torch.Tensor | None,
    token_type_ids: torch.Tensor | None,
    position_ids: torch.Tensor | None,
    inputs_embeds: torch.Tensor | None,
    encoder_hidden_states: torch.Tensor | None,
    encoder_attention_mask: torch.Tensor | None,
    past_key_values: object,
    use_cache: bool | None,
    **options: Unpack[BertModelKwargs],
) -> ModelOutput | tuple:
    """``BertModel.forward`` with 4.x's options, on the model's own modules: a decoder's
    causal mask and cache (tuples, or transformers' ``Cache`` objects, extended in place),
    cross-attention over an encoder's states, head masks, an encoder's prefix (peft's prefix
    tuning), relative positions. Arguments and output as ``BertModel.forward``'s.

    transformers 4.x: ``models.bert.modeling_bert.BertModel.forward``
    """
    config = model.config
    output_attentions, output_hidden_states, return_dict = output_switches(model, options, BertModelKwargs)
    head_mask = options.get("head_mask")
    cache_object, (past_key_values, use_cache) = past_key_values, decoder_cache(config, past_key_values, use_cache)
    batch_size, seq_length, past_length = check_model_inputs(
        config, input_ids, inputs_embeds, token_type_ids, position_ids, past_key_values, encoder_hidden_states,
        attention_mask, model.embeddings.word_embeddings.weight.dtype,
    )
    embedding_output = model.embeddings(input_ids, token_type_ids, position_ids, inputs_embeds, past_length)  # (B, T, H)
    extended_attention_mask = None  # no mask at all = attend everywhere, and lets sdpa skip it
    if attention_mask is not None or config.is_decoder:
        if attention_mask is None:  # a decoder's causal mask is built from one
            attention_mask = torch.ones(batch_size, past_length + seq_length, device=embedding_output.device)
        extended_attention_mask = get_extended_attention_mask(
            attention_mask.to(embedding_output.device), (batch_size, seq_length), dtype=embedding_output.dtype,
            is_decoder=config.is_decoder, prefix_length=0 if config.is_decoder else past_length,
        )  # (B, 1, 1, S) or (B, 1, T, S)
    layer_head_masks = get_head_mask(head_mask, config.num_hidden_layers, config.num_attention_heads,
                                     embedding_output.dtype)  # L x (1, N, 1, 1) or L x None
    encoder_mask = cross_attention_mask(encoder_hidden_states, encoder_attention_mask, embedding_output.dtype)
    encoder_outputs = encoder_forward_with_options(
        model.encoder, embedding_output, extended_attention_mask, layer_head_masks, encoder_hidden_states,
        encoder_mask, past_key_values, use_cache, output_attentions, output_hidden_states,
    )
    encoder_outputs = into_cache_object(encoder_outputs, cache_object, past_length)  # a transformers Cache given
    sequence_output = encoder_outputs.last_hidden_state  # (B, T, H)
    pooled_output = model.pooler(sequence_output) if model.pooler is not None else None  # (B, H)
    out = with_encoder_fields(BaseModelOutputWithPoolingAndCrossAttentions(sequence_output, pooled_output), encoder_outputs)
    return out if return_dict else out.to_tuple()
