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
    P  positions the model has           (config.max_position_embeddings, 512)
    R  positions already in a decoder's key/value cache (S = R + T)
    C  classes of a classifier head      (config.num_labels)

Naming
------
Attribute names are transformers', which are Google's TF variable scopes:
``self.self`` (the attention's query/key/value part), ``self.output``, ``dense``,
``LayerNorm`` (capitalised, against PEP 8). They are kept so that every state-dict key
(``encoder.layer.0.attention.self.query.weight``) is a real checkpoint's key, loadable
with no renaming, and readable next to transformers' source.
"""

from typing import Unpack

import torch
from torch import nn

from .activations import ACT2FN
from .configuration_bert import BertConfig
from .masking_utils import get_extended_attention_mask
from . import modeling_bert_extras as extras  # what only some transformers versions have
from .modeling_outputs import (
    BaseModelOutput,
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
from .generation_utils import GenerationMixin
from .modeling_utils import PreTrainedModel, attention_function
from .pytorch_utils import (
    GradientCheckpointingLayer,
    apply_chunking_to_forward,
    checkpointed_module_call,
    token_cross_entropy,
)
from .validation import (
    check_class_labels,
    check_model_inputs,
    check_multiple_choice_inputs,
    check_pretraining_labels,
    check_sequence_classification_labels,
    check_span_positions,
    output_switches,
    warn_if_not_causal,
)


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
        self.position_embedding_type = config.position_embedding_type  # not "absolute": 4.x's relative positions
        # Default positions 0..max-1 and segment ids 0, sliced per call. Not persistent:
        # they are derived from the config, so they stay out of state_dict (as in transformers >= 4.31).
        positions = config.max_position_embeddings
        self.register_buffer("position_ids", torch.arange(positions).expand((1, -1)), persistent=False)  # (1, P)
        self.register_buffer("token_type_ids", torch.zeros(1, positions, dtype=torch.long), persistent=False)  # (1, P)

    def forward(self, input_ids: torch.Tensor | None = None, token_type_ids: torch.Tensor | None = None,
                position_ids: torch.Tensor | None = None, inputs_embeds: torch.Tensor | None = None,
                past_key_values_length: int = 0) -> torch.Tensor:
        """(B, T) ids, or (B, T, H) ``inputs_embeds`` -> (B, T, H). Segments default to 0,
        positions to 0..T-1 (after the ``past_key_values_length`` a decoder's cache holds)."""
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
# One function, several implementations, chosen by config._attn_implementation as in transformers:
#   "eager": written out below, every step: the readable reference, and the only one that
#            can return the attention probabilities;
#   "sdpa":  torch.nn.functional.scaled_dot_product_attention, one fused call
#            (integrations/sdpa_attention.py), looked up in modeling_utils.ALL_ATTENTION_FUNCTIONS.
# Both take q, k, v of shape (B, N, T|S, D), the additive mask of get_extended_attention_mask,
# the score scale 1/sqrt(D) and the probabilities' dropout module.


def eager_attention_forward(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                            attention_mask: torch.Tensor | None, scaling: float, dropout: nn.Dropout,
                            ) -> tuple[torch.Tensor, torch.Tensor]:
    """softmax(QKᵀ/√D + M)·V, step by step.

    Returns the context (B, N, T, D) and the attention probabilities (B, N, T, S).

    transformers: ``eager_attention_forward`` (5.x; 3.4 / 4.x inline it in the class)
    """
    # Scores: how much each query position attends each key position. Scaled by 1/sqrt(D)
    # because the dot product of two D-dim vectors with unit-variance entries has variance D;
    # unscaled, large D would push softmax into its flat, vanishing-gradient tails.
    scores = torch.matmul(query, key.transpose(-1, -2)) * scaling  # (B, N, T, D) @ (B, N, D, S) -> (B, N, T, S)
    if attention_mask is not None:
        # Additive mask: 0 to keep, finfo.min to drop (broadcast over heads and, for a 2D
        # padding mask, over queries). See get_extended_attention_mask for the constant.
        scores = scores + attention_mask  # (B, N, T, S)
    probs = nn.functional.softmax(scores, dim=-1)  # (B, N, T, S), each row sums to 1
    # Dropout on the probabilities drops whole keys for a query; from the original
    # Transformer (Vaswani et al., 2017), kept by BERT.
    probs = dropout(probs)
    context = torch.matmul(probs, value)  # (B, N, T, S) @ (B, N, S, D) -> (B, N, T, D)
    return context, probs


class BertSelfAttention(nn.Module):
    """Multi-head scaled dot-product attention: headₙ = softmax(QₙKₙᵀ/√D + M)·Vₙ, heads concatenated.

    (B, T, H) -> (B, T, H) context (before the output projection, which is BertSelfOutput).
    Q = X·W_Q + b_Q, likewise K and V: three separate Linear layers (named ``query``,
    ``key``, ``value`` as in the checkpoints), each H -> N·D, then split into N heads.
    transformers 4.x's options (relative positions, head masks, a decoder's cache and
    cross-attention over the encoder's states) run in modeling_bert_extras.py, on these weights.

    transformers: ``BertSelfAttention`` (5.x: cross-attention split out, no head_mask)
    Google TF: ``bert/encoder/layer_{i}/attention/self``
    """

    def __init__(self, config: BertConfig, position_embedding_type: str | None = None) -> None:
        super().__init__()
        self.config = config
        self.num_attention_heads = config.num_attention_heads  # N
        self.attention_head_size = config.hidden_size // config.num_attention_heads  # D
        self.all_head_size = self.num_attention_heads * self.attention_head_size  # N * D (= H)
        # Multiplied by D**-0.5, as 5.x (3.4 / 4.x divide by sqrt(D)): with D = 32 (MiniLM) the
        # two differ in the last bit, ~1e-5 after 6 layers, and the tests hold us to 5.x.
        self.scaling = self.attention_head_size**-0.5  # 1 / sqrt(D)

        self.query = nn.Linear(config.hidden_size, self.all_head_size)
        self.key = nn.Linear(config.hidden_size, self.all_head_size)
        self.value = nn.Linear(config.hidden_size, self.all_head_size)
        self.dropout = nn.Dropout(config.attention_probs_dropout_prob)
        # 4.x's relative positions add a table of distances; its forward is in modeling_bert_extras.py.
        self.position_embedding_type = position_embedding_type or config.position_embedding_type
        if self.position_embedding_type in extras.RELATIVE_POSITIONS:
            self.distance_embedding = extras.DistanceEmbedding(config.max_position_embeddings, self.attention_head_size)

    def transpose_for_scores(self, x: torch.Tensor) -> torch.Tensor:
        """(B, T, N*D) -> (B, N, T, D): give each head its own (T, D) slice."""
        batch_size, seq_length, _ = x.shape
        x = x.view(batch_size, seq_length, self.num_attention_heads, self.attention_head_size)  # (B, T, N, D)
        return x.transpose(1, 2)  # (B, N, T, D)

    def forward(self, hidden_states: torch.Tensor, attention_mask: torch.Tensor | None = None,
                output_attentions: bool = False) -> tuple[torch.Tensor, torch.Tensor | None]:
        """(B, T, H) -> context (B, T, H), and the probabilities (B, N, T, S), or None where an
        implementation that never forms them ran. ``attention_mask`` is additive, to (B, N, T, S)."""
        query = self.transpose_for_scores(self.query(hidden_states))  # (B, N, T, D)
        key = self.transpose_for_scores(self.key(hidden_states))  # (B, N, S, D), S = T
        value = self.transpose_for_scores(self.value(hidden_states))  # (B, N, S, D)
        # Only eager forms the probabilities, so it runs where they are asked for; otherwise
        # the config's implementation does (sdpa: one fused kernel, the same function).
        attention = eager_attention_forward
        if not output_attentions:
            attention = attention_function(self.config._attn_implementation, eager_attention_forward)
        context, probs = attention(query, key, value, attention_mask, self.scaling, self.dropout)

        batch_size, _, seq_length, _ = context.shape  # (B, N, T, D)
        context = context.transpose(1, 2).contiguous()  # (B, T, N, D)
        context = context.view(batch_size, seq_length, self.all_head_size)  # (B, T, H): heads concatenated
        return context, probs


class BertSelfOutput(nn.Module):
    """LayerNorm(Dropout(C·W_O + b_O) + X): output projection, residual, LayerNorm.

    (B, T, H) context and (B, T, H) residual input -> (B, T, H). BERT is *post*-LN (as the
    original Transformer): the LayerNorm comes after the residual sum, so every sub-layer
    output is normalised; pre-LN (GPT-2 and later) normalises the sub-layer input instead.
    Checkpoints are trained for one order; the other computes something else.

    transformers: ``BertSelfOutput`` (unchanged since 3.4)
    Google TF: ``bert/encoder/layer_{i}/attention/output``
    """

    def __init__(self, config: BertConfig) -> None:
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(self, hidden_states: torch.Tensor, input_tensor: torch.Tensor) -> torch.Tensor:
        """(B, T, H) context, heads concatenated, and (B, T, H) block input (the residual) -> (B, T, H)."""
        hidden_states = self.dense(hidden_states)  # (B, T, H)
        hidden_states = self.dropout(hidden_states)
        return self.LayerNorm(hidden_states + input_tensor)  # (B, T, H)


class BertAttention(nn.Module):
    """LayerNorm(X + MultiHead(X)): self-attention (``self``) then its output block (``output``).

    (B, T, H) -> (B, T, H). Head pruning (transformers 3.x-4.x) is in modeling_bert_extras.py.

    transformers: ``BertAttention`` (5.x: no prune_heads)
    Google TF: ``bert/encoder/layer_{i}/attention``
    """

    def __init__(self, config: BertConfig, position_embedding_type: str | None = None) -> None:
        super().__init__()
        self.self = BertSelfAttention(config, position_embedding_type)
        self.output = BertSelfOutput(config)
        self.pruned_heads: set[int] = set()  # original indices of heads removed so far

    def forward(self, hidden_states: torch.Tensor, attention_mask: torch.Tensor | None = None,
                output_attentions: bool = False) -> tuple[torch.Tensor, torch.Tensor | None]:
        """As BertSelfAttention.forward, with the output block: (B, T, H) -> (B, T, H), probabilities."""
        context, probs = self.self(hidden_states, attention_mask, output_attentions)  # (B, T, H)
        return self.output(context, hidden_states), probs  # (B, T, H)

    def prune_heads(self, heads: list[int]) -> None:
        """Remove heads (original indices) for good (transformers 3.x-4.x): modeling_bert_extras.py."""
        extras.prune_attention_heads(self, heads)


class BertIntermediate(nn.Module):
    """act(X·W₁ + b₁): the feed-forward's widening half, H -> I (I = 4H in Google's models).

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

    transformers: ``BertOutput`` (unchanged since 3.4)
    Google TF: ``bert/encoder/layer_{i}/output``
    """

    def __init__(self, config: BertConfig) -> None:
        super().__init__()
        self.dense = nn.Linear(config.intermediate_size, config.hidden_size)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(self, hidden_states: torch.Tensor, input_tensor: torch.Tensor) -> torch.Tensor:
        """(B, T, I) activations and (B, T, H) feed-forward input (the residual) -> (B, T, H)."""
        hidden_states = self.dense(hidden_states)  # (B, T, H)
        hidden_states = self.dropout(hidden_states)
        return self.LayerNorm(hidden_states + input_tensor)  # (B, T, H)


# ======================================================================================
# Layer and encoder
# ======================================================================================


class BertLayer(GradientCheckpointingLayer):
    """One Transformer block: A = Attention(X), then Y = Output(Intermediate(A), A).

    (B, T, H) -> (B, T, H). The feed-forward may run over sequence chunks
    (``config.chunk_size_feed_forward``) with identical results. A decoder built with
    ``add_cross_attention`` has a second attention block, ``crossattention``, over the
    encoder's states; it runs in modeling_bert_extras.py, between the two.

    transformers: ``BertLayer`` (4.x: adds cross-attention)
    Google TF: ``bert/encoder/layer_{i}``
    """

    def __init__(self, config: BertConfig) -> None:
        super().__init__()
        self.chunk_size_feed_forward = config.chunk_size_feed_forward
        self.seq_len_dim = 1  # chunk along T in (B, T, H)
        self.attention = BertAttention(config)
        if config.add_cross_attention:
            # Positions are the decoder's business: cross-attention is always "absolute" (4.x).
            self.crossattention = BertAttention(config, position_embedding_type="absolute")
        self.intermediate = BertIntermediate(config)
        self.output = BertOutput(config)

    def forward(self, hidden_states: torch.Tensor, attention_mask: torch.Tensor | None = None,
                output_attentions: bool = False) -> tuple[torch.Tensor, ...]:
        """(B, T, H) -> ((B, T, H),), and the probabilities (B, N, T, S) second where they are
        asked for, as transformers 3.4: only tensors, so that tools hooking a layer (captum)
        read its output. ``attention_mask`` is additive, (B, 1, 1, S) or (B, 1, T, S)."""
        attention_output, probs = self.attention(hidden_states, attention_mask, output_attentions)  # (B, T, H)
        layer_output = apply_chunking_to_forward(self.feed_forward_chunk, self.chunk_size_feed_forward,
                                                 self.seq_len_dim, attention_output)  # (B, T, H)
        return (layer_output, probs) if output_attentions else (layer_output,)

    def feed_forward_chunk(self, attention_output: torch.Tensor) -> torch.Tensor:
        intermediate_output = self.intermediate(attention_output)  # (B, t, I)
        return self.output(intermediate_output, attention_output)  # (B, t, H)


class BertEncoder(nn.Module):
    """Xₗ = BertLayerₗ(Xₗ₋₁) for l = 1..L: the stack of layers, (B, T, H) -> (B, T, H).

    transformers: ``BertEncoder`` (5.x: outputs collected by hooks)
    Google TF: ``bert/encoder``
    """

    def __init__(self, config: BertConfig) -> None:
        super().__init__()
        self.config = config
        self.layer = nn.ModuleList([BertLayer(config) for _ in range(config.num_hidden_layers)])
        # PreTrainedModel.activation_checkpointing_enable sets this, and each layer's own flag.
        self.gradient_checkpointing = False

    def forward(self, hidden_states: torch.Tensor, attention_mask: torch.Tensor | None = None,
                output_attentions: bool = False, output_hidden_states: bool = False) -> BaseModelOutput:
        """(B, T, H) embeddings -> last_hidden_state (B, T, H), and what was asked for:
        hidden_states L + 1 x (B, T, H) (the embeddings first), attentions L x (B, N, T, S)."""
        all_hidden_states = (hidden_states,) if output_hidden_states else None
        all_attentions = () if output_attentions else None
        for layer_module in self.layer:
            if layer_module.gradient_checkpointing and self.training:
                # Keep only the layer's inputs; the backward pass runs it again for its
                # activations (Chen et al., 2016), with the RNG state replayed so dropout repeats.
                layer_outputs = checkpointed_module_call(layer_module, hidden_states, attention_mask, output_attentions)
            else:
                layer_outputs = layer_module(hidden_states, attention_mask, output_attentions)
            hidden_states = layer_outputs[0]  # (B, T, H)
            if output_hidden_states:
                all_hidden_states += (hidden_states,)
            if output_attentions:
                all_attentions += (layer_outputs[1],)  # (B, N, T, S)
        return BaseModelOutput(hidden_states, all_hidden_states, all_attentions)


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
    per-token output bias ``bias`` is new. ``decoder.bias`` *is* ``bias`` once the task
    model ties them (``LM_HEAD_TIES``), which is why the hub's checkpoints store only
    ``cls.predictions.bias``.

    transformers: ``BertLMPredictionHead`` (as 5.x: ties declared by the model, not made here)
    Google TF: ``cls/predictions`` (the decoder weight is ``bert/embeddings/word_embeddings``)
    """

    def __init__(self, config: BertConfig) -> None:
        super().__init__()
        self.transform = BertPredictionHeadTransform(config)
        self.decoder = nn.Linear(config.hidden_size, config.vocab_size, bias=True)
        self.bias = nn.Parameter(torch.empty(config.vocab_size))  # zeroed by _init_weights

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
        self.embeddings = BertEmbeddings(config)
        self.encoder = BertEncoder(config)
        self.pooler = BertPooler(config) if add_pooling_layer else None
        self.post_init()
        if config.pruned_heads:  # a pruned checkpoint: shrink to its shapes before loading
            self._prune_heads(config.pruned_heads)

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
        inputs_embeds: torch.Tensor | None = None,
        encoder_hidden_states: torch.Tensor | None = None, encoder_attention_mask: torch.Tensor | None = None,
        past_key_values: tuple[tuple[torch.Tensor, ...], ...] | None = None, use_cache: bool | None = None,
        **kwargs: Unpack[extras.BertModelKwargs],
    ) -> BaseModelOutputWithPoolingAndCrossAttentions | tuple:
        """(B, T) ids in [0, V) or (B, T, H) ``inputs_embeds`` -> ``last_hidden_state`` (B, T, H), ``pooler_output``
        (B, H). ``attention_mask`` (B, T): 1 = attend, 0 = padding, or (B, T, T), keys per query. ``token_type_ids``
        (B, T) default 0; ``position_ids`` (B, T) or (1, T) default 0..T-1. By keyword: ``output_hidden_states`` and
        ``output_attentions`` add every layer's output and probabilities; ``return_dict=False`` gives a tuple.
        The second group is transformers 4.x's: a decoder's inputs (an encoder's states and mask; a cache, and
        whether to return one), or an encoder's prefix (peft's prefix tuning), and by keyword ``head_mask`` (N,) or
        (L, N)."""
        # One dispatch, before anything runs: a model or call with 4.x's options runs in modeling_bert_extras.py,
        # and a call that the whole-model forward registered under config.attn_implementation takes runs there.
        out = extras.forward_elsewhere(self, input_ids, attention_mask, token_type_ids, position_ids,
                                       inputs_embeds, encoder_hidden_states, encoder_attention_mask,
                                       past_key_values, use_cache, kwargs)
        if out is not None:  # None: the lesson below runs this call
            return out
        output_attentions, output_hidden_states, return_dict = output_switches(self, kwargs, extras.BertModelKwargs)
        batch_size, seq_length, _ = check_model_inputs(
            self.config, input_ids, inputs_embeds, token_type_ids, position_ids, attention_mask=attention_mask,
            dtype=self.embeddings.word_embeddings.weight.dtype)

        embedding_output = self.embeddings(input_ids, token_type_ids, position_ids, inputs_embeds)  # (B, T, H)
        # Additive, (B, 1, 1, T) or (B, 1, T, T); no mask at all = attend everywhere, and lets sdpa skip it.
        extended_attention_mask = None if attention_mask is None else get_extended_attention_mask(
            attention_mask.to(embedding_output.device), (batch_size, seq_length), dtype=embedding_output.dtype)
        encoder_outputs = self.encoder(embedding_output, extended_attention_mask, output_attentions, output_hidden_states)
        sequence_output = encoder_outputs.last_hidden_state  # (B, T, H)
        pooled_output = self.pooler(sequence_output) if self.pooler is not None else None  # (B, H)
        out = BaseModelOutputWithPoolingAndCrossAttentions(
            sequence_output, pooled_output, hidden_states=encoder_outputs.hidden_states,
            attentions=encoder_outputs.attentions)
        return out if return_dict else out.to_tuple()

    def _prune_heads(self, heads_to_prune: dict[int, list[int]]) -> None:
        """{layer: heads} -> each layer's BertAttention.prune_heads (transformers 3.x-4.x)."""
        for layer, heads in heads_to_prune.items():
            self.encoder.layer[layer].attention.prune_heads(heads)


# ======================================================================================
# Task models: BertModel + a head, each with its loss as transformers computes it
# ======================================================================================
#
# Every head takes transformers 5.x's parameters in 5.x's order, and by keyword (**kwargs,
# each group named in modeling_bert_extras.py) BertModel's switches (output_attentions,
# return_dict, ...), which it passes on (encoder_keywords), and the keywords of transformers'
# Trainer its loss reads. It returns transformers' output dataclass (or its tuple with
# return_dict=False, PreTrainedModel._return), computes its loss only when labels are given,
# and ignores label -100 in token-level losses (CrossEntropyLoss's default ignore_index).


#: The masked-LM heads' two ties (Press & Wolf, 2017): the vocabulary projection *is* the
#: word-embedding table, and its bias *is* ``cls.predictions.bias``, so a checkpoint stores
#: each once. PreTrainedModel.tie_weights makes them one Parameter under two names.
LM_HEAD_TIES = {
    "cls.predictions.decoder.weight": "bert.embeddings.word_embeddings.weight",
    "cls.predictions.decoder.bias": "cls.predictions.bias",
}


def classifier_dropout(config: BertConfig) -> nn.Dropout:
    """The dropout before a classifier: ``config.classifier_dropout``, or the hidden dropout
    where that is None.

    transformers: none (each classifier's ``__init__`` writes the fallback out)
    """
    p = config.classifier_dropout if config.classifier_dropout is not None else config.hidden_dropout_prob
    return nn.Dropout(p)


def encoder_keywords(kwargs: dict) -> dict:
    """What a head passes on to its BertModel of its keywords: all but its loss's
    (``extras.LOSS_KEYWORDS``), and ``return_dict=True``, since the head reads the fields.

    transformers: none (5.x's heads pass ``**kwargs`` on whole)
    """
    return {**{name: value for name, value in kwargs.items() if name not in extras.LOSS_KEYWORDS}, "return_dict": True}


class BertForPreTraining(BertPreTrainedModel):
    """Google's pre-training objective, masked-LM + next-sentence prediction:
    𝓛 = CE(MLM logits, labels) + CE(NSP logits, next_sentence_label).

    (B, T) ids -> (B, T, V) MLM logits and (B, 2) NSP logits. The loss is returned only
    when both label sets are given.

    transformers: ``BertForPreTraining``
    Google TF: ``bert`` + ``cls`` (``run_pretraining.py``)
    """

    _tied_weights_keys = LM_HEAD_TIES

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
        inputs_embeds: torch.Tensor | None = None,
        labels: torch.Tensor | None = None,
        next_sentence_label: torch.Tensor | None = None,
        **kwargs: Unpack[extras.BertModelKwargs],
    ) -> BertForPreTrainingOutput | tuple:
        """
        Args:
            labels: (B, T) token ids to predict at masked positions, -100 elsewhere.
            next_sentence_label: (B,) 0 if sentence B follows A, 1 if it is random.
            (the rest as BertModel.forward)
        """
        outputs = self.bert(
            input_ids, attention_mask, token_type_ids, position_ids, inputs_embeds, **encoder_keywords(kwargs))
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
            loss=total_loss, prediction_logits=prediction_scores, seq_relationship_logits=seq_relationship_score
        )
        return self._return(out, kwargs.get("return_dict"), outputs)


