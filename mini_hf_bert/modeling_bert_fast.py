"""The fast path, ``attn_implementation="fast"``: the same BertModel, run on real tokens only.

modeling_bert.py is the reference, written to be read; this module computes the same
function with less work, and is tested equal to it (tests/core/test_fast_path.py). It reads
the model's own parameters under their checkpoint names; what it adds is stated below.

What it does differently, for an encoder in eval mode and in training alike:

1. **Unpadded execution.** A padded batch (B, T) with an attention mask is packed into
   the M real tokens (M = sum of lengths). The embeddings, every Linear, the GELU, the
   residual sums and every LayerNorm run on (M, H) rows; attention runs per sequence
   over its own L_b tokens, one SDPA call per distinct length (the sequences are packed
   shortest first), with no mask at all; on CUDA, one call for all of them (option
   ``varlen_attention``: flash attention's varlen form in fp16/bf16, the memory-efficient
   kernel's in fp32).
   The output is scattered back to (B, T, H). A padded
   key gets weight exp(finfo.min - max) = 0 in the reference, so real tokens' outputs are
   the same function; **padding positions hold 0** here, where the reference computes
   values nobody should read (labels there should be -100, as transformers' collators
   make them).
2. **One QKV product.** Q, K and V come from one (M, H) x (H, 3H) product against the
   three weights stacked, instead of three products.
3. **The matrix-product route is measured**, per dtype and class of product (at most
   ``FEW_ROWS`` rows, or more), when the weights are first prepared (``choose_routes``):
   F.linear against the Linear weights pre-packed once into oneDNN's blocked layout,
   with the exact GELU fused into the first feed-forward product; the faster runs. The
   packed form wins most at few tokens, where reading the weights is the cost, on AVX2
   and AVX-512 alike (docs/performance.md). oneDNN sums each dot product in another
   order than MKL's sgemm, so fp32 matches the reference to 1e-4 (measured ~5e-6);
   ``using_options(route="aten")`` keeps ``F.linear`` and the reference's order (1e-5).
4. **Low precision** (bf16, fp16): the products run in the weights' dtype, but the
   residual stream, the embeddings' sum and every LayerNorm stay in fp32 (option
   ``fp32_stream``), as OpenVINO and ONNX Runtime keep them. Eager rounds the stream to
   bf16 after every sum, and those roundings are much of its distance from fp32: keeping
   them out brings bf16 output closer to fp32 (root-mean-square distance 0.5-0.8 of
   eager's, on AVX-512 and AVX2 alike: ``FP32_STREAM_ERROR_RATIO``) for a few percent of
   the time (docs/performance.md). The output is rounded once, to the model's dtype.
5. **int8** (``route="int8"``, fp32 models on CPU, asked for): dynamic quantization. Each
   Linear's weight is quantized once, per output channel (symmetric int8); each call
   quantizes its input per row (per token) and runs ``torch._int_mm``, int8 x int8 summed
   in int32 (AVX512-VNNI or AMX where the CPU has them). Per-row scales, not the per-tensor
   scale of torch's quantized dynamic Linear (oneDNN / FBGEMM): BERT's outlier dimensions
   make one scale per tensor too coarse (on all-MiniLM-L6-v2 the demo's sentences kept
   cosine >= 0.9944 to fp32 per row against 0.9895 per tensor, and their ranking).
   Attention, LayerNorm and the residual stay fp32. Close to fp32, not equal to it.
   It runs only where the CPU sums int8 products in int32 at speed (``int8_kernel_problem``
   says why not, elsewhere, and the default route runs).
6. **Compiled** (option ``compile``, asked for): the encoder on packed rows compiled by
   torch.compile (inductor, with freezing: the weights become constants, pre-packed at
   compile time, and the elementwise ops fuse; route "int8" without AMX compiles without
   freezing, see ``compile_freezes``), one graph per batch shape (the runs of
   sequence lengths), compiled on first use and cached beside the weights. It fuses the
   ~40 small ops per layer around the products. Whether it pays depends on the dtype: in
   fp32 inductor packs the products for MKL's sgemm (oneDNN's packing of fp32 weights it
   keeps for dynamic shapes only), which measured slower than the uncompiled oneDNN
   route; in bf16 and int8 it pays a little (docs/performance.md, "Compiled or not").
   Compiling takes ~15 s per shape for bert-base on 2 cores, and is logged before it runs;
   at most ``COMPILED_SHAPES_MAX`` shapes per process, then the uncompiled path.
7. **CUDA graphs** (option ``cuda_graphs``, on by default; inference on a GPU, not under
   ``torch.autocast``): a batch shape's encoder, seen ``GRAPH_AFTER_CALLS`` times, is
   captured once as a CUDA graph and then replayed, its ~430 kernels queued at once
   instead of one by one from Python, which on a GPU takes longer than running them
   (``GraphedEncoder``). The same kernels, so the same result; at most
   ``GRAPHED_SHAPES_MAX`` shapes per model, all drawing on one memory pool, then the
   layers run one by one.
8. **Row buckets** (option ``row_buckets``, on by default; CPU inference): the packed rows
   are padded up to one of a few counts (``row_bucket``: multiples of 8 up to 128, then 8
   sizes per doubling: at most 7 more rows below 64, at most 1/8 more from 64 on), the padding attended as one extra sequence
   of its own and dropped at the end. oneDNN builds and keeps a product for every row
   count it meets (PyTorch's cache of them holds up to 1,024 per thread), and a service
   meets a new count on almost every request: without buckets memory grows by hundreds of
   MB over calls of random lengths, with no plateau in sight; with them it levels off
   (``tools/memory_soak.py`` measures both; docs/reliability.md, "Under load"). Fewer
   products to build also made those calls faster. Not under option
   ``compile``, whose graphs are per batch shape and bounded in number already.
9. **Huge pages** (option ``huge_pages``, on by default; CPU, Linux 6.1+ where transparent
   huge pages are not switched off): the derived weights, once made, are moved into 2 MiB
   pages (``into_huge_pages``). A few-token call reads every weight once, and in 4 KiB pages
   bert-base's weights span ~83,000 pages, each a page-table walk. The same bytes: no result
   changes.

Extra memory: where a route is oneDNN's, a packed copy of every encoder Linear (QKV stacked):
the encoder's Linear weights once more, in the model's dtype (85 M values in bert-base:
324 MiB in fp32, 162 MiB in bf16); on the F.linear route only the stacked QKV, (3H, H) +
(3H,) per layer (27% of them). Derived from the parameters, held beside the model (not
in its state_dict), rebuilt when a parameter changes (by data pointer and version
counter). ``fast_weights_nbytes`` measures it.

Training (a model in train mode, or gradients wanted) runs the same packed rows through
differentiable ops on the parameters themselves: Q, K and V in one product against the
three weights concatenated (``torch.cat``, whose backward splits the gradient again), no
derived copies, no compiling. Dropout, where the model is in train mode, is drawn as
``fast_dropout`` draws it: 16 random bits per unit, four from each 64-bit number of
torch's generator, where ``nn.Dropout`` draws one number per unit (``torch.bernoulli_``,
a fifth of a reference training step on 2 cores). The attention probabilities' dropout
runs as QKᵀ, softmax, dropout, PV per run of sequences (SDPA's CPU kernel with dropout
measured slower). Same expectation, other random draws: a training run is reproducible
from its seed on this path, not draw for draw equal to the reference's.

It falls back to the reference layers (with SDPA attention) for what it does not do:
``output_attentions``, ``output_hidden_states``, ``head_mask``, relative positions,
decoders and caches, 3D masks or masks that are not 0/1 or hide a sequence's first
token, gradient checkpointing, tracing and compiling.

transformers: none (its counterparts are the attention integrations it selects by
``attn_implementation``, and BetterTransformer's nested-tensor encoder)
"""

from __future__ import annotations

import contextlib
import contextvars
import ctypes
import dataclasses
import errno
import functools
import itertools
import logging
import os
import sys
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Unpack

import torch
import torch.nn.functional as F
from torch import nn

from . import cpu_capability
from .activations import GELUActivation
from .modeling_bert_extras import BertModelKwargs
from .modeling_outputs import BaseModelOutputWithPoolingAndCrossAttentions
from .modeling_utils import ALL_MODEL_FORWARDS
from .validation import check_model_inputs, output_switches

