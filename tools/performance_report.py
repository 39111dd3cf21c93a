"""Run the inference benchmark (benchmarks/mini_hf_bert_benchmarks/inference.py) and write docs/performance.md.

    .venv/bin/python tools/performance_report.py             # ~25 minutes on 2 cores
    .venv/bin/python tools/performance_report.py --runs 10
    .venv/bin/python tools/performance_report.py --render-only   # after editing the prose
    .venv/bin/python tools/performance_report.py --emulated-only # the AVX2 tables only (~10 minutes)
    .venv/bin/python tools/performance_report.py --first-output-only  # the fresh-process row only
    python3 tools/performance_report.py --gpu-part gpu.json      # on a machine with a CUDA GPU (~2 minutes)
    .venv/bin/python tools/performance_report.py --gpu-from gpu.json  # keep that run, render

The prose is docs/templates/performance.md; the tables come from one run of
``benchmark.run_benchmark`` (the same code ``python -m mini_hf_bert benchmark`` runs),
kept in docs/performance.json. A second run, in a process whose CPU kernels are held to
AVX2 (``EMULATION_ENV``), measures the AVX2 tables: one table per CPU kind. Each part records
its provenance (tools/provenance.py: commit, date, machine, command), which the page prints;
``tools/docs_status.py`` says when the code it measured has changed since.
The GPU section comes from ``benchmark_gpu.run_gpu_benchmark`` on a machine with a CUDA GPU
(``--gpu-part``), kept in docs/performance.json under "gpu" (``--gpu-from``).
Timings are checked by no test: they move by up to 2x between runs and machines.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from tools.provenance import render as render_provenance  # noqa: E402
from tools.templates import render as render_template  # noqa: E402

from mini_hf_bert.file_utils import write_text  # noqa: E402

DOC = os.path.join(ROOT, "docs", "performance.md")
#: What the measurements depend on (the rendering in this script does not: --render-only);
#: tools/docs_status.py lists the page when one of them changed since its recorded commit.
MEASURED_SOURCES = ("benchmarks/mini_hf_bert_benchmarks/inference.py", "mini_hf_bert/parity/speed.py",
                    "benchmarks/mini_hf_bert_benchmarks/engines.py",
                    "benchmarks/mini_hf_bert_benchmarks/ctranslate2_worker.py", "mini_hf_bert/modeling_bert_fast.py",
                    "mini_hf_bert/modeling_bert.py", "mini_hf_bert/integrations/sdpa_attention.py",
                    "mini_hf_bert/cpu_capability.py")

#: What the GPU section's measurements depend on.
GPU_MEASURED_SOURCES = ("benchmarks/mini_hf_bert_benchmarks/gpu.py", "benchmarks/mini_hf_bert_benchmarks/inference.py",
                        "mini_hf_bert/parity/speed.py",
                        "mini_hf_bert/modeling_bert_fast.py", "mini_hf_bert/modeling_bert.py",
                        "mini_hf_bert/integrations/sdpa_attention.py")
#: The GPU cases the target names (issue: "W1, W3, fp16/bf16"): the fast path at least level
#: with transformers sdpa there.
GPU_TARGET_CASES = tuple((w, d) for w in ("W1", "W3") for d in ("fp16", "bf16"))

TEMPLATE = os.path.join(ROOT, "docs", "templates", "performance.md")
MEASUREMENTS = os.path.join(ROOT, "docs", "performance.json")


def _provenance() -> dict:
    from tools import provenance

    return provenance.collect(sys.argv)


#: Targets against transformers sdpa: (workload, dtype, least ratio).
TARGETS = (("W1", "fp32", 1.8), ("W1", "bf16", 1.5), ("W2", "fp32", 2.0), ("W3", "fp32", 1.3), ("W3", "bf16", 1.3))
#: W1 bf16 within this factor of its GEMM roofline (and W1 fp32 within ENGINE_ROOFLINE_FACTOR);
#: fresh-process first output within this factor of a bare ``import torch``.
ROOFLINE_FACTOR, ENGINE_ROOFLINE_FACTOR, FIRST_OUTPUT_FACTOR = 1.3, 1.15, 1.2
#: The other engines, against which ours must be at least level (ratio >= 1.0).
ENGINES = ("ONNX Runtime", "OpenVINO", "CTranslate2")
FAST, COMPILED = "mini_hf_bert fast", "mini_hf_bert fast, compiled"
INT8, INT8_COMPILED, ENGINE_INT8 = ("mini_hf_bert fast, int8 (per-token dynamic)", "mini_hf_bert fast, int8, compiled",
                                    "CTranslate2, int8")


#: The switches that make this CPU run an AVX2 CPU's kernels: torch's, oneDNN's and MKL's
#: (cpu_capability.EMULATION_SWITCHES) and CTranslate2's. ONNX Runtime and OpenVINO have no
#: such switch: they run this CPU's own kernels in the emulated tables too.
EMULATION_ENV = {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2", "MKL_ENABLE_INSTRUCTIONS": "AVX2",
                 "CT2_FORCE_CPU_ISA": "AVX2"}
#: What the AVX2 run measures: the two cases the targets name, no compiling.
EMULATED_WORKLOADS, EMULATED_PEERS = ("W1", "W2"), ("transformers", "onnxruntime", "openvino", "ctranslate2")


def _by_case(measured: dict) -> dict:
    """(workload, dtype, contender) -> that timing."""
    return {(t["workload"], t["dtype"], t["contender"]): t for t in measured["timings"]}


def _met(ok: bool) -> str:
    return "yes" if ok else "no"


def _roofline_row(measured: dict, timing: dict, dtype: str, factor: float) -> str:
    """W1 in ``dtype`` against its GEMM roofline: within ``factor`` or not."""
    roofline_ms = measured["rooflines"][f"W1/{dtype}"][0]
    return (f"| W1 {dtype}: within {factor}x of its roofline ({roofline_ms:.0f} ms) | "
            f"{timing['ms'] / roofline_ms:.2f}x | {_met(timing['ms'] <= factor * roofline_ms)} |")


def _engine_rows(measured: dict, workloads: tuple[str, ...] | None = None) -> list[str]:
    """Ours against the best other engine per case, and int8 against CTranslate2's int8."""
    ratio = _by_case(measured)
    rows = []
    for workload in sorted(workloads or {t["workload"] for t in measured["timings"]}):
        for dtype in ("fp32", "bf16"):
            engines = [ratio[key] for key in ((workload, dtype, name) for name in ENGINES) if key in ratio]
            if not engines or (workload, dtype, FAST) not in ratio:
                continue
            best = min(engines, key=lambda t: t["ms"])
            ours_default = ratio[(workload, dtype, FAST)]
            compiled = ratio.get((workload, dtype, COMPILED), ours_default)
            ours_best = min((ours_default, compiled), key=lambda t: t["ms"])
            rows.append(f"| {workload} {dtype}: >= 1.0x the best other engine ({best['contender']}, "
                        f"{best['ms']:.1f} ms) | default {best['ms'] / ours_default['ms']:.2f}x, "
                        f"best of ours {best['ms'] / ours_best['ms']:.2f}x ({ours_best['contender']}) | "
                        f"{_met(best['ms'] >= ours_best['ms'])} |")
    for workload in ("W1", "W2"):
        engine_int8 = ratio.get((workload, "fp32", ENGINE_INT8))
        ours_int8 = [ratio[key] for key in ((workload, "fp32", INT8), (workload, "fp32", INT8_COMPILED)) if key in ratio]
        if engine_int8 and ours_int8:
            best = min(ours_int8, key=lambda t: t["ms"])
            rows.append(f"| {workload} int8: >= 1.0x CTranslate2 int8 ({engine_int8['ms']:.1f} ms) | "
                        f"{engine_int8['ms'] / best['ms']:.2f}x ({best['contender']}) | "
                        f"{_met(engine_int8['ms'] >= best['ms'])} |")
    return rows


