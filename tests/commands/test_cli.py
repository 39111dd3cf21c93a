"""The command line, run as a user runs it: ``python -m mini_hf_bert ...`` in a subprocess."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

import pytest
from ..paths import FIXTURES


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mini_hf_bert", *args], capture_output=True, text=True, timeout=600)


def test_demo_prints_similarities_and_parity_within_tolerance():
    result = _run("demo")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "BertModel: 6 layers, hidden 384, 12 heads, vocab 30522" in out
    assert "Cosine similarity of the mean-pooled last_hidden_state:" in out
    # The two guitar sentences are closer to each other than to the bread question.
    matrix = out.split("Cosine similarity of the mean-pooled last_hidden_state:")[1].split("\n\n")[0]
    rows = {line.split()[0]: [float(v) for v in line.split()[1:]] for line in matrix.splitlines()[2:]}
    assert len(rows) == 5 and all(abs(rows[f"[{i}]"][i] - 1.0) < 1e-3 for i in range(5))
    assert rows["[0]"][1] > 0.5 > rows["[0]"][4]
    parity_lines = [line for line in out.splitlines() if line.strip().startswith(("eager:", "sdpa:"))]
    assert len(parity_lines) == 4 and all(line.endswith("within tolerance") for line in parity_lines)
    assert "All outputs within tolerance" in out


def test_demo_on_another_checkpoint(bert_base_legacy_dir, minilm_dir, tmp_path):
    """--checkpoint runs the same on any HF-format directory; here bert-base in the hub's
    legacy layout, with the uncased vocabulary beside it."""
    import shutil

    shutil.copytree(bert_base_legacy_dir, tmp_path / "bert", dirs_exist_ok=True)
    shutil.copy(f"{minilm_dir}/vocab.txt", tmp_path / "bert")
    result = _run("demo", "--checkpoint", str(tmp_path / "bert"), "--sentence", "one", "--sentence", "two words")
    assert result.returncode == 0, result.stderr
    assert "BertModel: 12 layers, hidden 768, 12 heads, vocab 30522" in result.stdout
    assert "[1] two words" in result.stdout and "All outputs within tolerance" in result.stdout


def test_parity_command_lists_every_module():
    result = _run("parity")
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stdout.splitlines() if "within tolerance" in line or "OUT OF" in line]
    assert any(line.strip().startswith("encoder.layer.5.output.LayerNorm ") for line in lines)
    assert len(lines) > 6 * 15 and all(line.endswith("within tolerance") for line in lines)


@pytest.mark.parametrize("args,message", [
    (("demo", "--checkpoint", "/nonexistent/dir"), "error: /nonexistent/dir: no such directory"),
    (("parity", "--checkpoint", "/nonexistent/dir"), "error: /nonexistent/dir: no such directory"),
])
def test_bad_checkpoint_is_one_line_not_a_traceback(args, message):
    result = _run(*args)
    assert result.returncode == 2
    assert result.stderr.strip() == message + ", TensorFlow checkpoint prefix or .zip (and not a hub model id)"
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("args,message", [
    (("benchmark", "--device", "tpu"), "error: --device tpu: the GPU benchmark runs on cuda or cuda:N"),
    (("benchmark", "--dtype", "fp16", "--workload", "W2"), "error: --dtype fp16: the CPU benchmark runs fp32 and bf16"),
])
def test_benchmark_refuses_a_device_or_dtype_it_cannot_run(args, message):
    result = _run(*args)
    assert result.returncode == 2 and result.stderr.startswith(message), result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_benchmark_on_cuda_without_a_gpu_says_so():
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA GPU: the refusal is for machines without one")
    result = _run("benchmark", "--device", "cuda", "--workload", "W2")
    assert result.returncode == 2 and result.stderr.startswith("error: --device cuda: torch "), result.stderr
    assert "sees no CUDA GPU" in result.stderr and "Traceback" not in result.stderr


GOOGLE = os.path.join(FIXTURES, "tf")
GOOGLE_FORMS = ["bert_pretraining", "bert_pretraining/bert_model.ckpt", "bert_model.ckpt.zip"]


@pytest.fixture(scope="module")
def google_form_runs():
    """``demo`` and ``parity`` on each form of the Google checkpoint, all six commands
    started at once (they only read the checkpoint; each converts into a temporary
    directory of its own), so the cores run them side by side: {(command, form): result}."""
    started = {}
    for form in GOOGLE_FORMS:
        src = os.path.join(GOOGLE, form)
        for command in (["demo", "--checkpoint", src, "--sentence", "tok1 tok2", "--sentence", "tok3"],
                        ["parity", "--checkpoint", src]):
            started[command[0], form] = subprocess.Popen([sys.executable, "-m", "mini_hf_bert", *command],
                                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    finished = {}
    for key, process in started.items():
        stdout, stderr = process.communicate(timeout=600)
        finished[key] = subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
    return finished


@pytest.mark.parametrize("form", GOOGLE_FORMS)
def test_demo_and_parity_take_a_google_checkpoint_in_every_form(form, google_form_runs):
    """mini_hf_bert reads the Google checkpoint as it is; transformers reads a converted copy."""
    demo = google_form_runs["demo", form]
    assert demo.returncode == 0, demo.stderr
    assert "BertModel: 2 layers, hidden 16, 4 heads, vocab 40" in demo.stdout and "All outputs within tolerance" in demo.stdout
    parity = google_form_runs["parity", form]
    assert parity.returncode == 0, parity.stderr
    assert "encoder.layer.1.output.LayerNorm " in parity.stdout and "OUT OF" not in parity.stdout
    assert "Traceback" not in demo.stderr + parity.stderr


def test_inspect_lists_a_weights_only_directory(minilm_dir, tmp_path):
    """from_pretrained takes such a directory with config=; inspect needs no config to list it."""
    os.link(os.path.join(minilm_dir, "model.safetensors"), tmp_path / "model.safetensors")
    result = _run("inspect", str(tmp_path), "--no-progress")
    assert result.returncode == 0, result.stderr
    assert "6 layers" in result.stdout and "the weights do not fix it" in result.stdout  # the heads: no config


@pytest.mark.parametrize("args", [["--help"], ["pretrain", "--help"], ["finetune", "--help"], ["demo", "--help"]])
def test_help_imports_no_torch(args):
    """``--help`` answers from the parsers alone: the package root imports its names on
    first use, and each command imports the library when it runs."""
    probe = ("import runpy, sys\n"
             f"sys.argv = ['mini_hf_bert', *{args!r}]\n"
             "try:\n    runpy.run_module('mini_hf_bert', run_name='__main__')\n"
             "except SystemExit as e:\n    assert e.code == 0, e.code\n"
             "print('torch imported:', 'torch' in sys.modules)\n")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "usage:" in result.stdout and result.stdout.rstrip().endswith("torch imported: False")


@pytest.mark.parametrize("command", ["pretrain", "finetune"])
def test_training_help_shows_every_default(command):
    """Every option of the training commands that takes a value says what it is when not
    given (issue: a learner ran the CI size without knowing it was the default)."""
    from mini_hf_bert.__main__ import build_parser

    parser = build_parser()
    subparser = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[command]
    silent = [action.option_strings[0] for action in subparser._actions
              if action.option_strings and action.nargs != 0 and "default" not in (action.help or "")]
    assert silent == [], f"{command} --help: these options do not say their default: {silent}"
    actions = {action.dest: action for action in subparser._actions}
    assert actions["attn_implementation"].default == "fast" and "%(default)s" in actions["attn_implementation"].help
    assert "--no-bf16" in actions["bf16"].option_strings and actions["bf16"].default is None  # None: where native
    if command == "pretrain":
        assert "(default: small; --quick: quick)" in actions["size"].help


def test_pretrain_size_names_match_the_model_sizes():
    """--help names the sizes without importing torch; they are training/pretraining.py's."""
    from mini_hf_bert.commands.training import PRETRAIN_SIZES, SIZED
    from mini_hf_bert.training.pretraining import MODEL_SIZES

    assert list(PRETRAIN_SIZES) == list(MODEL_SIZES)
    for name, (hidden, layers, _, _) in MODEL_SIZES.items():
        assert PRETRAIN_SIZES[name].startswith(f"{layers}x{hidden}"), name
    assert SIZED["size"][0] != "quick", "the default size is not the CI size"


def test_a_reader_that_leaves_early_gets_no_error(tmp_path):
    """`tokenize ... | head`: the pipe is closed before the command writes; it stops
    quietly (no 'Broken pipe' line), with SIGPIPE's status."""
    process = subprocess.Popen([sys.executable, "-m", "mini_hf_bert", "tokenize", "My favorite food is 饺子."],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
    process.stdout.close()  # the reader is gone before the first line is written
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=300) == 128 + 13 and stderr == ""