logger = logging.getLogger(__name__)

#: The name that selects this module, as "eager" and "sdpa" select theirs.
FAST = "fast"

#: Matrix-product routes: "aten" = F.linear (MKL sgemm for fp32 on CPU, oneDNN for bf16,
#: cuBLAS on CUDA); "onednn" = weights pre-packed into oneDNN's blocked layout once and
#: run by ``torch.ops.mkldnn._linear_pointwise`` (CPU bf16, with GELU fused); "int8" =
#: int8 weights and per-token int8 activations through ``torch._int_mm`` (fp32 on CPU;
#: only when asked for).
ROUTES = ("aten", "onednn", "int8")


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
    route: str | None = None  # a name from ROUTES for every product, or None: measured (choose_routes)
    fp32_stream: bool = True  # bf16/fp16: residual stream and LayerNorm in fp32 (else in the weights' dtype)
    compile: bool = False  # torch.compile the encoder per batch shape (routes "aten", "int8": the compiler packs)
    varlen_attention: bool = True  # CUDA: every sequence in one attention call (else one SDPA call per run)
    cuda_graphs: bool = True  # CUDA inference: a batch shape's encoder captured once as a CUDA graph, then replayed
    huge_pages: bool = True  # CPU, Linux: the derived weights moved into 2 MiB pages once (``into_huge_pages``)
    row_buckets: bool = True  # CPU inference: rows padded up to ``row_bucket``'s counts, a bounded set of product shapes


#: Attention as matmul-softmax-matmul (option ``matmul_attention``) materialises (n, N, L, L)
#: scores per run of sequences; above this many (64 MB in fp32) SDPA's fused kernel runs
#: instead, whose memory is O(L). Alone, the three ops beat SDPA's CPU kernel 3-5x in bf16
#: at L = 128-512 here; inside the model they measured 5-15% slower (docs/performance.md),
#: so the option is off by default and kept for that measurement.
MATMUL_ATTENTION_MAX_SCORES = 2**24

#: The options in force, per thread and asyncio task: a context variable, so that a
#: ``using_options`` block changes them for the code inside it and nothing else. A thread
#: starts with the defaults; an asyncio task starts with its creator's options.
_OPTIONS: contextvars.ContextVar[FastOptions] = contextvars.ContextVar("mini_hf_bert_fast_options",
                                                                      default=FastOptions())


def current_options() -> FastOptions:
    """The options in force here: the defaults, as changed by the ``using_options`` blocks
    this thread (or asyncio task) is inside.

    transformers: none
    """
    return _OPTIONS.get()


@contextlib.contextmanager
def using_options(**changes: bool | str | None) -> Iterator[FastOptions]:
    """Run the fast path with some optimisations changed, e.g. ``using_options(unpad=False)``,
    in this thread (or asyncio task) only; on leaving, the options before it are back,
    whatever other threads do meanwhile.

    transformers: none
    """
    fields = {field.name for field in dataclasses.fields(FastOptions)}
    for name, value in changes.items():
        if name not in fields:
            raise TypeError(f"using_options: no option {name!r}; the options are {sorted(fields)}")
        if name != "route" and not isinstance(value, bool):  # "no" is truthy: it would switch the option on
            raise TypeError(f"using_options: {name} must be True or False, got {value!r}")
    if changes.get("route") is not None and changes["route"] not in ROUTES:
        raise ValueError(f"route={changes['route']!r} is not one of {ROUTES}")
    options = dataclasses.replace(_OPTIONS.get(), **changes)
    token = _OPTIONS.set(options)
    try:
        yield options
    finally:
        _OPTIONS.reset(token)


#: Dropout's random bits per unit: a unit is dropped with probability round(p·2¹⁶)/2¹⁶
#: (0.1 -> 0.1000061), and the kept ones are scaled by the inverse of the kept share, so
#: the expectation is the input's exactly, as nn.Dropout's.
DROPOUT_BITS = 16
_DROPOUT_LEVELS = 2**DROPOUT_BITS
#: Four 16-bit draws come from each 64-bit number.
_DROPOUT_DRAWS_PER_WORD = 64 // DROPOUT_BITS


