"""Inference speed: mini_hf_bert's ``"fast"`` path against transformers and its peers.

``python -m mini_hf_bert benchmark [--quick]`` runs every contender in one process, on
identical weights (a bert-base-sized BertModel, seeded) and identical inputs, alternating
them run by run so that a slow moment of the machine hits all alike, and reports the
median of ``runs`` timed calls after a warm-up:

    W1  batch 8 x 128, lengths [128, 120, 110, 100, 90, 80, 64, 50]   (28% padding)
    W2  batch 1 x 16                                                   (no padding)
    W3  batch 4 x 512, lengths [512, 400, 300, 200]                    (31% padding)
    W4  batch 1 x 64, W5  batch 1 x 128                                (no padding)

in fp32 and bf16. Contenders (each when installed): mini_hf_bert "fast" (compiled too,
with the "compile" peers; and in fp32 its int8 route) and "sdpa"; transformers "eager" and "sdpa"; torch.compile of transformers'
sdpa model; ONNX Runtime on the ONNX export of mini_hf_bert's model (fp32); OpenVINO
(fp32, bf16) and CTranslate2 (fp32, int8), see engines.py; PyTorch's
``nn.TransformerEncoder``, whose eval path skips padding through nested tensors. Every
contender's output on real tokens is compared with the fp32 reference (mini_hf_bert's
eager model, bit-equal to transformers'), ``max|diff|``, so a fast wrong answer shows and
each dtype's distance from fp32 can be read off. The full run adds one row per
optimisation of the fast path switched off (what it buys).

Every timed call waits ``SETTLE_S`` first, and the contenders' order rotates run by run:
an engine's threads spin for a while after a call (torch ~10 ms, ONNX Runtime ~40 ms) and
would steal a core from whichever contender came next.

Also: the GEMM roofline for the real tokens (their matrix-product FLOPs at the best rate
the fast path's route reaches on this machine), the extra memory the fast path holds,
and a fresh process's import + load + first output against a bare ``import torch``.

transformers: none
"""

from __future__ import annotations

import dataclasses
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from mini_hf_bert import cpu_capability, modeling_bert_fast
from . import engines
from mini_hf_bert.configuration_bert import BertConfig
from mini_hf_bert.modeling_bert import BertModel
from mini_hf_bert.parity.compare import rms_diff
from mini_hf_bert.parity.speed import (  # noqa: F401  (the workloads and timing rules are the package's benchmark's)
    BERT_BASE, DTYPES, SETTLE_S, WORKLOADS, Workload, check_cases, machine_description, make_inputs, median_ms,
    seeded_reference, time_alternating)

logger = logging.getLogger(__name__)

#: Timed calls per contender (the median is reported) and untimed calls before them.
RUNS, QUICK_RUNS, WARMUP = 15, 10, 2
#: The reference every ratio is taken against.
BASELINE = "transformers sdpa"
#: Fast-path options, each changed from its default in one row: option -> (value, row label).
ABLATIONS = {
    "unpad": (False, "fast, padded rows (no unpadding)"),
    "fuse_qkv": (False, "fast, three Q/K/V products"),
    "fuse_gelu": (False, "fast, GELU not fused"),
    "route": ("aten", "fast, F.linear route (no pre-packing)"),
    "huge_pages": (False, "fast, 4 KiB pages (no huge pages)"),
    "matmul_attention": (True, "fast, attention as matmul-softmax-matmul"),
    "fp32_stream": (False, "fast, residual stream and LayerNorm in bf16"),  # low precision only
}
#: The peers run_benchmark knows; each runs only when its package is installed.
PEERS = ("transformers", "compile", "onnxruntime", "openvino", "ctranslate2", "nested")


@dataclass
class Timing:
    """One contender on one workload and dtype.

    transformers: none
    """

    contender: str
    workload: str
    dtype: str
    ms: float  # median per call
    tokens_per_s: float  # real tokens per second
    max_diff: float | None  # on real tokens, against the fp32 reference's output
    ratio: float | None = None  # baseline ms / this ms (> 1: faster than transformers sdpa)


@dataclass
class Accuracy:
    """One low-precision mode against fp32 on the real checkpoint (all-MiniLM-L6-v2).

    transformers: none
    """

    mode: str
    max_diff: float  # last hidden state, real tokens
    rms_diff: float  # the same values' root-mean-square distance (compare.rms_diff)
    min_token_cosine: float  # the least cosine between a token's vector and its fp32 vector
    min_sentence_cosine: float  # the least, over the demo's sentences, of the embedding's cosine
    ranking_kept: bool  # each sentence's neighbours in the same order as in fp32


