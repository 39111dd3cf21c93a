"""Shared by both test sessions (tests/ against transformers 5.x, tests_transformers4/
against 4.57.6): the parity summary that ends every run, and the check that
docs/parity.md still describes what this run measured (``parity.parity_doc_problems``:
the same families, tensor counts and tolerances, every figure within its tolerance). The
figures are recomputed by every full run, so the check needs no hash of the sources."""

from __future__ import annotations

import json
import os

import pytest
import transformers

from mini_hf_bert.parity.compare import ParityRow, parity_doc_problems

ROOT = os.path.dirname(os.path.abspath(__file__))
PARITY_DOC = os.path.join(ROOT, "docs", "parity.md")
TEST_DIRS = ("tests", "tests_transformers4")
#: What the parity figures depend on: the code that computes them (the model, loading,
#: the tolerance) and the tests that choose the inputs and record the families, with
#: their fixtures (tools/docs_status.py lists docs/parity.md when one changed since its
#: recorded commit; the figures themselves are checked by every full run).
PARITY_SOURCES = (
    "mini_hf_bert/modeling_bert.py",
    "mini_hf_bert/modeling_utils.py",
    "mini_hf_bert/integrations/*.py",
    "mini_hf_bert/activations.py",
    "mini_hf_bert/masking_utils.py",
    "mini_hf_bert/pytorch_utils.py",
    "mini_hf_bert/validation.py",
    "mini_hf_bert/modeling_outputs.py",
    "mini_hf_bert/configuration_bert.py",
    "mini_hf_bert/parity/compare.py",
    "mini_hf_bert/checkpoints/*.py",
    "conftest.py",
    "tests/conftest.py",
    "tests_transformers4/conftest.py",
    "tests/checkpoints/test_checkpoint_loading.py",
    "tests/core/test_decoder.py",
    "tests/core/test_heads.py",
    "tests/parity/test_parity_numerical.py",
    "tests/parity/test_real_checkpoint.py",
    "tests/checkpoints/test_tf_loading.py",
    "tests/training/test_training.py",
    "tests/training/test_training_steps.py",
    "tests_transformers4/test_head_mask_and_pruning.py",
    "tests_transformers4/test_masks_and_model.py",
    "tests_transformers4/test_relative_positions.py",
    "tests/fixtures/tf/**/*",
)
#: tools/parity_report.py sets this to collect each session's families as JSON.
EXPORT_ENV = "MINI_HF_BERT_PARITY_JSON"

# Every parity test records its rows under a family name; the run ends with one line per
# family: how many tensors were compared and the largest max |diff| among them.
_PARITY_FAMILIES: dict[str, list[ParityRow]] = {}


@pytest.fixture
def record_parity():
    def record(family: str, rows: list[ParityRow]) -> list[ParityRow]:
        _PARITY_FAMILIES.setdefault(family, []).extend(rows)
        return rows

    return record


def measured_families() -> dict[str, dict]:
    """{family: {"tensors": n, "max_abs_diff": "1.23e-07", "atol": "1e-05"}}, formatted as the doc prints them."""
    out = {}
    for family, rows in _PARITY_FAMILIES.items():
        worst = max(rows, key=lambda r: r.max_abs_diff)
        out[family] = {"tensors": len(rows), "max_abs_diff": f"{worst.max_abs_diff:.2e}", "atol": f"{worst.atol:.0e}"}
    return out


def documented_families(version: str) -> dict[str, dict]:
    """The rows of docs/parity.md for one transformers version."""
    rows = {}
    if not os.path.isfile(PARITY_DOC):
        return rows
    with open(PARITY_DOC, encoding="utf-8") as f:
        for line in f:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) == 5 and cells[1] == version:
                rows[cells[0]] = {"tensors": int(cells[2]), "max_abs_diff": cells[3], "atol": cells[4]}
    return rows


def _is_full_run(config) -> bool:
    """Only a run of a whole test directory, unfiltered, measures every family."""
    args = [os.path.basename(os.path.normpath(a)) for a in config.args] or list(config.getini("testpaths"))
    return not config.option.keyword and not config.option.markexpr and bool(args) and all(a in TEST_DIRS for a in args)


def pytest_sessionfinish(session, exitstatus):
    export = os.environ.get(EXPORT_ENV)
    if export:
        with open(export, "w", encoding="utf-8") as f:
            json.dump({"version": transformers.__version__, "families": measured_families()}, f, indent=1)
        return
    if exitstatus == 0 and _PARITY_FAMILIES and _is_full_run(session.config):
        problems = parity_doc_problems(measured_families(), documented_families(transformers.__version__))
        if problems:
            session.config._parity_doc_problems = problems
            session.exitstatus = 1  # a stale doc fails the run


def pytest_terminal_summary(terminalreporter):
    if not _PARITY_FAMILIES:
        return
    terminalreporter.section("parity with transformers %s: measured max |diff| per test family" % transformers.__version__)
    width = max(len(f) for f in _PARITY_FAMILIES)
    documented = documented_families(transformers.__version__)
    for family, row in measured_families().items():
        doc = documented.get(family, {}).get("max_abs_diff")
        moved = f"  (docs/parity.md: {doc}; a move within tolerance: float noise)" if doc and doc != row["max_abs_diff"] else ""
        terminalreporter.write_line(
            f"{family:<{width}}  {row['tensors']:>5} tensors  max |diff| {row['max_abs_diff']}  (atol {row['atol']}){moved}"
        )
    problems = getattr(terminalreporter.config, "_parity_doc_problems", None)
    if problems:
        terminalreporter.write_line("")
        terminalreporter.write_line(
            "docs/parity.md is not current for this run (regenerate: .venv/bin/python tools/parity_report.py):", red=True
        )
        for problem in problems:
            terminalreporter.write_line(f"  {problem}", red=True)
