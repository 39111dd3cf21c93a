"""The fast path, ``attn_implementation="fast"``: the same BertModel, run on real tokens only.

modeling_bert.py is the reference, written to be read; this module computes the same
function with less work, and is tested equal to it (tests/core/test_fast_path.py). It reads
the model's own parameters under their checkpoint names; what it adds is stated below.

What it does differently, for an encoder in eval mode:

1. **Unpadded execution.** A padded batch (B, T) with an attention mask is packed into
   the M real tokens (M = sum of lengths). The embeddings, every Linear, the GELU, the
   residual sums and every LayerNorm run on (M, H) rows; attention runs per sequence
   over its own L_b tokens, one SDPA call per run of equal lengths, with no mask at all.
   The output is scattered back to (B, T, H). A padded
   key gets weight exp(finfo.min - max) = 0 in the reference, so real tokens' outputs are
   the same function; **padding positions hold 0** here, where the reference computes
   values nobody should read (labels there should be -100, as transformers' collators
   make them).
2. **One QKV product.** Q, K and V come from one (M, H) x (H, 3H) product against the
   three weights stacked, instead of three products.
3. **The matrix-product route** is chosen per dtype and CPU when the weights are first
   prepared (``choose_route``): on an AVX-512 CPU the Linear weights are pre-packed once
   into oneDNN's blocked layout, fp32 and bf16 alike, and the exact GELU is fused into
   the first feed-forward product. It pays most at few tokens, where reading the
   weights is the cost (docs/performance.md). oneDNN sums each dot product in another
   order than MKL's sgemm, so fp32 matches the reference to 1e-4 (measured ~5e-6);
   ``using_options(route="aten")`` keeps ``F.linear`` and the reference's order (1e-5).
4. **Low precision** (bf16, fp16) runs in the weights' dtype; LayerNorm and softmax on
   CPU accumulate in fp32 inside their kernels and round once at the end, as in eager.

Extra memory: on the oneDNN route a packed copy of every encoder Linear (QKV stacked):
the encoder's Linear weights once more, in the model's dtype (85 M values in bert-base:
324 MiB in fp32, 162 MiB in bf16); on the F.linear route only the stacked QKV, (3H, H) +
(3H,) per layer (27% of them). Derived from the parameters, held beside the model (not
in its state_dict), rebuilt when a parameter changes (by data pointer and version
counter). ``fast_weights_nbytes`` measures it.

It falls back to the reference layers (with SDPA attention) for what it does not do:
training (dropout), ``output_attentions``, ``output_hidden_states``, ``head_mask``,
relative positions, decoders and caches, 3D masks or masks that are not 0/1 or hide a
sequence's first token, tracing and compiling. When gradients are needed it keeps to
differentiable ops (``F.linear`` on the parameters themselves, no stacked copy).

transformers: none (its counterparts are the attention integrations it selects by
``attn_implementation``, and BetterTransformer's nested-tensor encoder)
"""

from __future__ import annotations

import contextlib
import dataclasses
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from .activations import GELUActivation
from .integrations.sdpa_attention import sdpa_attention_forward
from .modeling_outputs import BaseModelOutputWithPoolingAndCrossAttentions
from .modeling_utils import ALL_ATTENTION_FUNCTIONS

#: The name that selects this module, as "eager" and "sdpa" select theirs.
FAST = "fast"
# Where the unpadded path does not apply (a head mask, attention probabilities asked for,
# a decoder's cache...), BertModel runs layer by layer, and each layer's attention is sdpa.
ALL_ATTENTION_FUNCTIONS.register(FAST, sdpa_attention_forward)

#: Matrix-product routes: "aten" = F.linear (MKL sgemm for fp32 on CPU, oneDNN for bf16,
#: cuBLAS on CUDA); "onednn" = weights pre-packed into oneDNN's blocked layout once and
#: run by ``torch.ops.mkldnn._linear_pointwise`` (CPU bf16, with GELU fused).
ROUTES = ("aten", "onednn")


