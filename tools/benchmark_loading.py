"""Measure bert-base loading, mini_hf_bert against transformers, and write docs/loading.md
(and the measurements, docs/loading.json).

    .venv/bin/python tools/benchmark_loading.py               # ~2 minutes on 2 cores
    .venv/bin/python tools/benchmark_loading.py --repeats 3 --no-write   # print only
    .venv/bin/python tools/benchmark_loading.py --render-only # the page from the JSON

Both libraries load the same two bert-base-sized ``BertForPreTraining`` checkpoints,
written first by transformers (seeded random weights; the hub cannot be reached here):

* ``pytorch_model.bin`` in the hub's 2019 layout (LayerNorm gamma/beta, tied decoder stored
  once), the file most of the hub's BERT checkpoints still are;
* ``model.safetensors`` as transformers 5.x's ``save_pretrained`` writes it.

Every measurement runs in a fresh Python process, so neither library profits from the
other's imports or caches: the process imports the library, runs the garbage collector
once (the imports leave a full pass due, whose timing would otherwise decide by luck
which load pays for it), then times the one ``from_pretrained`` call (the file is in the page cache: every run reads it once before
the timed ones), then runs one forward pass (which touches every weight, through the
tied decoder) and reports resident memory (RSS) three ways: growth during the load
(peak), and growth after the forward pass. Runs alternate between the libraries so
machine noise hits both alike; the table gives the median and the fastest run.

The JSON records the run's provenance (commit, date, machine, command), which the page
prints; tools/docs_status.py says when the loading code has changed since.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from mini_hf_bert.file_utils import write_text  # noqa: E402

DOC = os.path.join(ROOT, "docs", "loading.md")
DATA = os.path.join(ROOT, "docs", "loading.json")

#: The code whose speed the document reports (tools/docs_status.py watches it).
MEASURED_SOURCES = (
    "tools/benchmark_loading.py",
    "mini_hf_bert/modeling_utils.py",
    "mini_hf_bert/checkpoints/hf_format.py",
    "mini_hf_bert/checkpoints/loading.py",
    "mini_hf_bert/checkpoints/resolve.py",
    "mini_hf_bert/checkpoints/weight_map.py",
)
LIBRARIES = ("mini_hf_bert", "transformers")
FORMATS = {"pytorch_model.bin (hub legacy layout)": "bin", "model.safetensors (transformers 5 save_pretrained)": "safetensors"}
#: The speed-up this project aims for; the summary says whether each format reaches it.
TARGET_SPEEDUP = 3.0


# ---------------------------------------------------------------- one measurement (child)
def _status_mib(field: str) -> float:
    """A memory line of /proc/self/status in MiB: VmRSS (now) or VmHWM (peak)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def _reset_peak_rss() -> None:
    # Writing 5 to clear_refs resets VmHWM to the current RSS (Linux >= 4.0), so the peak
    # below is the load's own, not the imports'.
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def measure_once(library: str, directory: str) -> dict:
    """Import ``library``, time its ``BertForPreTraining.from_pretrained(directory)``; memory in MiB."""
    import time

    import torch

    if library == "transformers":
        import transformers

        transformers.utils.logging.set_verbosity_error()
        transformers.utils.logging.disable_progress_bar()
        model_class = transformers.BertForPreTraining
    else:
        import mini_hf_bert

        model_class = mini_hf_bert.BertForPreTraining
    torch.set_num_threads(1)  # the forward pass is there to touch the weights, not to be timed
    # The imports (torch's above all, ~170k objects) leave the garbage collector a full pass
    # due; where it falls depends on how many objects each library happened to allocate
    # before, and one pass costs 25-60 ms here, half of a load. Collect first, for both.
    gc.collect()
    baseline = _status_mib("VmRSS")
    _reset_peak_rss()
    start = time.perf_counter()
    model = model_class.from_pretrained(directory)
    seconds = time.perf_counter() - start
    load_peak = _status_mib("VmHWM") - baseline
    with torch.no_grad():
        length = min(64, model.config.max_position_embeddings)
        input_ids = (torch.arange(length) * 7919 % model.config.vocab_size).unsqueeze(0)  # (1, T), spread over the vocab
        logits = model(input_ids).prediction_logits  # (1, T, V)
    weights_mib = sum(p.numel() * p.element_size() for p in model.parameters()) / 2**20
    return {
        "seconds": seconds,
        "load_peak_mib": load_peak,
        "after_forward_mib": _status_mib("VmRSS") - baseline,
        "weights_mib": weights_mib,
        "logits_sum": float(logits.double().sum()),
    }


# ---------------------------------------------------------------- the run (parent)
def write_checkpoints(workdir: str) -> dict[str, str]:
    from tools.testing_utils import (
        write_hub_legacy_checkpoint,
        write_transformers_safetensors_checkpoint,
    )

    directories = {"bin": os.path.join(workdir, "bin"), "safetensors": os.path.join(workdir, "safetensors")}
    write_hub_legacy_checkpoint(directories["bin"], seed=0)
    write_transformers_safetensors_checkpoint(directories["safetensors"], seed=0)
    return directories


