"""The bad-input corpus (``bad_inputs.py``) through every command that reads a checkpoint,
and a corpus of wrong model inputs and command lines: each ends in one line naming the file
or argument and the problem, exit status 2, never a traceback, and nothing is left half-done."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
import sys

import pytest
import torch

import mini_hf_bert
from mini_hf_bert.__main__ import main

from .bad_inputs import ALL, CASES, LIKE_DEMO
from ..conftest import small_config_kwargs


@pytest.fixture
def good(tmp_path, minilm_dir) -> str:
    """A valid small checkpoint with a real vocabulary: config.json, model.safetensors, vocab.txt."""
    directory = str(tmp_path / "good")
    torch.manual_seed(0)
    mini_hf_bert.BertModel(mini_hf_bert.BertConfig(**small_config_kwargs("tiny"))).save_pretrained(directory)
    shutil.copy(os.path.join(minilm_dir, "vocab.txt"), directory)
    return directory


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def _argv(command: str, src: str, tmp_path) -> list[str]:
    return {
        "inspect": ["inspect", src, "--no-progress"],
        "convert": ["convert", src, str(tmp_path / "out"), "--no-progress"],
        "demo": ["demo", "--checkpoint", src],
        "parity": ["parity", "--checkpoint", src],
        "trace": ["trace", "a short text", "--checkpoint", src],
        "attention": ["attention", "a short text", "--checkpoint", src, "--out", str(tmp_path / "attention.png")],
    }[command]


def _error_lines(stderr: str) -> list[str]:
    # Loading warnings (logging) may come first; the error itself is one line.
    return [line for line in stderr.splitlines() if line.startswith("error:")]


@pytest.mark.parametrize("command", ALL)
@pytest.mark.parametrize("case", list(CASES))
def test_every_command_refuses_each_bad_input_in_one_line(case, command, good, tmp_path):
    build, fragment, refusing = CASES[case]
    if "demo" in refusing:
        refusing = tuple(refusing) + LIKE_DEMO
    src = build(good)
    code, _, err = _cli(*_argv(command, src, tmp_path))
    if command not in refusing:  # this input is fine for this command (it reads no such file)
        assert code == 0, err
        return
    errors = _error_lines(err)
    assert code == 2 and len(errors) == 1, err
    assert fragment in errors[0], errors[0]
    assert "Traceback" not in err and "(unexpected" not in errors[0]
    if command == "attention":
        assert not (tmp_path / "attention.png").exists()
    if command == "convert":
        assert not (tmp_path / "out").exists()
        assert not [p for p in tmp_path.iterdir() if p.name.startswith((".converting-", ".replaced-"))]


@pytest.mark.parametrize("case", ["bin: calls os.system", "index: weight_map values are lists", "config: a JSON list",
                                  "zip: a member escaping the directory"])
def test_the_real_command_line_prints_one_line_and_v_shows_the_traceback(case, good, tmp_path):
    build, fragment, _ = CASES[case]
    src = build(good)
    run = lambda *extra: subprocess.run([sys.executable, "-m", "mini_hf_bert", *extra, "convert", src, str(tmp_path / "o")],  # noqa: E731
                                        capture_output=True, text=True, timeout=300)
    quiet = run()
    assert quiet.returncode == 2 and "Traceback" not in quiet.stderr
    assert quiet.stderr.strip().splitlines()[-1].startswith("error: ") and fragment in quiet.stderr
    verbose = run("-v")
    assert verbose.returncode == 2 and "Traceback (most recent call last)" in verbose.stderr


# ------------------------------------------------------------------ command lines


@pytest.mark.parametrize("argv,fragment", [
    (["convert", "{good}"], "convert needs DST"),
    (["convert", "{good}", "{file}/sub"], "{file} is a file, not a directory"),
    (["convert", "{good}", "{good}"], "is the source"),
    (["convert", "{good}", "{tmp}"], "holds the source"),
    (["convert", "{good}", "{nonempty}"], "exists and is not empty; pass overwrite=True (--overwrite)"),
    (["convert", "{good}", "{tmp}/o", "--config", "{tmp}/none.json"], "none.json: no such config file"),
    (["convert", "{good}", "{tmp}/o", "--config", "{file}"], "file.txt: not valid JSON"),
    (["convert", "{good}", "{tmp}/o", "--config", "{nonempty}"], "is a directory, not a config file"),
    (["inspect", "not-a-cached-model"], "not-a-cached-model: no such local directory or file, and as a hub id"),
    (["demo", "--checkpoint", "{good}/vocab.txt"], "vocab.txt: is a file that is neither"),
])
def test_command_line_mistakes(argv, fragment, good, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    (tmp_path / "file.txt").write_text("plain text")
    (tmp_path / "nonempty").mkdir()
    (tmp_path / "nonempty" / "keep").write_text("x")
    names = dict(good=good, tmp=str(tmp_path), file=str(tmp_path / "file.txt"), nonempty=str(tmp_path / "nonempty"))
    code, _, err = _cli(*[a.format(**names) for a in argv])
    errors = _error_lines(err)
    assert code == 2 and len(errors) == 1 and fragment.format(**names) in errors[0], err
    assert "(unexpected" not in errors[0]
    assert (tmp_path / "nonempty" / "keep").read_text() == "x"


@pytest.mark.parametrize("argv", [["frobnicate"], ["convert"], ["convert", "a", "b", "--do_lower_case", "maybe"],
                                  ["parity", "--attn-implementation", "flash"]])
def test_argument_errors_are_argparse_usage_errors(argv):
    result = subprocess.run([sys.executable, "-m", "mini_hf_bert", *argv], capture_output=True, text=True, timeout=300)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith("python -m mini_hf_bert")


# ------------------------------------------------------------------ model inputs


def _tiny(class_name="BertModel"):
    torch.manual_seed(0)
    return getattr(mini_hf_bert, class_name)(mini_hf_bert.BertConfig(**small_config_kwargs("tiny"))).eval()


IDS = torch.tensor([[1, 2, 3], [4, 5, 6]])
MODEL_INPUTS = {
    "no input": (dict(), ValueError, "pass exactly one of input_ids or inputs_embeds"),
    "both ids and embeddings": (dict(input_ids=IDS, inputs_embeds=torch.zeros(2, 3, 64)), ValueError, "exactly one"),
    "ids as a list": (dict(input_ids=[[1, 2, 3]]), TypeError, "input_ids must be a torch.Tensor, got list"),
    "float ids": (dict(input_ids=IDS.float()), TypeError, "input_ids must hold integer ids, got dtype torch.float32"),
    "boolean ids": (dict(input_ids=IDS > 2), TypeError, "input_ids must hold integer ids, got dtype torch.bool"),
    "1-D ids": (dict(input_ids=IDS[0]), ValueError, "input_ids must be (batch, seq)"),
    "3-D ids": (dict(input_ids=IDS[None]), ValueError, "input_ids must be (batch, seq)"),
    "an id past the vocabulary": (dict(input_ids=torch.tensor([[1, 211]])), ValueError, "input_ids must lie in [0, vocab_size=211)"),
    "a negative id": (dict(input_ids=torch.tensor([[-1, 2]])), ValueError, "got values in [-1, 2]"),
    "too long for the positions": (dict(input_ids=torch.ones(1, 41, dtype=torch.long)), ValueError,
                                   "sequence length 41 exceeds max_position_embeddings=40"),
    "mask of another length": (dict(input_ids=IDS, attention_mask=torch.ones(2, 4)), ValueError,
                               "attention_mask must be (batch, seq) = (2, 3)"),
    "4-D mask": (dict(input_ids=IDS, attention_mask=torch.ones(2, 1, 3, 3)), ValueError, "attention_mask must be 2D"),
    "segment id 2 of 2 types": (dict(input_ids=IDS, token_type_ids=torch.full((2, 3), 2)), ValueError,
                                "token_type_ids must lie in [0, type_vocab_size=2)"),
    "segments of another shape": (dict(input_ids=IDS, token_type_ids=torch.zeros(2, 4, dtype=torch.long)), ValueError,
                                  "token_type_ids must be (batch, seq) = (2, 3)"),
    "position past the table": (dict(input_ids=IDS, position_ids=torch.tensor([[0, 1, 40]])), ValueError,
                                "position_ids must lie in [0, max_position_embeddings=40)"),
    "positions of another shape": (dict(input_ids=IDS, position_ids=torch.zeros(3, 3, dtype=torch.long)), ValueError,
                                   "position_ids must be (batch, seq)"),
    "embeddings of another width": (dict(inputs_embeds=torch.zeros(2, 3, 65)), ValueError,
                                    "inputs_embeds must be (batch, seq, hidden_size) = (*, *, 64)"),
    "a head mask of the wrong size": (dict(input_ids=IDS, head_mask=torch.ones(5)), ValueError, "head_mask must be (num_heads,)"),
    "a prefix that is no (K, V) per layer": (dict(input_ids=IDS, past_key_values=((IDS, IDS),) * 2), ValueError,
                                             "past_key_values[0] must start with K and V, each (batch, heads, "
                                             "positions, 16)"),
    "encoder states without cross-attention": (dict(input_ids=IDS, encoder_hidden_states=torch.zeros(2, 3, 64)), ValueError,
                                               "this model has no cross-attention layers"),
}


@pytest.mark.parametrize("case", list(MODEL_INPUTS))
def test_wrong_model_inputs_are_named(case):
    kwargs, error, fragment = MODEL_INPUTS[case]
    with pytest.raises(error) as info:
        _tiny()(**kwargs)
    assert fragment in str(info.value)


@pytest.mark.parametrize("class_name,labels,fragment", [
    ("BertForSequenceClassification", dict(labels=torch.tensor([0, 2])), "labels must be in [0, 2) or -100"),
    ("BertForSequenceClassification", dict(labels=torch.tensor([0])), "labels must have shape (2,)"),
    ("BertForTokenClassification", dict(labels=torch.zeros(2, 4, dtype=torch.long)), "labels must have shape (2, 3)"),
    ("BertForMaskedLM", dict(labels=torch.full((2, 3), 211)), "labels must be in [0, 211) or -100"),
    ("BertForMaskedLM", dict(labels=torch.zeros(2, 3)), "labels must hold integer class ids"),
    ("BertForPreTraining", dict(labels=torch.zeros(2, 3, dtype=torch.long), next_sentence_label=torch.tensor([0, 2])),
     "next_sentence_label must be in [0, 2) or -100"),
    ("BertForQuestionAnswering", dict(start_positions=torch.tensor([0.5, 1.0]), end_positions=torch.tensor([1, 2])),
     "start_positions must hold integer class ids"),
])
def test_wrong_labels_are_named(class_name, labels, fragment):
    with pytest.raises((ValueError, TypeError)) as info:
        _tiny(class_name)(IDS, **labels)
    assert fragment in str(info.value)
