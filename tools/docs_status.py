"""Which measured pages are older than the code they measure, which miss the targets they
were taken for, and what refreshes each.

Every measured page is rendered from a JSON file whose ``provenance`` (tools/provenance.py)
names the commit the numbers ran on. A page is listed as older than its code when a file
it measures changed between that commit and this checkout (committed or not). That says
"rerun", never "wrong": most changes move no number. A page whose measurements miss their
target (the loading speed-up, the tokenizer against transformers' Python one, the fast
path's agreement, the learner's run) is listed with each miss: a recorded figure is what a
run measured, so only a new run can change it, and a test reading it could not fail on any
change of code. This informs; no test fails on it.

    .venv/bin/python tools/docs_status.py          # or: make docs-status
    .venv/bin/python tools/docs_status.py --json
    .venv/bin/python tools/docs_status.py --recover-missing   # once: provenance from git history
    .venv/bin/python tools/docs_status.py --contributing      # the table in CONTRIBUTING.md

Pages that state what the code computes (the parity table, the walk-throughs, the weight
map, the tokenizer's examples, the conformance counts) are not listed: the suite
recomputes those on every run.
"""

from __future__ import annotations

import argparse
import dataclasses
import fnmatch
import importlib
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from tools import provenance  # noqa: E402


@dataclasses.dataclass(frozen=True)
class MeasuredDoc:
    """A page (or block of pages) rendered from measurements: where they are kept, what
    they depend on (``sources``: a tool module and the name of its tuple of globs), the
    command that measures them again, how long it takes, and on what."""

    name: str
    data: str
    pages: tuple[str, ...]
    sources: tuple[str, str]
    refresh: str
    #: about how long ``refresh`` takes on 2 cores (or on the GPU, with ``gpu``)
    minutes: int
    gpu: bool = False
    #: where in ``data`` the provenance sits (a dotted path of keys; "" for the top level)
    part: str = ""
    #: (module, function) that lists where the measurements (``part`` of them) miss the
    #: targets they were taken for; None where they have none. Reported, never a test.
    target: tuple[str, str] | None = None

    def provenance(self, root: str = ROOT) -> dict | None:
        """The recorded provenance (None where there is none; FileNotFoundError where the
        measurements themselves are missing; ValueError naming the file where they are not
        a bounded regular file of JSON)."""
        found = self.measurements(root)
        return found.get("provenance") if isinstance(found, dict) else None

    def measurements(self, root: str = ROOT) -> dict:
        """The measurements (their ``part``), read as ``provenance`` reads them."""
        from mini_hf_bert.file_utils import read_json

        found = read_json(os.path.join(root, self.data), ValueError, "measurements file (JSON)",
                          missing=FileNotFoundError)
        for key in filter(None, self.part.split(".")):
            found = found.get(key) if isinstance(found, dict) else None
        return found

    def target_misses(self, root: str = ROOT) -> list[str]:
        """Where the measurements miss their targets (empty where they meet them or have none)."""
        if self.target is None:
            return []
        module, function = self.target
        return getattr(importlib.import_module(module), function)(self.measurements(root))

    def source_globs(self) -> tuple[str, ...]:
        module, attribute = self.sources
        return tuple(getattr(importlib.import_module(module), attribute))


PYTHON = ".venv/bin/python"
#: The Chinese BERT's pages, which show the report and every study beside it.
RESULTS_PAGES = ("docs/training_results.md", "docs/zh/training_results.md")
#: ``minutes`` of a run that takes hours (many training runs)
HOURS = 180

