"""BERT in one file, mirroring transformers' ``models/bert/modeling_bert.py``.

Read top to bottom in transformers' order: embeddings, self-attention, self-output,
attention, intermediate, output, layer, encoder, pooler, the prediction heads, the
pre-trained base class, the base model, the task models. Every class opens with its
formula, and ends its docstring with its transformers counterpart (what differs, in a
phrase) and its Google TensorFlow variable scope; docs/versions.md tells how transformers
3.4 (the version the Chinese study notes annotate), 4.x and 5.x differ. Every reshape,
transpose and matmul ends with the shape it produces.

References: Devlin et al. (2018), "BERT: Pre-training of Deep Bidirectional Transformers
for Language Understanding"; google-research/bert ``modeling.py`` (the TF original);
HuggingFace transformers ``modeling_bert.py`` (the PyTorch port whose names and numbers
this file reproduces).

Dimension legend
----------------
    B  batch size
    T  sequence length (of the queries: "from" positions)
    S  key/value sequence length ("to" positions; S = T in self-attention)
    H  hidden size                       (config.hidden_size, 768 in bert-base)
    N  attention heads                   (config.num_attention_heads, 12)
    D  head dim, H / N                   (64)
    I  feed-forward inner size           (config.intermediate_size, 3072)
    L  layers                            (config.num_hidden_layers, 12)
    V  vocabulary size                   (config.vocab_size, 30522)
    P  positions already in a decoder's key/value cache (S = P + T)
    C  classes of a classifier head      (config.num_labels)

Naming
------
Attribute names are transformers', which are Google's TF variable scopes:
``self.self`` (the attention's query/key/value part), ``self.output``, ``dense``,
``LayerNorm`` (capitalised, against PEP 8). They are kept so that every state-dict key
(``encoder.layer.0.attention.self.query.weight``) is a real checkpoint's key, loadable
with no renaming, and readable next to transformers' source.
"""

from __future__ import annotations

import logging
import re

import torch
from torch import nn

from .configuration_bert import BertConfig
from .modeling_outputs import (
    BaseModelOutputWithPastAndCrossAttentions,
    BaseModelOutputWithPoolingAndCrossAttentions,
    BertForPreTrainingOutput,
    CausalLMOutputWithCrossAttentions,
    MaskedLMOutput,
    MultipleChoiceModelOutput,
    NextSentencePredictorOutput,
    QuestionAnsweringModelOutput,
    SequenceClassifierOutput,
    TokenClassifierOutput,
)
from .activations import ACT2FN
from .masking_utils import get_extended_attention_mask, get_head_mask, invert_attention_mask
from . import modeling_bert_fast
from .modeling_utils import ALL_ATTENTION_FUNCTIONS, PreTrainedModel, check_attn_implementation
from .pytorch_utils import GradientCheckpointingLayer, apply_chunking_to_forward, prune_linear_layer
from .validation import (
    check_class_labels,
    check_model_inputs,
    check_multiple_choice_inputs,
    check_pretraining_labels,
    check_sequence_classification_labels,
    check_span_positions,
)

logger = logging.getLogger(__name__)


# ======================================================================================
# Embeddings
# ======================================================================================


class BertEmbeddings(nn.Module):
    """E = LayerNorm(W_tok[x] + W_pos[p] + W_type[s]), then dropout.

    (B, T) token ids -> (B, T, H). Three learned tables are summed: which word, where
    (absolute position p = 0..T-1, learned, not sinusoidal), which segment (sentence A = 0
    or B = 1).

    transformers: ``BertEmbeddings`` (5.x: absolute positions only)
    Google TF: ``bert/embeddings``
    """

    def __init__(self, config: BertConfig) -> None:
        super().__init__()
        # padding_idx: the pad row gets no gradient, and _init_weights zeroes it.
        self.word_embeddings = nn.Embedding(config.vocab_size, config.hidden_size, padding_idx=config.pad_token_id)
        self.position_embeddings = nn.Embedding(config.max_position_embeddings, config.hidden_size)
        self.token_type_embeddings = nn.Embedding(config.type_vocab_size, config.hidden_size)
        # Post-sum LayerNorm, eps 1e-12 as in Google's TF code (see BertConfig.layer_norm_eps).
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)
        # With relative positions the attention sees distances instead; the absolute table
        # still exists (checkpoints have it) but is not added (transformers 4.x).
        self.position_embedding_type = config.position_embedding_type
        # Default positions 0..max-1 and segment ids 0, sliced per call. Not persistent:
        # they are derived from the config, so they stay out of state_dict (as in transformers >= 4.31).
        self.register_buffer(
            "position_ids", torch.arange(config.max_position_embeddings).expand((1, -1)), persistent=False
        )  # (1, max_positions)
        self.register_buffer(
            "token_type_ids", torch.zeros(1, config.max_position_embeddings, dtype=torch.long), persistent=False
        )  # (1, max_positions)

    def forward(
        self,
        input_ids: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
        position_ids: torch.Tensor | None = None,
        inputs_embeds: torch.Tensor | None = None,
        past_key_values_length: int = 0,
    ) -> torch.Tensor:
        """
        Args:
            input_ids: (B, T) token ids, or None when ``inputs_embeds`` is given.
            token_type_ids: (B, T) segment ids; default all 0.
            position_ids: (B, T) or (1, T); default ``past_key_values_length + 0..T-1``.
            inputs_embeds: (B, T, H) to use instead of the word-embedding lookup.
            past_key_values_length: positions already consumed (decoder with a cache).

        Returns:
            (B, T, H) embeddings.
        """
        if inputs_embeds is None:
            inputs_embeds = self.word_embeddings(input_ids)  # (B, T, H)
        batch_size, seq_length = inputs_embeds.shape[:2]
        if position_ids is None:
            position_ids = self.position_ids[:, past_key_values_length : past_key_values_length + seq_length]  # (1, T)
        if token_type_ids is None:
            token_type_ids = self.token_type_ids[:, :seq_length].expand(batch_size, seq_length)  # (B, T)

        embeddings = inputs_embeds + self.token_type_embeddings(token_type_ids)  # (B, T, H)
        if self.position_embedding_type == "absolute":
            embeddings = embeddings + self.position_embeddings(position_ids)  # (B, T, H), (1, T, H) broadcasts
        embeddings = self.LayerNorm(embeddings)
        return self.dropout(embeddings)


# ======================================================================================
# Attention
# ======================================================================================
#
# One function, several implementations, chosen by config.attn_implementation as in transformers:
#   "eager": written out below, every step: the readable reference, and the only one that
#            can return the attention probabilities;
#   "sdpa":  torch.nn.functional.scaled_dot_product_attention, one fused call
#            (integrations/sdpa_attention.py), looked up in modeling_utils.ALL_ATTENTION_FUNCTIONS;
#   "fast":  the same model on real tokens only (modeling_bert_fast.py), sdpa per layer elsewhere.
# All take q, k, v of shape (B, N, T|S, D), the additive mask of get_extended_attention_mask,
# the score scale 1/sqrt(D) and the probabilities' dropout module.


