"""transformers' own example scripts (tests/examples/upstream/, ported by
tools/port_examples.py: the import swap and offline metrics, nothing else) run on
mini_hf_bert's classes exactly as on transformers': the same losses step by step, the same
metrics and predictions, and a saved directory that transformers loads with the logits of
the model transformers' own run saved.

Each script runs twice on the tiny data of tests/examples/data.py from the same tiny BERT:
once with transformers' classes (the reference), once with ours (``examples_library``).
A few optimisation steps each, with the scripts' own defaults otherwise (dropout on,
checkpoints saved, the evaluation each script does).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch

from mini_hf_bert.parity.compare import FP32_ATOL

from . import data
from .runner import run_script

STEPS = 3
#: What a script logs that measures the machine, not the model: never compared.
TIMING_WORDS = ("runtime", "per_second", "total_flos")

COMMON = ["--per_device_train_batch_size", "8", "--per_device_eval_batch_size", "8", "--learning_rate", "1e-3",
          "--seed", "7"]
TRAINER = [*COMMON, "--do_train", "--do_eval", "--max_steps", str(STEPS), "--logging_steps", "1",
           "--report_to", "none", "--use_cpu", "--disable_tqdm", "true"]
NO_TRAINER = [*COMMON, "--max_train_steps", str(STEPS)]

#: script -> (data writer, extra arguments, the transformers class that reloads its output)
SCRIPTS = {
    "run_glue": (data.glue_pairs, [*TRAINER, "--max_seq_length", "32"], "AutoModelForSequenceClassification"),
    "run_glue_no_trainer": (data.glue_pairs, [*NO_TRAINER, "--max_length", "32"],
                            "AutoModelForSequenceClassification"),
    "run_mlm": (data.text_lines, [*TRAINER, "--max_seq_length", "32"], "AutoModelForMaskedLM"),
    "run_mlm_no_trainer": (data.text_lines, [*NO_TRAINER, "--max_seq_length", "32"], "AutoModelForMaskedLM"),
    "run_ner": (data.ner_tags, [*TRAINER, "--max_seq_length", "32"], "AutoModelForTokenClassification"),
    "run_qa": (data.squad, [*TRAINER, "--max_seq_length", "48", "--doc_stride", "16"],
               "AutoModelForQuestionAnswering"),
    "run_swag": (data.swag, [*TRAINER, "--max_seq_length", "32"], "AutoModelForMultipleChoice"),
}


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory) -> Path:
    return data.tiny_bert(tmp_path_factory.mktemp("tiny-bert"))


def _results(output_dir: Path) -> dict:
    """Every JSON file a run wrote at the top of its output directory (metrics, predictions,
    trainer_state.json's log), timings left out."""
    def strip(value):
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if not any(word in k for word in TIMING_WORDS)}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return {path.name: strip(json.loads(path.read_text(encoding="utf-8"))) for path in sorted(output_dir.glob("*.json"))
            if path.name not in ("config.json", "tokenizer.json", "tokenizer_config.json",
                                 "special_tokens_map.json", "generation_config.json")}


def _assert_equal_results(ours, theirs, where: str = "") -> None:
    if isinstance(theirs, dict):
        assert isinstance(ours, dict) and set(ours) == set(theirs), where
        for key in theirs:
            _assert_equal_results(ours[key], theirs[key], f"{where}/{key}")
    elif isinstance(theirs, list):
        assert isinstance(ours, list) and len(ours) == len(theirs), where
        for i, (a, b) in enumerate(zip(ours, theirs)):
            _assert_equal_results(a, b, f"{where}[{i}]")
    elif isinstance(theirs, float) and not isinstance(ours, bool):
        assert math.isclose(ours, theirs, rel_tol=0, abs_tol=FP32_ATOL) or (math.isnan(ours) and math.isnan(theirs)), \
            f"{where}: ours {ours!r}, transformers' {theirs!r}"
    else:
        assert ours == theirs, f"{where}: ours {ours!r}, transformers' {theirs!r}"


def _logits(directory: Path, class_name: str, batch: dict) -> torch.Tensor:
    import transformers

    model = getattr(transformers, class_name).from_pretrained(directory).eval()
    with torch.no_grad():
        output = model(**batch)
    return output.start_logits if class_name == "AutoModelForQuestionAnswering" else output.logits


def _batch(directory: Path, class_name: str) -> dict:
    import transformers

    tokenizer = transformers.AutoTokenizer.from_pretrained(directory)
    if class_name == "AutoModelForMultipleChoice":
        encoded = tokenizer(["the cat runs"] * 4, ["a dog", "two fish", "one tree", "big hill"], padding=True, return_tensors="pt")
        return {k: v.unsqueeze(0) for k, v in encoded.items()}
    return dict(tokenizer(["the cat runs near paris .", "alice lives in rome ."], ["where lives alice ?"] * 2, padding=True,
                          return_tensors="pt"))


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_example_script_runs_on_ours_as_on_transformers(script, tiny_bert, tmp_path):
    write_data, arguments, class_name = SCRIPTS[script]
    train, validation = write_data(tmp_path / "data")
    outputs = {}
    for library in ("transformers", "mini_hf_bert"):
        outputs[library] = tmp_path / library
        files = ["--model_name_or_path", str(tiny_bert), "--train_file", str(train), "--validation_file",
                 str(validation), "--output_dir", str(outputs[library])]
        run_script(script, [*files, *arguments], library, datasets_cache=tmp_path / "datasets")

    theirs, ours = _results(outputs["transformers"]), _results(outputs["mini_hf_bert"])
    assert theirs, f"{script} wrote no results to compare"
    _assert_equal_results(ours, theirs, script)
    if "trainer_state.json" in theirs:
        losses = [entry["loss"] for entry in theirs["trainer_state.json"]["log_history"] if "loss" in entry]
        assert len(losses) == STEPS

    # What a user does next: load the directory our run saved, with transformers.
    batch = _batch(outputs["mini_hf_bert"], class_name)
    reference_batch = _batch(outputs["transformers"], class_name)
    assert all(torch.equal(batch[key], reference_batch[key]) for key in reference_batch)
    expected = _logits(outputs["transformers"], class_name, batch)
    torch.testing.assert_close(_logits(outputs["mini_hf_bert"], class_name, batch), expected, rtol=0, atol=FP32_ATOL)
