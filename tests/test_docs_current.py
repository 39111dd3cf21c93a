"""Generated documents stay current: docs/weight_map.md prints the name tables as they are,
docs/loading.md was measured with the current benchmark script and loading code.
(docs/parity.md is checked by the root conftest.py against every full run.)"""

from __future__ import annotations

import importlib.util
import os
import re

import torch

import mini_hf_bert

from .conftest import small_config_kwargs

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _tool(name: str):
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, "tools", f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _read(relative: str) -> str:
    with open(os.path.join(ROOT, relative), encoding="utf-8") as f:
        return f.read()


def test_weight_map_doc_prints_the_current_table():
    tool = _tool("weight_map_doc")
    assert _read("docs/weight_map.md") == tool.render(), "docs/weight_map.md is stale: run tools/weight_map_doc.py"


def test_weight_map_doc_has_every_row():
    from mini_hf_bert.checkpoints.weight_map import TF_WEIGHT_MAP

    doc = _read("docs/weight_map.md")
    for hf_name, tf_name, transpose in TF_WEIGHT_MAP:
        assert f"| `{hf_name}` | `{tf_name}` | {'yes' if transpose else 'no'} |" in doc


def test_loading_doc_was_measured_with_the_current_code():
    tool = _tool("benchmark_loading")
    doc = _read("docs/loading.md")
    match = re.search(r"<!-- sources fingerprint: ([0-9a-f]{16}) -->", doc)
    assert match, "docs/loading.md has no sources fingerprint: run tools/benchmark_loading.py"
    assert match.group(1) == tool.sources_fingerprint(), (
        "the loading code or the benchmark changed since docs/loading.md was measured: "
        "run .venv/bin/python tools/benchmark_loading.py"
    )


def test_loading_doc_reports_the_target_speedup_for_each_format():
    """The issue asks for >= 3x transformers' from_pretrained on bert-base; the doc must
    show it for every format it measured (a rerun that misses it turns this red)."""
    tool = _tool("benchmark_loading")
    doc = _read("docs/loading.md")
    rows = re.findall(r"^\| (.+?) \| mini_hf_bert \| ([\d.]+) \| ([\d.]+) \| ([\d.]+)x \|", doc, flags=re.M)
    assert sorted(r[0] for r in rows) == sorted(tool.FORMATS)
    for label, median, _, speedup in rows:
        assert float(speedup) >= tool.TARGET_SPEEDUP, f"{label}: {speedup}x"


def test_benchmark_measures_both_libraries_on_the_same_logits(tmp_path):
    """The benchmark's own measuring path, run on a small checkpoint (fast), in fresh processes."""
    tool = _tool("benchmark_loading")
    torch.manual_seed(0)
    mini_hf_bert.BertForPreTraining(mini_hf_bert.BertConfig(**small_config_kwargs("tiny"))).save_pretrained(tmp_path)
    results = {library: tool.run_child(library, str(tmp_path)) for library in tool.LIBRARIES}
    for result in results.values():
        assert result["seconds"] > 0 and result["weights_mib"] > 0
    assert abs(results["mini_hf_bert"]["logits_sum"] - results["transformers"]["logits_sum"]) < 1e-3


def test_tokenizer_speed_doc_was_measured_with_the_current_code():
    tool = _tool("benchmark_tokenizer")
    doc = _read("docs/tokenizer_speed.md")
    match = re.search(r"<!-- sources fingerprint: ([0-9a-f]{16}) -->", doc)
    assert match and match.group(1) == tool.sources_fingerprint(), (
        "the tokenizer or its benchmark changed since docs/tokenizer_speed.md was measured: "
        "run .venv/bin/python tools/benchmark_tokenizer.py"
    )


def test_tokenizer_speed_doc_shows_no_slower_than_transformers_python_tokenizer():
    doc = _read("docs/tokenizer_speed.md")
    rows = {name: (float(cold), float(warm)) for name, cold, warm in re.findall(r"^\| (.+?) \| (\d+) \| (\d+) \|$", doc, flags=re.M)}
    ours = next(v for k, v in rows.items() if k.startswith("mini_hf_bert"))
    legacy = next(v for k, v in rows.items() if "BertTokenizerLegacy" in k)
    assert len(rows) == 3 and ours[0] >= legacy[0] and ours[1] >= legacy[1], rows


def test_tokenizer_benchmark_runs_and_checks_ids(minilm_dir):
    tool = _tool("benchmark_tokenizer")
    texts = tool.sentences(limit=60)
    assert len(texts) == 60 and len(set(texts)) == 60
    rows = tool.measure(texts, minilm_dir, warm_runs=1)  # raises if any tokenizer's ids differ
    assert [r["tokenizer"].split()[0] for r in rows] == ["mini_hf_bert", "transformers", "transformers"]


def test_unicode_tables_are_current():
    """Regenerate mini_hf_bert/unicode_tables.py from the installed tokenizers library over
    every code point (~30 s) and compare: a new tokenizers or Python version shows up here."""
    import unicodedata

    from mini_hf_bert import unicode_tables

    tool = _tool("make_unicode_tables")
    assert unicode_tables.UNICODE_VERSION == unicodedata.unidata_version, "generated under another Python"
    assert _read("mini_hf_bert/unicode_tables.py") == tool.render(tool.compute()), (
        "mini_hf_bert/unicode_tables.py is stale: run tools/make_unicode_tables.py"
    )
