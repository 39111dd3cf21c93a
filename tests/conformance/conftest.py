"""The conformance suite's summary: how many ported tests each upstream source has here,
how many passed, and how many it leaves out (each module's ``OUT_OF_SCOPE``, with reasons)."""

from __future__ import annotations

import collections
import importlib
import os

from .upstream import library

#: Ported module -> the upstream file its tests come from.
SOURCES = {
    "test_modeling_bert_upstream": "transformers tests/models/bert/test_modeling_bert.py",
    "test_configuration_upstream": "transformers 5.23 tests/test_configuration_common.py (ConfigTester)",
    "test_tokenization_bert_upstream": "transformers tests/models/bert/test_tokenization_bert.py (4.x) + _legacy.py (5.x)",
    "test_google_tokenization": "google-research/bert tokenization_test.py",
    "test_google_modeling": "google-research/bert modeling_test.py",
    "test_modeling_common_upstream": "transformers 5.23 tests/test_modeling_common.py (ModelTesterMixin)",
    "test_modeling_common_4x_upstream": "transformers 4.57.6 tests/test_modeling_common.py (ModelTesterMixin)",
    "test_tokenization_common_upstream": "transformers 5.23 tests/test_tokenization_common.py (TokenizerTesterMixin)",
    "test_data_collator_upstream": "transformers tests/trainer/test_data_collator.py (transformers' collators, our tokenizer)",
    "test_modeling_utils_upstream": "transformers tests/utils/test_modeling_utils.py (BERT save/load tests)",
    "test_pipelines_upstream": "transformers tests/pipelines (PipelineTesterMixin, BERT's five tasks)",
}

#: The ports of transformers 4.x's files. Against mini_hf_bert every port runs; with
#: MINI_HF_BERT_CONFORMANCE=transformers, transformers 4.x (first on PYTHONPATH) runs these
#: only, and 5.x all but these: each reference runs the tests written for it.
PORTS_OF_4X = {"test_modeling_common_4x_upstream.py"}

if library.__name__ == "transformers":
    _ports = {name for name in os.listdir(os.path.dirname(__file__)) if name.startswith("test_") and name.endswith(".py")}
    collect_ignore = sorted(_ports - PORTS_OF_4X if library.__version__.startswith("4.") else PORTS_OF_4X)

_outcomes: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)


def pytest_runtest_logreport(report):
    if type(report).__name__ == "SubtestReport":  # a subTest inside a test: the test itself counts
        return
    module = report.nodeid.split("::")[0].rsplit("/", 1)[-1].removesuffix(".py")
    if module in SOURCES and (report.when == "call" or report.outcome != "passed"):
        _outcomes[module][report.outcome] += 1


def pytest_terminal_summary(terminalreporter):
    if not _outcomes:
        return
    terminalreporter.section("conformance: upstream tests run here, per source")
    for module, source in SOURCES.items():
        counts = _outcomes.get(module)
        if counts is None:
            continue
        left_out = len(getattr(importlib.import_module(f"tests.conformance.{module}"), "OUT_OF_SCOPE", {}))
        terminalreporter.write_line(f"{source}: {counts['passed']} passed, {counts['failed']} failed, "
                                    f"{counts['skipped']} skipped; {left_out} out of scope")