def _slowest_row(measured: dict) -> str:
    slowest = min(t["ratio"] for t in measured["timings"] if t["contender"] == FAST)
    return f"| no workload or dtype below 1.0x transformers sdpa | slowest {slowest:.2f}x | {_met(slowest >= 1.0)} |"


def targets_table(measured: dict) -> str:
    """Each target beside what was measured: met or not."""
    ratio = _by_case(measured)
    rows = ["| target | measured | met |", "|---|---:|---|"]
    for workload, dtype, least in TARGETS:
        fast = ratio[(workload, dtype, FAST)]
        rows.append(f"| {workload} {dtype}: >= {least}x transformers sdpa | {fast['ratio']:.2f}x | "
                    f"{_met(fast['ratio'] >= least)} |")
    rows.append(_roofline_row(measured, ratio[("W1", "bf16", FAST)], "bf16", ROOFLINE_FACTOR))
    rows.append(_slowest_row(measured))
    first = measured["first_output"]
    torch_alone = first.get("import torch")
    ours = next((v for k, v in first.items() if k.startswith("mini_hf_bert")), None)
    if torch_alone and ours:
        rows.append(f"| fresh process, first output within {FIRST_OUTPUT_FACTOR}x of `import torch` | "
                    f"{ours / torch_alone:.2f}x | {_met(ours <= FIRST_OUTPUT_FACTOR * torch_alone)} |")
    # Against the other engines: ours by default, and the best of ours with compile asked for.
    rows += _engine_rows(measured)
    openvino = ratio.get(("W1", "bf16", "OpenVINO"))
    if openvino:
        ours_diff = ratio[("W1", "bf16", FAST)]["max_diff"]
        rows.append(f"| W1 bf16: max abs diff vs fp32 <= OpenVINO's ({openvino['max_diff']:.3f}) | {ours_diff:.3f} | "
                    f"{_met(ours_diff <= openvino['max_diff'])} |")
    rows.append(_roofline_row(measured, ratio[("W1", "fp32", FAST)], "fp32", ENGINE_ROOFLINE_FACTOR))
    return "\n".join(rows)


