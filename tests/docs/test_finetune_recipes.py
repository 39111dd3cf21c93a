"""docs/training.md (en, zh) gives the fine-tuning recipe that tools/finetune_recipe_study.py
studied, and the study's table as the tool renders it from its JSON."""

from __future__ import annotations

import json
import os

from tools import finetune_recipe_study as study

from ..paths import ROOT


def test_the_pages_give_the_studied_recipe_and_its_table():
    with open(study.OUT, encoding="utf-8") as f:
        record = json.load(f)
    assert {run["recipe"] for run in record["runs"]} <= set(study.RECIPES)
    assert any(run["recipe"] == study.DOCUMENTED for run in record["runs"])
    for page, language in study.PAGES.items():
        with open(os.path.join(ROOT, page), encoding="utf-8") as f:
            text = f.read()
        for example in ("--dev docs/examples/my_topics_dev.csv", "--dev-fraction 0.25"):
            assert f"{example} {study.documented_options()}" in text, (page, example)
        assert f"{study.BEGIN}\n{study.table(record, language)}\n{study.END}" in text, page


def test_the_documented_options_are_the_recipe():
    options = study.RECIPES[study.DOCUMENTED]
    assert study.documented_options().split() == [
        "--max-steps", str(options["max_steps"]), "--batch-size", str(options["batch_size"]),
        "--learning-rate", "5e-4" if options["learning_rate"] == 5e-4 else repr(options["learning_rate"]),
        "--eval-every", str(options["eval_every"])]
