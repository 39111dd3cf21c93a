"""docs/ecosystem.md's recipes run as written and print what their comments say, as the
README's blocks do (``test_readme.RUNNER``); its Chinese twin holds the very same code."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from ..paths import ROOT
from .test_readme import BLOCK, EXPECTED_PRINT, RUNNER

PAGE = os.path.join(ROOT, "docs", "ecosystem.md")
PAGE_ZH = os.path.join(ROOT, "docs", "zh", "ecosystem.md")
#: One recipe per library the page promises.
RECIPES = ("mini_hf_bert.integrations import Trainer", "from accelerate import", "from peft import",
           "from sentence_transformers import", "import onnxruntime", "transformers.pipeline(", "dynamo=False",
           ".generate(", "transformers.EncoderDecoderModel(", "from captum.attr import", "shap.Explainer(", "from bertviz import")


def blocks(path: str) -> list[str]:
    with open(path, encoding="utf-8") as f:
        return BLOCK.findall(f.read())


def test_every_library_has_a_recipe_and_the_chinese_page_the_same_code():
    english = blocks(PAGE)
    assert all(any(recipe in block for block in english) for recipe in RECIPES)
    assert all(any(EXPECTED_PRINT.match(line) for line in block.splitlines()) for block in english)
    assert blocks(PAGE_ZH) == english
    with open(PAGE_ZH, encoding="utf-8") as f:
        assert len(re.findall(r"[\u4e00-\u9fff]", f.read())) > 500  # Chinese prose, not a copy of the English


#: Recipes run side by side: each is one process on one thread, so two keep both cores busy.
RECIPES_AT_ONCE = 2


def run_alone(block: str, directory) -> subprocess.CompletedProcess:
    """One recipe in a process of its own, as a user runs it: accelerate's state, for one,
    is per process, and Trainer's sets it up before the accelerate recipe would."""
    env = dict(os.environ, HF_HUB_OFFLINE="1", PYTHONWARNINGS="ignore", OMP_NUM_THREADS="1")
    return subprocess.run([sys.executable, "-c", RUNNER], input=json.dumps([block]), capture_output=True,
                          text=True, cwd=directory, env=env, timeout=600)


@pytest.fixture(scope="module")
def recipe_runs(tmp_path_factory):
    """Every recipe run, RECIPES_AT_ONCE at a time, each in a directory of its own: {index: process}."""
    from concurrent.futures import ThreadPoolExecutor

    page = blocks(PAGE)
    with ThreadPoolExecutor(RECIPES_AT_ONCE) as pool:
        futures = {i: pool.submit(run_alone, block, tmp_path_factory.mktemp(f"recipe{i}")) for i, block in enumerate(page)}
        return {i: future.result() for i, future in futures.items()}


@pytest.mark.parametrize("index", range(len(blocks(PAGE))))
def test_recipe_runs_and_prints_what_it_says(recipe_runs, index):
    block = blocks(PAGE)[index]
    run = recipe_runs[index]
    assert run.returncode == 0, run.stderr[-3000:]
    result = json.loads(run.stdout.splitlines()[-1])[0]
    assert "error" not in result, f"ecosystem.md recipe {index + 1} fails:\n{block}\n{result['error']}"
    expected = [m.group(1) for line in block.splitlines() if (m := EXPECTED_PRINT.match(line))]
    printed = result["stdout"].splitlines()
    assert printed == expected, f"ecosystem.md recipe {index + 1} prints {printed}, its comments say {expected}"
