"""Inference speed on a CUDA GPU: the fast path against transformers' sdpa and eager.

``python -m mini_hf_bert benchmark --device cuda`` times the workloads of inference.py
(W1 8 x 128 padded, W2 1 x 16, W3 4 x 512 padded, W4, W5) on the same seeded bert-base
weights, in fp16, bf16 and fp32, with the contenders alternating run by run and the median
kept. A GPU runs a call's kernels while Python goes on queuing more, so each timed call
starts and ends with ``torch.cuda.synchronize()``: the time is the whole call, host and
device, as a user waiting for the output sees it. Every output is compared, on real
tokens, with the fp32 reference on the same GPU (mini_hf_bert's eager model, TF32 off).
The warm-up calls (GPU_WARMUP) include the fast path's capture of the shape's CUDA graph.

The CPU's engines (ONNX Runtime, OpenVINO, CTranslate2), the int8 route and the roofline
are CPU measurements, and are left to inference.py. The rows with one option of the fast
path off say what each buys on a GPU.

transformers: none
"""

from __future__ import annotations

import dataclasses
import platform
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch

from mini_hf_bert import modeling_bert_fast
from mini_hf_bert.configuration_bert import BertConfig
from mini_hf_bert.modeling_bert import BertModel
from .inference import (BASELINE, BERT_BASE, WORKLOADS, Call, Timing, Workload, _hf_call, _ours, _timing,
                        _transformers_models, check_cases, make_inputs)

#: The dtypes a GPU runs BERT in; fp16 first, the usual choice for inference there.
GPU_DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}
#: Timed calls per contender (the median is kept) and untimed calls before them.
GPU_RUNS, GPU_WARMUP = 30, 3
#: Fast-path options, each changed from its default in one row: option -> (value, row label).
GPU_ABLATIONS = {
    "cuda_graphs": (False, "fast, no CUDA graphs (each kernel queued by Python)"),
    "varlen_attention": (False, "fast, one SDPA call per run of lengths (no varlen)"),
    "unpad": (False, "fast, padded rows (no unpadding)"),
}


@dataclass
class GpuReport:
    """Everything one GPU benchmark run measured.

    transformers: none
    """

    machine: str  # the GPU, torch and its CUDA, Python
    timings: list[Timing]
    peak_memory: dict[str, int]  # "contender / workload / dtype" -> peak bytes allocated during its calls
    notes: list[str] = dataclasses.field(default_factory=list)


def gpu_description(device: torch.device) -> str:
    """The GPU, its memory, torch and CUDA: where the timings hold.

    transformers: none
    """
    properties = torch.cuda.get_device_properties(device)
    try:
        import transformers
        peers = f", transformers {transformers.__version__}"
    except ImportError:
        peers = ""
    return (f"{properties.name}, {properties.total_memory / 2**30:.0f} GiB, {properties.multi_processor_count} SMs; "
            f"torch {torch.__version__} (CUDA {torch.version.cuda}){peers}, Python {platform.python_version()}")


def _synchronized(call: Call, device: torch.device) -> Callable[[torch.Tensor, torch.Tensor], float]:
    """``call`` as a timed function: seconds from an idle GPU to its output being ready."""
    def timed(ids: torch.Tensor, mask: torch.Tensor) -> float:
        torch.cuda.synchronize(device)
        start = time.perf_counter()
        call(ids, mask)
        torch.cuda.synchronize(device)
        return time.perf_counter() - start
    return timed


def run_gpu_benchmark(workloads: tuple[str, ...] = tuple(WORKLOADS), dtypes: tuple[str, ...] = tuple(GPU_DTYPES),
                      runs: int = GPU_RUNS, config: BertConfig | None = None, ablations: bool = True,
                      transformers_peers: bool = True, device: str = "cuda",
                      progress: Callable[[str], None] | None = None) -> GpuReport:
    """Time every contender (see the module docstring) on ``device`` and return the report.

    Args:
        workloads / dtypes: names from benchmark.WORKLOADS / GPU_DTYPES.
        runs: timed calls per contender and case (the median is kept).
        config: the model's shape (default bert-base); weights are seeded, not trained.
        ablations: also time the fast path with each of GPU_ABLATIONS off.
        transformers_peers: also time transformers' eager and sdpa models (when installed).
        device: a CUDA device.
        progress: called with a line before each case.

    transformers: none
    """
    check_cases(workloads, dtypes, GPU_DTYPES, runs)
    if not device.startswith("cuda"):
        raise ValueError(f"--device {device}: the GPU benchmark runs on cuda or cuda:N (the CPU's: --device cpu)")
    if not torch.cuda.is_available():
        raise RuntimeError(f"--device {device}: torch {torch.__version__} sees no CUDA GPU "
                           f"({'built without CUDA' if torch.version.cuda is None else 'no device found'})")
    try:
        target = torch.device(device)
        torch.cuda.get_device_properties(target)
    except (RuntimeError, AssertionError) as error:  # "cuda:x", or an index past the GPUs there are
        raise ValueError(f"--device {device}: {error} ({torch.cuda.device_count()} CUDA GPUs here)") from None
    config = config or BertConfig(**BERT_BASE)
    torch.manual_seed(0)
    base = BertModel(dataclasses.replace(config, attn_implementation="eager")).eval().requires_grad_(False)
    state = base.state_dict()
    base = base.to(target)
    inputs = {name: tuple(t.to(target) for t in make_inputs(WORKLOADS[name], config.vocab_size))
              for name in workloads}
    with torch.inference_mode():  # the fp32 reference every max|diff| is taken against
        references = {name: base(ids, attention_mask=mask).last_hidden_state for name, (ids, mask) in inputs.items()}
    del base
    timings: list[Timing] = []
    peak_memory: dict[str, int] = {}
    notes: list[str] = []
    if modeling_bert_fast.varlen_kernel() is None:
        notes.append(f"torch {torch.__version__} has no torch.nn.attention.varlen: the fast path attends with one "
                     f"SDPA call per run of lengths.")
    for dtype_name in dtypes:
        dtype = GPU_DTYPES[dtype_name]
        ours = BertModel(dataclasses.replace(config, attn_implementation="fast"))
        ours.load_state_dict(state)
        ours = ours.to(target, dtype).eval().requires_grad_(False)
        theirs = {name: model.to(target) for name, model in
                  (_transformers_models(config, state, dtype) if transformers_peers else {}).items()}
        for workload_name in workloads:
            workload = WORKLOADS[workload_name]
            if progress:
                progress(f"{workload.describe()}, {dtype_name}, {target}")
            ids, mask = inputs[workload_name]
            contenders: dict[str, Call] = {"mini_hf_bert fast": _ours(ours, "fast"),
                                           "mini_hf_bert sdpa": _ours(ours, "sdpa")}
            if ablations:
                for option, (off, label) in GPU_ABLATIONS.items():
                    contenders[label] = _ours(ours, "fast", **{option: off})
            for name, model in theirs.items():
                contenders[name] = _hf_call(model)
            with torch.inference_mode():
                timings += _time_gpu_case(contenders, ids, mask, references[workload_name], workload, dtype_name,
                                          runs, target, peak_memory, notes)
        del ours, theirs
        torch.cuda.empty_cache()
    return GpuReport(gpu_description(target), timings, peak_memory, notes)