@dataclass
class Report:
    """Everything one benchmark run measured.

    transformers: none
    """

    machine: str
    timings: list[Timing]
    rooflines: dict[tuple[str, str], tuple[float, float]]  # (workload, dtype) -> (ms, GFLOP/s)
    extra_memory: dict[str, int]  # dtype -> bytes the fast path holds beyond the parameters
    first_output: dict[str, float]  # what -> seconds, fresh process
    notes: list[str]
    accuracy: list[Accuracy] = dataclasses.field(default_factory=list)  # on the real checkpoint
    cpu_kind: str = ""  # what the kernels ran on (cpu_capability.cpu_kind), emulation said
    routes: list[dict] = dataclasses.field(default_factory=list)  # the fast path's route choices (route_record)
    weight_values: int = 0  # values in the encoder's Linear weights: what a few-token call reads
    read_rate: float = 0.0  # GB/s at which this machine sums an fp32 tensor of the weights' size (read_rate)


def route_record(measurement: modeling_bert_fast.RouteMeasurement) -> dict:
    """One route choice of the fast path as the report keeps it (JSON values).

    transformers: none
    """
    return dict(dtype={torch.float32: "fp32", torch.bfloat16: "bf16"}.get(measurement.dtype, str(measurement.dtype)),
                shape=list(measurement.shape), few=measurement.routes.few, many=measurement.routes.many,
                ms={f"{name}/{route}": ms for (name, route), ms in measurement.ms.items()},
                unavailable=measurement.unavailable, seconds=measurement.seconds)


def weight_values(config: BertConfig) -> int:
    """Values in the encoder's Linear weights (Q, K, V, O and the feed-forward pair).

    transformers: none
    """
    hidden, inner = config.hidden_size, config.intermediate_size
    return config.num_hidden_layers * (4 * hidden * hidden + 2 * hidden * inner)


def read_rate(values: int, runs: int = 5) -> float:
    """GB/s at which torch sums ``values`` fp32 values, the fastest of ``runs``: how fast
    this machine reads memory with the run's threads, the ceiling for streaming weights.

    transformers: none
    """
    data = torch.ones(values)
    return values * data.element_size() / cpu_capability.fastest_seconds(data.sum, runs) / 1e9


def weight_bytes(report: Report, timing: Timing) -> int:
    """The bytes of encoder weights one call of ``timing``'s contender reads: 1 per value
    for int8 rows, 2 for bf16, 4 for fp32.

    transformers: none
    """
    per_value = 1 if "int8" in timing.contender else (2 if timing.dtype == "bf16" else 4)
    return report.weight_values * per_value


def gemm_flops(config: BertConfig, lengths: tuple[int, ...]) -> float:
    """Multiply-add FLOPs of the encoder's products on real tokens only: the Linears on
    every token, attention's QKᵀ and PV within each sequence.

    transformers: none
    """
    hidden, inner = config.hidden_size, config.intermediate_size
    tokens = sum(lengths)
    per_layer = 2 * tokens * hidden * (3 * hidden + hidden + 2 * inner)  # Q, K, V, O, and the feed-forward
    per_layer += 2 * 2 * sum(length * length for length in lengths) * hidden  # QKᵀ and PV, all heads
    return float(per_layer * config.num_hidden_layers)


def gemm_rate(config: BertConfig, tokens: int, dtype: torch.dtype, runs: int = 10) -> float:
    """The best of the fast path's route and F.linear on this workload's feed-forward
    product (tokens, H) x (H, I), in GFLOP/s: the rate the roofline assumes.

    transformers: none
    """
    torch.manual_seed(0)
    linear = nn.Linear(config.hidden_size, config.intermediate_size).to(dtype)
    x = torch.randn(tokens, config.hidden_size, dtype=dtype)
    candidates = [lambda: linear(x)]
    try:
        packed = modeling_bert_fast._prepare(linear.weight, linear.bias, modeling_bert_fast.Routes("onednn", "onednn"))
        candidates.append(lambda: packed(x))
    except RuntimeError:  # oneDNN cannot pack this dtype on this CPU (bf16 below AVX-512)
        pass
    best = float("inf")
    with torch.inference_mode():
        for call in candidates:
            call()
            best = min(best, median_ms(call, runs))
    return 2 * tokens * config.hidden_size * config.intermediate_size / (best / 1000) / 1e9


# --------------------------------------------------------------------------------------
# Contenders: name -> a call (ids, mask) -> last hidden state (B, T, H)
# --------------------------------------------------------------------------------------