class BertLMHeadModel(BertPreTrainedModel, GenerationMixin):
    """Left-to-right language model, token t+1 predicted from tokens ≤ t:
    𝓛 = CE(logits[:, :-1], labels[:, 1:]).

    (B, T) ids -> (B, T, V) logits. Needs ``config.is_decoder=True`` (causal self-attention).

    transformers: ``BertLMHeadModel`` (4.x: adds the key/value cache)
    Google TF: none (Google released no decoder BERT)
    """

    _tied_weights_keys = LM_HEAD_TIES

    def __init__(self, config: BertConfig) -> None:
        super().__init__(config)
        warn_if_not_causal(config, "BertLMHeadModel", causal=True)
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
        inputs_embeds: torch.Tensor | None = None,
        encoder_hidden_states: torch.Tensor | None = None,
        encoder_attention_mask: torch.Tensor | None = None,
        labels: torch.Tensor | None = None,
        past_key_values: tuple[tuple[torch.Tensor, ...], ...] | None = None,
        use_cache: bool | None = None,
        **kwargs: Unpack[extras.CausalLMKwargs],
    ) -> CausalLMOutputWithCrossAttentions | tuple:
        """
        Args:
            labels: (B, T) the input ids themselves (the shift happens here), -100 to ignore.
            (by keyword, for transformers' Trainer: extras.CausalLMKwargs)
            shift_labels: (B, T) targets already aligned with the logits (position t's is
                token t+1), used instead of shifting ``labels``: sequence-parallel training
                shifts the whole sequence before cutting it into shards (transformers' argument).
            num_items_in_batch: the predicted tokens of all the micro-batches one optimizer
                step accumulates (transformers' Trainer passes it): the loss is their sum
                over it, so accumulation gives the whole batch's mean.
            encoder_hidden_states / encoder_attention_mask: a bert2bert decoder's view of its
                encoder (named, as transformers' EncoderDecoderModel looks for them).
            past_key_values / use_cache: generate token by token: pass back the returned
                ``past_key_values`` with only the new token(s) as input_ids.
            (the rest as BertModel.forward)
        """
        if labels is not None:
            use_cache = False  # training on whole sequences: nothing to continue
        outputs = self.bert(
            input_ids, attention_mask, token_type_ids, position_ids, inputs_embeds, encoder_hidden_states,
            encoder_attention_mask, past_key_values, use_cache, **encoder_keywords(kwargs))
        prediction_scores = self.cls(outputs.last_hidden_state)  # (B, T, V)

        loss = None
        if labels is not None:
            check_class_labels("labels", labels, tuple(prediction_scores.shape[:2]), self.config.vocab_size)
            shift_labels = kwargs.get("shift_labels")
            if shift_labels is None:
                # Position t predicts token t+1: drop the last prediction and the first label.
                shifted_scores = prediction_scores[:, :-1, :].contiguous()  # (B, T-1, V)
                shifted_labels = labels[:, 1:].contiguous()  # (B, T-1)
            else:
                check_class_labels("shift_labels", shift_labels, tuple(prediction_scores.shape[:2]),
                                   self.config.vocab_size)
                shifted_scores, shifted_labels = prediction_scores, shift_labels  # (B, T, V), (B, T)
            loss = token_cross_entropy(shifted_scores.view(-1, self.config.vocab_size).float(), shifted_labels.view(-1),
                                       kwargs.get("num_items_in_batch"))

        out = CausalLMOutputWithCrossAttentions(loss=loss, logits=prediction_scores)
        return self._return(out, kwargs.get("return_dict"), outputs)