def _time_gpu_case(contenders: dict[str, Call], ids: torch.Tensor, mask: torch.Tensor, reference: torch.Tensor,
                   workload: Workload, dtype_name: str, runs: int, device: torch.device,
                   peak_memory: dict[str, int], notes: list[str]) -> list[Timing]:
    outputs = {}
    for name, call in list(contenders.items()):
        torch.cuda.synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)
        before = torch.cuda.memory_allocated(device)
        try:
            for _ in range(GPU_WARMUP):
                outputs[name] = call(ids, mask)
            torch.cuda.synchronize(device)
        except Exception as error:  # a contender that cannot run this case: say so, go on
            notes.append(f"{name} did not run on {workload.name} {dtype_name}: {type(error).__name__}: "
                         f"{str(error).splitlines()[0][:200] if str(error) else ''}")
            del contenders[name]
            continue
        peak_memory[f"{name} / {workload.name} / {dtype_name}"] = torch.cuda.max_memory_allocated(device) - before
    timed = {name: _synchronized(call, device) for name, call in contenders.items()}
    names = list(contenders)
    seconds: dict[str, list[float]] = {name: [] for name in names}
    for run in range(runs):  # alternate, rotating the order, as inference.py does
        for name in names[run % len(names):] + names[: run % len(names)]:
            seconds[name].append(timed[name](ids, mask))
    cpu_mask = mask.cpu()
    result = [_timing(name, seconds[name], outputs[name].cpu(), ids, cpu_mask, reference.cpu(), workload, dtype_name)
              for name in names]
    baseline = next((t.ms for t in result if t.contender == BASELINE), None)
    for timing in result:
        timing.ratio = None if baseline is None else baseline / timing.ms
    return result


def format_gpu_report(report: GpuReport) -> str:
    """The report as Markdown tables, one per case (what the CLI prints and
    docs/performance.md's GPU section holds).

    transformers: none
    """
    lines = [f"GPU: {report.machine}", ""]
    cases = list(dict.fromkeys((t.workload, t.dtype) for t in report.timings))
    for workload_name, dtype_name in cases:
        lines.append(f"### {WORKLOADS[workload_name].describe()}, {dtype_name}, GPU")
        lines.append("")
        lines.append(f"| contender | ms | real tokens/s | vs {BASELINE} | max abs diff vs fp32 | peak memory, MiB |")
        lines.append("|---|---:|---:|---:|---:|---:|")
        for t in report.timings:
            if (t.workload, t.dtype) != (workload_name, dtype_name):
                continue
            ratio = "" if t.ratio is None else f"{t.ratio:.2f}x"
            peak = report.peak_memory.get(f"{t.contender} / {t.workload} / {t.dtype}")
            memory = "" if peak is None else f"{peak / 2**20:.0f}"
            lines.append(f"| {t.contender} | {t.ms:.2f} | {t.tokens_per_s:,.0f} | {ratio} | {t.max_diff:.1e} | "
                         f"{memory} |")
        lines.append("")
    for note in report.notes:
        lines.append(note)
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def report_to_json(report: GpuReport) -> dict:
    """The report as JSON values (what docs/performance.json keeps under "gpu").

    transformers: none
    """
    return dict(machine=report.machine, timings=[dataclasses.asdict(t) for t in report.timings],
                peak_memory=report.peak_memory, notes=report.notes)


def report_from_json(values: dict) -> GpuReport:
    """``report_to_json``'s inverse.

    transformers: none
    """
    return GpuReport(values["machine"], [Timing(**t) for t in values["timings"]], values["peak_memory"],
                     values["notes"])
