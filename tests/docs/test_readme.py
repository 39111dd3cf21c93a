"""The README's Python blocks run as written, each in a fresh namespace in a fresh
directory, and print what their comments say (``print(x)  # expected``)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from ..paths import ROOT

BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
#: A print whose line ends in "# <what it prints>".
EXPECTED_PRINT = re.compile(r"^\s*print\(.*\)\s+#\s*(.+?)\s*$")

# Runs every block in one process (imports are paid once), each in its own namespace,
# and reports each block's printed lines, or its error.
RUNNER = """
import contextlib, io, json, sys, traceback
results = []
for code in json.load(sys.stdin):
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(code, "README.md block", "exec"), {"__name__": "__readme__"})
        results.append({"stdout": out.getvalue()})
    except BaseException:
        results.append({"stdout": out.getvalue(), "error": traceback.format_exc()})
print(json.dumps(results))
"""


#: The READMEs whose Python blocks run: the English one and its Chinese twin.
READMES = ("README.md", "README.zh.md")


def readme_blocks() -> list[str]:
    blocks = []
    for page in READMES:
        with open(os.path.join(ROOT, page), encoding="utf-8") as f:
            blocks += BLOCK.findall(f.read())
    return blocks


def test_the_readme_has_python_blocks_with_expected_output():
    blocks = readme_blocks()
    assert len(blocks) >= 5
    assert all(any(EXPECTED_PRINT.match(line) for line in block.splitlines()) for block in blocks)


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> list[dict]:
    env = dict(os.environ, HF_HUB_OFFLINE="1", PYTHONWARNINGS="ignore")
    run = subprocess.run([sys.executable, "-c", RUNNER], input=json.dumps(readme_blocks()), capture_output=True,
                         text=True, cwd=tmp_path_factory.mktemp("readme"), env=env, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.splitlines()[-1])


@pytest.mark.parametrize("index", range(len(readme_blocks())))
def test_readme_block_runs_and_prints_what_it_says(results, index):
    block, result = readme_blocks()[index], results[index]
    assert "error" not in result, f"README block {index + 1} fails:\n{block}\n{result['error']}"
    expected = [m.group(1) for line in block.splitlines() if (m := EXPECTED_PRINT.match(line))]
    printed = result["stdout"].splitlines()
    assert printed == expected, f"README block {index + 1} prints {printed}, its comments say {expected}"