def eager_attention_forward(
    module: nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    scaling: float,
    dropout: nn.Dropout,
    head_mask: torch.Tensor | None = None,
    position_bias: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """softmax((QKᵀ + P)/√D + M)·V, step by step.

    ``position_bias`` P (B, N, T, S): relative-position scores, added before scaling.
    ``head_mask`` (1, N, 1, 1) multiplies each head's probabilities (0 silences a head).
    Returns the context (B, N, T, D) and the attention probabilities (B, N, T, S).

    transformers: ``eager_attention_forward`` (5.x; 3.4 / 4.x inline it in the class)
    """
    # Scores: how much each query position attends each key position. Scaled by 1/sqrt(D)
    # because the dot product of two D-dim vectors with unit-variance entries has variance D;
    # unscaled, large D would push softmax into its flat, vanishing-gradient tails.
    # Multiplied by scaling = D**-0.5 rather than divided by sqrt(D): the same number, but
    # when D is not a power of 4 (D = 32 in MiniLM) the two round differently in the last
    # bit, and over 6 layers that one bit grows to ~1e-5 at padding positions. transformers
    # 5.x multiplies (3.4 / 4.x divide); we follow 5.x, the reference the tests hold us to.
    scores = torch.matmul(query, key.transpose(-1, -2))  # (B, N, T, D) @ (B, N, D, S) -> (B, N, T, S)
    if position_bias is not None:
        scores = scores + position_bias  # (B, N, T, S)
    scores = scores * scaling
    if attention_mask is not None:
        # Additive mask: 0 to keep, finfo.min to drop (broadcast over heads and, for a 2D
        # padding mask, over queries). See get_extended_attention_mask for the constant.
        scores = scores + attention_mask  # (B, N, T, S)
    probs = nn.functional.softmax(scores, dim=-1)  # (B, N, T, S), each row sums to 1
    # Dropout on the probabilities drops whole keys for a query; from the original
    # Transformer (Vaswani et al., 2017), kept by BERT.
    probs = dropout(probs)
    if head_mask is not None:
        probs = probs * head_mask  # (B, N, T, S) * (1, N, 1, 1); after dropout, as in transformers
    context = torch.matmul(probs, value)  # (B, N, T, S) @ (B, N, S, D) -> (B, N, T, D)
    return context, probs


class BertSelfAttention(nn.Module):
    """Multi-head scaled dot-product attention: headₙ = softmax(QₙKₙᵀ/√D + M)·Vₙ, heads concatenated.

    (B, T, H) -> (B, T, H) context (before the output projection, which is BertSelfOutput).
    Q = X·W_Q + b_Q, likewise K and V: three separate Linear layers (named ``query``,
    ``key``, ``value`` as in the checkpoints), each H -> N·D, then split into N heads.
    As cross-attention (``is_cross_attention``), K and V come from the encoder's (B, S, H)
    states instead. A decoder returns its (K, V) so the next step can reuse them.

    transformers: ``BertSelfAttention`` (5.x: cross-attention split out, no head_mask)
    Google TF: ``bert/encoder/layer_{i}/attention/self``
    """

    def __init__(
        self, config: BertConfig, position_embedding_type: str | None = None, is_cross_attention: bool = False
    ) -> None:
        super().__init__()
        self.config = config
        self.is_decoder = config.is_decoder  # return (K, V) for the cache
        self.is_cross_attention = is_cross_attention
        self.num_attention_heads = config.num_attention_heads  # N
        self.attention_head_size = config.hidden_size // config.num_attention_heads  # D
        self.all_head_size = self.num_attention_heads * self.attention_head_size  # N * D (= H)
        self.scaling = self.attention_head_size**-0.5  # 1 / sqrt(D)

        self.query = nn.Linear(config.hidden_size, self.all_head_size)
        self.key = nn.Linear(config.hidden_size, self.all_head_size)
        self.value = nn.Linear(config.hidden_size, self.all_head_size)
        self.dropout = nn.Dropout(config.attention_probs_dropout_prob)

        self.position_embedding_type = position_embedding_type or config.position_embedding_type
        if self.position_embedding_type in ("relative_key", "relative_key_query"):
            # One learned D-vector per signed distance i - j in [-(P-1), P-1] (Shaw et al., 2018;
            # "relative_key_query" is method 4 of Huang et al., 2020). transformers 4.x only.
            self.max_position_embeddings = config.max_position_embeddings
            self.distance_embedding = nn.Embedding(2 * config.max_position_embeddings - 1, self.attention_head_size)

    def relative_position_scores(self, query: torch.Tensor, key: torch.Tensor) -> torch.Tensor:
        """P_ij = q_i·r_(i−j) ("relative_key"), + k_j·r_(i−j) ("relative_key_query").

        query (B, N, T, D), key (B, N, S, D) -> (B, N, T, S), added to QK^T before scaling.
        """
        query_length, key_length = query.shape[2], key.shape[2]
        # With a cache the T queries are the last T of the S positions.
        positions_q = torch.arange(query_length, device=query.device)[:, None] + (key_length - query_length)  # (T, 1)
        positions_k = torch.arange(key_length, device=query.device)[None, :]  # (1, S)
        distance = positions_q - positions_k  # (T, S), i - j
        r = self.distance_embedding(distance + self.max_position_embeddings - 1).to(query.dtype)  # (T, S, D)
        scores = torch.einsum("bntd,tsd->bnts", query, r)  # (B, N, T, S): q_i . r_{i-j}
        if self.position_embedding_type == "relative_key_query":
            scores = scores + torch.einsum("bnsd,tsd->bnts", key, r)  # + k_j . r_{i-j}
        return scores

    def transpose_for_scores(self, x: torch.Tensor) -> torch.Tensor:
        """(B, T, N*D) -> (B, N, T, D): give each head its own (T, D) slice."""
        batch_size, seq_length, _ = x.shape
        x = x.view(batch_size, seq_length, self.num_attention_heads, self.attention_head_size)  # (B, T, N, D)
        return x.transpose(1, 2)  # (B, N, T, D)

    def forward(
        self,
        hidden_states: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        head_mask: torch.Tensor | None = None,
        encoder_hidden_states: torch.Tensor | None = None,
        past_key_value: tuple[torch.Tensor, torch.Tensor] | None = None,
        output_attentions: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor | None, tuple[torch.Tensor, torch.Tensor] | None]:
        """
        Args:
            hidden_states: (B, T, H).
            attention_mask: additive, broadcastable to (B, N, T, S), from get_extended_attention_mask
                (self-attention) or invert_attention_mask (cross-attention).
            head_mask: (1, N, 1, 1) multiplier per head (forces the eager path).
            encoder_hidden_states: (B, S, H) the encoder's output, for cross-attention.
            past_key_value: (K, V), each (B, N, P, D): keys/values of the P positions already
                decoded (self-attention), or the encoder's, computed at the first step (cross).
            output_attentions: also return the probabilities (forces the eager path).

        Returns:
            context (B, T, H), probabilities (B, N, T, S) or None, and (K, V) for the cache
            (decoders only, else None).
        """
        query = self.transpose_for_scores(self.query(hidden_states))  # (B, N, T, D)
        if self.is_cross_attention and past_key_value is not None:
            key, value = past_key_value  # the encoder's K, V do not change between steps: (B, N, S, D)
        elif self.is_cross_attention:
            if encoder_hidden_states is None:
                raise ValueError("cross-attention needs encoder_hidden_states")
            key = self.transpose_for_scores(self.key(encoder_hidden_states))  # (B, N, S, D)
            value = self.transpose_for_scores(self.value(encoder_hidden_states))  # (B, N, S, D)
        else:
            key = self.transpose_for_scores(self.key(hidden_states))  # (B, N, T, D)
            value = self.transpose_for_scores(self.value(hidden_states))  # (B, N, T, D)
            if past_key_value is not None:
                key = torch.cat([past_key_value[0], key], dim=2)  # (B, N, P+T, D)
                value = torch.cat([past_key_value[1], value], dim=2)  # (B, N, P+T, D)
        present = (key, value) if self.is_decoder else None

        position_bias = None
        if self.position_embedding_type != "absolute":
            position_bias = self.relative_position_scores(query, key)  # (B, N, T, S)

        implementation = self.config.attn_implementation
        if (output_attentions or head_mask is not None or position_bias is not None) and implementation != "eager":
            # Only the eager path materialises the probabilities (to return, to mask by head)
            # and adds relative scores before scaling; transformers 4.x's sdpa class falls back alike.
            implementation = "eager"
        attention_fn = eager_attention_forward
        if implementation != "eager":
            attention_fn = ALL_ATTENTION_FUNCTIONS[implementation]
        context, probs = attention_fn(
            self, query, key, value, attention_mask, self.scaling, self.dropout,
            head_mask=head_mask, position_bias=position_bias,
        )  # (B, N, T, D)

        batch_size, _, seq_length, _ = context.shape
        context = context.transpose(1, 2).contiguous()  # (B, T, N, D)
        context = context.view(batch_size, seq_length, self.all_head_size)  # (B, T, H): heads concatenated
        return context, probs if output_attentions else None, present


class BertSelfOutput(nn.Module):
    """LayerNorm(Dropout(C·W_O + b_O) + X): output projection, residual, LayerNorm.

    (B, T, H) context and (B, T, H) residual input -> (B, T, H).
    BERT is *post*-LN (as the original Transformer): the LayerNorm comes after the residual
    sum, so every sub-layer output is normalised; pre-LN (GPT-2 and later) normalises
    the sub-layer input instead. Checkpoints are trained for one order; the other
    computes something else.

    transformers: ``BertSelfOutput`` (unchanged since 3.4)
    Google TF: ``bert/encoder/layer_{i}/attention/output``
    """

    def __init__(self, config: BertConfig) -> None:
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(self, hidden_states: torch.Tensor, input_tensor: torch.Tensor) -> torch.Tensor:
        """
        Args:
            hidden_states: (B, T, H) attention context, heads concatenated.
            input_tensor: (B, T, H) the attention block's input, for the residual.

        Returns:
            (B, T, H).
        """
        hidden_states = self.dense(hidden_states)  # (B, T, H)
        hidden_states = self.dropout(hidden_states)
        return self.LayerNorm(hidden_states + input_tensor)  # (B, T, H)


class BertAttention(nn.Module):
    """LayerNorm(X + MultiHead(X)): self-attention (``self``) then its output block (``output``).

    (B, T, H) -> (B, T, H).

    transformers: ``BertAttention`` (5.x: no prune_heads)
    Google TF: ``bert/encoder/layer_{i}/attention``
    """

    def __init__(
        self, config: BertConfig, position_embedding_type: str | None = None, is_cross_attention: bool = False
    ) -> None:
        super().__init__()
        self.self = BertSelfAttention(config, position_embedding_type, is_cross_attention=is_cross_attention)
        self.output = BertSelfOutput(config)
        self.pruned_heads: set[int] = set()  # original indices of heads removed so far

    def prune_heads(self, heads: list[int]) -> None:
        """Remove heads (original indices) for good: Q, K, V lose their rows, the output
        projection its input columns; N and N*D shrink."""
        remaining = [h for h in range(self.self.num_attention_heads + len(self.pruned_heads)) if h not in self.pruned_heads]
        new = sorted(set(heads) - self.pruned_heads)
        if not new:
            return
        head_size = self.self.attention_head_size
        keep = [position for position, h in enumerate(remaining) if h not in new]  # positions in the current layout
        index = torch.cat([torch.arange(p * head_size, (p + 1) * head_size) for p in keep]) if keep else torch.zeros(0, dtype=torch.long)
        self.self.query = prune_linear_layer(self.self.query, index)  # (N'D, H)
        self.self.key = prune_linear_layer(self.self.key, index)
        self.self.value = prune_linear_layer(self.self.value, index)
        self.output.dense = prune_linear_layer(self.output.dense, index, dim=1)  # (H, N'D)
        self.self.num_attention_heads = len(keep)
        self.self.all_head_size = head_size * len(keep)
        self.pruned_heads |= set(new)

    def forward(
        self,
        hidden_states: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        head_mask: torch.Tensor | None = None,
        encoder_hidden_states: torch.Tensor | None = None,
        past_key_value: tuple[torch.Tensor, torch.Tensor] | None = None,
        output_attentions: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor | None, tuple[torch.Tensor, torch.Tensor] | None]:
        """
        Args: as BertSelfAttention.forward.

        Returns:
            (B, T, H) output, (B, N, T, S) probabilities or None, (K, V) for the cache or None.
        """
        context, probs, present = self.self(
            hidden_states, attention_mask, head_mask=head_mask, encoder_hidden_states=encoder_hidden_states,
            past_key_value=past_key_value, output_attentions=output_attentions,
        )  # (B, T, H)
        attention_output = self.output(context, hidden_states)  # (B, T, H)
        return attention_output, probs, present


class BertIntermediate(nn.Module):
    """act(X·W₁ + b₁): the feed-forward's widening half, H -> I (I = 4H in Google's models).

    (B, T, H) -> (B, T, I).

    transformers: ``BertIntermediate`` (unchanged since 3.4)
    Google TF: ``bert/encoder/layer_{i}/intermediate``
    """

    def __init__(self, config: BertConfig) -> None:
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.intermediate_size)
        self.intermediate_act_fn = ACT2FN[config.hidden_act]

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        """(B, T, H) -> (B, T, I)."""
        hidden_states = self.dense(hidden_states)  # (B, T, I)
        return self.intermediate_act_fn(hidden_states)