def compiled_table(measured: dict) -> str:
    """The compiled mode (option compile) against the uncompiled fast path, per case: where
    compiling paid on this CPU and where it did not (each a ratio of the two medians)."""
    ratio = _by_case(measured)
    rows = ["| case | uncompiled, ms | compiled, ms | compiled speed-up |", "|---|---:|---:|---:|"]
    pairs = (("fp32", FAST, COMPILED), ("bf16", FAST, COMPILED), ("fp32", INT8, INT8_COMPILED))
    for dtype, plain, compiled in pairs:
        for workload in sorted({t["workload"] for t in measured["timings"]}):
            if (workload, dtype, plain) in ratio and (workload, dtype, compiled) in ratio:
                before, after = ratio[(workload, dtype, plain)]["ms"], ratio[(workload, dtype, compiled)]["ms"]
                name = f"{workload} int8" if plain == INT8 else f"{workload} {dtype}"
                rows.append(f"| {name} | {before:.1f} | {after:.1f} | {before / after:.2f}x |")
    return "\n".join(rows) if len(rows) > 2 else "Not measured (the compiled modes run with the \"compile\" peers)."


def emulated_targets_table(measured: dict) -> str:
    """The AVX2 targets: W1 and W2 in fp32 at least level with the best other engine, and
    never slower than transformers sdpa."""
    rows = ["| target | measured | met |", "|---|---:|---|", _slowest_row(measured)]
    rows += [row for row in _engine_rows(measured, EMULATED_WORKLOADS) if " fp32: " in row or " int8: " in row]
    return "\n".join(rows)