def fast_dropout(x: torch.Tensor, p: float) -> torch.Tensor:
    """nn.Dropout's function with a quarter of its random draws: each unit of ``x`` is
    zeroed with probability round(p·2¹⁶)/2¹⁶ and the rest scaled to keep the expectation.

    transformers: none (``nn.functional.dropout``)
    """
    threshold = round(p * _DROPOUT_LEVELS)  # dropped: the 16-bit draws below this, of 2¹⁶
    if threshold == 0:
        return x
    if threshold >= _DROPOUT_LEVELS:
        return x * 0.0
    words = torch.randint(-2**63, 2**63 - 1, (-(-x.numel() // _DROPOUT_DRAWS_PER_WORD),), dtype=torch.int64,
                          device=x.device)  # (⌈numel/4⌉,) 64 random bits each
    draws = words.view(torch.int16)[: x.numel()].view(x.shape)  # uniform over [-2¹⁵, 2¹⁵), x's shape
    keep = draws >= threshold - _DROPOUT_LEVELS // 2
    return x * (keep.to(x.dtype) * (_DROPOUT_LEVELS / (_DROPOUT_LEVELS - threshold)))


#: Symmetric int8: v ≈ scale · q, q in [-127, 127].
INT8_MAX = 127
#: The depth of the probe product in ``int8_kernel_problem``: 64 products of 127 x 127,
#: whose exact sum (1,032,256) needs more than 16 bits at every pair.
INT8_PROBE_DEPTH = 64


@functools.cache
def int8_kernel_problem() -> str | None:
    """Why this CPU's int8 products cannot serve route "int8", or None where they can:
    int8 x int8 summed in int32, at speed (AVX512-VNNI or AMX).

    Without AVX512-VNNI (AVX2 CPUs, the first AVX-512 ones) neither kernel does:
    ``torch._int_mm`` runs a scalar loop there (measured 16-24x slower than fp32's
    F.linear on bert-base's products), and oneDNN's pre-packed int8 kernels, which the
    compiled mode runs, multiply with vpmaddubsw, which adds each pair of u8 x s8 products
    in 16 bits and saturates (oneDNN shifts the activations to u8 in [0, 255], so any
    weight past ±64 can overflow). Quantizing around it costs too much: on
    all-MiniLM-L6-v2, 7-bit weights keep the least token cosine at 0.987 and 7-bit
    activations at 0.976, both below INT8_MIN_COSINE and with the demo's ranking changed.

    Where the CPU has VNNI, one worst-case product checks the kernel torch dispatches to:
    oneDNN told to use fewer instructions (``ONEDNN_MAX_CPU_ISA=AVX2``) saturates as above.

    transformers: none
    """
    if not torch.cpu._is_vnni_supported():
        return ("route 'int8' needs int8 products summed in int32 at speed (AVX512-VNNI or AMX); this CPU has no "
                "AVX512-VNNI: torch._int_mm runs a scalar loop (16-24x slower than fp32) and oneDNN's int8 kernels "
                "add pairs of products in 16 bits, which saturate")
    worst = torch.full((INT8_PROBE_DEPTH, INT8_PROBE_DEPTH), INT8_MAX, dtype=torch.int8)  # (K, K) both operands
    exact = INT8_MAX * INT8_MAX * INT8_PROBE_DEPTH
    if int(torch._int_mm(worst, worst)[0, 0]) != exact:  # (K, K) @ (K, K) -> (K, K) int32
        limited = os.environ.get("ONEDNN_MAX_CPU_ISA")
        return ("route 'int8' needs int8 products summed in int32; oneDNN's int8 product here adds pairs of "
                "products in 16 bits and saturates (it runs without VNNI" +
                (f": ONEDNN_MAX_CPU_ISA={limited})" if limited else ")"))
    return None


def int8_unavailable(dtype: torch.dtype, device: torch.device) -> str | None:
    """Why route "int8" cannot run weights of ``dtype`` on ``device``, or None where it
    can: fp32 on a CPU whose int8 products serve it (``int8_kernel_problem``).

    transformers: none
    """
    if device.type != "cpu" or dtype != torch.float32 or not hasattr(torch, "_int_mm"):
        return f"route 'int8' needs fp32 weights on a CPU and torch._int_mm; these are {dtype} on {device.type}"
    return int8_kernel_problem()


def int8_available(dtype: torch.dtype, device: torch.device) -> bool:
    """Whether route "int8" runs weights of ``dtype`` on ``device`` (see ``int8_unavailable``).

    transformers: none
    """
    return int8_unavailable(dtype, device) is None


#: Products of at most this many rows (tokens) are the "few rows" class: one short sentence,
#: whose time is the reading of the weights; larger ones are the "many rows" class, whose
#: time is the arithmetic. Each class runs the route measured fastest for it (``choose_routes``).
FEW_ROWS = 64
#: The rows each class is timed at, on a product of the model's first feed-forward shape
#: (H -> I, its largest), and the timed calls per route (the fastest is kept: the others
#: met a busy moment of the machine).
PROBE_ROWS = {"few": 16, "many": 256}
PROBE_RUNS = 3


@dataclass(frozen=True)
class Routes:
    """The matrix-product route for each class of product: ``few`` for at most
    ``FEW_ROWS`` rows, ``many`` above.

    transformers: none
    """

    few: str
    many: str

    def for_rows(self, rows: int) -> str:
        return self.few if rows <= FEW_ROWS else self.many

    def __str__(self) -> str:
        return self.few if self.few == self.many else f"{self.few} (few rows), {self.many} (many rows)"


@dataclass(frozen=True)
class RouteMeasurement:
    """What ``choose_routes`` measured for one dtype and product shape, and chose.

    transformers: none
    """

    dtype: torch.dtype
    shape: tuple[int, int]  # (in, out) of the product timed
    ms: dict[tuple[str, str], float]  # (class, route) -> fastest call, ms
    unavailable: dict[str, str]  # route -> why it cannot run this dtype here
    routes: Routes
    seconds: float  # what measuring cost, packing included


#: (dtype, in, out) -> the measurement, made once per process.
_MEASURED: dict[tuple[torch.dtype, int, int], RouteMeasurement] = {}


def route_measurements() -> list[RouteMeasurement]:
    """Every route choice measured in this process (what the benchmark reports).

    transformers: none
    """
    return list(_MEASURED.values())


def _time_product(call: Callable[[], torch.Tensor]) -> float:
    """The fastest of ``PROBE_RUNS`` calls, in ms, after one untimed call."""
    return 1000 * cpu_capability.fastest_seconds(call, PROBE_RUNS)


def measure_routes(dtype: torch.dtype, in_features: int, out_features: int) -> RouteMeasurement:
    """Time F.linear and oneDNN's pre-packed product on an (in -> out) product of ``dtype``,
    at ``PROBE_ROWS`` rows for each class, and choose the faster per class. A route that
    cannot run the dtype here (oneDNN packs bf16 only with AVX-512 or AVX-NE-CONVERT) is
    left out, with why.

    transformers: none
    """
    start = time.perf_counter()
    generator = torch.Generator().manual_seed(0)
    weight = (torch.randn(out_features, in_features, generator=generator) / in_features**0.5).to(dtype)  # (out, in)
    bias = torch.zeros(out_features, dtype=dtype)  # (out,)
    calls: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {"aten": lambda x: F.linear(x, weight, bias)}
    unavailable = {}
    try:
        packed = _prepare(weight, bias, Routes("onednn", "onednn"))
        calls["onednn"] = packed
    except RuntimeError as error:  # this CPU's oneDNN has no kernel for the dtype
        unavailable["onednn"] = str(error).splitlines()[0]
    ms = {}
    with torch.inference_mode():
        for name, rows in PROBE_ROWS.items():
            x = torch.randn(rows, in_features, generator=generator).to(dtype)  # (rows, in)
            for route, call in calls.items():
                ms[(name, route)] = _time_product(functools.partial(call, x))
    fastest = {name: min(calls, key=lambda route: ms[(name, route)]) for name in PROBE_ROWS}
    measured = RouteMeasurement(dtype, (in_features, out_features), ms, unavailable,
                                Routes(fastest["few"], fastest["many"]), time.perf_counter() - start)
    logger.info("fast path, %s products %d -> %d: route %s, measured in %.2f s (%s)", dtype, in_features,
                out_features, measured.routes, measured.seconds,
                ", ".join(f"{name} {route} {value:.3f} ms" for (name, route), value in ms.items()))
    return measured


def choose_routes(dtype: torch.dtype, device: torch.device, in_features: int, out_features: int) -> Routes:
    """The matrix-product routes for weights of ``dtype`` on ``device``, whose largest
    product is (in -> out): on a CPU, the faster of F.linear and oneDNN's pre-packed
    product for few rows and for many, timed once per process and shape
    (``measure_routes``: tens of ms for bert-base). Which is faster depends on the CPU
    and the dtype (docs/performance.md): oneDNN's at few rows on AVX-512 and AVX2 alike.

    A route asked for (``using_options(route=...)``) runs for every product. "int8"
    changes the results, so it runs only when asked for, and where it cannot run (bf16
    weights, a GPU, no VNNI) the measured routes run instead, with a warning.

    transformers: none
    """
    options = current_options()
    unavailable = int8_unavailable(dtype, device) if options.route == "int8" else None
    if unavailable:
        _warn_once(f"{unavailable}: running the default route instead")
    elif options.route is not None:
        return Routes(options.route, options.route)
    if options.compile:
        return Routes("aten", "aten")  # plain weights, which inductor's freezing pre-packs itself
    if device.type != "cpu" or dtype not in (torch.float32, torch.bfloat16) or not torch.backends.mkldnn.is_available():
        return Routes("aten", "aten")
    key = (dtype, in_features, out_features)
    if key not in _MEASURED:
        _MEASURED[key] = measure_routes(dtype, in_features, out_features)
    return _MEASURED[key].routes


_WARNED: set[str] = set()


def _warn_once(message: str) -> None:
    if message not in _WARNED:
        _WARNED.add(message)
        logger.warning(message)


@dataclass
class FastLinear:
    """One Linear's weight in the forms its routes run: y = x·Wᵀ + b, GELU'd if ``gelu``.

    transformers: none
    """

    weight: torch.Tensor | None  # (out, in): as the parameter (route "aten"), int8 (route "int8"), None: unread
    bias: torch.Tensor | None  # (out,)
    routes: Routes
    packed: torch.Tensor | None = None  # (out, in) in oneDNN's blocked layout, where a route is "onednn"
    gelu: bool = False  # exact GELU on the output (fused into the product on route "onednn")
    scale: torch.Tensor | None = None  # (out,) route "int8": W ≈ scale · Q, per output channel

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        """(M, in) -> (M, out)."""
        route = self.routes.for_rows(x.shape[0])
        if route == "onednn":
            post_op, algorithm = ("gelu", "none") if self.gelu else ("none", "")  # "none": erf GELU, not tanh
            return torch.ops.mkldnn._linear_pointwise(x, self.packed, self.bias, post_op, [], algorithm)
        y = self._int8(x) if route == "int8" else F.linear(x, self.weight, self.bias)  # (M, out)
        return F.gelu(y) if self.gelu else y

    def _int8(self, x: torch.Tensor) -> torch.Tensor:
        """x·Wᵀ + b ≈ (s_x ⊗ s_W) ⊙ (Q_x·Q_Wᵀ) + b, with one scale per row of x: a token
        whose values are large (BERT's outlier dimensions) costs the others no precision."""
        row_scale = x.abs().amax(dim=1, keepdim=True).clamp(min=torch.finfo(x.dtype).tiny) / INT8_MAX  # (M, 1)
        quantized = torch.round(x / row_scale).to(torch.int8)  # (M, in) in [-127, 127]
        y = torch._int_mm(quantized, self.weight.t()).float()  # (M, in) @ (in, out) -> (M, out), int32 sums
        y.mul_(row_scale).mul_(self.scale)  # (M, out) ⊙ (M, 1) ⊙ (out,): in place, no (M, out) scale tensor
        return y if self.bias is None else y.add_(self.bias)


def _quantize_int8(weight: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """W (out, in) -> (Q (out, in) int8, its scale per output channel (out,)). Qᵀ, a
    column-major (in, out), is the layout torch._int_mm reads fastest (measured ~10%)."""
    scale = weight.abs().amax(dim=1).clamp(min=torch.finfo(weight.dtype).tiny) / INT8_MAX  # (out,)
    return torch.round(weight / scale[:, None]).to(torch.int8), scale  # (out, in), (out,)


def _prepare(weight: torch.Tensor, bias: torch.Tensor | None, routes: Routes, gelu: bool = False) -> FastLinear:
    weight, bias = weight.detach(), None if bias is None else bias.detach()
    if "int8" in (routes.few, routes.many):
        quantized, scale = _quantize_int8(weight)
        return FastLinear(quantized, bias, routes, gelu=gelu, scale=scale)
    # Packed once for any number of rows (no batch-size hint). The plain weight is kept only
    # where F.linear reads it: the stacked QKV would otherwise hold (3H, H) more per layer.
    packed = torch.ops.mkldnn._reorder_linear_weight(weight, None) if "onednn" in (routes.few, routes.many) else None
    return FastLinear(weight if "aten" in (routes.few, routes.many) else None, bias, routes, packed, gelu)


# --------------------------------------------------------------------------------------
# Huge pages (option ``huge_pages``)
# --------------------------------------------------------------------------------------

#: A transparent huge page (x86-64): one TLB entry maps 2 MiB instead of 4 KiB.
HUGE_PAGE = 2 * 1024 * 1024
#: madvise(2) advice (Linux): the range may use huge pages; move it into them now (Linux 6.1+).
MADV_HUGEPAGE, MADV_COLLAPSE = 14, 25
#: Where the kernel says whether transparent huge pages may be used at all.
THP_SETTING = "/sys/kernel/mm/transparent_hugepage/enabled"


@functools.cache
def _madvise() -> Callable[[int, int, int], int] | None:
    """libc's madvise, where the kernel is Linux and its huge pages are not switched off."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        with open(THP_SETTING) as setting:
            if "[never]" in setting.read():
                return None  # the administrator's choice: MADV_COLLAPSE would override it
        madvise = ctypes.CDLL(None, use_errno=True).madvise
    except (OSError, AttributeError):
        return None
    madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    madvise.restype = ctypes.c_int
    return madvise


def into_huge_pages(tensor: torch.Tensor) -> int:
    """Move the whole 2 MiB pages inside a CPU tensor's memory (oneDNN-packed or dense)
    into transparent huge pages, now: the bytes moved (0 where nothing could be).

    The bytes and their addresses stay as they are; only the mapping changes, so no result
    can. Why: a call on few tokens reads every weight once, and bert-base's 85 M weights
    span 83,000 pages of 4 KiB, far more than the TLB holds; every page costs a page-table
    walk (two levels of them in a virtual machine), the more so after the process sat idle.
    In 2 MiB pages the same weights span about 160. Measured on this project's Zen 4 VM:
    oneDNN's products of a 1 x 16 call, alone, 3-10% faster; the whole call a few percent
    at most (docs/performance.md, the "4 KiB pages" rows). The kernel copies each page once
    to do it (~0.5 s for bert-base there). Only whole pages inside the tensor move: its first
    and last partial 2 MiB stay, as they share pages with other memory.

    transformers: none
    """
    madvise = _madvise()
    if madvise is None or tensor.device.type != "cpu":
        return 0
    if tensor.is_mkldnn:  # an opaque tensor: no storage, its buffer known to oneDNN
        start, nbytes = torch.ops.mkldnn.data_ptr(tensor), torch.ops.mkldnn._nbytes(tensor)
    elif tensor.is_contiguous():
        start, nbytes = tensor.data_ptr(), tensor.numel() * tensor.element_size()
    else:
        return 0
    first = -(-start // HUGE_PAGE) * HUGE_PAGE  # rounded up to a page boundary
    last = (start + nbytes) // HUGE_PAGE * HUGE_PAGE  # rounded down
    if last <= first:
        return 0
    if madvise(first, last - first, MADV_COLLAPSE) == 0:
        return last - first
    error = ctypes.get_errno()
    if error == errno.EINVAL:  # a kernel before 6.1: let khugepaged move the range when it gets to it
        madvise(first, last - first, MADV_HUGEPAGE)
    logger.debug("into_huge_pages: madvise(MADV_COLLAPSE) of %d bytes failed: %s", last - first, os.strerror(error))
    return 0


@dataclass
class FastNorm:
    """One LayerNorm's parameters in the residual stream's dtype: LN(x) = (x - μ)/√(σ² + ε)·γ + β.

    transformers: none
    """

    weight: torch.Tensor  # γ (H,)
    bias: torch.Tensor  # β (H,)
    eps: float

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        """(M, H) -> (M, H)."""
        return F.layer_norm(x, self.weight.shape, self.weight, self.bias, self.eps)


def _norm(module: nn.LayerNorm, dtype: torch.dtype) -> FastNorm:
    return FastNorm(module.weight.detach().to(dtype), module.bias.detach().to(dtype), module.eps)


@dataclass
class FastLayer:
    """One BertLayer's weights as the fast path runs them.

    transformers: none
    """

    qkv: list[FastLinear]  # [H -> 3H] ([Q; K; V] stacked by rows), or [Q, K, V] unfused
    attention_out: FastLinear  # H -> H
    attention_norm: FastNorm  # BertSelfOutput's LayerNorm
    intermediate: FastLinear  # H -> I, GELU fused if .gelu
    output: FastLinear  # I -> H
    output_norm: FastNorm  # BertOutput's LayerNorm


class FastWeights:
    """The weights of one BertModel as the fast path runs them, and what they were derived
    from: the parameters' state and the options (a change to either rebuilds them).

    transformers: none
    """

    def __init__(self, model: nn.Module, routes: Routes, options: FastOptions) -> None:
        self.routes = routes
        self.options = options
        self.source = _parameter_state(model)
        #: The products' dtype (the weights'), and the residual stream's: fp32 for bf16/fp16
        #: weights under ``fp32_stream``, so that no sum or LayerNorm is rounded to them.
        self.dtype = model.embeddings.word_embeddings.weight.dtype
        if self.dtype == torch.bfloat16 and model.embeddings.word_embeddings.weight.device.type == "cpu":
            cpu_capability.warn_if_bf16_is_slow("the fast path, bf16 weights")
        low = self.dtype in (torch.bfloat16, torch.float16)
        self.stream_dtype = torch.float32 if low and options.fp32_stream else self.dtype
        self.embeddings_norm = _norm(model.embeddings.LayerNorm, self.stream_dtype)
        self.layers = [self._layer(layer) for layer in model.encoder.layer]
        dense = None if model.pooler is None else model.pooler.dense
        self.pooler = None if dense is None else _prepare(dense.weight, dense.bias, routes)  # H -> H, tanh after
        #: Bytes of the derived weights in 2 MiB pages (option ``huge_pages``).
        self.huge_page_bytes = sum(map(into_huge_pages, self.derived_tensors(model))) if options.huge_pages else 0
        #: Compiled encoders (option ``compile``) by batch shape; None: that shape failed to compile.
        self.compiled: dict[tuple[tuple[int, int], ...], Callable | None] = {}
        #: CUDA graphs (option ``cuda_graphs``) by batch shape, None: that shape failed to
        #: capture; and how often each shape not yet captured was seen.
        self.graphs: dict[tuple[tuple[int, int], ...], GraphedEncoder | None] = {}
        self.sightings: dict[tuple[tuple[int, int], ...], int] = {}
        self.graph_pool = None  # the memory pool every graph of these weights allocates from

    @property
    def route(self) -> str:
        """The routes in words: one name where every product runs one route."""
        return str(self.routes)

    def _layer(self, layer: nn.Module) -> FastLayer:
        attention = layer.attention.self
        if self.options.fuse_qkv:
            weight = torch.cat([attention.query.weight, attention.key.weight, attention.value.weight])  # (3H, H)
            bias = torch.cat([attention.query.bias, attention.key.bias, attention.value.bias])  # (3H,)
            qkv = [_prepare(weight, bias, self.routes)]
        else:
            qkv = [_prepare(linear.weight, linear.bias, self.routes) for linear in (attention.query, attention.key, attention.value)]
        fuse_gelu = (self.options.fuse_gelu
                     and isinstance(layer.intermediate.intermediate_act_fn, GELUActivation))
        dense = layer.attention.output.dense
        return FastLayer(
            qkv=qkv,
            attention_out=_prepare(dense.weight, dense.bias, self.routes),
            attention_norm=_norm(layer.attention.output.LayerNorm, self.stream_dtype),
            intermediate=_prepare(layer.intermediate.dense.weight, layer.intermediate.dense.bias, self.routes, fuse_gelu),
            output=_prepare(layer.output.dense.weight, layer.output.dense.bias, self.routes),
            output_norm=_norm(layer.output.LayerNorm, self.stream_dtype),
        )

    def derived_tensors(self, model: nn.Module) -> list[torch.Tensor]:
        """The tensors held here beyond the model's parameters: the stacked QKV, the packed
        or quantized copies, LayerNorm parameters cast to the stream's dtype."""
        parameters = {p.data_ptr() for p in model.parameters()}
        tensors = [self.embeddings_norm.weight, self.embeddings_norm.bias]
        linears = [] if self.pooler is None else [self.pooler]
        for layer in self.layers:
            linears += layer.qkv + [layer.attention_out, layer.intermediate, layer.output]
            tensors += [layer.attention_norm.weight, layer.attention_norm.bias,
                        layer.output_norm.weight, layer.output_norm.bias]
        for linear in linears:
            tensors += [t for t in (linear.weight, linear.bias, linear.packed, linear.scale) if t is not None]
        return [t for t in tensors if t.is_mkldnn or t.data_ptr() not in parameters]

    def nbytes(self, model: nn.Module) -> int:
        """Bytes held beyond the model's parameters."""
        return sum(t.numel() * t.element_size() for t in self.derived_tensors(model))


def _encoder_parameters(model: nn.Module) -> list[nn.Parameter]:
    """The encoder's parameters as they are now, by a plain walk of its modules: what
    ``parameters()`` yields (a shared one may come twice), for a fifth of its cost (measured
    ~55 against ~300 us for bert-base's 192), which every call pays."""
    found, modules = [], [model.encoder]
    while modules:
        module = modules.pop()
        found += [p for p in module._parameters.values() if p is not None]
        modules += [child for child in module._modules.values() if child is not None]
    return found


def _parameter_state(model: nn.Module) -> tuple:
    """What identifies the parameters' current values: their storage and in-place version
    (inference-mode tensors keep no version: for them, the storage alone)."""
    return tuple((p.data_ptr(), -1 if p.is_inference() else p._version, p.dtype, p.device)
                 for p in _encoder_parameters(model))


#: model -> its derived weights; held beside the model, not on it, so that they are never
#: saved, copied or moved with it, and go when it goes.
_DERIVED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def fast_weights(model: nn.Module) -> FastWeights:
    """The model's weights as the fast path runs them, for its current dtype and device,
    rebuilt if a parameter or an option changed.

    transformers: none
    """
    weight = model.embeddings.word_embeddings.weight
    dense = model.encoder.layer[0].intermediate.dense if len(model.encoder.layer) else None
    shape = (0, 0) if dense is None else (dense.in_features, dense.out_features)  # the largest product, H -> I
    routes = choose_routes(weight.dtype, weight.device, *shape)
    cache = _DERIVED.setdefault(model, {})  # (routes, options) -> FastWeights
    state = _parameter_state(model)
    options = current_options()
    cached = cache.get((routes, options))
    if cached is None or cached.source != state:
        if any(entry.source != state for entry in cache.values()):
            cache.clear()  # the parameters changed: every derived form is stale
        cached = cache[(routes, options)] = FastWeights(model, routes, options)
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
    if not torch.is_tensor(attention_mask) or tuple(attention_mask.shape) != (batch_size, seq_length):
        return False  # 3D masks, wrong types and shapes (which the reference path reports)
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
    if config.is_decoder or config.position_embedding_type != "absolute" or batch_size == 0:
        return False
    if model.training and any(layer.gradient_checkpointing for layer in model.encoder.layer):
        return False  # the reference layers recompute their activations
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


#: ``row_bucket``'s counts: multiples of this up to 16 times it, then this many per doubling.
ROW_BUCKETS_PER_DOUBLING = 8


def row_bucket(count: int) -> int:
    """The row count the products run on for ``count`` real rows (option ``row_buckets``):
    ``count`` rounded up to a multiple of 8 below 128, then of 16 below 256, 32 below 512,
    and so on: at most 7 more rows below 64, at most 1/8 more from 64 on; 44 counts in all
    up to 1,536 rows (3 x 512).

    transformers: none
    """
    step = max(ROW_BUCKETS_PER_DOUBLING, 1 << max(count.bit_length() - 4, 0))  # count in [2^k, 2^(k+1)): 2^(k-3)
    return -(-count // step) * step


def _padded_to_bucket(x: torch.Tensor, runs: list[tuple[int, int]]) -> tuple[torch.Tensor, list[tuple[int, int]]]:
    """Rows x (M, H) padded with zero rows up to ``row_bucket(M)``, the padding one more run:
    a sequence of its own, which attends only to itself and which no real row sees."""
    padding = row_bucket(x.shape[0]) - x.shape[0]
    if padding == 0:
        return x, runs
    return torch.cat([x, x.new_zeros(padding, x.shape[1])]), [*runs, (1, padding)]  # (M', H)


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
               heads: int, scaling: float, mask: torch.Tensor | None, dropout: float = 0.0) -> torch.Tensor:
    """dropout(softmax(QₙKₙᵀ/√D + M))·Vₙ within each sequence.

    query, key, value (M, N·D) rows grouped by sequence (views into one QKV product are
    fine) -> context (M, N·D). ``mask``: the additive (B, 1, 1, T) mask when the rows are
    the padded batch (unpad off); None on packed rows, where no key needs masking.
    ``dropout``: the probabilities' dropout, in training.
    """
    width = query.shape[1]
    head_dim = width // heads  # D
    if len(runs) > 1 and mask is None and dropout == 0.0 and varlen_applies(query):
        return _varlen_attention(query, key, value, runs, heads, scaling)
    contexts = []
    sizes = [count * length for count, length in runs]  # rows per run
    # One split per tensor, not a slice per run: a split's gradient is one concatenation,
    # where each slice's would be a zero (M, N·D) tensor added into the rest. One run: no split.
    parts = [(query, key, value)] if len(runs) == 1 else zip(query.split(sizes), key.split(sizes), value.split(sizes))
    for (count, length), (q, k, v) in zip(runs, parts):
        rows = count * length
        q, k, v = (x.view(count, length, heads, head_dim).transpose(1, 2) for x in (q, k, v))  # (n, N, L, D) each
        small = count * heads * length * length <= MATMUL_ATTENTION_MAX_SCORES
        cpu = q.device.type == "cpu"  # on CUDA, SDPA's flash kernels win, dropout included
        if small and cpu and (current_options().matmul_attention or dropout > 0):
            scores = torch.matmul(q, k.transpose(-1, -2)) * scaling  # (n, N, L, D) @ (n, N, D, L) -> (n, N, L, L)
            if mask is not None:
                scores = scores + mask  # (n, N, L, L) + (B, 1, 1, T): padded rows, one run of B
            probs = fast_dropout(torch.softmax(scores, dim=-1), dropout)  # (n, N, L, L)
            context = torch.matmul(probs, v)  # (n, N, L, L) @ (n, N, L, D) -> (n, N, L, D)
        else:
            context = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout,
                                                     scale=scaling)  # (n, N, L, D)
        contexts.append(context.transpose(1, 2).reshape(rows, width))  # (n·L, N·D)
    return contexts[0] if len(contexts) == 1 else torch.cat(contexts)  # (M, N·D)


def varlen_applies(query: torch.Tensor) -> bool:
    """Whether packed rows like ``query`` attend in one varlen call (option
    ``varlen_attention``), on CUDA: flash attention's in fp16 and bf16, where torch has it;
    the memory-efficient kernel's in fp32 (flash attention has no fp32), in inference.

    transformers: none (its counterpart is the "flash_attention_2" integration's varlen call)
    """
    if not current_options().varlen_attention or query.device.type != "cuda":
        return False
    if query.dtype in (torch.float16, torch.bfloat16):
        return varlen_kernel() is not None
    return query.dtype == torch.float32 and not query.requires_grad


@functools.cache
def varlen_kernel() -> Callable | None:
    """torch's flash attention over packed sequences (``torch.nn.attention.varlen``, CUDA,
    torch >= 2.9), or None where torch has none. Imported on first use: the import takes
    about a second, which a CPU-only process never pays.

    transformers: none
    """
    try:
        from torch.nn.attention.varlen import varlen_attn
    except ImportError:
        return None
    return varlen_attn


def _varlen_attention(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, runs: list[tuple[int, int]],
                      heads: int, scaling: float) -> torch.Tensor:
    """softmax(QₙKₙᵀ/√D)·Vₙ within each sequence, all sequences in one kernel call.

    On a GPU a padded batch of many lengths would otherwise launch one SDPA call per run,
    each with its transposes and a final concatenation: launches the GPU waits on. Flash
    attention's varlen form reads each sequence's rows between two cumulative offsets.
    query, key, value (M, N·D) -> context (M, N·D).
    """
    width = query.shape[1]
    head_dim = width // heads  # D
    offsets = sequence_offsets(tuple(runs), query.device)  # (B + 1,)
    q, k, v = (x.unflatten(1, (heads, head_dim)) for x in (query, key, value))  # (M, N, D) each
    longest = max(length for _, length in runs)
    if query.dtype == torch.float32:
        context = _efficient_varlen_attention(q, k, v, offsets, longest, scaling)  # (M, N, D)
    else:
        context = varlen_kernel()(q, k, v, offsets, offsets, longest, longest, scale=scaling)  # (M, N, D)
    return context.reshape(-1, width)  # (M, N·D)


def _efficient_varlen_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, offsets: torch.Tensor,
                                longest: int, scaling: float) -> torch.Tensor:
    """The memory-efficient attention kernel over packed sequences, (M, N, D) -> (M, N, D):
    the call torch's nested tensors make for SDPA on CUDA, without their per-call cost. It
    reads one batch of all M rows, each sequence between two offsets."""
    q, k, v = (x.contiguous().unsqueeze(0) for x in (q, k, v))  # (1, M, N, D) each
    output = torch.ops.aten._efficient_attention_forward(q, k, v, None, offsets, offsets, longest, longest, 0.0, 0,
                                                         scale=scaling)[0]  # (1, M, N, D)
    return output.squeeze(0)  # (M, N, D)


#: Batch shapes whose sequence offsets stay on the device (sequence_offsets).
OFFSETS_CACHED = 64


@functools.lru_cache(maxsize=OFFSETS_CACHED)
def sequence_offsets(runs: tuple[tuple[int, int], ...], device: torch.device) -> torch.Tensor:
    """Where each packed sequence starts, and the end: (B + 1,) int32 on ``device``,
    sequence b being rows offsets[b]:offsets[b+1]. Made once per batch shape: copying a
    list to the GPU makes the host wait for the GPU, once per layer where it is not kept
    (and a CUDA graph cannot capture the copy at all).

    transformers: none (flash attention's ``cu_seqlens``)
    """
    lengths = [length for count, length in runs for _ in range(count)]  # L_b, in packed order
    with torch.inference_mode(False):  # kept for later calls: a training step may save it for backward
        return torch.tensor([0, *itertools.accumulate(lengths)], dtype=torch.int32, device=device)  # (B + 1,)


def _layer_forward(layer: nn.Module, x: torch.Tensor, runs: list[tuple[int, int]], mask: torch.Tensor | None,
                   weights: FastLayer | None, dtype: torch.dtype) -> torch.Tensor:
    """One BertLayer on rows x (M, H) -> (M, H), x in the residual stream's dtype and the
    products in ``dtype``; ``weights`` None = the parameters themselves, through
    differentiable ops, with the layer's dropout where it is in train mode."""
    attention = layer.attention
    self_attention = attention.self
    activation: Callable | None = layer.intermediate.intermediate_act_fn
    training = layer.training  # dropout's three places in a layer: probabilities, and before each residual sum
    probs_dropout = self_attention.dropout.p if training else 0.0
    attention_output_dropout = attention.output.dropout.p if training else 0.0
    output_dropout = layer.output.dropout.p if training else 0.0
    if weights is None:
        if current_options().fuse_qkv:
            linears = (self_attention.query, self_attention.key, self_attention.value)
            weight = torch.cat([linear.weight for linear in linears])  # 3 x (H, H) -> (3H, H)
            bias = torch.cat([linear.bias for linear in linears])  # 3 x (H,) -> (3H,)
            query, key, value = F.linear(x, weight, bias).chunk(3, dim=-1)  # (M, 3H) -> 3 x (M, H) views
        else:
            query, key, value = self_attention.query(x), self_attention.key(x), self_attention.value(x)  # (M, H) each
        attention_out, intermediate, output = attention.output.dense, layer.intermediate.dense, layer.output.dense
        attention_norm, output_norm = attention.output.LayerNorm, layer.output.LayerNorm
    else:
        h = x.to(dtype)  # (M, H): an fp32 stream is rounded for the products only
        if len(weights.qkv) == 1:
            query, key, value = weights.qkv[0](h).chunk(3, dim=-1)  # (M, 3H) -> 3 x (M, H) views
        else:
            query, key, value = (linear(h) for linear in weights.qkv)  # (M, H) each
        attention_out, intermediate, output = weights.attention_out, weights.intermediate, weights.output
        attention_norm, output_norm = weights.attention_norm, weights.output_norm
        if weights.intermediate.gelu:
            activation = None
    context = _attention(query, key, value, runs, self_attention.num_attention_heads, self_attention.scaling,
                         mask, probs_dropout)  # (M, H)
    # Post-LN residuals, as BertSelfOutput and BertOutput; a product in bf16 plus an fp32
    # stream sums in fp32, and the LayerNorm runs in the stream's dtype.
    a = attention_norm(fast_dropout(attention_out(context), attention_output_dropout) + x)  # (M, H)
    f = intermediate(a.to(dtype))  # (M, I)
    if activation is not None:
        f = activation(f)  # (M, I)
    return output_norm(fast_dropout(output(f), output_dropout) + a)  # (M, H)


# --------------------------------------------------------------------------------------
# Compiled mode (option ``compile``)
# --------------------------------------------------------------------------------------

#: Batch shapes compiled per process at most: each holds its own graph and constants.
#: Every shape is another compiled version of the same forward, so dynamo's limit of
#: versions per function (torch._dynamo.config.recompile_limit, 8 by default) is raised to
#: this while a compiled encoder runs.
COMPILED_SHAPES_MAX = 16
_compiled_shapes = 0
#: The routes a compiled encoder runs: plain weights, which the compiler packs itself.
COMPILED_ROUTES = ("aten", "int8")


class CompiledLayerWeights(nn.Module):
    """One FastLayer's tensors (route "aten" or "int8") as buffers: what inductor's
    freezing turns into constants and pre-packs.

    transformers: none
    """

    LINEARS = ("attention_out", "intermediate", "output")
    NORMS = ("attention_norm", "output_norm")

    def __init__(self, layer: FastLayer, route: str) -> None:
        super().__init__()
        self.route = route
        self.fused_qkv = len(layer.qkv) == 1
        self.gelu = layer.intermediate.gelu
        linears = {f"qkv{index}": linear for index, linear in enumerate(layer.qkv)}
        linears |= {name: getattr(layer, name) for name in self.LINEARS}
        for name, linear in linears.items():
            self.register_buffer(f"{name}_weight", linear.weight)
            self.register_buffer(f"{name}_bias", linear.bias)
            self.register_buffer(f"{name}_scale", linear.scale)  # None off route "int8"
        for name in self.NORMS:
            self.register_buffer(f"{name}_weight", getattr(layer, name).weight)
            self.register_buffer(f"{name}_bias", getattr(layer, name).bias)
        self.eps = {name: getattr(layer, name).eps for name in self.NORMS}

    def fast_layer(self) -> FastLayer:
        """The FastLayer, rebuilt on the buffers (so that the compiler reads them)."""
        def linear(name: str) -> FastLinear:
            return FastLinear(getattr(self, f"{name}_weight"), getattr(self, f"{name}_bias"),
                              Routes(self.route, self.route), gelu=self.gelu and name == "intermediate",
                              scale=getattr(self, f"{name}_scale"))

        def norm(name: str) -> FastNorm:
            return FastNorm(getattr(self, f"{name}_weight"), getattr(self, f"{name}_bias"), self.eps[name])

        qkv = [linear(f"qkv{index}") for index in range(1 if self.fused_qkv else 3)]
        return FastLayer(qkv, linear("attention_out"), norm("attention_norm"), linear("intermediate"),
                         linear("output"), norm("output_norm"))


class CompiledEncoder(nn.Module):
    """The encoder layers on packed rows of one batch shape, (M, H) -> (M, H): what
    option ``compile`` hands to torch.compile.

    transformers: none
    """

    def __init__(self, model: nn.Module, weights: FastWeights, runs: tuple[tuple[int, int], ...]) -> None:
        super().__init__()
        self.layers = model.encoder.layer  # for the head count, scaling and activation
        self.weights = nn.ModuleList(CompiledLayerWeights(layer, weights.route) for layer in weights.layers)
        self.runs = list(runs)
        self.dtype = weights.dtype

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(M, H) in the stream's dtype -> (M, H)."""
        for layer, weights in zip(self.layers, self.weights):
            x = _layer_forward(layer, x, self.runs, None, weights.fast_layer(), self.dtype)  # (M, H)
        return x


def compile_freezes(route: str) -> bool:
    """Whether the compiled encoder of ``route`` is compiled with inductor's freezing:
    the weights become constants that inductor pre-packs.

    On route "int8" freezing also rewrites each quantized product into oneDNN's qlinear,
    whose int8 kernels for the way inductor calls it (per-channel weight zero points)
    exist on AMX only: elsewhere oneDNN runs its reference implementation (measured on an
    AVX512-VNNI CPU without AMX: 40 s for one 742 x 768 x 3072 product, against 25 ms for
    torch._int_mm). There the int8 encoder compiles without freezing: torch._int_mm
    products, the quantization fused around them (measured 1.3x the uncompiled int8 at
    1 x 16 and 4 x 128 tokens of bert-base).

    transformers: none
    """
    return route != "int8" or torch.cpu._is_amx_tile_supported()


def compiled_encoder(model: nn.Module, weights: FastWeights, runs: list[tuple[int, int]]) -> Callable | None:
    """The compiled encoder for this batch shape: compiled on first use, then cached on
    ``weights``; None where it cannot run (another route, the shape limit reached, the
    compiler failed: each said once), and the uncompiled path runs instead.

    transformers: none
    """
    global _compiled_shapes
    key = tuple(runs)
    if key in weights.compiled:
        return weights.compiled[key]
    if weights.route not in COMPILED_ROUTES:
        _warn_once(f"option compile runs on routes {COMPILED_ROUTES} (the compiler packs the weights), not "
                   f"{weights.route!r}: running uncompiled")
        return None
    if _compiled_shapes >= COMPILED_SHAPES_MAX:
        _warn_once(f"option compile: {COMPILED_SHAPES_MAX} batch shapes are compiled already; new shapes run "
                   f"uncompiled (pad batches to a few shapes to stay within it)")
        return None
    try:  # the import makes inductor's cache directory: unwritable, it fails here
        import torch._inductor.config as inductor_config
    except Exception as error:  # noqa: BLE001 - any failure of the compiler's set-up: run uncompiled, said once
        weights.compiled[key] = None
        _warn_once(f"option compile: torch.compile cannot start ({type(error).__name__}: "
                   f"{str(error).splitlines()[0][:200] if str(error) else ''}); running uncompiled")
        return None

    shape = ", ".join(f"{count} x {length}" for count, length in runs)
    logger.warning("compiling the fast path for batch shape [%s] (sequences x tokens): once per shape, "
                   "about 15 s for bert-base on 2 cores", shape)
    compiled = torch.compile(CompiledEncoder(model, weights, key).eval(), dynamic=False)
    freezing = compile_freezes(weights.route)

    def call(x: torch.Tensor) -> torch.Tensor:
        # Read when a call compiles: weights as constants (or not); room for every shape's version.
        with inductor_config.patch(freezing=freezing), torch._dynamo.config.patch(recompile_limit=COMPILED_SHAPES_MAX):
            return compiled(x)
    weights.compiled[key] = call
    _compiled_shapes += 1
    return call


# --------------------------------------------------------------------------------------
# CUDA graphs (option ``cuda_graphs``)
# --------------------------------------------------------------------------------------

#: Batch shapes captured per model's weights at most. Every graph draws on one memory pool
#: (the weights'), which grows to the largest shape's activations, not their sum.
GRAPHED_SHAPES_MAX = 32
#: A batch shape is captured when it is seen this many times: a shape seen once (a one-off
#: length mix) costs no capture, and its first call warms the kernels up.
GRAPH_AFTER_CALLS = 2
#: Shapes not yet captured whose sightings are counted at most; then the count starts over.
SIGHTINGS_MAX = 4096


class GraphedEncoder:
    """The encoder layers on packed rows of one batch shape, captured once as a CUDA graph
    and replayed: (M, H) -> (M, H).

    A GPU runs bert-base's ~430 kernels of a call faster than Python can queue them (on an
    H100, 742 tokens in fp16: ~2 ms of kernels, ~6 ms of queuing, docs/performance.md). A
    graph queues them all at once. It reads its input from, and writes its output to,
    tensors of its own: each call copies the rows in and the result out, so that a later
    call cannot overwrite what an earlier one returned.

    transformers: none (torch.compile's mode="reduce-overhead" captures graphs too)
    """

    def __init__(self, model: nn.Module, weights: FastWeights, runs: tuple[tuple[int, int], ...],
                 x: torch.Tensor) -> None:
        self.layers = model.encoder.layer  # for the head count, scaling and activation
        self.layer_weights, self.dtype = weights.layers, weights.dtype
        self.runs = list(runs)
        self.stream = torch.cuda.current_stream(x.device)  # replays are queued here, in call order
        self.lock = threading.Lock()  # two threads' calls must not interleave their copies and replays
        with torch.inference_mode(False):  # a static input any later call may copy into, in inference mode or not
            self.input = x.clone()  # (M, H)
        # Held: the graph reads the offsets by address, after the cache may have let them go.
        self.offsets = sequence_offsets(runs, x.device) if len(runs) > 1 else None
        side = torch.cuda.Stream(x.device)
        side.wait_stream(self.stream)
        with torch.cuda.stream(side):
            self._run()  # libraries allocate their workspaces before capture, not during
        self.stream.wait_stream(side)
        # One pool for every shape of these weights: a replay recomputes all it reads from
        # its own input (outside the pool) and its output is copied out before the next
        # replay, so graphs may reuse each other's memory for their intermediates.
        if weights.graph_pool is None:
            weights.graph_pool = torch.cuda.graph_pool_handle()
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph, pool=weights.graph_pool):
            self.output = self._run()  # (M, H)

    def _run(self) -> torch.Tensor:
        x = self.input
        for layer, weights in zip(self.layers, self.layer_weights):
            x = _layer_forward(layer, x, self.runs, None, weights, self.dtype)  # (M, H)
        return x

    def __call__(self, x: torch.Tensor) -> torch.Tensor | None:
        """The encoder's output rows, or None from another CUDA stream than the capture's:
        there the copy in could overtake a replay still running, and the layers run one by one."""
        if torch.cuda.current_stream(x.device) != self.stream:
            return None
        with self.lock:
            self.input.copy_(x)
            self.graph.replay()
            return self.output.clone()  # (M, H)


