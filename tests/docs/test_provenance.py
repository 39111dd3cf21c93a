"""Every measured page carries where its numbers come from (tools/provenance.py), and
tools/docs_status.py says which are older than their code, from that alone: no hash of
the sources anywhere."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tools import docs_status, provenance

from ..paths import ROOT


@pytest.mark.parametrize("doc", docs_status.MEASURED_DOCS, ids=[d.name for d in docs_status.MEASURED_DOCS])
def test_every_measured_doc_records_a_complete_provenance_and_its_pages_print_it(doc):
    recorded = doc.provenance()
    assert provenance.problems(recorded) == [], f"{doc.data}: {provenance.problems(recorded)}; rerun: {doc.refresh}"
    for page in doc.pages:
        with open(os.path.join(ROOT, page), encoding="utf-8") as f:
            text = f.read()
        language = "zh" if page.endswith(".zh.md") or "/zh/" in page else "en"
        assert provenance.render(recorded, language) in text, f"{page} does not say where {doc.data}'s numbers come from"


def test_every_measured_doc_names_sources_that_exist():
    import glob

    for doc in docs_status.MEASURED_DOCS:
        for pattern in doc.source_globs():
            assert glob.glob(os.path.join(ROOT, pattern), recursive=True), f"{doc.name}: {pattern} matches nothing"


def _complete() -> dict:
    return {"commit": "a" * 40, "uncommitted_changes": False, "date": "2026-11-28T12:00:00Z",
            "machine": {key: "x" for key in provenance.MACHINE_KEYS} | {"cpu_flags": ["avx2"], "threads": 2},
            "command": ".venv/bin/python tools/x.py"}


@pytest.mark.parametrize("change, problem", [
    (lambda p: p.pop("commit"), "missing 'commit'"),
    (lambda p: p.update(commit="abc123"), "not a 40-digit git hash"),
    (lambda p: p.update(date="28 Nov 2026"), "is not YYYY-MM-DDTHH:MM:SSZ"),
    (lambda p: p.update(command=" "), "command is empty"),
    (lambda p: p.update(uncommitted_changes="no"), "not true or false"),
    (lambda p: p["machine"].pop("torch"), "machine: missing 'torch'"),
    (lambda p: p.update(machine="AMD EPYC"), "machine is not a dict"),
    (lambda p: p.update(machine="", recovered=True), "describes its machine in words"),
])
def test_an_incomplete_provenance_is_named(change, problem):
    assert provenance.problems(_complete()) == []
    broken = _complete()
    change(broken)
    found = provenance.problems(broken)
    assert len(found) == 1 and problem in found[0], found
    assert provenance.problems(None) and provenance.problems("docs/x.json is missing") == ["docs/x.json is missing"]


def test_the_rendering_says_commit_date_machine_command_and_whether_it_was_recovered():
    complete = _complete() | {"uncommitted_changes": True}
    line = provenance.render(complete)
    assert "`aaaaaaaaaaaa`" in line and "2026-11-28" in line and "tools/x.py" in line and "uncommitted" in line
    assert "git history" not in line
    recovered = _complete() | {"machine": "AMD EPYC, 2 threads", "recovered": True}
    assert "git history" in provenance.render(recovered) and "AMD EPYC, 2 threads" in provenance.render(recovered)
    assert "git 历史" in provenance.render(recovered, "zh")


def _git(repo, *args) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True,
                          env=os.environ | {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                                            "GIT_COMMITTER_EMAIL": "t@t"}).stdout.strip()


@pytest.fixture
def repo(tmp_path):
    _git(tmp_path, "init", "-q")
    (tmp_path / "code.py").write_text("x = 1\n")
    (tmp_path / "m.json").write_text(json.dumps({"ms": 10, "fingerprint": "0" * 16}))
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "measured")
    return tmp_path


def test_a_collected_provenance_is_complete_and_names_its_checkout(repo, tmp_path_factory, monkeypatch):
    found = provenance.collect([os.path.join(ROOT, "tools", "some_tool.py"), "--runs", "3"], root=str(repo))
    assert provenance.problems(found) == []
    assert found["commit"] == _git(repo, "rev-parse", "HEAD") and found["uncommitted_changes"] is False
    assert found["command"] == ".venv/bin/python tools/some_tool.py --runs 3"
    assert found["machine"]["threads"] >= 1 and found["machine"]["torch"]
    (repo / "code.py").write_text("x = 3\n")
    assert provenance.collect("x", root=str(repo))["uncommitted_changes"] is True
    plain = tmp_path_factory.mktemp("copy")  # a tree copied without .git (a lent GPU machine)
    monkeypatch.delenv(provenance.COMMIT_ENV, raising=False)
    with pytest.raises(RuntimeError, match=f"not a git checkout.*set {provenance.COMMIT_ENV}"):
        provenance.collect("x", root=str(plain))
    monkeypatch.setenv(provenance.COMMIT_ENV, "b" * 40)
    assert provenance.collect("x", root=str(plain))["commit"] == "b" * 40


def test_a_recovered_provenance_is_the_commit_that_last_changed_the_figures(repo):
    measured = _git(repo, "rev-parse", "HEAD")
    (repo / "m.json").write_text(json.dumps({"ms": 10, "fingerprint": "1" * 16}))  # a rewritten fingerprint
    _git(repo, "commit", "-qam", "fingerprint rewritten by hand")
    found = provenance.from_history("m.json", "tools/x.py", "a CPU", root=str(repo))
    assert found["commit"] == measured and found["recovered"] is True and found["machine"] == "a CPU"
    assert provenance.problems(found) == []
    (repo / "m.json").write_text(json.dumps({"ms": 12, "fingerprint": "1" * 16}))  # measured again
    _git(repo, "commit", "-qam", "measured again")
    assert provenance.from_history("m.json", "tools/x.py", root=str(repo))["commit"] == _git(repo, "rev-parse", "HEAD")


def test_docs_status_lists_a_page_whose_measured_code_changed_since_its_commit(repo, monkeypatch):
    record = provenance.collect("tools/x.py", root=str(repo))
    (repo / "m.json").write_text(json.dumps({"ms": 10, "provenance": record}))
    doc = docs_status.MeasuredDoc("m", "m.json", (), ("tools.docs_status", "PYTHON"), "tools/x.py", 1)
    monkeypatch.setattr(docs_status.MeasuredDoc, "source_globs", lambda self: ("code.py",))
    assert docs_status.status(doc, str(repo))["changed"] == []
    (repo / "code.py").write_text("x = 2\n")  # not committed: still a change to what was measured
    found = docs_status.status(doc, str(repo))
    assert found["changed"] == ["code.py"]
    assert "OLDER" in docs_status.report([found]) and "refresh: tools/x.py" in docs_status.report([found])
    (repo / "m.json").unlink()
    assert docs_status.status(doc, str(repo))["problems"] == ["m.json is missing"]
    os.mkfifo(repo / "m.json")  # read through file_utils.read_json: refused, not waited on
    (problem,) = docs_status.status(doc, str(repo))["problems"]
    assert problem.startswith(str(repo / "m.json")) and "not a regular file" in problem


def test_docs_status_runs_and_informs_without_failing():
    done = subprocess.run([sys.executable, "tools/docs_status.py"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert len([line for line in done.stdout.splitlines() if not line.startswith(" ")]) == len(docs_status.MEASURED_DOCS)


@pytest.mark.parametrize("language", sorted(docs_status.CONTRIBUTING))
def test_contributing_lists_every_measured_page_as_docs_status_knows_it(language):
    name = docs_status.CONTRIBUTING[language]
    with open(os.path.join(ROOT, name), encoding="utf-8") as f:
        text = f.read()
    assert text == docs_status.with_table(text, language, name), (
        f"{name}: its table of measured pages is stale: run .venv/bin/python tools/docs_status.py --contributing")
    assert all(f"`{doc.refresh}`" in text for doc in docs_status.MEASURED_DOCS)
    with pytest.raises(ValueError, match="no measured-pages block"):
        docs_status.with_table("# no block here\n", language, name)


def test_a_study_resumes_at_the_same_commit_even_after_writing_its_own_results(tmp_path):
    """same_commit: a study's later run adds to the earlier runs only at the same commit with
    nothing else changed; the results file it wrote itself does not count as a change (it
    did, and corpus_study dropped each run but the last)."""
    def git(*args):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    git("config", "user.email", "t@example.com")
    git("config", "user.name", "t")
    (tmp_path / "results.json").write_text("{}\n")
    (tmp_path / "code.py").write_text("x = 1\n")
    git("add", ".")
    git("commit", "-qm", "one")
    recorded = provenance.collect(".venv/bin/python tools/study.py", root=str(tmp_path))
    results = str(tmp_path / "results.json")
    assert provenance.same_commit(recorded, root=str(tmp_path), writes=(results,))
    (tmp_path / "results.json").write_text('{"runs": {"first": 1}}\n')  # its first run, written
    assert provenance.same_commit(recorded, root=str(tmp_path), writes=(results,))
    assert not provenance.same_commit(recorded, root=str(tmp_path))  # unnamed, it is a change like any
    (tmp_path / "code.py").write_text("x = 2\n")  # other code changed: start over
    assert not provenance.same_commit(recorded, root=str(tmp_path), writes=(results,))
    git("checkout", "--", "code.py")
    assert provenance.same_commit(recorded, root=str(tmp_path), writes=(results,))
    git("commit", "-qam", "two")  # another commit
    assert not provenance.same_commit(recorded, root=str(tmp_path), writes=(results,))
    assert not provenance.same_commit({**recorded, "uncommitted_changes": True}, root=str(tmp_path))


# ------------------------------------------------------------------ targets: reported, not tested

@pytest.mark.parametrize("doc", [d for d in docs_status.MEASURED_DOCS if d.target],
                         ids=[d.name for d in docs_status.MEASURED_DOCS if d.target])
def test_a_target_check_reads_the_recorded_measurements(doc):
    """Each check runs on the committed measurements (what it finds is docs-status's report,
    not this test's verdict: a recorded figure changes only with a new run)."""
    misses = doc.target_misses()
    assert isinstance(misses, list) and all(isinstance(m, str) for m in misses)


def _tool(name):
    import importlib

    return importlib.import_module(f"tools.{name}")


def test_the_loading_check_names_each_format_under_the_speedup_target():
    tool = _tool("benchmark_loading")
    rows = [{"format": "model.safetensors", "library": "mini_hf_bert", "speedup": tool.TARGET_SPEEDUP},
            {"format": "pytorch_model.bin", "library": "mini_hf_bert", "speedup": tool.TARGET_SPEEDUP - 0.5},
            {"format": "pytorch_model.bin", "library": "transformers", "speedup": 1.0}]
    assert tool.target_misses({"rows": rows}) == ["pytorch_model.bin: 2.5x transformers' from_pretrained, under the 3x target"]


def test_the_tokenizer_check_names_a_call_slower_than_transformers_python_tokenizer():
    tool = _tool("benchmark_tokenizer")
    plain = next(iter(tool.CALLS))
    rows = [{"tokenizer": "mini_hf_bert", plain: [900.0, 1200.0]},
            {"tokenizer": "transformers BertTokenizerLegacy", plain: [1000.0, 1000.0]}]
    misses = tool.target_misses({"rows": rows})
    assert len(misses) == 1 and misses[0].startswith(f"{plain}, cold: 900 sentences/s, under")
    rows[0][plain][0] = 1000.0
    assert tool.target_misses({"rows": rows}) == []


def test_the_performance_check_names_an_fp32_case_past_the_fast_paths_bound():
    from mini_hf_bert.parity.compare import FAST_FP32_ATOL

    tool = _tool("performance_report")
    timings = [{"contender": "mini_hf_bert fast", "workload": "W1", "dtype": "fp32", "max_diff": FAST_FP32_ATOL},
               {"contender": "mini_hf_bert fast", "workload": "W2", "dtype": "fp32", "max_diff": 3 * FAST_FP32_ATOL},
               {"contender": "mini_hf_bert fast", "workload": "W2", "dtype": "bf16", "max_diff": 0.1},
               {"contender": "onnxruntime", "workload": "W3", "dtype": "fp32", "max_diff": 1.0}]
    assert tool.target_misses({"timings": timings}) == [
        "W2 fp32: the fast path differs from transformers by 3.00e-04, over 1e-04"]


def test_the_learner_check_names_each_target_missed():
    tool = _tool("learner_run")
    measured = {"evaluations": [{"mlm_mask_accuracy": 0.16, "mlm_most_frequent_token_accuracy": 0.05}],
                "ner_f1": 0.60, "ner_f1_from_random_weights": 0.45, "runs": {"pretrain": {"seconds": 600}}}
    assert tool.target_misses(measured) == []
    measured.update(ner_f1=0.50, runs={"pretrain": {"seconds": 16 * 60}})
    measured["evaluations"][-1]["mlm_mask_accuracy"] = 0.149
    misses = tool.target_misses(measured)
    assert [m.split(" ")[0] for m in misses] == ["[MASK]", "NER", "pretrain"], misses


def test_docs_status_reports_a_miss(monkeypatch):
    doc = next(d for d in docs_status.MEASURED_DOCS if d.name == "loading speed")
    monkeypatch.setattr(docs_status.MeasuredDoc, "target_misses", lambda self, root=ROOT: ["a miss"])
    monkeypatch.setattr(docs_status, "changed_files", lambda commit, root=ROOT: [])
    assert "MISSES  loading speed: a miss" in docs_status.report([docs_status.status(doc)])