def gpu_targets_table(gpu: dict) -> str:
    """The fast path against transformers sdpa on the GPU: each case of the run, the ones
    the target names marked."""
    from mini_hf_bert_benchmarks import gpu as benchmark_gpu

    report = benchmark_gpu.report_from_json(gpu)
    ms = {(t.contender, t.workload, t.dtype): t.ms for t in report.timings}
    lines = ["| case | fast ms | transformers sdpa ms | ratio | target | met |", "|---|---:|---:|---:|---|---|"]
    for t in report.timings:
        if t.contender != FAST or t.ratio is None:
            continue
        named = (t.workload, t.dtype) in GPU_TARGET_CASES
        lines.append(f"| {t.workload} {t.dtype} | {t.ms:.2f} | {ms[('transformers sdpa', t.workload, t.dtype)]:.2f} | "
                     f"{t.ratio:.2f}x | {'≥ 1.0' if named else '-'} | {_met(t.ratio >= 1.0) if named else '-'} |")
    return "\n".join(lines)


#: What a --gpu-part file holds: the report (benchmark_gpu.report_to_json) and how it was made.
GPU_PART_KEYS = {"machine", "timings", "peak_memory", "notes", "provenance", "runs", "minutes"}


def read_gpu_part(path: str) -> dict:
    """A --gpu-part file, checked before it joins docs/performance.json: a regular file of
    bounded size (file_utils.read_json), JSON with the part's keys, whose report loads.
    Raises ValueError naming the file and the problem."""
    from mini_hf_bert.file_utils import read_json
    from mini_hf_bert_benchmarks import gpu as benchmark_gpu

    part = read_json(path, ValueError, "GPU benchmark part (--gpu-part's JSON)")
    if not isinstance(part, dict) or not GPU_PART_KEYS <= part.keys():
        found = sorted(part) if isinstance(part, dict) else type(part).__name__
        raise ValueError(f"{path}: not a GPU benchmark part (--gpu-part's JSON): it needs the keys "
                         f"{sorted(GPU_PART_KEYS)}, found {found}")
    try:
        benchmark_gpu.report_from_json(part)
    except (TypeError, KeyError, ValueError) as error:
        raise ValueError(f"{path}: its timings do not load ({type(error).__name__}: {error})") from None
    return part


def refuse_a_doc_as_output(path: str) -> None:
    """A part file (--gpu-part, --emulated-part) must not be one of the files this tool
    reads: writing it there would replace the measurements it is meant to join."""
    for kept in (MEASUREMENTS, DOC, TEMPLATE):
        if os.path.exists(path) and os.path.samefile(path, kept):
            raise ValueError(f"{path}: is {os.path.relpath(kept, ROOT)}, which this tool reads; "
                             f"write the part to a file of its own")


def measure_gpu(runs: int | None) -> dict:
    """The GPU run as performance.json keeps it under "gpu" (on the first CUDA device)."""
    from mini_hf_bert_benchmarks import gpu as benchmark_gpu

    start = time.perf_counter()
    report = benchmark_gpu.run_gpu_benchmark(
        runs=runs or benchmark_gpu.GPU_RUNS,
        progress=lambda line: print(f"timing {line} ...", file=sys.stderr, flush=True))
    return dict(benchmark_gpu.report_to_json(report), provenance=_provenance(),
                runs=runs or benchmark_gpu.GPU_RUNS, minutes=round((time.perf_counter() - start) / 60, 1))


def _report(measured: dict):
    from mini_hf_bert_benchmarks import inference as benchmark

    return benchmark.Report(
        machine=measured["machine"],
        timings=[benchmark.Timing(**t) for t in measured["timings"]],
        rooflines={tuple(k.split("/")): tuple(v) for k, v in measured["rooflines"].items()},
        extra_memory=measured["extra_memory"], first_output=measured["first_output"], notes=measured["notes"],
        accuracy=[benchmark.Accuracy(**a) for a in measured.get("accuracy", [])],
        cpu_kind=measured.get("cpu_kind", ""), routes=measured.get("routes", []),
        weight_values=measured.get("weight_values", 0), read_rate=measured.get("read_rate", 0.0),
    )