def graphed_encoder(model: nn.Module, weights: FastWeights, runs: list[tuple[int, int]],
                    x: torch.Tensor) -> GraphedEncoder | None:
    """The CUDA graph of this batch shape's encoder: captured the ``GRAPH_AFTER_CALLS``-th
    time the shape is seen, then cached on ``weights``; None where it does not run (not yet,
    the shape limit reached, the capture failed: said once), and the layers run one by one.

    transformers: none
    """
    key = tuple(runs)
    if key in weights.graphs:
        return weights.graphs[key]
    if len(weights.graphs) >= GRAPHED_SHAPES_MAX:
        _warn_once(f"option cuda_graphs: {GRAPHED_SHAPES_MAX} batch shapes are captured already; new shapes run "
                   f"without a graph (pad batches to a few shapes to stay within it)")
        return None
    if len(weights.sightings) >= SIGHTINGS_MAX:
        weights.sightings.clear()
    weights.sightings[key] = weights.sightings.get(key, 0) + 1
    if weights.sightings[key] < GRAPH_AFTER_CALLS:
        return None
    del weights.sightings[key]
    try:
        weights.graphs[key] = GraphedEncoder(model, weights, key, x)
    except Exception as error:  # noqa: BLE001 - a kernel that cannot be captured, or no memory: run without
        weights.graphs[key] = None
        _warn_once(f"option cuda_graphs: capturing batch shape {key} failed ({type(error).__name__}: "
                   f"{str(error).splitlines()[0][:200] if str(error) else ''}); running without a graph")
    return weights.graphs[key]