class BertOutput(nn.Module):
    """LayerNorm(Dropout(F·W₂ + b₂) + X): the feed-forward's narrowing half, I -> H,
    residual, post-LN (as BertSelfOutput).

    (B, T, I) and (B, T, H) residual input -> (B, T, H).

    transformers: ``BertOutput`` (unchanged since 3.4)
    Google TF: ``bert/encoder/layer_{i}/output``
    """

    def __init__(self, config: BertConfig) -> None:
        super().__init__()
        self.dense = nn.Linear(config.intermediate_size, config.hidden_size)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(self, hidden_states: torch.Tensor, input_tensor: torch.Tensor) -> torch.Tensor:
        """
        Args:
            hidden_states: (B, T, I) feed-forward activations.
            input_tensor: (B, T, H) the feed-forward's input, for the residual.

        Returns:
            (B, T, H).
        """
        hidden_states = self.dense(hidden_states)  # (B, T, H)
        hidden_states = self.dropout(hidden_states)
        return self.LayerNorm(hidden_states + input_tensor)  # (B, T, H)


# ======================================================================================
# Layer and encoder
# ======================================================================================


class BertLayer(GradientCheckpointingLayer):
    """One Transformer block: A = Attention(X), then Y = Output(Intermediate(A), A).

    (B, T, H) -> (B, T, H). The feed-forward may run over sequence chunks
    (``config.chunk_size_feed_forward``) with identical results.

    A decoder with ``add_cross_attention`` inserts cross-attention over the encoder's states
    between the two: A' = CrossAttention(A, enc) (Vaswani et al., 2017).

    transformers: ``BertLayer`` (4.x: adds cross-attention)
    Google TF: ``bert/encoder/layer_{i}``
    """

    def __init__(self, config: BertConfig) -> None:
        super().__init__()
        self.chunk_size_feed_forward = config.chunk_size_feed_forward
        self.seq_len_dim = 1  # chunk along T in (B, T, H)
        self.attention = BertAttention(config)
        self.is_decoder = config.is_decoder
        self.add_cross_attention = config.add_cross_attention
        if self.add_cross_attention:
            # Positions are the decoder's business: cross-attention is always "absolute" (4.x).
            self.crossattention = BertAttention(config, position_embedding_type="absolute", is_cross_attention=True)
        self.intermediate = BertIntermediate(config)
        self.output = BertOutput(config)

    def forward(
        self,
        hidden_states: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        head_mask: torch.Tensor | None = None,
        encoder_hidden_states: torch.Tensor | None = None,
        encoder_attention_mask: torch.Tensor | None = None,
        past_key_value: tuple[torch.Tensor, ...] | None = None,
        output_attentions: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor | None, tuple[torch.Tensor, ...] | None]:
        """
        Args:
            hidden_states: (B, T, H).
            attention_mask: additive, (B, 1, 1, S) or (B, 1, T, S).
            head_mask: (1, N, 1, 1) multiplier per head, or None.
            encoder_hidden_states: (B, S_enc, H), for cross-attention.
            encoder_attention_mask: additive, (B, 1, 1, S_enc), from invert_attention_mask.
            past_key_value: this layer's cache, (self K, self V) or (self K, self V, cross K, cross V).
            output_attentions: also return the probabilities.

        Returns:
            (B, T, H) layer output, self-attention probabilities (B, N, T, S) or None,
            cross-attention probabilities (B, N, T, S_enc) or None, this layer's new cache or None.
        """
        self_past = past_key_value[:2] if past_key_value is not None else None
        attention_output, probs, present = self.attention(
            hidden_states, attention_mask, head_mask=head_mask, past_key_value=self_past,
            output_attentions=output_attentions,
        )  # (B, T, H)
        cross_probs = None
        if self.is_decoder and encoder_hidden_states is not None:
            cross_past = past_key_value[2:] if past_key_value is not None and len(past_key_value) == 4 else None
            attention_output, cross_probs, cross_present = self.crossattention(
                attention_output, encoder_attention_mask, head_mask=head_mask,
                encoder_hidden_states=encoder_hidden_states, past_key_value=cross_past,
                output_attentions=output_attentions,
            )  # (B, T, H)
            present = present + cross_present  # (self K, self V, cross K, cross V)
        layer_output = apply_chunking_to_forward(
            self.feed_forward_chunk, self.chunk_size_feed_forward, self.seq_len_dim, attention_output
        )  # (B, T, H)
        return layer_output, probs, cross_probs, present

    def feed_forward_chunk(self, attention_output: torch.Tensor) -> torch.Tensor:
        intermediate_output = self.intermediate(attention_output)  # (B, t, I)
        return self.output(intermediate_output, attention_output)  # (B, t, H)