Call = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


def _ours(model: BertModel, implementation: str, **options: bool | str) -> Call:
    def call(ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        model.config.attn_implementation = implementation
        with modeling_bert_fast.using_options(**options):
            return model(ids, attention_mask=mask).last_hidden_state
    return call


def _transformers_models(config: BertConfig, state: dict, dtype: torch.dtype) -> dict[str, nn.Module]:
    try:
        import transformers
    except ImportError:
        return {}
    transformers.utils.logging.set_verbosity_error()
    models = {}
    for implementation in ("eager", "sdpa"):
        theirs = transformers.BertConfig(
            vocab_size=config.vocab_size, hidden_size=config.hidden_size, num_hidden_layers=config.num_hidden_layers,
            num_attention_heads=config.num_attention_heads, intermediate_size=config.intermediate_size,
            hidden_act=config.hidden_act, max_position_embeddings=config.max_position_embeddings,
            type_vocab_size=config.type_vocab_size, layer_norm_eps=config.layer_norm_eps,
            pad_token_id=config.pad_token_id,
        )
        theirs._attn_implementation = implementation
        model = transformers.BertModel(theirs).eval()
        model.load_state_dict(state)
        models[f"transformers {implementation}"] = model.to(dtype).requires_grad_(False)
    return models


def _hf_call(model: nn.Module) -> Call:
    return lambda ids, mask: model(input_ids=ids, attention_mask=mask).last_hidden_state


class NestedTensorEncoder(nn.Module):
    """BERT's encoder as PyTorch's ``nn.TransformerEncoder`` (post-LN, GELU), fed by
    mini_hf_bert's embeddings: in eval with a padding mask, its fast path runs nested
    tensors and skips padding (BetterTransformer's kernel).

    transformers: none
    """

    def __init__(self, model: BertModel) -> None:
        super().__init__()
        config = model.config
        self.embeddings = model.embeddings
        layer = nn.TransformerEncoderLayer(config.hidden_size, config.num_attention_heads, config.intermediate_size,
                                           dropout=0.0, activation="gelu", layer_norm_eps=config.layer_norm_eps,
                                           batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, config.num_hidden_layers, enable_nested_tensor=True)
        dtype = model.embeddings.word_embeddings.weight.dtype
        with torch.no_grad():
            for ours, theirs in zip(model.encoder.layer, self.encoder.layers):
                attention = ours.attention.self
                theirs.self_attn.in_proj_weight.copy_(torch.cat([attention.query.weight, attention.key.weight,
                                                                 attention.value.weight]))  # (3H, H)
                theirs.self_attn.in_proj_bias.copy_(torch.cat([attention.query.bias, attention.key.bias,
                                                               attention.value.bias]))  # (3H,)
                theirs.self_attn.out_proj.load_state_dict(ours.attention.output.dense.state_dict())
                theirs.norm1.load_state_dict(ours.attention.output.LayerNorm.state_dict())
                theirs.linear1.load_state_dict(ours.intermediate.dense.state_dict())
                theirs.linear2.load_state_dict(ours.output.dense.state_dict())
                theirs.norm2.load_state_dict(ours.output.LayerNorm.state_dict())
        self.encoder.to(dtype).eval()

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        hidden = self.embeddings(input_ids=ids)  # (B, T, H)
        out = self.encoder(hidden, src_key_padding_mask=mask == 0)  # (B, T, H), padding rows 0
        return out


def _onnx_call(model: BertModel, ids: torch.Tensor, mask: torch.Tensor, directory: str) -> Call | None:
    try:
        import onnxruntime
    except ImportError:
        return None
    model.config.attn_implementation = "sdpa"
    path = os.path.join(directory, f"bert-{ids.shape[0]}x{ids.shape[1]}.onnx")
    logging.getLogger("torch.onnx").setLevel(logging.ERROR)
    program = torch.onnx.export(model, (), kwargs=dict(input_ids=ids, attention_mask=mask), dynamo=True,
                                verbose=False, output_names=["last_hidden_state", "pooler_output"])
    program.save(path)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = torch.get_num_threads()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = onnxruntime.InferenceSession(path, options, providers=["CPUExecutionProvider"])

    def call(ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        out = session.run(["last_hidden_state"], {"input_ids": ids.numpy(), "attention_mask": mask.numpy()})[0]
        return torch.from_numpy(out)
    return call


def _compiled_call(model: nn.Module, freezing: bool = False) -> Call:
    """torch.compile (inductor) for this one shape; ``freezing``: weights become constants,
    pre-packed for oneDNN / MKL at compile time (inductor's CPU inference route)."""
    import torch._inductor.config as inductor_config

    compiled = torch.compile(model, dynamic=False)

    def call(ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        with inductor_config.patch(freezing=freezing):  # read when the first call compiles
            return compiled(input_ids=ids, attention_mask=mask).last_hidden_state
    return call


# --------------------------------------------------------------------------------------
# The run
# --------------------------------------------------------------------------------------


def run_benchmark(workloads: tuple[str, ...] = tuple(WORKLOADS), dtypes: tuple[str, ...] = tuple(DTYPES),
                  runs: int = RUNS, config: BertConfig | None = None, ablations: bool = True,
                  peers: tuple[str, ...] = PEERS,
                  first_output: bool = True, accuracy: bool = True,
                  progress: Callable[[str], None] | None = None) -> Report:
    """Time every contender (see the module docstring) and return the report.

    Args:
        workloads / dtypes: names from WORKLOADS / DTYPES.
        runs: timed calls per contender and case (the median is kept).
        config: the model's shape (default bert-base); weights are seeded, not trained.
        ablations: also time the fast path with each optimisation off.
        peers: names from PEERS to run, each only when its package is installed.
        first_output: also time fresh processes (import + load + first output).
        accuracy: also measure bf16 and int8 against fp32 on the real checkpoint (compiled
            modes with the "compile" peers).
        progress: called with a line before each case.

    transformers: none
    """
    check_cases(workloads, dtypes, DTYPES, runs)
    for name in peers:
        if name not in PEERS:
            raise ValueError(f"peer {name!r} is not one of {PEERS}")
    config = config or BertConfig(**BERT_BASE)
    state, inputs, references = seeded_reference(config, workloads)  # the fp32 outputs every max|diff| is taken against
    timings: list[Timing] = []
    rooflines: dict[tuple[str, str], tuple[float, float]] = {}
    extra_memory: dict[str, int] = {}
    notes: list[str] = []
    slowdown = cpu_capability.warn_if_bf16_is_slow("the benchmark") if "bf16" in dtypes else None
    if slowdown:
        notes.append(f"bf16 is emulated on this CPU ({cpu_capability.cpu_kind()}): a bf16 product measured "
                     f"{slowdown:.1f}x slower than fp32's (cpu_capability.bf16_slowdown).")
    with tempfile.TemporaryDirectory() as scratch, warnings.catch_warnings():
        # The peers' own notices (nested tensors are a "prototype"; the ONNX exporter's
        # deprecations) say nothing about the timings.
        warnings.filterwarnings("ignore", message=".*nested tensors is in prototype.*")
        warnings.filterwarnings("ignore", category=FutureWarning)
        warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)  # OpenVINO's converter traces
        warnings.filterwarnings("ignore", message=".*torch.jit.*deprecated.*", category=DeprecationWarning)
        converted, ctranslate2_dir = _convert_engines(config, state, inputs, peers, scratch, notes)
        for dtype_name in dtypes:
            dtype = DTYPES[dtype_name]
            ours = BertModel(dataclasses.replace(config, attn_implementation="fast"))
            ours.load_state_dict(state)
            ours = ours.to(dtype).eval().requires_grad_(False)
            extra_memory[dtype_name] = modeling_bert_fast.fast_weights_nbytes(ours)
            theirs = _transformers_models(config, state, dtype) if "transformers" in peers else {}
            for workload_name in workloads:
                workload = WORKLOADS[workload_name]
                if progress:
                    progress(f"{workload.describe()}, {dtype_name}")
                ids, mask = inputs[workload_name]
                contenders: dict[str, Call] = {"mini_hf_bert fast": _ours(ours, "fast"),
                                               "mini_hf_bert sdpa": _ours(ours, "sdpa")}
                if dtype == torch.float32 and modeling_bert_fast.int8_available(dtype, ids.device):
                    contenders[INT8] = _ours(ours, "fast", route="int8")
                if ablations:
                    for option, (off, label) in ABLATIONS.items():
                        if option == "route" and str(modeling_bert_fast.fast_weights(ours).routes) == off:
                            continue  # already the route in force
                        if option == "fp32_stream" and dtype == torch.float32:
                            continue  # the stream is fp32 already
                        contenders[label] = _ours(ours, "fast", **{option: off})
                for name, model in theirs.items():
                    contenders[name] = _hf_call(model)
                if "compile" in peers and "transformers sdpa" in theirs:
                    contenders["torch.compile (transformers sdpa)"] = _compiled_call(theirs["transformers sdpa"])
                if "compile" in peers:
                    torch._dynamo.reset()  # each case compiles afresh: no recompilation limits across shapes
                    contenders[COMPILED] = _ours(ours, "fast", compile=True)
                    if INT8 in contenders:
                        contenders[INT8_COMPILED] = _ours(ours, "fast", route="int8", compile=True)
                    sdpa_twin = BertModel(dataclasses.replace(config, attn_implementation="sdpa"))
                    sdpa_twin.load_state_dict(state)
                    contenders["torch.compile + freezing (mini_hf_bert sdpa)"] = _compiled_call(
                        sdpa_twin.to(dtype).eval().requires_grad_(False), freezing=True)
                if "onnxruntime" in peers and dtype == torch.float32:
                    try:
                        onnx_call = _onnx_call(ours, ids, mask, scratch)
                    except Exception as error:  # the exporter's failure is a result, not a crash
                        notes.append(f"ONNX export failed on {workload_name}: {type(error).__name__}")
                        onnx_call = None
                    if onnx_call is not None:
                        contenders["ONNX Runtime"] = onnx_call
                if converted is not None and dtype_name in engines.OPENVINO_PRECISIONS:
                    try:
                        contenders["OpenVINO"] = engines.openvino_call(converted, dtype_name, torch.get_num_threads())
                    except Exception as error:  # a peer's failure is a result, not a crash
                        notes.append(f"OpenVINO did not compile for {dtype_name}: {type(error).__name__}: {error}")
                if "nested" in peers:
                    contenders["nn.TransformerEncoder (nested tensors)"] = NestedTensorEncoder(ours)
                reference = references[workload_name]
                with torch.inference_mode():
                    timings += _time_case(contenders, ids, mask, reference, workload, dtype_name, runs, notes)
                if ctranslate2_dir is not None and dtype == torch.float32:
                    timings += _ctranslate2_timings(ctranslate2_dir, ids, mask, reference, workload, runs, scratch,
                                                    timings, notes)
                rate = gemm_rate(config, workload.real_tokens, dtype)
                rooflines[(workload_name, dtype_name)] = (gemm_flops(config, workload.lengths) / rate / 1e6, rate)
            if dtype == torch.bfloat16 and "onnxruntime" in peers:
                notes.append("ONNX Runtime runs fp32 only here: its CPU provider has no bf16 kernels for "
                             "MatMul and LayerNorm, so a bf16 graph would time casts, not bf16 math.")
            if dtype == torch.bfloat16 and ctranslate2_dir is not None:
                notes.append("CTranslate2 runs fp32 and int8 here: its CPU backend has no bf16 compute type.")
    first = first_output_seconds() if first_output else {}
    measured_accuracy = []
    if accuracy:
        if progress:
            progress("bf16 and int8 against fp32 on all-MiniLM-L6-v2")
        try:
            measured_accuracy = real_checkpoint_accuracy(compile_modes="compile" in peers)
        except FileNotFoundError as error:  # the checkpoint's package is not installed
            notes.append(f"No accuracy on the real checkpoint: {error}")
    int8_problem = modeling_bert_fast.int8_unavailable(torch.float32, torch.device("cpu"))
    if int8_problem and "fp32" in dtypes:
        notes.append(f"The fast path's int8 rows are left out: {int8_problem}.")
    routes = [route_record(m) for m in modeling_bert_fast.route_measurements()]
    return Report(machine_description(), timings, rooflines, extra_memory, first, notes, measured_accuracy,
                  cpu_capability.cpu_kind(), routes, weight_values(config), read_rate(weight_values(config)))


def _time_case(contenders: dict[str, Call], ids: torch.Tensor, mask: torch.Tensor, reference: torch.Tensor,
               workload: Workload, dtype_name: str, runs: int, notes: list[str]) -> list[Timing]:
    outputs = {}
    for name, call in list(contenders.items()):
        try:
            for _ in range(WARMUP):
                outputs[name] = call(ids, mask)
        except Exception as error:  # a peer that cannot run this case (a compiler, an exporter): say so, go on
            notes.append(f"{name} did not run on {workload.name} {dtype_name}: {type(error).__name__}: "
                         f"{str(error).splitlines()[0][:200] if str(error) else ''}")
            del contenders[name]
    names = list(contenders)
    # alternate, rotating the order: a slow moment of the machine hits all alike
    times = time_alternating({name: (lambda call=contenders[name]: call(ids, mask)) for name in names}, runs)
    result = [_timing(name, times[name], outputs[name], ids, mask, reference, workload, dtype_name) for name in names]
    baseline = next((t.ms for t in result if t.contender == BASELINE), None)
    for timing in result:
        timing.ratio = None if baseline is None else baseline / timing.ms
    return result


def _timing(name: str, seconds: list[float], output: torch.Tensor, ids: torch.Tensor, mask: torch.Tensor,
            reference: torch.Tensor, workload: Workload, dtype_name: str) -> Timing:
    real = mask.bool()
    ms = 1000 * statistics.median(seconds)
    diff = float((output[real].float() - reference[real].float()).abs().max())
    return Timing(name, workload.name, dtype_name, ms, workload.real_tokens / (ms / 1000), diff)


#: The fast path compiled for the case's shape (option compile; with the "compile" peers).
COMPILED = "mini_hf_bert fast, compiled"
#: The fast path's int8 rows (fp32 cases): route "int8", dynamic quantization; compiled too.
INT8 = "mini_hf_bert fast, int8 (per-token dynamic)"
INT8_COMPILED = "mini_hf_bert fast, int8, compiled"


def _convert_engines(config: BertConfig, state: dict, inputs: dict, peers: tuple[str, ...], scratch: str,
                     notes: list[str]) -> tuple[object | None, str | None]:
    """OpenVINO's converted model and CTranslate2's converted directory, each None when
    not asked for, not installed, or failed (with a note)."""
    converted, ctranslate2_dir = None, None
    fp32 = BertModel(dataclasses.replace(config, attn_implementation="sdpa"))
    fp32.load_state_dict(state)
    fp32 = fp32.eval().requires_grad_(False)
    if "openvino" in peers:
        try:
            converted = engines.openvino_model(fp32, next(iter(inputs.values())))
        except Exception as error:
            notes.append(f"OpenVINO's converter failed: {type(error).__name__}: {error}")
        if converted is None and not any(n.startswith("OpenVINO") for n in notes):
            notes.append("OpenVINO is not installed (pip install 'mini_hf_bert[bench]').")
    if "ctranslate2" in peers:
        if not engines.ctranslate2_available():
            notes.append("CTranslate2 is not installed (pip install 'mini_hf_bert[bench]').")
        else:
            try:
                ctranslate2_dir = engines.ctranslate2_convert(fp32, scratch)
            except Exception as error:
                notes.append(f"CTranslate2's converter failed: {type(error).__name__}: {error}")
    return converted, ctranslate2_dir


def _ctranslate2_timings(converted: str, ids: torch.Tensor, mask: torch.Tensor, reference: torch.Tensor,
                         workload: Workload, runs: int, scratch: str, so_far: list[Timing],
                         notes: list[str]) -> list[Timing]:
    """CTranslate2 in fp32 and int8, timed in its worker after the in-process contenders."""
    baseline = next((t.ms for t in so_far if (t.contender, t.workload, t.dtype) == (BASELINE, workload.name, "fp32")),
                    None)
    result = []
    for compute_type in engines.CTRANSLATE2_COMPUTE_TYPES:
        try:
            seconds, output = engines.ctranslate2_time(converted, ids, mask, compute_type, torch.get_num_threads(),
                                                       runs, WARMUP, SETTLE_S, scratch)
        except Exception as error:
            notes.append(f"CTranslate2 {compute_type} did not run on {workload.name}: {type(error).__name__}: {error}")
            continue
        name = "CTranslate2" if compute_type == "fp32" else f"CTranslate2, {compute_type}"
        timing = _timing(name, seconds, output, ids, mask, reference, workload, "fp32")
        timing.ratio = None if baseline is None else baseline / timing.ms
        result.append(timing)
    return result


#: The low-precision modes measured on the real checkpoint: label -> (dtype, implementation,
#: fast-path options).
ACCURACY_MODES = {
    "bf16, transformers-style (eager)": (torch.bfloat16, "eager", {}),
    "bf16, fast, residual stream and LayerNorm in bf16": (torch.bfloat16, "fast", {"fp32_stream": False}),
    "bf16, fast (residual stream and LayerNorm in fp32)": (torch.bfloat16, "fast", {}),
    "int8, fast (per-token dynamic)": (torch.float32, "fast", {"route": "int8"}),
    "int8, fast, compiled": (torch.float32, "fast", {"route": "int8", "compile": True}),
}


def real_checkpoint_accuracy(checkpoint: str | None = None, compile_modes: bool = True) -> list[Accuracy]:
    """Each mode of ACCURACY_MODES against fp32 on all-MiniLM-L6-v2 (or ``checkpoint``),
    on the demo's sentences: token states and mean-pooled sentence embeddings. The int8
    modes are left out where route "int8" does not run (``modeling_bert_fast.int8_unavailable``).

    transformers: none
    """
    from mini_hf_bert.checkpoints.bundled import DEFAULT_SENTENCES, default_checkpoint_dir
    from mini_hf_bert.checkpoints.convert import load_tokenizer
    from mini_hf_bert.pipelines.sentence_embeddings import encode_sentences

    directory = checkpoint or default_checkpoint_dir()
    tokenizer = load_tokenizer(directory)
    sentences = list(DEFAULT_SENTENCES)
    batch = tokenizer(sentences, padding=True, return_tensors="pt")
    real = batch["attention_mask"].bool()  # (S, T)

    def ranking(embeddings: torch.Tensor) -> torch.Tensor:
        return (embeddings @ embeddings.T).argsort(dim=1, descending=True)  # (S, S)

    models = {}  # dtype -> the checkpoint in it (a round trip through bf16 would round the fp32 weights)
    for dtype in {torch.float32} | {dtype for dtype, _, _ in ACCURACY_MODES.values()}:
        model = BertModel.from_pretrained(directory, attn_implementation="eager").eval().requires_grad_(False)
        models[dtype] = model.to(dtype)
    with torch.inference_mode():
        tokens = models[torch.float32](**batch).last_hidden_state[real]  # (M, H)
        sentences_fp32 = encode_sentences(models[torch.float32], tokenizer, sentences)  # (S, H)
    result = []
    for mode, (dtype, implementation, options) in ACCURACY_MODES.items():
        if options.get("compile") and not compile_modes:
            continue
        if options.get("route") == "int8" and not modeling_bert_fast.int8_available(dtype, torch.device("cpu")):
            continue  # the default route would run: fp32's result, not int8's
        model = models[dtype]
        model.config.attn_implementation = implementation
        with torch.inference_mode(), modeling_bert_fast.using_options(**options):
            states = model(**batch).last_hidden_state[real].float()  # (M, H)
            embeddings = encode_sentences(model, tokenizer, sentences).float()  # (S, H)
        result.append(Accuracy(
            mode, float((states - tokens).abs().max()), rms_diff(states, tokens),
            float(torch.nn.functional.cosine_similarity(states, tokens, dim=-1).min()),
            float((embeddings * sentences_fp32).sum(dim=-1).min()),
            bool(torch.equal(ranking(embeddings), ranking(sentences_fp32))),
        ))
    return result


FIRST_OUTPUT_SCRIPTS = {
    "import torch": "import torch",
    "mini_hf_bert fast: import + load + first output": (
        "import torch\nfrom mini_hf_bert import BertModel\nfrom mini_hf_bert.checkpoints.bundled import default_checkpoint_dir\n"
        "model = BertModel.from_pretrained(default_checkpoint_dir(), attn_implementation='fast')\n"
        "with torch.inference_mode():\n    model(torch.tensor([[101, 7592, 2088, 102]]))\n"),
    "transformers sdpa: import + load + first output": (
        "import torch, transformers\nfrom mini_hf_bert.checkpoints.bundled import default_checkpoint_dir\n"
        "transformers.utils.logging.set_verbosity_error()\n"
        "model = transformers.BertModel.from_pretrained(default_checkpoint_dir(), attn_implementation='sdpa')\n"
        "with torch.inference_mode():\n    model(torch.tensor([[101, 7592, 2088, 102]]))\n"),
}
FIRST_OUTPUT_REPEATS = 5


def first_output_seconds(repeats: int = FIRST_OUTPUT_REPEATS) -> dict[str, float]:
    """Median wall time of fresh Python processes: a bare ``import torch``, and import +
    load of the packaged all-MiniLM-L6-v2 checkpoint + one output, ours and transformers'
    (each alternated, as the in-process timings).

    transformers: none
    """
    times: dict[str, list[float]] = {name: [] for name in FIRST_OUTPUT_SCRIPTS}
    for _ in range(repeats):
        for name, script in FIRST_OUTPUT_SCRIPTS.items():
            start = time.perf_counter()
            done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
            elapsed = time.perf_counter() - start
            if done.returncode != 0:
                logger.warning("fresh-process timing %r failed: %s", name, done.stderr.strip().splitlines()[-1:])
                times.pop(name, None)
                continue
            if name in times:
                times[name].append(elapsed)
    return {name: statistics.median(values) for name, values in times.items() if values}


def format_report(report: Report) -> str:
    """The report as Markdown tables (what the CLI prints and docs/performance.md holds).

    transformers: none
    """
    lines = [f"Machine: {report.machine}", ""]
    cases = list(dict.fromkeys((t.workload, t.dtype) for t in report.timings))
    for workload_name, dtype_name in cases:
        workload = WORKLOADS[workload_name]
        roofline_ms, rate = report.rooflines[(workload_name, dtype_name)]
        # A few-token call reads every weight once: its rate of reading them is its measure.
        streaming = report.weight_values and workload.real_tokens <= modeling_bert_fast.FEW_ROWS
        lines.append(f"### {workload.describe()}, {dtype_name}")
        lines.append("")
        if report.cpu_kind:
            lines.append(f"CPU kind: {report.cpu_kind}.")
            lines.append("")
        lines.append(f"GEMM roofline on the real tokens: {roofline_ms:.1f} ms (at {rate:.0f} GFLOP/s, the best "
                     f"rate measured here for the (tokens, H) x (H, I) product).")
        lines.append("")
        extra = " weights read, GB/s |" if streaming else ""
        lines.append(f"| contender | ms | real tokens/s | vs {BASELINE} | max abs diff vs fp32 |{extra}")
        lines.append("|---|---:|---:|---:|---:|" + ("---:|" if streaming else ""))
        for t in report.timings:
            if (t.workload, t.dtype) != (workload_name, dtype_name):
                continue
            ratio = "" if t.ratio is None else f"{t.ratio:.2f}x"
            diff = "" if t.max_diff is None else f"{t.max_diff:.1e}"
            rate_read = f" {weight_bytes(report, t) / (t.ms / 1000) / 1e9:.1f} |" if streaming else ""
            lines.append(f"| {t.contender} | {t.ms:.1f} | {t.tokens_per_s:,.0f} | {ratio} | {diff} |{rate_read}")
        lines.append("")
        if streaming and report.read_rate:
            lines.append(f"This machine reads memory at {report.read_rate:.1f} GB/s (a sum over as many fp32 values as "
                         f"the encoder's weights, the run's threads): the ceiling of the last column for fp32.")
            lines.append("")
    if report.routes:
        lines.append(f"### The fast path's product routes, as measured here (few rows: at most "
                     f"{modeling_bert_fast.FEW_ROWS}, timed at {modeling_bert_fast.PROBE_ROWS['few']}; many: timed at "
                     f"{modeling_bert_fast.PROBE_ROWS['many']})")
        lines.append("")
        lines.append("| dtype | product | few rows: F.linear / oneDNN ms | chosen | many rows: F.linear / oneDNN ms "
                     "| chosen | measuring took |")
        lines.append("|---|---|---:|---|---:|---|---:|")
        for r in report.routes:
            def pair(name: str) -> str:
                return " / ".join(f"{r['ms'][f'{name}/{route}']:.3f}" if f"{name}/{route}" in r["ms"] else "-"
                                  for route in ("aten", "onednn"))
            lines.append(f"| {r['dtype']} | {r['shape'][0]} -> {r['shape'][1]} | {pair('few')} | {r['few']} | "
                         f"{pair('many')} | {r['many']} | {1000 * r['seconds']:.0f} ms |")
        lines.append("")
        for r in report.routes:
            for route, why in r["unavailable"].items():
                lines.append(f"Route {route} cannot run {r['dtype']} here: {why}")
                lines.append("")
    if report.extra_memory:
        lines.append("Extra memory of the fast path (derived weights, beyond the parameters): " + ", ".join(
            f"{name} {nbytes / 2**20:.0f} MiB" for name, nbytes in report.extra_memory.items()) + ".")
        lines.append("")
    if report.accuracy:
        lines.append("### Low precision against fp32 on the real checkpoint (all-MiniLM-L6-v2, the demo's sentences)")
        lines.append("")
        lines.append("| mode | max abs diff (tokens) | RMS diff (tokens) | least token cosine | least sentence cosine "
                     "| ranking kept |")
        lines.append("|---|---:|---:|---:|---:|---|")
        for a in report.accuracy:
            lines.append(f"| {a.mode} | {a.max_diff:.1e} | {a.rms_diff:.1e} | {a.min_token_cosine:.4f} | "
                         f"{a.min_sentence_cosine:.4f} | {'yes' if a.ranking_kept else 'no'} |")
        lines.append("")
    if report.first_output:
        lines.append("| fresh process (median of %d) | seconds |" % FIRST_OUTPUT_REPEATS)
        lines.append("|---|---:|")
        for name, seconds in report.first_output.items():
            lines.append(f"| {name} | {seconds:.2f} |")
        lines.append("")
    for note in report.notes:
        lines.append(note)
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"