MEASURED_DOCS = (
    MeasuredDoc("parity", "docs/parity.json", ("docs/parity.md",), ("conftest", "PARITY_SOURCES"),
                f"{PYTHON} tools/parity_report.py", 35),
    MeasuredDoc("performance (this CPU)", "docs/performance.json", ("docs/performance.md",),
                ("tools.performance_report", "MEASURED_SOURCES"), f"{PYTHON} tools/performance_report.py", 55,
                target=("tools.performance_report", "target_misses")),
    MeasuredDoc("performance (AVX2, emulated)", "docs/performance.json", ("docs/performance.md",),
                ("tools.performance_report", "MEASURED_SOURCES"),
                f"{PYTHON} tools/performance_report.py --emulated-only", 20, part="emulated",
                target=("tools.performance_report", "target_misses")),
    MeasuredDoc("performance (GPU)", "docs/performance.json", ("docs/performance.md",),
                ("tools.performance_report", "GPU_MEASURED_SOURCES"),
                f"{PYTHON} tools/performance_report.py --gpu-part gpu.json on the GPU, then --gpu-from gpu.json",
                2, gpu=True, part="gpu", target=("tools.performance_report", "target_misses")),
    MeasuredDoc("training speed", "docs/training_speed.json", ("docs/training_speed.md",),
                ("tools.training_speed_report", "MEASURED_SOURCES"), f"{PYTHON} tools/training_speed_report.py", 10),
    MeasuredDoc("loading speed", "docs/loading.json", ("docs/loading.md",),
                ("tools.benchmark_loading", "MEASURED_SOURCES"), f"{PYTHON} tools/benchmark_loading.py", 3,
                target=("tools.benchmark_loading", "target_misses")),
    MeasuredDoc("tokenizer speed", "docs/tokenizer_speed.json", ("docs/tokenizer_speed.md",),
                ("tools.benchmark_tokenizer", "MEASURED_SOURCES"), f"{PYTHON} tools/benchmark_tokenizer.py", 2,
                target=("tools.benchmark_tokenizer", "target_misses")),
    MeasuredDoc("the learner's run", "docs/training/learner_run.json",
                ("README.md", "README.zh.md", "docs/training.md", "docs/zh/training.md"),
                ("tools.learner_run", "MEASURED_SOURCES"), f"{PYTHON} tools/learner_run.py", 20,
                target=("tools.learner_run", "target_misses")),
    MeasuredDoc("the Chinese BERT's report", "docs/training/chinese_bert.json", RESULTS_PAGES,
                ("tools.chinese_bert_report", "MEASURED_SOURCES"), f"{PYTHON} tools/chinese_bert_report.py", 10),
    MeasuredDoc("learning curves", "docs/training/learning_curves.json", RESULTS_PAGES,
                ("tools.learning_curves", "SOURCES"), f"{PYTHON} tools/learning_curves.py", HOURS),
    MeasuredDoc("plateau study", "docs/training/plateau_study.json", RESULTS_PAGES,
                ("tools.pretraining_study", "PLATEAU_SOURCES"), f"{PYTHON} tools/pretraining_study.py", HOURS),
    MeasuredDoc("masking study", "docs/training/masking_study.json", RESULTS_PAGES,
                ("tools.pretraining_study", "MASKING_SOURCES"),
                f"{PYTHON} tools/pretraining_study.py --masking runs/zh-bert/phase1", HOURS),
    MeasuredDoc("corpus study", "docs/training/corpus_study.json", RESULTS_PAGES,
                ("tools.corpus_study", "SOURCES"), f"{PYTHON} tools/corpus_study.py", 60),
    MeasuredDoc("corpus recipe study", "docs/training/corpus_recipe_study.json", RESULTS_PAGES,
                ("tools.corpus_recipe_study", "SOURCES"), f"{PYTHON} tools/corpus_recipe_study.py", HOURS),
    MeasuredDoc("the Chinese corpus's manifest", "docs/training/chinese_corpus.json", RESULTS_PAGES,
                ("tools.chinese_corpus", "CORPUS_SOURCES"), f"{PYTHON} tools/chinese_corpus.py", 10),
)


