"""Where a measured figure comes from: the commit it ran on, the date, the machine and the
command, recorded by the tool that measured it and printed in the page it renders.

A generated page is its JSON rendered; the JSON's ``provenance`` says what produced the
numbers. Nothing here decides whether a page is current: ``tools/docs_status.py`` lists the
pages whose measured code changed since their recorded commit, and which command refreshes
each. A test checks that every provenance is complete (``problems``), never a hash of the
sources.

Measurements taken before provenance was recorded carry one recovered from git history
(``from_history``): the commit that last changed the measured numbers, its date, the
machine as the run described it (where it did), and ``"recovered": true``. Such a page
says so; measuring it again records the rest.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import re
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: The keys every provenance has, and those of its machine (a recovered one may describe
#: its machine in words, or say it was not recorded).
KEYS = ("commit", "uncommitted_changes", "date", "machine", "command")
MACHINE_KEYS = ("cpu", "cpu_flags", "threads", "torch", "python", "system")
#: The CPU flags that decide which kernels torch, oneDNN and MKL run (AVX2 machines,
#: AVX-512 with bf16 and VNNI, Intel's AMX): recorded so two pages' numbers can be compared.
RELEVANT_CPU_FLAGS = ("avx2", "fma", "avx512f", "avx512_bf16", "avx512_vnni", "avx512_fp16", "avx_vnni",
                      "amx_tile", "amx_bf16", "amx_int8")
#: Where a tree copied without .git is told its commit (and "1" in DIRTY_ENV when the copy
#: held uncommitted changes).
COMMIT_ENV, DIRTY_ENV = "MINI_HF_BERT_COMMIT", "MINI_HF_BERT_UNCOMMITTED"
_COMMIT = re.compile(r"^[0-9a-f]{40}$")
_DATE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


def _git(*args: str, root: str = ROOT) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def cpu_description() -> tuple[str, list[str]]:
    """(the CPU's model name, its flags among RELEVANT_CPU_FLAGS) from /proc/cpuinfo, or
    platform's words where there is no such file."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            info = f.read()
    except OSError:
        return platform.processor() or platform.machine(), []
    model = re.search(r"^model name\s*:\s*(.+)$", info, re.M)
    flags = re.search(r"^flags\s*:\s*(.+)$", info, re.M)
    present = set(flags.group(1).split()) if flags else set()
    return (model.group(1).strip() if model else platform.machine()), [f for f in RELEVANT_CPU_FLAGS if f in present]


def machine() -> dict:
    """This machine as a measurement depends on it (torch imported here, as the tools do)."""
    import torch

    cpu, flags = cpu_description()
    found = {"cpu": cpu, "cpu_flags": flags, "threads": torch.get_num_threads(), "torch": torch.__version__,
             "python": platform.python_version(), "system": f"{platform.system()} {platform.release()}"}
    if torch.cuda.is_available():
        found["gpu"] = torch.cuda.get_device_name(0)
    return found


def shown_command(argv: list[str]) -> str:
    """The command as a reader would type it in the repository's root."""
    script = os.path.relpath(os.path.abspath(argv[0]), ROOT) if argv and argv[0].endswith(".py") else None
    words = [".venv/bin/python", script.replace(os.sep, "/"), *argv[1:]] if script else [".venv/bin/python", *argv]
    return shlex.join(words)


def collect(command: str | list[str], root: str = ROOT) -> dict:
    """The provenance of a measurement about to be taken in ``root``: its commit (and
    whether the working tree differs from it), the date (UTC), this machine, the command."""
    if not isinstance(command, str):
        command = shown_command(list(command))
    try:
        commit = _git("rev-parse", "HEAD", root=root).strip()
        dirty = bool(_git("status", "--porcelain", "--untracked-files=no", root=root).strip())
    except (OSError, subprocess.CalledProcessError) as error:
        # A copy of the tree without .git (a lent GPU machine): the caller names the commit it copied.
        commit, dirty = os.environ.get(COMMIT_ENV, ""), os.environ.get(DIRTY_ENV, "0") == "1"
        if not _COMMIT.match(commit):
            raise RuntimeError(f"{root}: not a git checkout, so a measurement here cannot say which code it ran "
                               f"({error}); set {COMMIT_ENV} to the commit this tree was copied from") from None
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"commit": commit, "uncommitted_changes": dirty, "date": date, "machine": machine(), "command": command}


def same_commit(recorded: object, root: str = ROOT, writes: tuple[str, ...] = ()) -> bool:
    """Whether a study's recorded runs were measured at this checkout's commit with no
    uncommitted changes on either side: only then may a later run of it add to them.
    ``writes`` are the files the study itself writes (its results): a change to them is
    its own earlier run, not other code."""
    if not isinstance(recorded, dict) or problems(recorded) or recorded["uncommitted_changes"]:
        return False
    own = {os.path.relpath(os.path.abspath(path), root) for path in writes}
    try:
        head = _git("rev-parse", "HEAD", root=root).strip()
        changed = _git("status", "--porcelain", "-z", "--untracked-files=no", root=root).split("\0")
    except (OSError, subprocess.CalledProcessError):
        return False
    return head == recorded["commit"] and all(entry[3:] in own for entry in changed if entry)