class BertEncoder(nn.Module):
    """Xₗ = BertLayerₗ(Xₗ₋₁) for l = 1..L: the stack of layers.

    (B, T, H) -> (B, T, H), optionally with every layer's hidden states and attentions.

    transformers: ``BertEncoder`` (5.x: outputs collected by hooks)
    Google TF: ``bert/encoder``
    """

    def __init__(self, config: BertConfig) -> None:
        super().__init__()
        self.config = config
        self.layer = nn.ModuleList([BertLayer(config) for _ in range(config.num_hidden_layers)])
        # Recompute each layer's activations in the backward pass instead of keeping them
        # (Chen et al., 2016): memory O(L) layer inputs instead of O(L) full activations.
        # PreTrainedModel.activation_checkpointing_enable sets this and
        # the layers' own flags (BertLayer is a GradientCheckpointingLayer).
        self.gradient_checkpointing = False

    def forward(
        self,
        hidden_states: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        head_mask: list[torch.Tensor | None] | None = None,
        encoder_hidden_states: torch.Tensor | None = None,
        encoder_attention_mask: torch.Tensor | None = None,
        past_key_values: tuple[tuple[torch.Tensor, ...], ...] | None = None,
        use_cache: bool = False,
        output_attentions: bool = False,
        output_hidden_states: bool = False,
        return_dict: bool = True,
    ) -> BaseModelOutputWithPastAndCrossAttentions | tuple:
        """
        Args:
            hidden_states: (B, T, H) embeddings.
            attention_mask: additive, (B, 1, 1, S) or (B, 1, T, S).
            head_mask: one (1, N, 1, 1) multiplier (or None) per layer, from get_head_mask.
            encoder_hidden_states / encoder_attention_mask: for cross-attention (decoders).
            past_key_values: one cache tuple per layer (see BertLayer.forward), or None.
            use_cache: return the updated caches.
            output_attentions / output_hidden_states: collect every layer's probabilities / outputs.
            return_dict: a BaseModelOutputWithPastAndCrossAttentions, or the tuple of its non-None fields.

        Returns:
            last_hidden_state (B, T, H); past_key_values L x cache tuple; hidden_states L + 1 x
            (B, T, H); attentions L x (B, N, T, S); cross_attentions L x (B, N, T, S_enc).
        """
        if self.gradient_checkpointing and self.training and use_cache:
            logger.warning("use_cache=True cannot be combined with gradient checkpointing in training; not caching")
            use_cache = False
        all_hidden_states = (hidden_states,) if output_hidden_states else None  # the embeddings first
        all_attentions = () if output_attentions else None
        all_cross_attentions = () if output_attentions and encoder_hidden_states is not None else None
        next_cache = () if use_cache else None
        head_mask = head_mask if head_mask is not None else [None] * len(self.layer)
        for i, (layer_module, layer_head_mask) in enumerate(zip(self.layer, head_mask)):
            layer_past = past_key_values[i] if past_key_values is not None else None
            # Positional: a checkpointed layer (see GradientCheckpointingLayer) tracks only
            # positional tensors. Its replay restores the RNG state, so dropout masks repeat.
            hidden_states, probs, cross_probs, present = layer_module(
                hidden_states, attention_mask, layer_head_mask, encoder_hidden_states, encoder_attention_mask,
                layer_past, output_attentions,
            )
            if use_cache:
                next_cache = next_cache + (present,)
            if output_hidden_states:
                all_hidden_states = all_hidden_states + (hidden_states,)
            if output_attentions:
                all_attentions = all_attentions + (probs,)
                if all_cross_attentions is not None:
                    all_cross_attentions = all_cross_attentions + (cross_probs,)
        out = BaseModelOutputWithPastAndCrossAttentions(
            last_hidden_state=hidden_states,
            past_key_values=next_cache,
            hidden_states=all_hidden_states,
            attentions=all_attentions,
            cross_attentions=all_cross_attentions,
        )
        return out if return_dict else out.to_tuple()


# ======================================================================================
# Pooler
# ======================================================================================


class BertPooler(nn.Module):
    """tanh(h_[CLS]·W_P + b_P): the sentence vector read off the first token.

    (B, T, H) -> (B, H). Trained by the next-sentence-prediction task (the classifier on
    top of it); sentence-embedding models such as all-MiniLM ignore it and mean-pool.

    transformers: ``BertPooler`` (unchanged since 3.4)
    Google TF: ``bert/pooler``
    """

    def __init__(self, config: BertConfig) -> None:
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)
        self.activation = nn.Tanh()

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        """(B, T, H) -> (B, H)."""
        first_token_tensor = hidden_states[:, 0]  # (B, H): the [CLS] position
        pooled_output = self.dense(first_token_tensor)  # (B, H)
        return self.activation(pooled_output)


# ======================================================================================
# Prediction heads (the modules under cls.*)
# ======================================================================================


class BertPredictionHeadTransform(nn.Module):
    """LayerNorm(act(X·W + b)): one more dense layer before the vocabulary projection.

    (B, T, H) -> (B, T, H).

    transformers: ``BertPredictionHeadTransform`` (unchanged since 3.4)
    Google TF: ``cls/predictions/transform``
    """

    def __init__(self, config: BertConfig) -> None:
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)
        self.transform_act_fn = ACT2FN[config.hidden_act]
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        """(B, T, H) -> (B, T, H)."""
        hidden_states = self.dense(hidden_states)  # (B, T, H)
        hidden_states = self.transform_act_fn(hidden_states)
        return self.LayerNorm(hidden_states)


class BertLMPredictionHead(nn.Module):
    """logits = Transform(X)·Eᵀ + b: scores over the vocabulary.

    (B, T, H) -> (B, T, V). The projection ``decoder`` shares its (V, H) weight with the
    word embeddings E (Press & Wolf, 2017: input and output embeddings tied), so only the
    per-token output bias ``bias`` is new. ``decoder.bias`` *is* ``bias`` (one Parameter
    under two names), which is why the hub's checkpoints store only ``cls.predictions.bias``.

    transformers: ``BertLMPredictionHead`` (5.x: ties declared, not made in __init__)
    Google TF: ``cls/predictions`` (the decoder weight is ``bert/embeddings/word_embeddings``)
    """

    def __init__(self, config: BertConfig) -> None:
        super().__init__()
        self.transform = BertPredictionHeadTransform(config)
        self.decoder = nn.Linear(config.hidden_size, config.vocab_size, bias=True)
        self.bias = nn.Parameter(torch.empty(config.vocab_size))  # zeroed by _init_weights
        self.decoder.bias = self.bias  # one parameter, two names

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        """(B, T, H) -> (B, T, V)."""
        hidden_states = self.transform(hidden_states)  # (B, T, H)
        return self.decoder(hidden_states)  # (B, T, V)


class BertOnlyMLMHead(nn.Module):
    """The masked-LM head alone: (B, T, H) -> (B, T, V).

    transformers: ``BertOnlyMLMHead``
    Google TF: ``cls``
    """

    def __init__(self, config: BertConfig) -> None:
        super().__init__()
        self.predictions = BertLMPredictionHead(config)

    def forward(self, sequence_output: torch.Tensor) -> torch.Tensor:
        return self.predictions(sequence_output)  # (B, T, V)


class BertOnlyNSPHead(nn.Module):
    """The next-sentence head alone: pooled·W + b, (B, H) -> (B, 2).

    transformers: ``BertOnlyNSPHead``
    Google TF: ``cls/seq_relationship``
    """

    def __init__(self, config: BertConfig) -> None:
        super().__init__()
        self.seq_relationship = nn.Linear(config.hidden_size, 2)

    def forward(self, pooled_output: torch.Tensor) -> torch.Tensor:
        return self.seq_relationship(pooled_output)  # (B, 2)