def duration(doc: MeasuredDoc, language: str = "en") -> str:
    """How long a refresh takes, and on what, in words."""
    if language == "zh":
        time = "数小时" if doc.minutes >= HOURS else f"约 {doc.minutes} 分钟"
        return time + ("（GPU）" if doc.gpu else "（2 核 CPU）")
    time = "hours" if doc.minutes >= HOURS else f"~{doc.minutes} min"
    return time + (" on a CUDA GPU" if doc.gpu else " on 2 CPU cores")


def changed_files(commit: str, root: str = ROOT) -> list[str] | None:
    """Files that differ between ``commit`` and the working tree (None: commit unknown here)."""
    try:
        return subprocess.run(["git", "diff", "--name-only", commit, "--"], cwd=root, capture_output=True,
                              text=True, check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        return None


def matches(path: str, globs: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatch(path, pattern) or fnmatch.fnmatch(path, pattern.replace("**/", "")) for pattern in globs)


def status(doc: MeasuredDoc, root: str = ROOT) -> dict:
    """{"name", "commit", "date", "changed" (measured files changed since, or None where the
    commit is not in this clone), "problems" (of the provenance itself), "refresh", ...}"""
    try:
        recorded = doc.provenance(root)
    except FileNotFoundError:
        recorded = f"{doc.data} is missing"
    except ValueError as error:  # not JSON, a pipe, an oversized file: said, never hung on
        recorded = str(error)
    found = {"name": doc.name, "data": doc.data, "refresh": doc.refresh, "duration": duration(doc),
             "problems": provenance.problems(recorded)}
    if found["problems"]:
        return found | {"commit": None, "date": None, "changed": None, "misses": []}
    found["misses"] = doc.target_misses(root)
    changed = changed_files(recorded["commit"], root)
    globs = doc.source_globs()
    found |= {"commit": recorded["commit"], "date": recorded["date"], "recovered": bool(recorded.get("recovered")),
              "changed": None if changed is None else [p for p in changed if matches(p, globs)]}
    return found


def report(statuses: list[dict]) -> str:
    lines = []
    for s in statuses:
        if s["problems"]:
            lines.append(f"BROKEN  {s['name']} ({s['data']}): " + "; ".join(s["problems"]))
        elif s["changed"] is None:
            lines.append(f"UNKNOWN {s['name']}: commit {s['commit'][:12]} is not in this clone (a shallow one?)")
        elif s["changed"]:
            shown = ", ".join(s["changed"][:4]) + (f" and {len(s['changed']) - 4} more" if len(s["changed"]) > 4 else "")
            lines.append(f"OLDER   {s['name']}: measured at {s['commit'][:12]} ({s['date'][:10]}); since then "
                         f"{shown} changed")
        else:
            lines.append(f"CURRENT {s['name']}: measured at {s['commit'][:12]} ({s['date'][:10]})")
        lines.extend(f"MISSES  {s['name']}: {miss}" for miss in s.get("misses", []))
        if s["problems"] or s["changed"] or s.get("recovered") or s.get("misses"):
            extra = " (provenance recovered from history: rerun to record the machine)" if s.get("recovered") else ""
            lines.append(f"        refresh: {s['refresh']}   [{s['duration']}]{extra}")
    return "\n".join(lines) + "\n"


def _parity_from_its_page(doc: MeasuredDoc, root: str) -> dict:
    """docs/parity.json from the table docs/parity.md was written with before the JSON existed."""
    import re

    with open(os.path.join(root, doc.pages[0]), encoding="utf-8") as f:
        versions = dict.fromkeys(re.findall(r"^\| .+? \| (\d+\.\d+\.\d+) \| \d+ \|", f.read(), re.M))
    import conftest

    sessions = [{"version": version, "families": conftest.documented_families(version)} for version in versions]
    return {"provenance": provenance.from_history(doc.pages[0], doc.refresh, root=root), "sessions": sessions}


def recover_missing(root: str = ROOT) -> list[str]:
    """Give each measurement that has no provenance one recovered from git history (the
    commit that last changed its figures), and drop the source fingerprints it replaces."""
    from mini_hf_bert.file_utils import write_json

    written = []
    for doc in MEASURED_DOCS:
        path = os.path.join(root, doc.data)
        if doc.name == "parity" and not os.path.isfile(path):
            write_json(path, _parity_from_its_page(doc, root), indent=1)
            written.append(f"{doc.data} (from the table of {doc.pages[0]})")
            continue
        if not os.path.isfile(path) or doc.provenance(root) is not None:
            continue
        with open(path, encoding="utf-8") as f:
            text = f.read()
        data = json.loads(text)
        indent = len(text.split("\n", 2)[1]) - len(text.split("\n", 2)[1].lstrip(" "))  # kept as it was
        holder = data
        for key in filter(None, doc.part.split(".")):
            holder = holder[key]
        described = holder.get("machine") or holder.get("report", {}).get("machine") if isinstance(holder, dict) else None
        command = doc.refresh.split(" on the GPU")[0]
        holder["provenance"] = provenance.from_history(doc.data, command, described, part=doc.part, root=root)
        for key in ("fingerprint", "sources_fingerprint"):
            holder.pop(key, None)
        write_json(path, data, indent=indent or 1)
        written.append(doc.data + (f" ({doc.part})" if doc.part else ""))
    return written


#: CONTRIBUTING.md's (and CONTRIBUTING.zh.md's) table of the measured pages, rendered from
#: MEASURED_DOCS between these markers.
BEGIN = "<!-- measured pages: generated by tools/docs_status.py --contributing from its MEASURED_DOCS -->"
END = "<!-- end of measured pages -->"
CONTRIBUTING = {"en": "CONTRIBUTING.md", "zh": "CONTRIBUTING.zh.md"}


def table(language: str) -> str:
    """The measured pages, what holds their numbers, the command that refreshes them and how long it takes."""
    head = ("| 测量 | 页面 | 数据 | 刷新命令 | 用时 |" if language == "zh"
            else "| measurement | pages | data | refresh with | takes |")
    rows = [head, "| --- | --- | --- | --- | --- |"]
    for doc in MEASURED_DOCS:
        pages = ", ".join(f"`{page}`" for page in doc.pages)
        rows.append(f"| {doc.name} | {pages} | `{doc.data}`{f' ({doc.part})' if doc.part else ''} | "
                    f"`{doc.refresh}` | {duration(doc, language)} |")
    return "\n".join(rows)


def with_table(text: str, language: str, source: str) -> str:
    """``text`` with its measured-pages block rendered anew; ``source`` names it in an error."""
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise ValueError(f"{source}: no measured-pages block ({BEGIN} ... {END})")
    return text[:start] + f"{BEGIN}\n{table(language)}\n" + text[end:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print the statuses as JSON")
    parser.add_argument("--recover-missing", action="store_true",
                        help="give measurements without provenance one recovered from git history")
    parser.add_argument("--contributing", action="store_true",
                        help="render the table of measured pages into CONTRIBUTING.md and CONTRIBUTING.zh.md")
    args = parser.parse_args(argv)
    if args.contributing:
        from mini_hf_bert.file_utils import write_text

        for language, name in CONTRIBUTING.items():
            path = os.path.join(ROOT, name)
            with open(path, encoding="utf-8") as f:
                write_text(path, with_table(f.read(), language, name))
            sys.stdout.write(f"wrote {name}\n")
        return 0
    if args.recover_missing:
        for written in recover_missing():
            sys.stdout.write(f"recovered the provenance of {written}\n")
        return 0
    statuses = [status(doc) for doc in MEASURED_DOCS]
    sys.stdout.write(json.dumps(statuses, indent=1) + "\n" if args.json else report(statuses))
    return 0


if __name__ == "__main__":
    sys.exit(main())