@dataclass(frozen=True)
class FastOptions:
    """Which optimisations run; all on by default. The benchmark turns them off one at a
    time to measure what each buys, and the tests check every combination equals eager.

    transformers: none
    """

    unpad: bool = True  # pack real tokens, attend per sequence (else: padded rows, masked SDPA)
    fuse_qkv: bool = True  # one H -> 3H product (else: three H -> H products)
    fuse_gelu: bool = True  # GELU inside the first feed-forward product, where the route can
    matmul_attention: bool = False  # QKᵀ, softmax, PV as three ops where the scores fit (else SDPA's kernel)
    route: str | None = None  # a name from ROUTES, or None: choose_route per dtype and device


#: Attention as matmul-softmax-matmul (option ``matmul_attention``) materialises (n, N, L, L)
#: scores per run of sequences; above this many (64 MB in fp32) SDPA's fused kernel runs
#: instead, whose memory is O(L). Alone, the three ops beat SDPA's CPU kernel 3-5x in bf16
#: at L = 128-512 here; inside the model they measured 5-15% slower (docs/performance.md),
#: so the option is off by default and kept for that measurement.
MATMUL_ATTENTION_MAX_SCORES = 2**24

#: The options in force; change them with ``using_options``.
OPTIONS = FastOptions()


@contextlib.contextmanager
def using_options(**changes: bool | str | None) -> Iterator[FastOptions]:
    """Run the fast path with some optimisations changed, e.g. ``using_options(unpad=False)``.

    transformers: none
    """
    global OPTIONS
    previous = OPTIONS
    OPTIONS = dataclasses.replace(previous, **changes)
    if OPTIONS.route is not None and OPTIONS.route not in ROUTES:
        OPTIONS = previous
        raise ValueError(f"route={changes.get('route')!r} is not one of {ROUTES}")
    try:
        yield OPTIONS
    finally:
        OPTIONS = previous


def choose_route(dtype: torch.dtype, device: torch.device) -> str:
    """The matrix-product route for weights of ``dtype`` on ``device``, decided by what the
    CPU has, not by timing (a first output must stay about as quick as ``import torch``).

    oneDNN's pre-packed products beat F.linear on an AVX-512 CPU for fp32 and bf16 alike
    (docs/performance.md: most at few tokens, where reading the weights is the cost).

    transformers: none
    """
    if OPTIONS.route is not None:
        return OPTIONS.route
    if device.type != "cpu" or dtype not in (torch.float32, torch.bfloat16) or not torch.backends.mkldnn.is_available():
        return "aten"
    if dtype == torch.bfloat16 and not torch.cpu._is_avx512_bf16_supported():
        return "aten"
    return "onednn" if torch.backends.cpu.get_cpu_capability().startswith("AVX512") else "aten"


@dataclass
class FastLinear:
    """One Linear's weight in the form its route runs: y = x·Wᵀ + b, GELU'd if ``gelu``.

    transformers: none
    """

    weight: torch.Tensor  # (out, in), or oneDNN's packed layout for route "onednn"
    bias: torch.Tensor | None  # (out,)
    route: str
    gelu: bool = False  # exact GELU fused into the product (route "onednn" only)

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        """(M, in) -> (M, out)."""
        if self.route == "onednn":
            post_op, algorithm = ("gelu", "none") if self.gelu else ("none", "")  # "none": erf GELU, not tanh
            return torch.ops.mkldnn._linear_pointwise(x, self.weight, self.bias, post_op, [], algorithm)
        return F.linear(x, self.weight, self.bias)


def _prepare(weight: torch.Tensor, bias: torch.Tensor | None, route: str, gelu: bool = False) -> FastLinear:
    weight, bias = weight.detach(), None if bias is None else bias.detach()
    if route == "onednn":  # packed once for any number of rows (no batch-size hint)
        return FastLinear(torch.ops.mkldnn._reorder_linear_weight(weight, None), bias, route, gelu)
    return FastLinear(weight, bias, route)


@dataclass
class FastLayer:
    """One BertLayer's weights as the fast path runs them.

    transformers: none
    """

    qkv: list[FastLinear]  # [H -> 3H] ([Q; K; V] stacked by rows), or [Q, K, V] unfused
    attention_out: FastLinear  # H -> H
    intermediate: FastLinear  # H -> I, GELU fused if .gelu
    output: FastLinear  # I -> H