def _encode(model: nn.Module, x: torch.Tensor, runs: list[tuple[int, int]], mask: torch.Tensor | None,
            derived: FastWeights | None, dtype: torch.dtype) -> torch.Tensor:
    """The encoder layers on rows x (M, H): compiled where option ``compile`` asks and can,
    replayed as a CUDA graph where option ``cuda_graphs`` can."""
    options = current_options()
    # Not under autocast: a graph replays the kernels it captured, whatever the autocast state of a later call.
    if (options.cuda_graphs and derived is not None and mask is None and x.device.type == "cuda" and not options.compile
            and not torch.is_autocast_enabled(x.device.type)):
        encoder = graphed_encoder(model, derived, runs, x)
        out = None if encoder is None else encoder(x)  # (M, H)
        if out is not None:
            return out
    if options.compile and derived is not None and mask is None:
        encoder = compiled_encoder(model, derived, runs)
        if encoder is not None:
            try:
                return encoder(x)
            except Exception as error:  # the compiler's failure: said once, then the uncompiled path
                derived.compiled[tuple(runs)] = None
                _warn_once(f"option compile: torch.compile failed ({type(error).__name__}: "
                           f"{str(error).splitlines()[0][:200] if str(error) else ''}); running uncompiled")
    for index, layer in enumerate(model.encoder.layer):
        x = _layer_forward(layer, x, runs, mask, None if derived is None else derived.layers[index], dtype)  # (M, H)
    return x


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
        if current_options().unpad:
            # Sequences packed shortest first, so that each length is one run, attended in one call.
            lengths = attention_mask.bool().sum(dim=1)  # (B,) L_b
            order = torch.sort(lengths, stable=True).indices  # (B,)
            found = attention_mask[order].reshape(-1).bool().nonzero().squeeze(1)  # (M,) in the sorted batch
            keep = order[found // seq_length] * seq_length + found % seq_length  # (M,) rows of the (B·T) batch
            runs = _runs(lengths[order].tolist())  # (count, length) per distinct length
        else:
            dtype = model.embeddings.word_embeddings.weight.dtype
            mask = (1.0 - attention_mask[:, None, None, :].to(dtype)) * torch.finfo(dtype).min  # (B, 1, 1, T)

    def rows(t: torch.Tensor) -> torch.Tensor:  # (B, T, ...) -> (M, ...)
        t = t.reshape(batch_size * seq_length, *t.shape[2:])  # (B·T, ...)
        return t if keep is None else t.index_select(0, keep)

    grad_needed = torch.is_grad_enabled() and any(p.requires_grad for p in _encoder_parameters(model))
    derived = None if grad_needed or model.training else fast_weights(model)
    dtype = embeddings.word_embeddings.weight.dtype
    stream = dtype if derived is None else derived.stream_dtype

    # The embeddings on real tokens: the same sum, in the same order, as BertEmbeddings.
    x = embeddings.word_embeddings(rows(input_ids)) if inputs_embeds is None else rows(inputs_embeds)  # (M, H)
    x = x.to(stream) + embeddings.token_type_embeddings(rows(token_type_ids)).to(stream)  # (M, H)
    x = x + embeddings.position_embeddings(rows(position_ids)).to(stream)  # (M, H)
    x = embeddings.LayerNorm(x) if derived is None else derived.embeddings_norm(x)  # (M, H)
    if embeddings.training:
        x = fast_dropout(x, embeddings.dropout.p)  # (M, H)

    count = x.shape[0]  # M
    options = current_options()
    # Not when compiled: each batch shape is a graph of its own there, COMPILED_SHAPES_MAX at most.
    if derived is not None and mask is None and x.device.type == "cpu" and options.row_buckets and not options.compile:
        x, runs = _padded_to_bucket(x, runs)  # (M', H): a bounded set of row counts for oneDNN's products
    x = _encode(model, x, runs, mask, derived, dtype)[:count]  # (M', H) -> (M, H)
    x = x.to(dtype)  # (M, H): the stream rounded once, to the model's dtype

    if keep is None:
        sequence_output = x.view(batch_size, seq_length, -1)  # (B, T, H)
    else:
        sequence_output = x.new_zeros(batch_size * seq_length, x.shape[-1])  # (B·T, H): padding stays 0
        sequence_output = sequence_output.index_copy(0, keep, x).view(batch_size, seq_length, -1)  # (B, T, H)
    if model.pooler is None:
        pooled = None
    elif derived is None:
        pooled = model.pooler(sequence_output)  # (B, H)
    else:  # BertPooler on the packed weights: tanh(h_[CLS]·W_P + b_P)
        pooled = torch.tanh(derived.pooler(sequence_output[:, 0].contiguous()))  # (B, H) -> (B, H)
    return BaseModelOutputWithPoolingAndCrossAttentions(last_hidden_state=sequence_output, pooler_output=pooled)


def _input_shape(input_ids: torch.Tensor | None, inputs_embeds: torch.Tensor | None) -> tuple[int, int] | None:
    """(B, T) of a call's inputs, or None where they are not exactly one of (B, T) ids and
    (B, T, H) embeddings: the model's own forward then reports what is wrong."""
    if (input_ids is None) == (inputs_embeds is None):
        return None
    inputs, dims = (input_ids, 2) if inputs_embeds is None else (inputs_embeds, 3)
    if not torch.is_tensor(inputs) or inputs.dim() != dims:
        return None
    return tuple(inputs.shape[:2])


def fast_path_forward(model: nn.Module, input_ids: torch.Tensor | None, attention_mask: torch.Tensor | None,
                      token_type_ids: torch.Tensor | None, position_ids: torch.Tensor | None,
                      inputs_embeds: torch.Tensor | None, encoder_hidden_states: torch.Tensor | None,
                      encoder_attention_mask: torch.Tensor | None, past_key_values: tuple | None,
                      use_cache: bool | None, **options: Unpack[BertModelKwargs],
                      ) -> BaseModelOutputWithPoolingAndCrossAttentions | tuple | None:
    """BertModel's forward on real tokens where ``applies``, else None: the model's own
    layers then run the call, attending with sdpa. What ``ALL_MODEL_FORWARDS["fast"]`` runs,
    given BertModel.forward's arguments before anything is checked: it checks the inputs of
    the calls it computes as BertModel.forward does (``check_model_inputs``).

    transformers: none
    """
    output_attentions, output_hidden_states, return_dict = output_switches(model, options, BertModelKwargs)
    shape = _input_shape(input_ids, inputs_embeds)
    if shape is None or not applies(model, attention_mask, *shape, head_mask=options.get("head_mask"),
                                    output_attentions=output_attentions, output_hidden_states=output_hidden_states,
                                    encoder_hidden_states=encoder_hidden_states, past_key_values=past_key_values):
        return None
    check_model_inputs(model.config, input_ids, inputs_embeds, token_type_ids, position_ids,
                       attention_mask=attention_mask, dtype=model.embeddings.word_embeddings.weight.dtype)
    out = fast_forward(model, input_ids, attention_mask, token_type_ids, position_ids, inputs_embeds)
    return out if return_dict else out.to_tuple()


# Installed from here, by name: BertModel.forward looks "fast" up in ALL_MODEL_FORWARDS, and
# where it declines a call (a head mask, probabilities asked for, a decoder's cache...) the
# layers attend with sdpa.
ALL_MODEL_FORWARDS.register(FAST, fast_path_forward, layer_attention="sdpa")