class BertPreTrainingHeads(nn.Module):
    """Both pre-training heads: (B, T, H), (B, H) -> (B, T, V) MLM scores, (B, 2) NSP scores.

    transformers: ``BertPreTrainingHeads``
    Google TF: ``cls``
    """

    def __init__(self, config: BertConfig) -> None:
        super().__init__()
        self.predictions = BertLMPredictionHead(config)
        self.seq_relationship = nn.Linear(config.hidden_size, 2)

    def forward(self, sequence_output: torch.Tensor, pooled_output: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        prediction_scores = self.predictions(sequence_output)  # (B, T, V)
        seq_relationship_score = self.seq_relationship(pooled_output)  # (B, 2)
        return prediction_scores, seq_relationship_score


# ======================================================================================
# Pre-trained base class and the base model
# ======================================================================================


#: A checkpoint key of the encoder's layer i (with or without the heads' "bert." prefix).
_LAYER_KEY = re.compile(r"^(?:bert\.)?encoder\.layer\.(\d+)\.")


class BertPreTrainedModel(PreTrainedModel):
    """Base of every BERT model: config class, checkpoint prefix and weight initialisation.

    Initialisation as transformers' ``_init_weights`` (itself Google's
    ``truncated_normal``, without the truncation): Linear and Embedding weights
    ~ N(0, initializer_range), biases 0, the padding row 0, LayerNorm scale 1 and shift 0.
    ``from_pretrained`` / ``save_pretrained`` come from ``PreTrainedModel``, as in transformers.

    transformers: ``BertPreTrainedModel``
    Google TF: none (initialisers are arguments of each TF layer)
    """

    config_class = BertConfig
    base_model_prefix = "bert"  # head models keep the encoder under .bert -> keys "bert.embeddings..."

    @classmethod
    def _config_contradictions(cls, config: BertConfig, shapes: dict[str, tuple[int, ...]]) -> list[str]:
        # The two sizes whose cost is paid while building, before any shape is compared:
        # every layer is a Python object (a million take minutes), and position_ids is a
        # real (1, max_position_embeddings) buffer (10**9 positions take 8 GB).
        layers = {int(m.group(1)) for name in shapes if (m := _LAYER_KEY.match(name))}
        problems = []
        if layers and config.num_hidden_layers > max(layers) + 1:
            problems.append(f"the config asks for num_hidden_layers={config.num_hidden_layers}, "
                            f"but the checkpoint holds layers 0..{max(layers)}")
        positions = shapes.get("embeddings.position_embeddings.weight") or shapes.get("bert.embeddings.position_embeddings.weight")
        if positions and positions[0] != config.max_position_embeddings:
            problems.append(f"the config asks for max_position_embeddings={config.max_position_embeddings}, "
                            f"but the checkpoint's position table has {positions[0]} rows")
        return problems

    @torch.no_grad()
    def _init_weights(self, module: nn.Module) -> None:
        std = self.config.initializer_range
        if isinstance(module, nn.Linear):
            module.weight.normal_(mean=0.0, std=std)
            if module.bias is not None:
                module.bias.zero_()
        elif isinstance(module, nn.Embedding):
            module.weight.normal_(mean=0.0, std=std)
            if module.padding_idx is not None:
                module.weight[module.padding_idx].zero_()
        elif isinstance(module, nn.LayerNorm):
            module.weight.fill_(1.0)
            module.bias.zero_()
        elif isinstance(module, BertLMPredictionHead):
            module.bias.zero_()
        elif isinstance(module, BertEmbeddings):
            # Its buffers are derived, not saved; a model built on the meta device for
            # loading gets their values here (as in transformers 5.x's _init_weights).
            module.position_ids.copy_(torch.arange(module.position_ids.shape[-1]).expand((1, -1)))
            module.token_type_ids.zero_()


class BertModel(BertPreTrainedModel):
    """The BERT encoder: embeddings, L layers, and (optionally) the pooler.

    (B, T) token ids -> ``last_hidden_state`` (B, T, H) and ``pooler_output`` (B, H).

    transformers: ``BertModel`` (5.x: masks from masking_utils, no head_mask)
    Google TF: ``bert`` (``modeling.BertModel``)
    """

    #: A checkpoint saved from a masked-LM model has no pooler: initialise it with a warning.
    _keys_to_init_if_missing = ("pooler.",)

    def __init__(self, config: BertConfig, add_pooling_layer: bool = True) -> None:
        super().__init__(config)
        check_attn_implementation(config.attn_implementation)
        self.embeddings = BertEmbeddings(config)
        self.encoder = BertEncoder(config)
        self.pooler = BertPooler(config) if add_pooling_layer else None
        self.post_init()
        if config.pruned_heads:  # a pruned checkpoint: shrink to its shapes before loading
            self._prune_heads(config.pruned_heads)

    def _prune_heads(self, heads_to_prune: dict[int, list[int]]) -> None:
        for layer, heads in heads_to_prune.items():
            self.encoder.layer[layer].attention.prune_heads(heads)

    def get_input_embeddings(self) -> nn.Embedding:
        return self.embeddings.word_embeddings

    def set_input_embeddings(self, value: nn.Embedding) -> None:
        self.embeddings.word_embeddings = value

    def forward(
        self,
        input_ids: torch.Tensor | None = None,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
        position_ids: torch.Tensor | None = None,
        *,
        # Keyword-only from here: transformers 4.x has head_mask in the 5th position and
        # 5.x has inputs_embeds there, so a positional call would mean different things.
        inputs_embeds: torch.Tensor | None = None,
        head_mask: torch.Tensor | None = None,
        encoder_hidden_states: torch.Tensor | None = None,
        encoder_attention_mask: torch.Tensor | None = None,
        past_key_values: tuple[tuple[torch.Tensor, ...], ...] | None = None,
        use_cache: bool | None = None,
        output_attentions: bool | None = None,
        output_hidden_states: bool | None = None,
        return_dict: bool | None = None,
    ) -> BaseModelOutputWithPoolingAndCrossAttentions | tuple:
        """
        Args:
            input_ids: (B, T) token ids in [0, V). Exactly one of this and ``inputs_embeds``.
            attention_mask: (B, T) with 1 = attend, 0 = padding; or (B, T, T), one row of
                allowed keys per query. Default: attend everywhere.
            token_type_ids: (B, T) segment ids in [0, type_vocab_size). Default 0.
            position_ids: (B, T) or (1, T) positions in [0, max_position_embeddings). Default 0..T-1.
            inputs_embeds: (B, T, H) vectors to use instead of the word-embedding lookup.
            head_mask: (N,) or (L, N), 1 keeps a head and 0 silences it (eager path; 4.x only in transformers).
            encoder_hidden_states: (B, S_enc, H) for a decoder built with add_cross_attention.
            encoder_attention_mask: (B, S_enc) 1 = attend, 0 = encoder padding. Default: all.
            past_key_values: the cache a previous call returned (decoders): the new input_ids
                continue those P positions, and attention_mask, if given, covers all P + T.
            use_cache: return the updated cache (decoders; default config.use_cache).
            output_attentions: return every layer's (B, N, T, S) probabilities (eager path).
            output_hidden_states: return the embeddings and every layer's (B, T, H) output.
            return_dict: a BaseModelOutputWithPoolingAndCrossAttentions (default) or a tuple
                of its non-None fields.

        Returns:
            ``last_hidden_state`` (B, T, H), ``pooler_output`` (B, H) or None,
            ``hidden_states`` L + 1 x (B, T, H) or None, ``attentions`` L x (B, N, T, S) or None,
            ``past_key_values`` (decoders with use_cache), ``cross_attentions`` L x (B, N, T, S_enc).
        """
        config = self.config
        output_attentions = config.output_attentions if output_attentions is None else output_attentions
        output_hidden_states = config.output_hidden_states if output_hidden_states is None else output_hidden_states
        return_dict = config.return_dict if return_dict is None else return_dict
        use_cache = (config.use_cache if use_cache is None else use_cache) if config.is_decoder else False
        batch_size, seq_length, past_length = check_model_inputs(
            config, input_ids, inputs_embeds, token_type_ids, position_ids, past_key_values, encoder_hidden_states,
            attention_mask, self.embeddings.word_embeddings.weight.dtype,
        )

        if config.attn_implementation == "fast" and modeling_bert_fast.applies(
            self, attention_mask, batch_size, seq_length, head_mask=head_mask, output_attentions=output_attentions,
            output_hidden_states=output_hidden_states, encoder_hidden_states=encoder_hidden_states,
            past_key_values=past_key_values,
        ):  # the same function on real tokens only: modeling_bert_fast.py
            out = modeling_bert_fast.fast_forward(self, input_ids, attention_mask, token_type_ids, position_ids, inputs_embeds)
            return out if return_dict else out.to_tuple()

        embedding_output = self.embeddings(
            input_ids=input_ids, token_type_ids=token_type_ids, position_ids=position_ids, inputs_embeds=inputs_embeds,
            past_key_values_length=past_length,
        )  # (B, T, H)

        extended_attention_mask = None
        if attention_mask is not None or config.is_decoder:
            if attention_mask is None:
                attention_mask = torch.ones(batch_size, past_length + seq_length, device=embedding_output.device)
            extended_attention_mask = get_extended_attention_mask(
                attention_mask.to(embedding_output.device),
                (batch_size, seq_length),
                dtype=embedding_output.dtype,
                is_decoder=config.is_decoder,
            )  # (B, 1, 1, S) or (B, 1, T, S); no mask at all = attend everywhere, and lets sdpa skip it
        encoder_extended_attention_mask = None
        if encoder_hidden_states is not None and encoder_attention_mask is not None:
            encoder_extended_attention_mask = invert_attention_mask(
                encoder_attention_mask.to(embedding_output.device),
                tuple(encoder_hidden_states.shape[:2]),
                dtype=embedding_output.dtype,
            )  # (B, 1, 1, S_enc)

        layer_head_masks = get_head_mask(
            head_mask, config.num_hidden_layers, config.num_attention_heads, embedding_output.dtype
        )  # L x (1, N, 1, 1) or L x None
        encoder_outputs = self.encoder(
            embedding_output,
            attention_mask=extended_attention_mask,
            head_mask=layer_head_masks,
            encoder_hidden_states=encoder_hidden_states,
            encoder_attention_mask=encoder_extended_attention_mask,
            past_key_values=past_key_values,
            use_cache=use_cache,
            output_attentions=output_attentions,
            output_hidden_states=output_hidden_states,
            return_dict=True,
        )
        sequence_output = encoder_outputs.last_hidden_state  # (B, T, H)
        pooled_output = self.pooler(sequence_output) if self.pooler is not None else None  # (B, H)

        out = BaseModelOutputWithPoolingAndCrossAttentions(
            last_hidden_state=sequence_output,
            pooler_output=pooled_output,
            hidden_states=encoder_outputs.hidden_states,
            past_key_values=encoder_outputs.past_key_values,
            attentions=encoder_outputs.attentions,
            cross_attentions=encoder_outputs.cross_attentions,
        )
        return out if return_dict else out.to_tuple()


# ======================================================================================
# Task models: BertModel + a head, each with its loss as transformers computes it
# ======================================================================================
#
# Every head returns transformers' output dataclass (or its tuple with return_dict=False),
# computes its loss only when labels are given, and ignores label -100 in token-level
# losses (CrossEntropyLoss's default ignore_index), as transformers does.


class BertForPreTraining(BertPreTrainedModel):
    """Google's pre-training objective, masked-LM + next-sentence prediction:
    𝓛 = CE(MLM logits, labels) + CE(NSP logits, next_sentence_label).

    (B, T) ids -> (B, T, V) MLM logits and (B, 2) NSP logits. The loss is returned only
    when both label sets are given.

    transformers: ``BertForPreTraining``
    Google TF: ``bert`` + ``cls`` (``run_pretraining.py``)
    """

    _tied_weights_keys = {
        "cls.predictions.decoder.weight": "bert.embeddings.word_embeddings.weight",
        "cls.predictions.decoder.bias": "cls.predictions.bias",
    }

    def __init__(self, config: BertConfig) -> None:
        super().__init__(config)
        self.bert = BertModel(config)
        self.cls = BertPreTrainingHeads(config)
        self.post_init()

    def get_output_embeddings(self) -> nn.Linear:
        return self.cls.predictions.decoder

    def forward(
        self,
        input_ids: torch.Tensor | None = None,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
        position_ids: torch.Tensor | None = None,
        *,
        inputs_embeds: torch.Tensor | None = None,
        head_mask: torch.Tensor | None = None,
        labels: torch.Tensor | None = None,
        next_sentence_label: torch.Tensor | None = None,
        output_attentions: bool | None = None,
        output_hidden_states: bool | None = None,
        return_dict: bool | None = None,
    ) -> BertForPreTrainingOutput | tuple:
        """
        Args:
            labels: (B, T) token ids to predict at masked positions, -100 elsewhere.
            next_sentence_label: (B,) 0 if sentence B follows A, 1 if it is random.
            (the rest as BertModel.forward)
        """
        return_dict = self.config.return_dict if return_dict is None else return_dict
        outputs = self.bert(
            input_ids, attention_mask, token_type_ids, position_ids, inputs_embeds=inputs_embeds, head_mask=head_mask,
            output_attentions=output_attentions, output_hidden_states=output_hidden_states, return_dict=True,
        )
        prediction_scores, seq_relationship_score = self.cls(outputs.last_hidden_state, outputs.pooler_output)

        total_loss = None
        if labels is not None and next_sentence_label is not None:
            vocab = self.config.vocab_size
            check_pretraining_labels(labels, next_sentence_label, tuple(prediction_scores.shape))
            loss_fct = nn.CrossEntropyLoss()
            masked_lm_loss = loss_fct(prediction_scores.view(-1, vocab), labels.view(-1))  # (B*T, V) vs (B*T,)
            next_sentence_loss = loss_fct(seq_relationship_score.view(-1, 2), next_sentence_label.view(-1))
            total_loss = masked_lm_loss + next_sentence_loss

        out = BertForPreTrainingOutput(
            loss=total_loss,
            prediction_logits=prediction_scores,
            seq_relationship_logits=seq_relationship_score,
            hidden_states=outputs.hidden_states,
            attentions=outputs.attentions,
        )
        return out if return_dict else out.to_tuple()


class BertLMHeadModel(BertPreTrainedModel):
    """Left-to-right language model, token t+1 predicted from tokens ≤ t:
    𝓛 = CE(logits[:, :-1], labels[:, 1:]).

    (B, T) ids -> (B, T, V) logits. Needs ``config.is_decoder=True`` (causal self-attention).

    transformers: ``BertLMHeadModel`` (4.x: adds the key/value cache)
    Google TF: none (Google released no decoder BERT)
    """

    _tied_weights_keys = {
        "cls.predictions.decoder.weight": "bert.embeddings.word_embeddings.weight",
        "cls.predictions.decoder.bias": "cls.predictions.bias",
    }

    def __init__(self, config: BertConfig) -> None:
        super().__init__(config)
        if not config.is_decoder:
            logger.warning("BertLMHeadModel is meant to be a decoder: build it with is_decoder=True for causal attention")
        self.bert = BertModel(config, add_pooling_layer=False)
        self.cls = BertOnlyMLMHead(config)
        self.post_init()

    def get_output_embeddings(self) -> nn.Linear:
        return self.cls.predictions.decoder

    def forward(
        self,
        input_ids: torch.Tensor | None = None,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
        position_ids: torch.Tensor | None = None,
        *,
        inputs_embeds: torch.Tensor | None = None,
        head_mask: torch.Tensor | None = None,
        encoder_hidden_states: torch.Tensor | None = None,
        encoder_attention_mask: torch.Tensor | None = None,
        past_key_values: tuple[tuple[torch.Tensor, ...], ...] | None = None,
        use_cache: bool | None = None,
        labels: torch.Tensor | None = None,
        shift_labels: torch.Tensor | None = None,
        output_attentions: bool | None = None,
        output_hidden_states: bool | None = None,
        return_dict: bool | None = None,
    ) -> CausalLMOutputWithCrossAttentions | tuple:
        """
        Args:
            labels: (B, T) the input ids themselves (the shift happens here), -100 to ignore.
            shift_labels: (B, T) targets already aligned with the logits (position t's is
                token t+1), used instead of shifting ``labels``: sequence-parallel training
                shifts the whole sequence before cutting it into shards (transformers' argument).
            past_key_values / use_cache: generate token by token: pass back the returned
                ``past_key_values`` with only the new token(s) as input_ids.
            (the rest as BertModel.forward)
        """
        return_dict = self.config.return_dict if return_dict is None else return_dict
        if labels is not None:
            use_cache = False  # training on whole sequences: nothing to continue
        outputs = self.bert(
            input_ids, attention_mask, token_type_ids, position_ids, inputs_embeds=inputs_embeds, head_mask=head_mask,
            encoder_hidden_states=encoder_hidden_states, encoder_attention_mask=encoder_attention_mask,
            past_key_values=past_key_values, use_cache=use_cache,
            output_attentions=output_attentions, output_hidden_states=output_hidden_states, return_dict=True,
        )
        prediction_scores = self.cls(outputs.last_hidden_state)  # (B, T, V)

        loss = None
        if labels is not None:
            check_class_labels("labels", labels, tuple(prediction_scores.shape[:2]), self.config.vocab_size)
            if shift_labels is None:
                # Position t predicts token t+1: drop the last prediction and the first label.
                shifted_scores = prediction_scores[:, :-1, :].contiguous()  # (B, T-1, V)
                shifted_labels = labels[:, 1:].contiguous()  # (B, T-1)
            else:
                check_class_labels("shift_labels", shift_labels, tuple(prediction_scores.shape[:2]),
                                   self.config.vocab_size)
                shifted_scores, shifted_labels = prediction_scores, shift_labels  # (B, T, V), (B, T)
            loss = nn.functional.cross_entropy(
                shifted_scores.view(-1, self.config.vocab_size).float(), shifted_labels.view(-1)
            )

        out = CausalLMOutputWithCrossAttentions(
            loss=loss,
            logits=prediction_scores,
            past_key_values=outputs.past_key_values,
            hidden_states=outputs.hidden_states,
            attentions=outputs.attentions,
            cross_attentions=outputs.cross_attentions,
        )
        return out if return_dict else out.to_tuple()


class BertForMaskedLM(BertPreTrainedModel):
    """Masked-LM, the original token predicted at masked positions:
    𝓛 = CE(logits, labels) over positions whose label is not -100.

    (B, T) ids -> (B, T, V) logits. No pooler (its checkpoints have none).

    transformers: ``BertForMaskedLM``
    Google TF: ``bert`` + ``cls/predictions``
    """

    _tied_weights_keys = {
        "cls.predictions.decoder.weight": "bert.embeddings.word_embeddings.weight",
        "cls.predictions.decoder.bias": "cls.predictions.bias",
    }

    def __init__(self, config: BertConfig) -> None:
        super().__init__(config)
        if config.is_decoder:
            logger.warning("BertForMaskedLM is bidirectional: build it with is_decoder=False")
        self.bert = BertModel(config, add_pooling_layer=False)
        self.cls = BertOnlyMLMHead(config)
        self.post_init()

    def get_output_embeddings(self) -> nn.Linear:
        return self.cls.predictions.decoder

    def forward(
        self,
        input_ids: torch.Tensor | None = None,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
        position_ids: torch.Tensor | None = None,
        *,
        inputs_embeds: torch.Tensor | None = None,
        head_mask: torch.Tensor | None = None,
        encoder_hidden_states: torch.Tensor | None = None,
        encoder_attention_mask: torch.Tensor | None = None,
        labels: torch.Tensor | None = None,
        output_attentions: bool | None = None,
        output_hidden_states: bool | None = None,
        return_dict: bool | None = None,
    ) -> MaskedLMOutput | tuple:
        """
        Args:
            labels: (B, T) original ids at masked positions, -100 elsewhere.
            (the rest as BertModel.forward)
        """
        return_dict = self.config.return_dict if return_dict is None else return_dict
        outputs = self.bert(
            input_ids, attention_mask, token_type_ids, position_ids, inputs_embeds=inputs_embeds, head_mask=head_mask,
            encoder_hidden_states=encoder_hidden_states, encoder_attention_mask=encoder_attention_mask,
            output_attentions=output_attentions, output_hidden_states=output_hidden_states, return_dict=True,
        )
        prediction_scores = self.cls(outputs.last_hidden_state)  # (B, T, V)

        loss = None
        if labels is not None:
            check_class_labels("labels", labels, tuple(prediction_scores.shape[:2]), self.config.vocab_size)
            loss = nn.CrossEntropyLoss()(prediction_scores.view(-1, self.config.vocab_size), labels.view(-1))

        out = MaskedLMOutput(
            loss=loss, logits=prediction_scores, hidden_states=outputs.hidden_states, attentions=outputs.attentions
        )
        return out if return_dict else out.to_tuple()


class BertForNextSentencePrediction(BertPreTrainedModel):
    """Is sentence B the continuation of sentence A? softmax(pooled·W + b) over {yes, no}.

    (B, T) ids -> (B, 2) logits.

    transformers: ``BertForNextSentencePrediction``
    Google TF: ``bert`` + ``cls/seq_relationship``
    """

    def __init__(self, config: BertConfig) -> None:
        super().__init__(config)
        self.bert = BertModel(config)
        self.cls = BertOnlyNSPHead(config)
        self.post_init()

    def forward(
        self,
        input_ids: torch.Tensor | None = None,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
        position_ids: torch.Tensor | None = None,
        *,
        inputs_embeds: torch.Tensor | None = None,
        head_mask: torch.Tensor | None = None,
        labels: torch.Tensor | None = None,
        output_attentions: bool | None = None,
        output_hidden_states: bool | None = None,
        return_dict: bool | None = None,
    ) -> NextSentencePredictorOutput | tuple:
        """
        Args:
            labels: (B,) 0 if sentence B follows A, 1 if it is random.
            (the rest as BertModel.forward)
        """
        return_dict = self.config.return_dict if return_dict is None else return_dict
        outputs = self.bert(
            input_ids, attention_mask, token_type_ids, position_ids, inputs_embeds=inputs_embeds, head_mask=head_mask,
            output_attentions=output_attentions, output_hidden_states=output_hidden_states, return_dict=True,
        )
        seq_relationship_scores = self.cls(outputs.pooler_output)  # (B, 2)

        loss = None
        if labels is not None:
            check_class_labels("labels", labels, (seq_relationship_scores.shape[0],), 2)
            loss = nn.CrossEntropyLoss()(seq_relationship_scores.view(-1, 2), labels.view(-1))

        out = NextSentencePredictorOutput(
            loss=loss, logits=seq_relationship_scores, hidden_states=outputs.hidden_states, attentions=outputs.attentions
        )
        return out if return_dict else out.to_tuple()


class BertForSequenceClassification(BertPreTrainedModel):
    """Classify (or regress) the whole input from the pooled [CLS] vector:
    logits = Dropout(pooled)·W + b, (B, T) ids -> (B, C).

    The loss follows ``config.problem_type``, or is inferred per call as transformers does:
    C = 1 -> regression (MSE); integer labels -> single-label (cross-entropy); float
    labels -> multi-label (BCE with logits).

    transformers: ``BertForSequenceClassification`` (which also writes the inferred problem_type into the config)
    Google TF: ``bert`` + ``output_weights`` / ``output_bias`` (``run_classifier.py``)
    """

    def __init__(self, config: BertConfig) -> None:
        super().__init__(config)
        self.num_labels = config.num_labels
        self.bert = BertModel(config)
        # classifier_dropout None falls back to the hidden dropout, as in transformers.
        dropout = config.classifier_dropout if config.classifier_dropout is not None else config.hidden_dropout_prob
        self.dropout = nn.Dropout(dropout)
        self.classifier = nn.Linear(config.hidden_size, config.num_labels)
        self.post_init()

    def problem_type_for(self, labels: torch.Tensor) -> str:
        """The loss this call uses: config.problem_type, or transformers' inference rule."""
        if self.config.problem_type is not None:
            return self.config.problem_type
        if self.num_labels == 1:
            return "regression"
        if labels.dtype in (torch.long, torch.int):
            return "single_label_classification"
        return "multi_label_classification"

    def forward(
        self,
        input_ids: torch.Tensor | None = None,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
        position_ids: torch.Tensor | None = None,
        *,
        inputs_embeds: torch.Tensor | None = None,
        head_mask: torch.Tensor | None = None,
        labels: torch.Tensor | None = None,
        output_attentions: bool | None = None,
        output_hidden_states: bool | None = None,
        return_dict: bool | None = None,
    ) -> SequenceClassifierOutput | tuple:
        """
        Args:
            labels: (B,) class ids (single-label), (B,) or (B, 1) floats (regression, C = 1),
                (B, C) floats in [0, 1] (multi-label).
            (the rest as BertModel.forward)
        """
        return_dict = self.config.return_dict if return_dict is None else return_dict
        outputs = self.bert(
            input_ids, attention_mask, token_type_ids, position_ids, inputs_embeds=inputs_embeds, head_mask=head_mask,
            output_attentions=output_attentions, output_hidden_states=output_hidden_states, return_dict=True,
        )
        pooled_output = self.dropout(outputs.pooler_output)  # (B, H)
        logits = self.classifier(pooled_output)  # (B, C)

        loss = None
        if labels is not None:
            problem_type = self.problem_type_for(labels)
            check_sequence_classification_labels(labels, logits, problem_type)
            if problem_type == "regression" and self.num_labels == 1:
                loss = nn.MSELoss()(logits.squeeze(), labels.squeeze())  # (B,) vs (B,)
            elif problem_type == "regression":
                loss = nn.MSELoss()(logits, labels)  # (B, C) vs (B, C)
            elif problem_type == "single_label_classification":
                loss = nn.CrossEntropyLoss()(logits.view(-1, self.num_labels), labels.view(-1))
            else:  # multi_label_classification: C independent yes/no decisions
                loss = nn.BCEWithLogitsLoss()(logits, labels)

        out = SequenceClassifierOutput(
            loss=loss, logits=logits, hidden_states=outputs.hidden_states, attentions=outputs.attentions
        )
        return out if return_dict else out.to_tuple()


class BertForMultipleChoice(BertPreTrainedModel):
    """Score each of K candidate continuations, softmax over the K:
    (B, K, T) ids -> each (B·K, T) row encoded -> pooled -> one score -> (B, K) logits.

    transformers: ``BertForMultipleChoice``
    Google TF: none (SWAG was run with ``run_classifier.py``-style code)
    """

    def __init__(self, config: BertConfig) -> None:
        super().__init__(config)
        self.bert = BertModel(config)
        dropout = config.classifier_dropout if config.classifier_dropout is not None else config.hidden_dropout_prob
        self.dropout = nn.Dropout(dropout)
        self.classifier = nn.Linear(config.hidden_size, 1)
        self.post_init()

    def forward(
        self,
        input_ids: torch.Tensor | None = None,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
        position_ids: torch.Tensor | None = None,
        *,
        inputs_embeds: torch.Tensor | None = None,
        head_mask: torch.Tensor | None = None,
        labels: torch.Tensor | None = None,
        output_attentions: bool | None = None,
        output_hidden_states: bool | None = None,
        return_dict: bool | None = None,
    ) -> MultipleChoiceModelOutput | tuple:
        """
        Args:
            input_ids, attention_mask, token_type_ids, position_ids: (B, K, T).
            inputs_embeds: (B, K, T, H).
            labels: (B,) index of the right choice in [0, K).

        Returns:
            logits (B, K).
        """
        return_dict = self.config.return_dict if return_dict is None else return_dict
        num_choices = check_multiple_choice_inputs(input_ids, inputs_embeds)  # K

        def flat(t: torch.Tensor | None) -> torch.Tensor | None:
            return None if t is None else t.reshape(-1, t.size(-1))  # (B, K, T) -> (B*K, T)

        outputs = self.bert(
            flat(input_ids), flat(attention_mask), flat(token_type_ids), flat(position_ids),
            inputs_embeds=None if inputs_embeds is None else inputs_embeds.reshape(-1, *inputs_embeds.shape[-2:]),
            head_mask=head_mask, output_attentions=output_attentions, output_hidden_states=output_hidden_states, return_dict=True,
        )
        pooled_output = self.dropout(outputs.pooler_output)  # (B*K, H)
        logits = self.classifier(pooled_output)  # (B*K, 1)
        reshaped_logits = logits.view(-1, num_choices)  # (B, K)

        loss = None
        if labels is not None:
            check_class_labels("labels", labels, (reshaped_logits.shape[0],), num_choices)
            loss = nn.CrossEntropyLoss()(reshaped_logits, labels)

        out = MultipleChoiceModelOutput(
            loss=loss, logits=reshaped_logits, hidden_states=outputs.hidden_states, attentions=outputs.attentions
        )
        return out if return_dict else out.to_tuple()


class BertForTokenClassification(BertPreTrainedModel):
    """Label every token (NER, POS): logits_t = Dropout(h_t)·W + b, (B, T) ids -> (B, T, C).

    transformers: ``BertForTokenClassification`` (no pooler)
    Google TF: none (its NER recipes are third-party)
    """

    def __init__(self, config: BertConfig) -> None:
        super().__init__(config)
        self.num_labels = config.num_labels
        self.bert = BertModel(config, add_pooling_layer=False)
        dropout = config.classifier_dropout if config.classifier_dropout is not None else config.hidden_dropout_prob
        self.dropout = nn.Dropout(dropout)
        self.classifier = nn.Linear(config.hidden_size, config.num_labels)
        self.post_init()

    def forward(
        self,
        input_ids: torch.Tensor | None = None,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
        position_ids: torch.Tensor | None = None,
        *,
        inputs_embeds: torch.Tensor | None = None,
        head_mask: torch.Tensor | None = None,
        labels: torch.Tensor | None = None,
        output_attentions: bool | None = None,
        output_hidden_states: bool | None = None,
        return_dict: bool | None = None,
    ) -> TokenClassifierOutput | tuple:
        """
        Args:
            labels: (B, T) class ids, -100 for tokens to ignore (padding, word-piece continuations).
            (the rest as BertModel.forward)
        """
        return_dict = self.config.return_dict if return_dict is None else return_dict
        outputs = self.bert(
            input_ids, attention_mask, token_type_ids, position_ids, inputs_embeds=inputs_embeds, head_mask=head_mask,
            output_attentions=output_attentions, output_hidden_states=output_hidden_states, return_dict=True,
        )
        sequence_output = self.dropout(outputs.last_hidden_state)  # (B, T, H)
        logits = self.classifier(sequence_output)  # (B, T, C)

        loss = None
        if labels is not None:
            check_class_labels("labels", labels, tuple(logits.shape[:2]), self.num_labels)
            loss = nn.CrossEntropyLoss()(logits.view(-1, self.num_labels), labels.view(-1))

        out = TokenClassifierOutput(
            loss=loss, logits=logits, hidden_states=outputs.hidden_states, attentions=outputs.attentions
        )
        return out if return_dict else out.to_tuple()


class BertForQuestionAnswering(BertPreTrainedModel):
    """Extractive QA (SQuAD): [s_t, e_t] = h_t·W + b, each token scored as the answer's start
    and end; (B, T) ids -> (B, T) start logits, (B, T) end logits.

    Loss: mean of the start and end cross-entropies over positions. Positions outside the
    sequence are clamped to T and ignored (transformers' rule, for answers truncated away).

    transformers: ``BertForQuestionAnswering`` (no pooler)
    Google TF: ``bert`` + ``cls/squad`` (``run_squad.py``)
    """

    def __init__(self, config: BertConfig) -> None:
        super().__init__(config)
        self.num_labels = config.num_labels
        self.bert = BertModel(config, add_pooling_layer=False)
        self.qa_outputs = nn.Linear(config.hidden_size, config.num_labels)
        self.post_init()

    def forward(
        self,
        input_ids: torch.Tensor | None = None,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
        position_ids: torch.Tensor | None = None,
        *,
        inputs_embeds: torch.Tensor | None = None,
        head_mask: torch.Tensor | None = None,
        start_positions: torch.Tensor | None = None,
        end_positions: torch.Tensor | None = None,
        output_attentions: bool | None = None,
        output_hidden_states: bool | None = None,
        return_dict: bool | None = None,
    ) -> QuestionAnsweringModelOutput | tuple:
        """
        Args:
            start_positions, end_positions: (B,) token index of the answer span's first / last token.
            (the rest as BertModel.forward)
        """
        if self.num_labels != 2:
            raise ValueError(f"BertForQuestionAnswering needs config.num_labels=2 (start, end), got {self.num_labels}")
        return_dict = self.config.return_dict if return_dict is None else return_dict
        outputs = self.bert(
            input_ids, attention_mask, token_type_ids, position_ids, inputs_embeds=inputs_embeds, head_mask=head_mask,
            output_attentions=output_attentions, output_hidden_states=output_hidden_states, return_dict=True,
        )
        logits = self.qa_outputs(outputs.last_hidden_state)  # (B, T, 2)
        start_logits, end_logits = logits.split(1, dim=-1)  # 2 x (B, T, 1)
        start_logits = start_logits.squeeze(-1).contiguous()  # (B, T)
        end_logits = end_logits.squeeze(-1).contiguous()  # (B, T)

        total_loss = None
        if start_positions is not None and end_positions is not None:
            batch_size, seq_length = start_logits.shape
            start_positions, end_positions = check_span_positions(start_positions, end_positions, batch_size)  # (B,)
            # Answers truncated out of the window are clamped to T, an index CE then ignores.
            loss_fct = nn.CrossEntropyLoss(ignore_index=seq_length)
            start_loss = loss_fct(start_logits, start_positions.clamp(0, seq_length))
            end_loss = loss_fct(end_logits, end_positions.clamp(0, seq_length))
            total_loss = (start_loss + end_loss) / 2

        out = QuestionAnsweringModelOutput(
            loss=total_loss,
            start_logits=start_logits,
            end_logits=end_logits,
            hidden_states=outputs.hidden_states,
            attentions=outputs.attentions,
        )
        return out if return_dict else out.to_tuple()