class FastWeights:
    """The weights of one BertModel as the fast path runs them, and what they were derived
    from: the parameters' state and the options (a change to either rebuilds them).

    transformers: none
    """

    def __init__(self, model: nn.Module, route: str, options: FastOptions) -> None:
        self.route = route
        self.options = options
        self.source = _parameter_state(model)
        self.layers = [self._layer(layer) for layer in model.encoder.layer]

    def _layer(self, layer: nn.Module) -> FastLayer:
        attention = layer.attention.self
        if self.options.fuse_qkv:
            weight = torch.cat([attention.query.weight, attention.key.weight, attention.value.weight])  # (3H, H)
            bias = torch.cat([attention.query.bias, attention.key.bias, attention.value.bias])  # (3H,)
            qkv = [_prepare(weight, bias, self.route)]
        else:
            qkv = [_prepare(linear.weight, linear.bias, self.route) for linear in (attention.query, attention.key, attention.value)]
        fuse_gelu = (self.options.fuse_gelu and self.route == "onednn"
                     and isinstance(layer.intermediate.intermediate_act_fn, GELUActivation))
        dense = layer.attention.output.dense
        return FastLayer(
            qkv=qkv,
            attention_out=_prepare(dense.weight, dense.bias, self.route),
            intermediate=_prepare(layer.intermediate.dense.weight, layer.intermediate.dense.bias, self.route, fuse_gelu),
            output=_prepare(layer.output.dense.weight, layer.output.dense.bias, self.route),
        )

    def nbytes(self, model: nn.Module) -> int:
        """Bytes held beyond the model's parameters: the stacked QKV, the packed copies."""
        parameters = {p.data_ptr() for p in model.parameters()}
        total = 0
        for layer in self.layers:
            for linear in layer.qkv + [layer.attention_out, layer.intermediate, layer.output]:
                for tensor in (linear.weight, linear.bias):
                    if tensor is not None and (tensor.is_mkldnn or tensor.data_ptr() not in parameters):
                        total += tensor.numel() * tensor.element_size()
        return total


def _parameter_state(model: nn.Module) -> tuple:
    """What identifies the parameters' current values: their storage and in-place version
    (inference-mode tensors keep no version: for them, the storage alone)."""
    return tuple((p.data_ptr(), -1 if p.is_inference() else p._version, p.dtype, p.device)
                 for p in model.encoder.parameters())


#: model -> its derived weights; held beside the model, not on it, so that they are never
#: saved, copied or moved with it, and go when it goes.
_DERIVED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def fast_weights(model: nn.Module) -> FastWeights:
    """The model's weights as the fast path runs them, for its current dtype and device,
    rebuilt if a parameter or an option changed.

    transformers: none
    """
    weight = model.embeddings.word_embeddings.weight
    route = choose_route(weight.dtype, weight.device)
    cache = _DERIVED.setdefault(model, {})  # (route, options) -> FastWeights
    state = _parameter_state(model)
    cached = cache.get((route, OPTIONS))
    if cached is None or cached.source != state:
        if any(entry.source != state for entry in cache.values()):
            cache.clear()  # the parameters changed: every derived form is stale
        cached = cache[(route, OPTIONS)] = FastWeights(model, route, OPTIONS)
    return cached


def fast_weights_nbytes(model: nn.Module) -> int:
    """Extra memory the fast path holds for ``model`` (derives its weights if needed).

    transformers: none
    """
    return fast_weights(model).nbytes(model)


# --------------------------------------------------------------------------------------
# When the fast path applies
# --------------------------------------------------------------------------------------


def _packable_mask(attention_mask: torch.Tensor | None, batch_size: int, seq_length: int) -> bool:
    if attention_mask is None:
        return True
    if tuple(attention_mask.shape) != (batch_size, seq_length):
        return False  # 3D masks, and wrong shapes (which the reference path reports)
    if attention_mask.dtype != torch.bool and not bool(((attention_mask == 0) | (attention_mask == 1)).all()):
        return False
    return bool(attention_mask[:, 0].all())  # the pooler reads position 0: it must be a real token