def run_child(library: str, directory: str) -> dict:
    result = subprocess.run(
        [sys.executable, __file__, "--child", library, directory], capture_output=True, text=True, cwd=ROOT
    )
    if result.returncode != 0:
        raise SystemExit(f"measuring {library} on {directory} failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def run(repeats: int, workdir: str) -> dict:
    from tqdm import tqdm

    directories = write_checkpoints(workdir)
    results: dict[str, dict[str, list[dict]]] = {fmt: {lib: [] for lib in LIBRARIES} for fmt in directories}
    with tqdm(total=len(directories) * len(LIBRARIES) * (repeats + 1), desc="loading bert-base", unit="run") as bar:
        for fmt, directory in directories.items():
            for library in LIBRARIES:  # a first, untimed run each: the file enters the page cache
                run_child(library, directory)
                bar.update()
            for _ in range(repeats):
                for library in LIBRARIES:
                    results[fmt][library].append(run_child(library, directory))
                    bar.update()
    for fmt, per_library in results.items():  # same file, same input: both must compute the same logits
        sums = {lib: runs[0]["logits_sum"] for lib, runs in per_library.items()}
        if abs(sums["mini_hf_bert"] - sums["transformers"]) > 1e-2 * max(1.0, abs(sums["transformers"])):
            raise SystemExit(f"{fmt}: the two libraries computed different logits ({sums}); not a fair comparison")
    return results


def environment() -> dict[str, str]:
    import safetensors
    import torch
    import transformers

    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "safetensors": safetensors.__version__,
        "cpu": f"{os.cpu_count()} cores, {platform.machine()}",
    }


def summarise(results: dict) -> list[dict]:
    rows = []
    for label, fmt in FORMATS.items():
        per_library = results[fmt]
        medians = {lib: statistics.median(r["seconds"] for r in runs) for lib, runs in per_library.items()}
        for library, runs in per_library.items():
            rows.append({
                "format": label,
                "library": library,
                "median_s": medians[library],
                "min_s": min(r["seconds"] for r in runs),
                "load_peak_mib": statistics.median(r["load_peak_mib"] for r in runs),
                "after_forward_mib": statistics.median(r["after_forward_mib"] for r in runs),
                "weights_mib": runs[0]["weights_mib"],
                "speedup": medians["transformers"] / medians[library],
            })
    return rows


def target_misses(measured: dict) -> list[str]:
    """Where the measurements miss the target (``TARGET_SPEEDUP`` over transformers'
    ``from_pretrained``, for every format): one line each, none when all reach it.
    tools/docs_status.py reports them; no test reads the recorded figures."""
    return [f"{row['format']}: {row['speedup']:.1f}x transformers' from_pretrained, under the {TARGET_SPEEDUP:.0f}x target"
            for row in measured["rows"] if row["library"] == "mini_hf_bert" and row["speedup"] < TARGET_SPEEDUP]


def render(measured: dict) -> str:
    from tools.provenance import render as render_provenance

    rows, repeats, env = measured["rows"], measured["repeats"], measured["environment"]
    lines = [
        "# Loading speed and memory",
        "",
        "Written by `tools/benchmark_loading.py` from docs/loading.json (how it measures: see its",
        "docstring). bert-base-sized",
        "`BertForPreTraining` (110M parameters), fp32, CPU, file in the page cache, each run a",
        f"fresh process, {repeats} runs per row.",
        "",
        render_provenance(measured["provenance"]),
        "",
        "How mini_hf_bert loads: the model is built on the meta device (no memory, no random",
        "init), the checkpoint is memory-mapped (safetensors; `torch.load(mmap=True,",
        "weights_only=True)` for `.bin`) and its tensors are *assigned* as the parameters,",
        "copy-on-write, so nothing is copied and the file is never written. RSS grows as the",
        "first forward pass touches the weights, to about one copy of them.",
        "",
        "| checkpoint | library | load, median (s) | fastest (s) | speed-up vs transformers | RSS growth during load (MiB) | RSS growth after one forward (MiB) | weights (MiB) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        lines.append(
            f"| {row['format']} | {row['library']} | {row['median_s']:.3f} | {row['min_s']:.3f} | "
            f"{row['speedup']:.1f}x | {row['load_peak_mib']:.0f} | {row['after_forward_mib']:.0f} | {row['weights_mib']:.0f} |"
        )
    lines += ["", "Environment: " + ", ".join(f"{k} {v}" for k, v in env.items()) + ".", ""]
    for label in FORMATS:
        ours = next(r for r in rows if r["format"] == label and r["library"] == "mini_hf_bert")
        verdict = "reaches" if ours["speedup"] >= TARGET_SPEEDUP else "does NOT reach"
        lines.append(f"- {label}: {ours['speedup']:.1f}x faster than transformers; {verdict} the {TARGET_SPEEDUP:.0f}x target.")
    lines += ["", "<!-- generated by tools/benchmark_loading.py from docs/loading.json -->", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=7, help="timed runs per library and format (default 7)")
    parser.add_argument("--no-write", action="store_true", help=f"print the table instead of writing {DOC}")
    parser.add_argument("--render-only", action="store_true", help=f"write {DOC} from {DATA} (no timing)")
    parser.add_argument("--child", nargs=2, metavar=("LIBRARY", "DIRECTORY"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(measure_once(*args.child)))
        return
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    from tools.provenance import collect
    from tools.templates import measured_or_recorded

    def measure() -> dict:
        provenance = collect(sys.argv)  # before the runs: the code as it was when they started
        with tempfile.TemporaryDirectory(prefix="mini_hf_bert_bench_") as workdir:
            results = run(args.repeats, workdir)
        return {"provenance": provenance, "repeats": args.repeats, "environment": environment(),
                "rows": summarise(results)}

    if args.no_write:
        sys.stdout.write(render(measure()))
        return
    write_text(DOC, render(measured_or_recorded(DATA, measure, args.render_only)))
    sys.stdout.write(f"wrote {DOC}\n")


if __name__ == "__main__":
    main()
