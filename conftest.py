"""Shared by both test sessions (tests/ against transformers 5.x, tests_transformers4/
against 4.57.6): the parity summary that ends every run."""

from __future__ import annotations

import pytest
import transformers

from mini_hf_bert.parity import ParityRow

# ------------------------------------------------------------------ parity summary
# Every parity test records its rows under a family name; the run ends with one line per
# family: how many tensors were compared and the largest max |diff| among them.
_PARITY_FAMILIES: dict[str, list[ParityRow]] = {}


@pytest.fixture
def record_parity():
    def record(family: str, rows: list[ParityRow]) -> list[ParityRow]:
        _PARITY_FAMILIES.setdefault(family, []).extend(rows)
        return rows

    return record


def pytest_terminal_summary(terminalreporter):
    if not _PARITY_FAMILIES:
        return
    terminalreporter.section("parity with transformers %s: measured max |diff| per test family" % transformers.__version__)
    width = max(len(f) for f in _PARITY_FAMILIES)
    for family, rows in _PARITY_FAMILIES.items():
        worst = max(rows, key=lambda r: r.max_abs_diff)
        terminalreporter.write_line(
            f"{family:<{width}}  {len(rows):>5} tensors  max |diff| {worst.max_abs_diff:.2e}  (atol {worst.atol:.0e})"
        )