def applies(model: nn.Module, attention_mask: torch.Tensor | None, batch_size: int, seq_length: int, *,
            head_mask: torch.Tensor | None, output_attentions: bool, output_hidden_states: bool,
            encoder_hidden_states: torch.Tensor | None, past_key_values: tuple | None) -> bool:
    """Whether ``fast_forward`` computes this call (else the reference layers do, with SDPA).

    transformers: none
    """
    config = model.config
    if model.training or config.is_decoder or config.position_embedding_type != "absolute" or batch_size == 0:
        return False
    if head_mask is not None or output_attentions or output_hidden_states:
        return False
    if encoder_hidden_states is not None or past_key_values is not None:
        return False
    if torch.jit.is_tracing() or torch.jit.is_scripting() or torch.compiler.is_compiling():
        return False  # data-dependent shapes (the packed length) do not trace
    return _packable_mask(attention_mask, batch_size, seq_length)


# --------------------------------------------------------------------------------------
# The forward pass on packed tokens
# --------------------------------------------------------------------------------------


def _runs(lengths: list[int]) -> list[tuple[int, int]]:
    """Consecutive sequences of equal length, as (count, length): each run is one
    contiguous block of packed rows, attended in one call."""
    runs: list[tuple[int, int]] = []
    for length in lengths:
        if runs and runs[-1][1] == length:
            runs[-1] = (runs[-1][0] + 1, length)
        else:
            runs.append((1, length))
    return runs


def _attention(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, runs: list[tuple[int, int]],
               heads: int, scaling: float, mask: torch.Tensor | None) -> torch.Tensor:
    """softmax(QₙKₙᵀ/√D + M)·Vₙ within each sequence.

    query, key, value (M, N·D) rows grouped by sequence (views into one QKV product are
    fine) -> context (M, N·D). ``mask``: the additive (B, 1, 1, T) mask when the rows are
    the padded batch (unpad off); None on packed rows, where no key needs masking.
    """
    width = query.shape[1]
    head_dim = width // heads  # D
    contexts = []
    start = 0
    for count, length in runs:
        rows = count * length

        def heads_of(x: torch.Tensor) -> torch.Tensor:
            return x[start : start + rows].view(count, length, heads, head_dim).transpose(1, 2)  # (n, N, L, D)

        q, k, v = heads_of(query), heads_of(key), heads_of(value)  # (n, N, L, D) each
        small = count * heads * length * length <= MATMUL_ATTENTION_MAX_SCORES
        if OPTIONS.matmul_attention and small and q.device.type == "cpu":  # on CUDA, SDPA's flash kernels win
            scores = torch.matmul(q, k.transpose(-1, -2)) * scaling  # (n, N, L, D) @ (n, N, D, L) -> (n, N, L, L)
            if mask is not None:
                scores = scores + mask  # (n, N, L, L) + (B, 1, 1, T): padded rows, one run of B
            context = torch.matmul(torch.softmax(scores, dim=-1), v)  # (n, N, L, L) @ (n, N, L, D) -> (n, N, L, D)
        else:
            context = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scaling)  # (n, N, L, D)
        contexts.append(context.transpose(1, 2).reshape(rows, width))  # (n·L, N·D)
        start += rows
    return contexts[0] if len(contexts) == 1 else torch.cat(contexts)  # (M, N·D)


def _layer_forward(layer: nn.Module, x: torch.Tensor, runs: list[tuple[int, int]], mask: torch.Tensor | None,
                   weights: FastLayer | None) -> torch.Tensor:
    """One BertLayer on rows x (M, H) -> (M, H); ``weights`` None = the parameters
    themselves, through differentiable ops."""
    attention = layer.attention
    self_attention = attention.self
    activation: Callable | None = layer.intermediate.intermediate_act_fn
    if weights is None:
        query, key, value = self_attention.query(x), self_attention.key(x), self_attention.value(x)  # (M, H) each
        attention_out, intermediate, output = attention.output.dense, layer.intermediate.dense, layer.output.dense
    else:
        if len(weights.qkv) == 1:
            query, key, value = weights.qkv[0](x).chunk(3, dim=-1)  # (M, 3H) -> 3 x (M, H) views
        else:
            query, key, value = (linear(x) for linear in weights.qkv)  # (M, H) each
        attention_out, intermediate, output = weights.attention_out, weights.intermediate, weights.output
        if weights.intermediate.gelu:
            activation = None
    context = _attention(query, key, value, runs, self_attention.num_attention_heads, self_attention.scaling,
                         mask)  # (M, H)
    a = attention.output.LayerNorm(attention_out(context) + x)  # (M, H): post-LN residual, as BertSelfOutput
    f = intermediate(a)  # (M, I)
    if activation is not None:
        f = activation(f)  # (M, I)
    return layer.output.LayerNorm(output(f) + a)  # (M, H), as BertOutput