def target_misses(measured: dict) -> list[str]:
    """Where the fast path's fp32 outputs differ from transformers' by more than
    ``FAST_FP32_ATOL``, in a part of the measurements (this CPU, emulated AVX2 or the GPU,
    each with its ``timings``): one line per case (tools/docs_status.py reports them)."""
    from mini_hf_bert.parity.compare import FAST_FP32_ATOL

    return [f"{t['workload']} fp32: the fast path differs from transformers by {t['max_diff']:.2e}, over "
            f"{FAST_FP32_ATOL:.0e}" for t in measured["timings"]
            if t["contender"] == "mini_hf_bert fast" and t["dtype"] == "fp32" and t["max_diff"] > FAST_FP32_ATOL]


def render(measured: dict) -> str:
    """docs/performance.md from the template (the prose) and one run's measurements."""
    from mini_hf_bert_benchmarks import inference as benchmark

    from mini_hf_bert_benchmarks import gpu as benchmark_gpu

    emulated, gpu = measured.get("emulated"), measured.get("gpu")
    with open(TEMPLATE, encoding="utf-8") as f:
        template = f.read()
    body = render_template(template, {
        "minutes": str(measured["minutes"]), "runs": str(measured["runs"]), "kind": measured.get("cpu_kind", ""),
        "tables": benchmark.format_report(_report(measured)).rstrip(), "targets": targets_table(measured),
        "compiled": compiled_table(measured),
        "emulated_minutes": str(emulated["minutes"]) if emulated else "-",
        "emulated_kind": emulated.get("cpu_kind", "") if emulated else "not measured",
        "emulated_tables": benchmark.format_report(_report(emulated)).rstrip() if emulated else "Not measured.",
        "emulated_targets": emulated_targets_table(emulated) if emulated else "Not measured.",
        "gpu_machine": gpu["machine"].split(",")[0] if gpu else "not measured",
        "gpu_minutes": str(gpu["minutes"]) if gpu else "-", "gpu_runs": str(gpu["runs"]) if gpu else "-",
        "provenance": render_provenance(measured["provenance"]) + (
            "\n\nThe first-output row was measured again on its own: "
            + render_provenance(measured["first_output_provenance"]) if "first_output_provenance" in measured else ""),
        "emulated_provenance": render_provenance(emulated["provenance"]) if emulated else "",
        "gpu_provenance": render_provenance(gpu["provenance"]) if gpu else "",
        "gpu_tables": benchmark_gpu.format_gpu_report(benchmark_gpu.report_from_json(gpu)).rstrip() if gpu
        else "Not measured: no GPU was at hand.",
        "gpu_targets": gpu_targets_table(gpu) if gpu else "Not measured.",
    }, "docs/templates/performance.md")
    return body.rstrip() + "\n\n<!-- generated by tools/performance_report.py from docs/performance.json -->\n"


def measure(runs: int, emulated: bool) -> dict:
    """One benchmark run as performance.json keeps it: the full run, or the AVX2 run
    (``EMULATED_WORKLOADS`` against ``EMULATED_PEERS``, in this process, whose kernels the
    caller held to AVX2)."""
    from mini_hf_bert_benchmarks import inference as benchmark

    start = time.perf_counter()
    options = dict(workloads=EMULATED_WORKLOADS, peers=EMULATED_PEERS, first_output=False, accuracy=False) \
        if emulated else {}
    report = benchmark.run_benchmark(runs=runs, progress=lambda line: print(f"timing {line} ...", file=sys.stderr,
                                                                           flush=True), **options)
    return dict(
        provenance=_provenance(), runs=runs, minutes=round((time.perf_counter() - start) / 60),
        machine=report.machine, cpu_kind=report.cpu_kind, timings=[dataclasses.asdict(t) for t in report.timings],
        rooflines={"/".join(k): list(v) for k, v in report.rooflines.items()},
        extra_memory=report.extra_memory, first_output=report.first_output, notes=report.notes,
        accuracy=[dataclasses.asdict(a) for a in report.accuracy], routes=report.routes,
        weight_values=report.weight_values, read_rate=report.read_rate,
    )