class BertForMaskedLM(BertPreTrainedModel):
    """Masked-LM, the original token predicted at masked positions:
    𝓛 = CE(logits, labels) over positions whose label is not -100.

    (B, T) ids -> (B, T, V) logits. No pooler (its checkpoints have none).

    transformers: ``BertForMaskedLM``
    Google TF: ``bert`` + ``cls/predictions``
    """

    _tied_weights_keys = LM_HEAD_TIES

    def __init__(self, config: BertConfig) -> None:
        super().__init__(config)
        warn_if_not_causal(config, "BertForMaskedLM", causal=False)
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
        inputs_embeds: torch.Tensor | None = None,
        encoder_hidden_states: torch.Tensor | None = None,
        encoder_attention_mask: torch.Tensor | None = None,
        labels: torch.Tensor | None = None,
        **kwargs: Unpack[extras.TokenLossKwargs],
    ) -> MaskedLMOutput | tuple:
        """
        Args:
            labels: (B, T) original ids at masked positions, -100 elsewhere.
            encoder_hidden_states / encoder_attention_mask: as BertModel.forward's (5.x's positions).
            num_items_in_batch (by keyword): as BertLMHeadModel.forward's (the masked tokens).
            (the rest as BertModel.forward)
        """
        outputs = self.bert(
            input_ids, attention_mask, token_type_ids, position_ids, inputs_embeds, **encoder_keywords(kwargs))
        prediction_scores = self.cls(outputs.last_hidden_state)  # (B, T, V)

        loss = None
        if labels is not None:
            check_class_labels("labels", labels, tuple(prediction_scores.shape[:2]), self.config.vocab_size)
            loss = token_cross_entropy(prediction_scores.view(-1, self.config.vocab_size), labels.view(-1),
                                       kwargs.get("num_items_in_batch"))  # (B*T, V) vs (B*T,)

        out = MaskedLMOutput(loss=loss, logits=prediction_scores)
        return self._return(out, kwargs.get("return_dict"), outputs)


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
        inputs_embeds: torch.Tensor | None = None,
        labels: torch.Tensor | None = None,
        **kwargs: Unpack[extras.BertModelKwargs],
    ) -> NextSentencePredictorOutput | tuple:
        """
        Args:
            labels: (B,) 0 if sentence B follows A, 1 if it is random.
            (the rest as BertModel.forward)
        """
        outputs = self.bert(
            input_ids, attention_mask, token_type_ids, position_ids, inputs_embeds, **encoder_keywords(kwargs))
        seq_relationship_scores = self.cls(outputs.pooler_output)  # (B, 2)

        loss = None
        if labels is not None:
            check_class_labels("labels", labels, (seq_relationship_scores.shape[0],), 2)
            loss = nn.CrossEntropyLoss()(seq_relationship_scores.view(-1, 2), labels.view(-1))

        out = NextSentencePredictorOutput(loss=loss, logits=seq_relationship_scores)
        return self._return(out, kwargs.get("return_dict"), outputs)


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
        self.dropout = classifier_dropout(config)
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
        inputs_embeds: torch.Tensor | None = None,
        labels: torch.Tensor | None = None,
        past_key_values: tuple[tuple[torch.Tensor, ...], ...] | None = None,  # peft's prefix tuning looks for the name
        **kwargs: Unpack[extras.BertModelKwargs],
    ) -> SequenceClassifierOutput | tuple:
        """
        Args:
            labels: (B,) class ids (single-label), (B,) or (B, 1) floats (regression, C = 1),
                (B, C) floats in [0, 1] (multi-label).
            (the rest as BertModel.forward)
        """
        outputs = self.bert(
            input_ids, attention_mask, token_type_ids, position_ids, inputs_embeds, past_key_values=past_key_values,
            **encoder_keywords(kwargs))
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

        out = SequenceClassifierOutput(loss=loss, logits=logits)
        return self._return(out, kwargs.get("return_dict"), outputs)


