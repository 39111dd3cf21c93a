"""accelerate on our models: accelerate's own training loop (tests/integrations/accelerate_train.py)
gives the loss curve of transformers' model with the same weights, in fp32 and under
``Accelerator(mixed_precision="bf16")`` (which failed before: an output rebuilt from a
dict); and under torchrun with 2 processes the same curve and weights as in one."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import torch
import transformers

import mini_hf_bert
from mini_hf_bert.parity.compare import FP32_ATOL

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "accelerate_train.py")


def _train(out, *options: str, processes: int = 1) -> list[float]:
    if processes == 1:
        command = [sys.executable, SCRIPT, str(out), *options]
    else:
        command = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", str(processes),
                   "--standalone", SCRIPT, str(out), *options]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    with open(os.path.join(out, "losses.json")) as f:
        recorded = json.load(f)
    assert recorded["processes"] == processes
    return recorded["losses"]


@pytest.mark.parametrize("precision", ["no", "bf16"])
def test_accelerate_loop_equals_transformers(precision, tmp_path):
    ours = _train(tmp_path / "ours", "--mixed-precision", precision)
    theirs = _train(tmp_path / "theirs", "--mixed-precision", precision, "--library", "transformers")
    assert len(ours) == 5 and ours == pytest.approx(theirs, abs=FP32_ATOL)
    trained = mini_hf_bert.BertForMaskedLM.from_pretrained(tmp_path / "ours")
    reference = transformers.BertForMaskedLM.from_pretrained(tmp_path / "theirs")
    for name, value in reference.state_dict().items():
        assert torch.allclose(trained.state_dict()[name], value, atol=FP32_ATOL), name


def test_torchrun_with_two_processes_equals_one(tmp_path):
    one = _train(tmp_path / "one")
    two = _train(tmp_path / "two", processes=2)
    assert two == pytest.approx(one, abs=FP32_ATOL)  # the gradient all-reduce sums in another order
    a = mini_hf_bert.BertForMaskedLM.from_pretrained(tmp_path / "one")
    b = mini_hf_bert.BertForMaskedLM.from_pretrained(tmp_path / "two")
    for name, value in a.state_dict().items():
        assert torch.allclose(b.state_dict()[name], value, atol=FP32_ATOL), name
