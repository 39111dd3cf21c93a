"""BERT configuration: the hyper-parameters that fix every tensor shape in the model.

Mirrors ``transformers.models.bert.configuration_bert.BertConfig`` (5.x: typed fields):
the same names and defaults, so a HuggingFace ``config.json`` reads and writes unchanged,
and Google's original ``bert_config.json`` (a subset of the same keys) reads too.

What every config has besides (output switches, labels, reading and writing the file,
transformers' names) is ``configuration_utils.PretrainedConfig``; the checks on each value
are ``validation.check_config``.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass, field
from typing import ClassVar

from .configuration_utils import PretrainedConfig


@dataclass
class BertConfig(PretrainedConfig):
    """Hyper-parameters of a BERT model. The defaults describe bert-base: L=12 layers,
    H=768 hidden, N=12 heads (head dim D = H / N = 64), I=3072 feed-forward.

    transformers: ``models.bert.configuration_bert.BertConfig``
    Google TF: ``modeling.BertConfig`` (the first eleven fields, same names)
    """

    model_type: ClassVar[str] = "bert"  # written to config.json, as transformers does

    # --- sizes
    vocab_size: int = 30522  # V, rows of word_embeddings: the WordPiece vocabulary
    hidden_size: int = 768  # H, the width of every token vector between layers
    num_hidden_layers: int = 12  # L, number of BertLayer blocks
    num_attention_heads: int = 12  # N; each head works in D = H / N dimensions
    intermediate_size: int = 3072  # I, the feed-forward inner width (4H in Google's releases)
    hidden_act: str = "gelu"  # feed-forward activation, a key of activations.ACT2FN
    hidden_dropout_prob: float = 0.1  # dropout on embeddings and on every sub-layer output
    attention_probs_dropout_prob: float = 0.1  # dropout on the attention probabilities
    max_position_embeddings: int = 512  # P, rows of position_embeddings: the longest input
    type_vocab_size: int = 2  # rows of token_type_embeddings: segment A / segment B
    initializer_range: float = 0.02  # std of the normal init of Linear and Embedding weights
    # Google's TF code used 1e-12 inside LayerNorm; checkpoints were trained with it,
    # so changing it changes the numbers (slightly) for every pretrained model.
    layer_norm_eps: float = 1e-12
    # --- tokens
    pad_token_id: int | None = 0  # padding_idx of word_embeddings (its row is zero at init)
    bos_token_id: int | None = None
    eos_token_id: int | None = None
    # --- variants (transformers 3.x/4.x; 5.x kept the decoder switches)
    # "absolute" (learned, as Google's), or "relative_key" / "relative_key_query" (Shaw et
    # al., 2018; Huang et al., 2020): modeling_bert_extras.py. 5.x dropped the field.
    position_embedding_type: str = "absolute"
    is_decoder: bool = False  # causal self-attention (BertLMHeadModel)
    add_cross_attention: bool = False  # cross-attention over encoder_hidden_states (needs is_decoder)
    use_cache: bool = True  # decoder mode: return key/value caches
    # --- heads
    classifier_dropout: float | None = None  # before a classifier; None: hidden_dropout_prob
    tie_word_embeddings: bool = True  # the MLM decoder shares the word-embedding matrix
    # --- what the layers read besides the sizes: by keyword only (transformers keeps these
    # on every model's config, not in BERT's positional order)
    _: KW_ONLY
    # Each forward's default for returning every layer's attention probabilities / outputs.
    output_attentions: bool = False
    output_hidden_states: bool = False
    chunk_size_feed_forward: int = 0  # BertLayer's feed-forward over chunks of this many positions; 0: all at once
    # Heads removed by prune_heads, {layer: [original head indices]}; pruned again when a
    # model is built, so a pruned checkpoint's smaller matrices fit.
    pruned_heads: dict[int, list[int]] = field(default_factory=dict)
    # BertForSequenceClassification's loss: "regression" (MSE), "single_label_classification"
    # (cross-entropy) or "multi_label_classification" (BCE); None: inferred per call.
    problem_type: str | None = None