class BertForMultipleChoice(BertPreTrainedModel):
    """Score each of K candidate continuations, softmax over the K:
    (B, K, T) ids -> each (B·K, T) row encoded -> pooled -> one score -> (B, K) logits.

    transformers: ``BertForMultipleChoice``
    Google TF: none (SWAG was run with ``run_classifier.py``-style code)
    """

    def __init__(self, config: BertConfig) -> None:
        super().__init__(config)
        self.bert = BertModel(config)
        self.dropout = classifier_dropout(config)
        self.classifier = nn.Linear(config.hidden_size, 1)
        self.post_init()

    def forward(
        self,
        input_ids: torch.Tensor | None = None,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
        position_ids: torch.Tensor | None = None,
        inputs_embeds: torch.Tensor | None = None,
        labels: torch.Tensor | None = None,
        **kwargs: Unpack[extras.BertModelKwargs],
    ) -> MultipleChoiceModelOutput | tuple:
        """
        Args:
            input_ids, attention_mask, token_type_ids, position_ids: (B, K, T).
            inputs_embeds: (B, K, T, H).
            labels: (B,) index of the right choice in [0, K).

        Returns:
            logits (B, K).
        """
        num_choices = check_multiple_choice_inputs(input_ids, inputs_embeds)  # K

        def flat(t: torch.Tensor | None) -> torch.Tensor | None:
            return None if t is None else t.reshape(-1, t.size(-1))  # (B, K, T) -> (B*K, T)

        outputs = self.bert(
            flat(input_ids), flat(attention_mask), flat(token_type_ids), flat(position_ids),
            None if inputs_embeds is None else inputs_embeds.reshape(-1, *inputs_embeds.shape[-2:]),
            **encoder_keywords(kwargs))  # (B*K, T) or (B*K, T, H)
        pooled_output = self.dropout(outputs.pooler_output)  # (B*K, H)
        logits = self.classifier(pooled_output)  # (B*K, 1)
        reshaped_logits = logits.view(-1, num_choices)  # (B, K)

        loss = None
        if labels is not None:
            check_class_labels("labels", labels, (reshaped_logits.shape[0],), num_choices)
            loss = nn.CrossEntropyLoss()(reshaped_logits, labels)

        out = MultipleChoiceModelOutput(loss=loss, logits=reshaped_logits)
        return self._return(out, kwargs.get("return_dict"), outputs)


