"""Measure batch tokenization throughput: mini_hf_bert's BertTokenizerFast (what AutoTokenizer
and the pipelines give) and BertTokenizer (the plain one a learner reads) against
transformers' Python tokenizer (BertTokenizerLegacy) and its Rust-backed one (BertTokenizer), and write
docs/tokenizer_speed.md (and the measurements, docs/tokenizer_speed.json, with their provenance).

    .venv/bin/python tools/benchmark_tokenizer.py            # ~1 minute on 2 cores
    .venv/bin/python tools/benchmark_tokenizer.py --no-write
    .venv/bin/python tools/benchmark_tokenizer.py --render-only   # the page from the JSON

The text: English sentences from the docstrings of Python's standard library (natural
prose, the same on every machine with this Python), the test corpus of
tests/core/test_tokenizer.py and its Chinese set, 3,000 sentences in all. Each tokenizer encodes
them as one batch, in two calls (``CALLS``): the plain ``tokenizer(texts, padding=True,
truncation=True)``, and the question-answering preprocessing's windows (128 tokens, stride
32) with offsets. The vocabulary is the uncased one shipped with all-MiniLM-L6-v2. "cold": a
fresh tokenizer's first batch (its caches empty), best of 3 fresh tokenizers; "warm": the
best of 3 more batches on the last one. The tokenizers' outputs are checked equal.
transformers' Python tokenizer has no offsets (and windows pairs only), so it runs the
plain call alone.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import os
import platform
import re
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from mini_hf_bert.file_utils import write_text  # noqa: E402

DOC = os.path.join(ROOT, "docs", "tokenizer_speed.md")
DATA = os.path.join(ROOT, "docs", "tokenizer_speed.json")
#: What the figures depend on (tools/docs_status.py watches them).
MEASURED_SOURCES = ("tools/benchmark_tokenizer.py", "mini_hf_bert/tokenization_bert.py", "mini_hf_bert/tokenization_bert_fast.py",
                    "mini_hf_bert/tokenization_utils.py", "mini_hf_bert/tokenization_utils_base.py")
STDLIB_MODULES = ("os", "re", "json", "collections", "itertools", "functools", "pathlib", "typing", "argparse",
                  "logging", "datetime", "decimal", "fractions", "statistics", "string", "textwrap", "threading",
                  "subprocess", "shutil", "tarfile", "zipfile", "csv", "email.message", "http.client", "urllib.parse",
                  "unittest", "inspect", "dataclasses", "enum", "heapq", "bisect", "random", "socket", "ssl",
                  "asyncio", "contextlib", "difflib", "pickle", "codecs", "locale", "calendar", "tempfile")
NUM_SENTENCES = 3000
WARM_RUNS = 3
#: The calls measured: name -> keyword arguments of tokenizer(texts, ...).
CALLS = {
    "padding, truncation": dict(padding=True, truncation=True),
    "+ offsets, windows (stride)": dict(padding=True, truncation=True, max_length=128, stride=32,
                                        return_offsets_mapping=True, return_overflowing_tokens=True),
}


def sentences(limit: int = NUM_SENTENCES) -> list[str]:
    """Deterministic natural text: stdlib docstrings split into sentences, plus the test corpus."""
    from tests.core.tokenizer_corpus import CHINESE, CORPUS, LEGACY_DIFFERS

    # Lines on which transformers' two tokenizers differ by design (docs/tokenizer.md) are
    # left out, so all three must give the same ids.
    found: list[str] = [t for t in list(CORPUS) + list(CHINESE) if t not in LEGACY_DIFFERS]
    seen = set(found)
    for module_name in STDLIB_MODULES:
        module = importlib.import_module(module_name)
        objects = [module] + [getattr(module, name) for name in sorted(dir(module)) if not name.startswith("_")]
        for obj in objects:
            doc = inspect.getdoc(obj) if callable(obj) or inspect.ismodule(obj) else None
            for sentence in re.split(r"(?<=[.!?])\s+", " ".join((doc or "").split())):
                if 20 <= len(sentence) <= 300 and sentence not in seen:
                    seen.add(sentence)
                    found.append(sentence)
                    if len(found) == limit:
                        return found
    if len(found) < limit:
        raise SystemExit(f"only {len(found)} sentences found in the stdlib docstrings; need {limit}")
    return found


def make_tokenizers(vocab_dir: str) -> dict:
    import transformers
    from transformers.models.bert.tokenization_bert_legacy import BertTokenizerLegacy

    from mini_hf_bert import BertTokenizer, BertTokenizerFast

    transformers.utils.logging.set_verbosity_error()
    return {
        "mini_hf_bert BertTokenizerFast (Python, cached)": lambda: BertTokenizerFast.from_pretrained(vocab_dir),
        "mini_hf_bert BertTokenizer (Python, as written)": lambda: BertTokenizer.from_pretrained(vocab_dir),
        f"transformers {transformers.__version__} BertTokenizerLegacy (pure Python)": lambda: BertTokenizerLegacy.from_pretrained(vocab_dir),
        f"transformers {transformers.__version__} BertTokenizer (Rust tokenizers)": lambda: transformers.BertTokenizer.from_pretrained(vocab_dir),
    }


def measure(texts: list[str], vocab_dir: str, warm_runs: int = WARM_RUNS) -> list[dict]:
    rows, reference = [], {}
    for name, make in make_tokenizers(vocab_dir).items():
        row = {"tokenizer": name}
        for call, options in CALLS.items():
            if "Legacy" in name and "return_offsets_mapping" in options:
                continue  # the Python tokenizer has no offsets
            cold = float("inf")
            for _ in range(warm_runs):  # a fresh tokenizer each time: its caches start empty
                tokenizer = make()
                start = time.perf_counter()
                encoded = tokenizer(texts, **options)
                output = {key: encoded[key] for key in ("input_ids", "offset_mapping", "overflow_to_sample_mapping")
                          if key in encoded}
                cold = min(cold, time.perf_counter() - start)
            if call not in reference:
                reference[call] = output
            elif output != reference[call]:
                raise SystemExit(f"{name} gives another output than mini_hf_bert for {call!r}; not a fair comparison")
            warm = []
            for _ in range(warm_runs):
                start = time.perf_counter()
                tokenizer(texts, **options)
                warm.append(time.perf_counter() - start)
            row[call] = (len(texts) / cold, len(texts) / min(warm))
        rows.append(row)
    return rows


def environment() -> dict[str, str]:
    import tokenizers

    return {"python": platform.python_version(), "tokenizers": tokenizers.__version__,
            "cores": str(os.cpu_count()), "machine": platform.machine()}


def target_misses(measured: dict) -> list[str]:
    """Where our fast tokenizer is slower than transformers' pure-Python one (BertTokenizerLegacy)
    on the plain call, cold or warm: one line each (tools/docs_status.py reports them)."""
    plain = next(iter(CALLS))
    ours = measured["rows"][0]
    legacy = next(r for r in measured["rows"] if "Legacy" in r["tokenizer"])
    return [f"{plain}, {run}: {ours[plain][i]:.0f} sentences/s, under {legacy['tokenizer']}'s {legacy[plain][i]:.0f}"
            for i, run in enumerate(("cold", "warm")) if ours[plain][i] < legacy[plain][i]]


def render(measured: dict) -> str:
    from tools.provenance import render as render_provenance

    rows, count, env = measured["rows"], measured["sentences"], measured["environment"]
    python_row = next(r for r in rows if "Legacy" in r["tokenizer"])
    rust_row = next(r for r in rows if "Rust" in r["tokenizer"])
    ours, readable = rows[0], rows[1]
    plain, windows = CALLS
    options = ", ".join(f"{k}={v!r}" for k, v in CALLS[windows].items())
    lines = [
        "# Tokenizer speed",
        "",
        "Written by `tools/benchmark_tokenizer.py` from docs/tokenizer_speed.json (what it measures:",
        "see its docstring).",
        "",
        render_provenance(measured["provenance"]),
        "",
        f"{count} sentences, one batch, uncased vocabulary; texts/s, cold / warm. Two calls:",
        f"`tokenizer(texts, padding=True, truncation=True)`, and `tokenizer(texts, {options})`.",
        "",
        "| tokenizer | " + " | ".join(f"{call}: cold | {call}: warm" for call in CALLS) + " |",
        "| --- |" + " --- | --- |" * len(CALLS),
    ]
    for r in rows:
        cells = [f"{r[call][0]:.0f} | {r[call][1]:.0f}" if call in r else "n/a | n/a" for call in CALLS]
        lines.append(f"| {r['tokenizer']} | " + " | ".join(cells) + " |")
    lines += [
        "",
        f"mini_hf_bert's BertTokenizerFast vs transformers' Python tokenizer: {ours[plain][0] / python_row[plain][0]:.1f}x cold, "
        f"{ours[plain][1] / python_row[plain][1]:.1f}x warm. Its speed comes from caching: each distinct",
        "character's normalization and each distinct word's wordpieces are computed once.",
        f"The BertTokenizer a learner reads (BasicTokenizer, then WordpieceTokenizer, then each word found again",
        f"for its offsets) runs at {readable[plain][1] / python_row[plain][1]:.2f}x transformers' Python tokenizer "
        f"(warm), which gives no offsets.",
        f"The windowed call with offsets runs at {ours[windows][1] / ours[plain][1]:.2f}x mini_hf_bert's plain-call "
        f"speed (warm; its rows stop at 128 tokens); the Rust tokenizer is {rust_row[windows][1] / ours[windows][1]:.1f}x "
        "faster on it.",
        "",
        f"Environment: python {env['python']}, tokenizers {env['tokenizers']}, "
        f"{env['cores']} cores, {env['machine']}.",
        "",
        "<!-- generated by tools/benchmark_tokenizer.py from docs/tokenizer_speed.json -->",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    from mini_hf_bert.checkpoints.bundled import default_checkpoint_dir

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-write", action="store_true", help=f"print instead of writing {DOC}")
    parser.add_argument("--render-only", action="store_true", help=f"write {DOC} from {DATA} (no timing)")
    args = parser.parse_args(argv)
    from tools.provenance import collect
    from tools.templates import measured_or_recorded

    def measured() -> dict:
        provenance = collect(sys.argv)
        texts = sentences()
        rows = measure(texts, default_checkpoint_dir())
        return {"provenance": provenance, "sentences": len(texts), "environment": environment(),
                "rows": rows}

    if args.no_write:
        sys.stdout.write(render(measured()))
        return
    write_text(DOC, render(measured_or_recorded(DATA, measured, args.render_only)))
    sys.stdout.write(f"wrote {DOC}\n")


if __name__ == "__main__":
    main()