def fast_forward(model: nn.Module, input_ids: torch.Tensor | None, attention_mask: torch.Tensor | None,
                 token_type_ids: torch.Tensor | None, position_ids: torch.Tensor | None,
                 inputs_embeds: torch.Tensor | None) -> BaseModelOutputWithPoolingAndCrossAttentions:
    """BertModel's forward pass on real tokens (see the module docstring; ``applies`` first).

    Returns last_hidden_state (B, T, H), zero at padding, and pooler_output (B, H).

    transformers: none
    """
    embeddings = model.embeddings
    reference = input_ids if input_ids is not None else inputs_embeds
    batch_size, seq_length = reference.shape[:2]
    if position_ids is None:
        position_ids = embeddings.position_ids[:, :seq_length]  # (1, T)
    if token_type_ids is None:
        token_type_ids = embeddings.token_type_ids[:, :seq_length]  # (1, T)
    position_ids = position_ids.expand(batch_size, seq_length)  # (B, T)
    token_type_ids = token_type_ids.expand(batch_size, seq_length)  # (B, T)

    keep, mask = None, None  # keep: indices of the rows computed; mask: for padded rows
    runs = [(batch_size, seq_length)]
    if attention_mask is not None and not bool(attention_mask.all()):
        if OPTIONS.unpad:
            keep = attention_mask.reshape(-1).bool().nonzero().squeeze(1)  # (M,) real tokens, sequence by sequence
            runs = _runs(attention_mask.bool().sum(dim=1).tolist())  # from the lengths L_b
        else:
            dtype = model.embeddings.word_embeddings.weight.dtype
            mask = (1.0 - attention_mask[:, None, None, :].to(dtype)) * torch.finfo(dtype).min  # (B, 1, 1, T)

    def rows(t: torch.Tensor) -> torch.Tensor:  # (B, T, ...) -> (M, ...)
        t = t.reshape(batch_size * seq_length, *t.shape[2:])  # (B·T, ...)
        return t if keep is None else t.index_select(0, keep)

    # The embeddings on real tokens: the same sum, in the same order, as BertEmbeddings.
    x = embeddings.word_embeddings(rows(input_ids)) if inputs_embeds is None else rows(inputs_embeds)  # (M, H)
    x = x + embeddings.token_type_embeddings(rows(token_type_ids))  # (M, H)
    x = x + embeddings.position_embeddings(rows(position_ids))  # (M, H)
    x = embeddings.LayerNorm(x)  # (M, H)

    grad_needed = torch.is_grad_enabled() and any(p.requires_grad for p in model.encoder.parameters())
    derived = None if grad_needed else fast_weights(model)
    for index, layer in enumerate(model.encoder.layer):
        x = _layer_forward(layer, x, runs, mask, None if derived is None else derived.layers[index])  # (M, H)

    if keep is None:
        sequence_output = x.view(batch_size, seq_length, -1)  # (B, T, H)
    else:
        sequence_output = x.new_zeros(batch_size * seq_length, x.shape[-1])  # (B·T, H): padding stays 0
        sequence_output = sequence_output.index_copy(0, keep, x).view(batch_size, seq_length, -1)  # (B, T, H)
    pooled = model.pooler(sequence_output) if model.pooler is not None else None  # (B, H)
    return BaseModelOutputWithPoolingAndCrossAttentions(last_hidden_state=sequence_output, pooler_output=pooled)
