"""Run the inference benchmark (mini_hf_bert/parity/benchmark.py) and write docs/performance.md.

    .venv/bin/python tools/performance_report.py             # ~25 minutes on 2 cores
    .venv/bin/python tools/performance_report.py --runs 10
    .venv/bin/python tools/performance_report.py --render-only   # after editing the prose

The prose is docs/templates/performance.md; the tables come from one run of
``benchmark.run_benchmark`` (the same code ``python -m mini_hf_bert benchmark`` runs),
kept in docs/performance.json. Both record a fingerprint of the fast path, the model file
and the benchmark; a test fails when they change and the document was not measured again.
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

from tools.templates import render as render_template  # noqa: E402

from mini_hf_bert.file_utils import write_text  # noqa: E402

DOC = os.path.join(ROOT, "docs", "performance.md")
#: What the measurements depend on (the rendering in this script does not: --render-only).
MEASURED_SOURCES = ("mini_hf_bert/parity/benchmark.py", "mini_hf_bert/parity/engines.py",
                    "mini_hf_bert/parity/ctranslate2_worker.py", "mini_hf_bert/modeling_bert_fast.py",
                    "mini_hf_bert/modeling_bert.py", "mini_hf_bert/integrations/sdpa_attention.py")

TEMPLATE = os.path.join(ROOT, "docs", "templates", "performance.md")
MEASUREMENTS = os.path.join(ROOT, "docs", "performance.json")


def sources_fingerprint() -> str:
    from tools.testing_utils import sources_fingerprint as fingerprint

    return fingerprint(ROOT, MEASURED_SOURCES)


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


def _met(ok: bool) -> str:
    return "yes" if ok else "no"


def _roofline_row(measured: dict, timing: dict, dtype: str, factor: float) -> str:
    """W1 in ``dtype`` against its GEMM roofline: within ``factor`` or not."""
    roofline_ms = measured["rooflines"][f"W1/{dtype}"][0]
    return (f"| W1 {dtype}: within {factor}x of its roofline ({roofline_ms:.0f} ms) | "
            f"{timing['ms'] / roofline_ms:.2f}x | {_met(timing['ms'] <= factor * roofline_ms)} |")


def targets_table(measured: dict) -> str:
    """Each target beside what was measured: met or not."""
    ratio = {(t["workload"], t["dtype"], t["contender"]): t for t in measured["timings"]}
    rows = ["| target | measured | met |", "|---|---:|---|"]
    for workload, dtype, least in TARGETS:
        fast = ratio[(workload, dtype, FAST)]
        rows.append(f"| {workload} {dtype}: >= {least}x transformers sdpa | {fast['ratio']:.2f}x | "
                    f"{_met(fast['ratio'] >= least)} |")
    rows.append(_roofline_row(measured, ratio[("W1", "bf16", FAST)], "bf16", ROOFLINE_FACTOR))
    slowest = min(t["ratio"] for t in measured["timings"] if t["contender"] == FAST)
    rows.append(f"| no workload or dtype below 1.0x transformers sdpa | slowest {slowest:.2f}x | {_met(slowest >= 1.0)} |")
    first = measured["first_output"]
    torch_alone = first.get("import torch")
    ours = next((v for k, v in first.items() if k.startswith("mini_hf_bert")), None)
    if torch_alone and ours:
        rows.append(f"| fresh process, first output within {FIRST_OUTPUT_FACTOR}x of `import torch` | "
                    f"{ours / torch_alone:.2f}x | {_met(ours <= FIRST_OUTPUT_FACTOR * torch_alone)} |")
    # Against the other engines: ours by default, and the best of ours with compile asked for.
    for workload in sorted({t["workload"] for t in measured["timings"]}):
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
    openvino = ratio.get(("W1", "bf16", "OpenVINO"))
    if openvino:
        ours_diff = ratio[("W1", "bf16", FAST)]["max_diff"]
        rows.append(f"| W1 bf16: max abs diff vs fp32 <= OpenVINO's ({openvino['max_diff']:.3f}) | {ours_diff:.3f} | "
                    f"{_met(ours_diff <= openvino['max_diff'])} |")
    engine_int8 = ratio.get(("W1", "fp32", ENGINE_INT8))
    ours_int8 = [ratio[key] for key in (("W1", "fp32", INT8), ("W1", "fp32", INT8_COMPILED)) if key in ratio]
    if engine_int8 and ours_int8:
        best = min(ours_int8, key=lambda t: t["ms"])
        rows.append(f"| W1 int8: >= 1.0x CTranslate2 int8 ({engine_int8['ms']:.0f} ms) | "
                    f"{engine_int8['ms'] / best['ms']:.2f}x ({best['contender']}) | {_met(engine_int8['ms'] >= best['ms'])} |")
    rows.append(_roofline_row(measured, ratio[("W1", "fp32", FAST)], "fp32", ENGINE_ROOFLINE_FACTOR))
    return "\n".join(rows)


def render(measured: dict) -> str:
    """docs/performance.md from the template (the prose) and one run's measurements."""
    from mini_hf_bert.parity import benchmark

    report = benchmark.Report(
        machine=measured["machine"],
        timings=[benchmark.Timing(**t) for t in measured["timings"]],
        rooflines={tuple(k.split("/")): tuple(v) for k, v in measured["rooflines"].items()},
        extra_memory=measured["extra_memory"], first_output=measured["first_output"], notes=measured["notes"],
        accuracy=[benchmark.Accuracy(**a) for a in measured.get("accuracy", [])],
    )
    with open(TEMPLATE, encoding="utf-8") as f:
        template = f.read()
    body = render_template(template, {"minutes": str(measured["minutes"]), "runs": str(measured["runs"]),
                                      "tables": benchmark.format_report(report).rstrip(),
                                      "targets": targets_table(measured)}, "docs/templates/performance.md")
    return body.rstrip() + (f"\n\n<!-- generated by tools/performance_report.py from docs/performance.json; "
                            f"sources fingerprint: {measured['fingerprint']} -->\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=None, help="timed calls per contender (default: the benchmark's)")
    parser.add_argument("--render-only", action="store_true",
                        help="re-render docs/performance.md from docs/performance.json and the template (no timing)")
    args = parser.parse_args()
    if not args.render_only:
        from mini_hf_bert.parity import benchmark

        runs = args.runs or benchmark.RUNS
        start = time.perf_counter()
        report = benchmark.run_benchmark(runs=runs, progress=lambda line: print(f"timing {line} ...",
                                                                             file=sys.stderr, flush=True))
        measured = dict(
            fingerprint=sources_fingerprint(), runs=runs, minutes=round((time.perf_counter() - start) / 60),
            machine=report.machine, timings=[dataclasses.asdict(t) for t in report.timings],
            rooflines={"/".join(k): list(v) for k, v in report.rooflines.items()},
            extra_memory=report.extra_memory, first_output=report.first_output, notes=report.notes,
            accuracy=[dataclasses.asdict(a) for a in report.accuracy],
        )
        write_text(MEASUREMENTS, json.dumps(measured, indent=1) + "\n")
    with open(MEASUREMENTS, encoding="utf-8") as f:
        measured = json.load(f)
    write_text(DOC, render(measured))
    print(f"wrote {DOC}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
