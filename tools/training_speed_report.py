"""Measure a pre-training step on every path that computes it and write docs/training_speed.md
(and the measurements, docs/training_speed.json).

    .venv/bin/python tools/training_speed_report.py                 # ~10 minutes on 2 cores
    .venv/bin/python tools/training_speed_report.py --render-only   # the page from the JSON

What is timed, and how: benchmarks/mini_hf_bert_benchmarks/training_speed.py (``python -m mini_hf_bert
benchmark-training`` runs the same). A test fails when the measured code changed since.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from mini_hf_bert.file_utils import write_text  # noqa: E402
from tools.provenance import collect, render as render_provenance  # noqa: E402
from tools.templates import measured_or_recorded  # noqa: E402

DOC = os.path.join(ROOT, "docs", "training_speed.md")
DATA = os.path.join(ROOT, "docs", "training_speed.json")
#: What the measurements depend on (tools/docs_status.py watches them).
MEASURED_SOURCES = ("tools/training_speed_report.py", "benchmarks/mini_hf_bert_benchmarks/training_speed.py",
                    "mini_hf_bert/modeling_bert_fast.py", "mini_hf_bert/modeling_bert.py",
                    "mini_hf_bert/integrations/sdpa_attention.py", "mini_hf_bert/training/pretraining.py",
                    "mini_hf_bert/training/pretraining_data.py", "mini_hf_bert/training/optimization.py")


#: What the fast path is held to: real tokens/s against today's path (the reference layers,
#: as ``pretrain`` runs them) and against transformers' BertForPreTraining, each phase and dtype.
TARGET_VS_TODAY = 2.5
TARGET_VS_TRANSFORMERS = 2.0


def measure() -> dict:
    from mini_hf_bert_benchmarks import training_speed as speed

    provenance = collect(sys.argv)  # before the run: the code as it was when it started
    report = speed.run_training_benchmark(progress=lambda line: print(f"timing {line} ...", file=sys.stderr, flush=True))
    return {"provenance": provenance, "runs": speed.RUNS, "documents": speed.DOCUMENTS,
            "report": dataclasses.asdict(report)}


def _best(report, phase: str, dtype: str, prefix: str):
    return next(t for t in report.timings if t.phase == phase and t.dtype == dtype and t.contender.startswith(prefix))


def render(measured: dict) -> str:
    from mini_hf_bert_benchmarks import training_speed as speed

    values = measured["report"]
    report = speed.TrainingReport(values["machine"], [speed.TrainingTiming(**t) for t in values["timings"]],
                                  values["product_rates"], values["fill"], values["notes"])
    summary = []
    for phase in dict.fromkeys(t.phase for t in report.timings):
        for dtype in dict.fromkeys(t.dtype for t in report.timings if t.phase == phase):
            fast = _best(report, phase, dtype, speed.FAST)
            today = _best(report, phase, dtype, speed.SDPA)
            met = [f"{fast.vs_today:.2f}x today's {today.tokens_per_s:,.0f} "
                   f"({'meets' if fast.vs_today >= TARGET_VS_TODAY else 'misses'} {TARGET_VS_TODAY}x)"]
            if fast.vs_transformers is not None:
                met.append(f"{fast.vs_transformers:.2f}x transformers' "
                           f"({'meets' if fast.vs_transformers >= TARGET_VS_TRANSFORMERS else 'misses'} "
                           f"{TARGET_VS_TRANSFORMERS}x)")
            summary.append(f"- {phase}, {dtype}: the fast path {fast.tokens_per_s:,.0f} real tokens/s, "
                           + ", ".join(met) + f"; {fast.roofline_share:.0%} of the large product's rate.")
    lines = [
        "# Training speed",
        "",
        "Written by `tools/training_speed_report.py` from one run of `python -m mini_hf_bert benchmark-training`",
        f"({measured['runs']} timed steps per contender, in rounds; batches from {measured['documents']:,} training",
        "documents of the corpus the shipped Chinese BERT was trained on). What each contender is: the docstring of",
        "`benchmarks/mini_hf_bert_benchmarks/training_speed.py`.",
        "",
        render_provenance(measured["provenance"]),
        "",
        *summary,
        "",
        f"The targets: {TARGET_VS_TODAY}x today's real tokens/s and {TARGET_VS_TRANSFORMERS}x transformers', on each phase.",
        "What limits a missed one is the last column: a step that already runs at a large share of what",
        "the CPU reaches on one large product has little left to remove but padding.",
        "",
        "\"Of the large product's rate\": the step's useful multiply-add FLOPs per second (the products a step",
        "needs on real tokens; backward = twice the forward) over what this machine reaches on one",
        f"{speed.LARGE_PRODUCT} x {speed.LARGE_PRODUCT} product in the same dtype. Where that share is high, the step",
        "is mostly matrix arithmetic already, and a faster step needs fewer products (fewer padded tokens), not",
        "less overhead.",
        "",
        speed.format_training_report(report).rstrip(),
        "",
        "<!-- generated by tools/training_speed_report.py from docs/training_speed.json -->",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--render-only", action="store_true", help="write the page from docs/training_speed.json")
    args = parser.parse_args(argv)
    measured = measured_or_recorded(DATA, measure, args.render_only)
    write_text(DOC, render(measured))
    print(f"wrote {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