def measure_emulated(runs: int) -> dict:
    """The AVX2 run, in a process of its own whose kernels ``EMULATION_ENV`` holds to AVX2
    (the switches are read when the libraries load)."""
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        out = os.path.join(scratch, "emulated.json")
        subprocess.run([sys.executable, os.path.abspath(__file__), "--runs", str(runs), "--emulated-part", out],
                       env=os.environ | EMULATION_ENV, check=True)
        with open(out, encoding="utf-8") as f:
            return json.load(f)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=None, help="timed calls per contender (default: the benchmark's)")
    parser.add_argument("--render-only", action="store_true",
                        help="re-render docs/performance.md from docs/performance.json and the template (no timing)")
    parser.add_argument("--emulated-only", action="store_true",
                        help="measure the AVX2 tables again, keep the rest of docs/performance.json")
    parser.add_argument("--emulated-part", metavar="JSON", help=argparse.SUPPRESS)  # the AVX2 run's own process
    parser.add_argument("--first-output-only", action="store_true",
                        help="measure the fresh processes' first output again and keep the rest of "
                             "docs/performance.json (the row's own provenance is recorded beside it)")
    parser.add_argument("--gpu-part", metavar="JSON",
                        help="on a machine with a CUDA GPU: run the GPU benchmark, write its part to JSON (no docs)")
    parser.add_argument("--gpu-from", metavar="JSON",
                        help="keep a --gpu-part run in docs/performance.json as its GPU section, and render")
    args = parser.parse_args()
    from mini_hf_bert_benchmarks import inference as benchmark

    try:
        for part in (args.gpu_part, args.emulated_part):
            if part:
                refuse_a_doc_as_output(part)
        gpu = read_gpu_part(args.gpu_from) if args.gpu_from else None
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.gpu_part:
        write_text(args.gpu_part, json.dumps(measure_gpu(args.runs), indent=1) + "\n")
        print(f"wrote {args.gpu_part}")
        return 0
    if gpu is not None:
        with open(MEASUREMENTS, encoding="utf-8") as f:
            measured = json.load(f)
        measured["gpu"] = gpu
        write_text(MEASUREMENTS, json.dumps(measured, indent=1) + "\n")
        args.render_only = True
    runs = args.runs or benchmark.RUNS
    if args.first_output_only:
        with open(MEASUREMENTS, encoding="utf-8") as f:
            measured = json.load(f)
        measured["first_output"] = benchmark.first_output_seconds()
        measured["first_output_provenance"] = _provenance()
        write_text(MEASUREMENTS, json.dumps(measured, indent=1) + "\n")
        args.render_only = True
    if args.emulated_part:
        write_text(args.emulated_part, json.dumps(measure(runs, emulated=True)) + "\n")
        return 0
    if not args.render_only:
        with open(MEASUREMENTS, encoding="utf-8") as f:
            kept = json.load(f)
        measured = kept if args.emulated_only else measure(runs, emulated=False)
        if "gpu" in kept:
            measured["gpu"] = kept["gpu"]  # measured on another machine: kept until it measures again
        measured["emulated"] = measure_emulated(runs)
        write_text(MEASUREMENTS, json.dumps(measured, indent=1) + "\n")
    with open(MEASUREMENTS, encoding="utf-8") as f:
        measured = json.load(f)
    write_text(DOC, render(measured))
    print(f"wrote {DOC}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
