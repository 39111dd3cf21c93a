"""A full disk (issue 36): every writer's error names the file it could not write and
says why, and leaves no file half-written. The room is bounded in a child process: by
``ulimit -f`` everywhere (the writes fail with EFBIG), and by a 64 KiB tmpfs where user
namespaces allow mounting one (ENOSPC, the disk itself full)."""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile

import pytest

from ..paths import ROOT

WRITERS = ["save_pretrained", "tokenizer", "checkpoint state", "convert", "attention --html"]
#: The bound on a file's size: below every file these writers write (a 90 MB model, a 230 KB
#: vocabulary, a 2 MB optimizer state, a page of 100 KB), above what Python writes to start.
FILE_BYTES = 64 * 1024
TMPFS = "size=64k"


def _can_mount_tmpfs() -> bool:
    if shutil.which("unshare") is None:
        return False
    with tempfile.TemporaryDirectory() as where:
        probe = subprocess.run(["unshare", "-rm", "sh", "-c", f"mount -t tmpfs -o size=64k tmpfs {where}"],
                               capture_output=True, timeout=30)
    return probe.returncode == 0


def _bounded(limit_bytes: int):
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))
    return apply


def _outcome(result: subprocess.CompletedProcess) -> dict:
    lines = [line for line in result.stdout.splitlines() if line.startswith("{")]
    assert lines, result.stdout + result.stderr
    return json.loads(lines[-1])


def _files(root) -> list[str]:
    return sorted(os.path.relpath(os.path.join(d, f), root) for d, _, files in os.walk(root) for f in files)


def _check(writer: str, outcome: dict, stderr: str, out, cause: str) -> None:
    if writer in ("convert", "attention --html"):  # the command line: one error line, exit 2
        assert outcome == {"exit": 2}, (outcome, stderr)
        errors = [line for line in stderr.splitlines() if line.startswith("error:")]
        assert len(errors) == 1, stderr
        assert f": could not be written: {cause}; nothing was left half-written" in errors[0], errors[0]
        assert errors[0].startswith(f"error: {out}"), errors[0]
        assert "/." not in errors[0].split(":")[1], errors[0]  # the path a user knows, not a hidden staging one
    else:
        assert outcome["error"] == "DiskFullError", outcome
        assert outcome["filename"].startswith(str(out)) and "/." not in outcome["filename"], outcome
        assert f"could not be written: {cause}" in outcome["message"], outcome
    leftovers = [f for f in _files(out) if f.endswith(".tmp") or ".saving-" in f or ".converting-" in f]
    assert leftovers == [], leftovers


@pytest.mark.parametrize("writer", WRITERS)
def test_a_write_past_the_files_bound_names_the_file(writer, tmp_path, minilm_dir):
    out = tmp_path / "out"
    out.mkdir()
    result = subprocess.run([sys.executable, "-m", "tests.bad_inputs.disk_full_writers", writer, str(out), minilm_dir],
                            capture_output=True, text=True, timeout=300, cwd=ROOT,
                            preexec_fn=_bounded(FILE_BYTES))
    _check(writer, _outcome(result), result.stderr, out, "File too large (larger than this process may write: ulimit -f)")


@pytest.mark.skipif(not _can_mount_tmpfs(), reason="this system lets no user namespace mount a tmpfs")
@pytest.mark.parametrize("writer", WRITERS)
def test_a_full_disk_names_the_file_and_says_the_disk_is_full(writer, tmp_path, minilm_dir):
    out = tmp_path / "out"
    out.mkdir()
    command = (f"mount -t tmpfs -o {TMPFS} tmpfs {out} && exec {sys.executable} -m tests.bad_inputs.disk_full_writers "
               f"'{writer}' {out} {minilm_dir}")
    result = subprocess.run(["unshare", "-rm", "sh", "-c", command], capture_output=True, text=True, timeout=300,
                            cwd=ROOT)
    _check(writer, _outcome(result), result.stderr, out, "No space left on device (the disk is full)")