class BertForTokenClassification(BertPreTrainedModel):
    """Label every token (NER, POS): logits_t = Dropout(h_t)·W + b, (B, T) ids -> (B, T, C).

    transformers: ``BertForTokenClassification`` (no pooler)
    Google TF: none (its NER recipes are third-party)
    """

    def __init__(self, config: BertConfig) -> None:
        super().__init__(config)
        self.num_labels = config.num_labels
        self.bert = BertModel(config, add_pooling_layer=False)
        self.dropout = classifier_dropout(config)
        self.classifier = nn.Linear(config.hidden_size, config.num_labels)
        self.post_init()

    def forward(
        self,
        input_ids: torch.Tensor | None = None,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
        position_ids: torch.Tensor | None = None,
        inputs_embeds: torch.Tensor | None = None,
        labels: torch.Tensor | None = None,
        past_key_values: tuple[tuple[torch.Tensor, ...], ...] | None = None,  # peft's prefix tuning looks for the name
        **kwargs: Unpack[extras.TokenLossKwargs],
    ) -> TokenClassifierOutput | tuple:
        """
        Args:
            labels: (B, T) class ids, -100 for tokens to ignore (padding, word-piece continuations).
            num_items_in_batch (by keyword): as BertLMHeadModel.forward's (the labelled tokens).
            (the rest as BertModel.forward)
        """
        outputs = self.bert(
            input_ids, attention_mask, token_type_ids, position_ids, inputs_embeds, past_key_values=past_key_values,
            **encoder_keywords(kwargs))
        sequence_output = self.dropout(outputs.last_hidden_state)  # (B, T, H)
        logits = self.classifier(sequence_output)  # (B, T, C)

        loss = None
        if labels is not None:
            check_class_labels("labels", labels, tuple(logits.shape[:2]), self.num_labels)
            loss = token_cross_entropy(logits.view(-1, self.num_labels), labels.view(-1),
                                       kwargs.get("num_items_in_batch"))

        out = TokenClassifierOutput(loss=loss, logits=logits)
        return self._return(out, kwargs.get("return_dict"), outputs)


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
        inputs_embeds: torch.Tensor | None = None,
        start_positions: torch.Tensor | None = None,
        end_positions: torch.Tensor | None = None,
        past_key_values: tuple[tuple[torch.Tensor, ...], ...] | None = None,  # peft's prefix tuning looks for the name
        **kwargs: Unpack[extras.BertModelKwargs],
    ) -> QuestionAnsweringModelOutput | tuple:
        """
        Args:
            start_positions, end_positions: (B,) token index of the answer span's first / last token.
            (the rest as BertModel.forward)
        """
        if self.num_labels != 2:
            raise ValueError(f"BertForQuestionAnswering needs config.num_labels=2 (start, end), got {self.num_labels}")
        outputs = self.bert(
            input_ids, attention_mask, token_type_ids, position_ids, inputs_embeds, past_key_values=past_key_values,
            **encoder_keywords(kwargs))
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

        out = QuestionAnsweringModelOutput(loss=total_loss, start_logits=start_logits, end_logits=end_logits)
        return self._return(out, kwargs.get("return_dict"), outputs)