def problems(provenance: object) -> list[str]:
    """What makes ``provenance`` incomplete or malformed (empty when it is neither)."""
    if isinstance(provenance, str):
        return [provenance]
    if not isinstance(provenance, dict):
        return ["no provenance (a dict with " + ", ".join(KEYS) + ")"]
    found = [f"missing {key!r}" for key in KEYS if key not in provenance]
    if found:
        return found
    if not isinstance(provenance["commit"], str) or not _COMMIT.match(provenance["commit"]):
        found.append(f"commit {provenance['commit']!r} is not a 40-digit git hash")
    if not isinstance(provenance["uncommitted_changes"], bool):
        found.append("uncommitted_changes is not true or false")
    if not isinstance(provenance["date"], str) or not _DATE.match(provenance["date"]):
        found.append(f"date {provenance['date']!r} is not YYYY-MM-DDTHH:MM:SSZ")
    if not isinstance(provenance["command"], str) or not provenance["command"].strip():
        found.append("command is empty")
    described = provenance["machine"]
    if provenance.get("recovered") is True:
        if not isinstance(described, str) or not described.strip():
            found.append("a recovered provenance describes its machine in words (or says it was not recorded)")
    elif not isinstance(described, dict):
        found.append("machine is not a dict")
    else:
        found += [f"machine: missing {key!r}" for key in MACHINE_KEYS if key not in described]
    return found


#: The machine of a measurement recovered from git history (``from_history``).
UNRECORDED_MACHINE = "a machine the run did not record"


def machine_words(provenance: dict, language: str = "en") -> str:
    described = provenance["machine"]
    if described == UNRECORDED_MACHINE and language == "zh":
        return "没有记录（这次运行没有记下机器）"
    if isinstance(described, str):
        return described
    flags = ", ".join(described["cpu_flags"]) or "none of " + "/".join(RELEVANT_CPU_FLAGS[:3])
    gpu = f", {described['gpu']}" if described.get("gpu") else ""
    return (f"{described['cpu']} ({flags}){gpu}, {described['threads']} threads, torch {described['torch']}, "
            f"Python {described['python']}, {described['system']}")


def render(provenance: dict, language: str = "en") -> str:
    """One paragraph: what produced the figures of a page."""
    commit = provenance["commit"][:12]
    day = provenance["date"][:10]
    if language == "zh":
        dirty = "（工作区有未提交的改动）" if provenance["uncommitted_changes"] else ""
        recovered = ("这次测量早于来源记录：提交和日期取自 git 历史中最后改动这些数字的提交。"
                     if provenance.get("recovered") else "")
        return (f"测量来源：提交 `{commit}`{dirty}，{day}，机器：{machine_words(provenance, language)}；"
                f"命令：`{provenance['command']}`。{recovered}")
    dirty = " (with uncommitted changes)" if provenance["uncommitted_changes"] else ""
    recovered = (" Measured before provenance was recorded: the commit and date are those of the commit "
                 "that last changed these figures, from git history." if provenance.get("recovered") else "")
    return (f"Measured on commit `{commit}`{dirty} on {day}, on {machine_words(provenance)}, "
            f"by `{provenance['command']}`.{recovered}")


# ---------------------------------------------------------------------------------------
# Provenance recovered from git history, for measurements taken before it was recorded
# ---------------------------------------------------------------------------------------


def _content_at(commit: str, relative: str, part: str, ignore: tuple[str, ...], root: str) -> object:
    try:
        text = _git("show", f"{commit}:{relative}", root=root)
    except subprocess.CalledProcessError:
        return None
    if not relative.endswith(".json"):
        return re.sub(r"<!--.*?-->", "", text, flags=re.S)
    data = json.loads(text)
    for key in filter(None, part.split(".")):
        data = data.get(key) if isinstance(data, dict) else None
    return {k: v for k, v in data.items() if k not in ignore} if isinstance(data, dict) else data


def from_history(relative: str, command: str, machine_described: str | None = None, part: str = "",
                 ignore: tuple[str, ...] = ("fingerprint", "sources_fingerprint", "provenance"),
                 root: str = ROOT) -> dict:
    """The provenance of the measurements in ``relative`` (a JSON file, the dotted ``part``
    of it, or a page whose figures it holds), recovered from git: the newest commit that
    changed them (keys in ``ignore`` and HTML comments left out, so a rewritten
    fingerprint does not count)."""
    commits = _git("log", "--format=%H %cI", "--", relative, root=root).split("\n")
    commits = [line.split() for line in commits if line.strip()]
    if not commits:
        raise ValueError(f"{relative}: no commit holds this file")
    for (commit, date), older in zip(commits, commits[1:] + [None]):
        if older is None or (_content_at(commit, relative, part, ignore, root)
                             != _content_at(older[0], relative, part, ignore, root)):
            when = datetime.datetime.fromisoformat(date).astimezone(datetime.timezone.utc)
            return {"commit": commit, "uncommitted_changes": False, "date": when.strftime("%Y-%m-%dT%H:%M:%SZ"),
                    "machine": machine_described or UNRECORDED_MACHINE, "command": command, "recovered": True}
    raise AssertionError("unreachable")


if __name__ == "__main__":
    json.dump(collect(sys.argv[1:] or ["tools/provenance.py"]), sys.stdout, indent=1)
    sys.stdout.write("\n")
