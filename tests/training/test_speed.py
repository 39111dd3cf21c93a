"""The training benchmark (mini_hf_bert/training/speed.py, ``benchmark-training``): what it
counts, that every contender trains the same model, and its errors. Timings themselves
belong to the benchmark, never to a test."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch

from mini_hf_bert import BertConfig
from mini_hf_bert.checkpoints.bundled import chinese_checkpoint_dir
from mini_hf_bert_benchmarks import training_speed as speed

TINY = dict(vocab_size=40, hidden_size=8, num_hidden_layers=2, num_attention_heads=2, intermediate_size=16)


def test_the_phases_are_the_shipped_recipe():
    import json
    import os

    with open(os.path.join(chinese_checkpoint_dir(), "recipe.json"), encoding="utf-8") as f:
        recipe = json.load(f)
    for (phase, (batch_size, length)), command in zip(speed.PHASES.items(), (p["command"] for p in recipe["phases"].values())):
        assert f"--batch-size {batch_size} " in command and f"--max-seq-length {length} " in command, (phase, command)


def test_step_flops_counts_real_tokens_and_masked_positions():
    config = BertConfig(**TINY)
    mask = torch.tensor([[1, 1, 1, 0], [1, 1, 0, 0]])
    labels = torch.tensor([[-100, 5, -100, -100], [-100, -100, -100, -100]])
    batch = dict(attention_mask=mask, labels=labels)
    # by hand: 5 real tokens; per layer 2·5·8·(32 + 32) = 5120 for the Linears, 2·2·(9 + 4)·8 = 416 for attention;
    # one masked position: 2·8·(8 + 40) = 768; two sequences: 2·2·8·10 = 320
    forward = 2 * (5120 + 416) + 768 + 320
    assert speed.step_flops(config, batch) == 3 * forward
    padded = dict(attention_mask=torch.ones(2, 4, dtype=torch.long), labels=labels)
    assert speed.step_flops(config, padded) > speed.step_flops(config, batch)  # padding would count as work


def test_every_contender_takes_the_same_first_step():
    """Same weights, same batch, dropout off: each contender's first step gives the same loss
    (transformers' scores the vocabulary at every position, but the loss is at the masked ones)."""
    config = BertConfig(**TINY, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    steps, notes = speed.contenders(config, "fp32")
    assert notes == [] and len(steps) == 3
    generator = torch.Generator().manual_seed(0)
    ids = torch.randint(5, 40, (4, 6), generator=generator)
    mask = torch.tensor([[1] * 6, [1] * 4 + [0] * 2, [1] * 6, [1] * 3 + [0] * 3])
    labels = torch.full_like(ids, -100)
    labels[:, 1] = ids[:, 1]
    batch = dict(input_ids=ids * mask, token_type_ids=torch.zeros_like(ids), attention_mask=mask, labels=labels,
                 next_sentence_label=torch.tensor([0, 1, 0, 1]))
    losses = {name: step(batch) for name, step in steps.items()}
    values = list(losses.values())
    for name, value in losses.items():
        torch.testing.assert_close(value, values[0], atol=1e-5, rtol=0, msg=name)


@pytest.mark.parametrize("kwargs, message", [
    (dict(runs=0), "runs must be a positive int, got 0"),
    (dict(documents=-3), "documents must be a positive int, got -3"),
    (dict(runs=10**9), "runs=1000000000: at most 1000"),
    (dict(phases=("phase 3",)), "unknown phase or dtype ['phase 3']"),
    (dict(dtypes=("fp16",)), "unknown phase or dtype ['fp16']"),
])
def test_bad_arguments_are_refused_before_anything_runs(kwargs, message):
    with pytest.raises(ValueError) as error:
        speed.run_training_benchmark(**kwargs)
    assert message in str(error.value)


def test_too_few_documents_for_a_batch_is_one_line_naming_it():
    result = subprocess.run([sys.executable, "-m", "mini_hf_bert", "benchmark-training", "--phase", "1",
                             "--dtype", "fp32", "--runs", "1", "--documents", "1"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.strip().splitlines()[-1].startswith("error: 1 documents make ")
    assert "fewer than the batch of 128: draw more documents" in result.stderr and "Traceback" not in result.stderr


def test_a_short_run_reports_every_contender():
    report = speed.run_training_benchmark(phases=("phase 1",), dtypes=("fp32",), runs=1, documents=speed.QUICK_DOCUMENTS)
    names = [t.contender for t in report.timings]
    assert names[:2] == [speed.SDPA, speed.FAST] and names[2].startswith(speed.TRANSFORMERS)
    today = report.timings[0]
    assert today.vs_today == 1.0
    for timing in report.timings:
        assert timing.ms > 0 and timing.tokens_per_s > 0 and timing.roofline_share > 0
        assert timing.vs_transformers == pytest.approx(report.timings[2].ms / timing.ms)
    # The share's size depends on the load (the step and the large product are timed apart,
    # and one measured 1.02 once), so its arithmetic is checked instead: every contender
    # steps on the same batches, so share x time (the step's FLOPs over the rate) is equal.
    step_work = [timing.roofline_share * timing.ms for timing in report.timings]
    assert step_work == pytest.approx([step_work[0]] * len(step_work))
    assert 0.5 < report.fill["phase 1"] <= 1.0
    text = speed.format_training_report(report)
    assert "### phase 1: 128 x 32, fp32" in text and all(name in text for name in names)
