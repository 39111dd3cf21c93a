"""Training as a whole against transformers: from the same weights, with the same batches
and seed and dropout on, 20 optimiser steps (AdamW, linear warm-up and decay, clipping at
global norm 1.0) end with every parameter of ours within FP32_ATOL of transformers' run.
And Google's optimiser and schedule, against their formulas written out here."""

from __future__ import annotations

import math

import pytest
import torch
import transformers

from mini_hf_bert.training.optimization import (
    MAX_GRAD_NORM,
    AdamWeightDecay,
    get_google_schedule,
    get_linear_schedule_with_warmup,
    parameter_groups,
)
from mini_hf_bert.parity.compare import FP32_ATOL, ParityRow, max_abs_diff

from .test_training import _batch, _pair

STEPS, WARMUP, LR = 20, 4, 5e-3  # a large rate, so that 20 steps move the weights far


def _batches(class_name: str, vocab: int) -> list[dict]:
    return [_batch(class_name, vocab, seed=100 + step) for step in range(STEPS)]


def _train(model, batches, optimizer, scheduler) -> list[float]:
    losses = []
    for step, batch in enumerate(batches):
        torch.manual_seed(1000 + step)  # dropout: the same masks in both runs
        loss = model(**batch).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), MAX_GRAD_NORM)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad(set_to_none=True)
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("class_name,extra", [("BertForPreTraining", {}), ("BertForSequenceClassification", {"num_labels": 3})])
def test_twenty_adamw_steps_end_where_transformers_ends(class_name, extra, record_parity):
    ours, theirs = _pair(class_name, **extra)  # the same weights, eager attention (sdpa's dropout differs)
    start = {n: p.detach().clone() for n, p in ours.named_parameters()}
    batches = _batches(class_name, ours.config.vocab_size)
    runs = {}
    for name, model, schedule in (("ours", ours.train(), get_linear_schedule_with_warmup),
                                  ("theirs", theirs.train(), transformers.get_linear_schedule_with_warmup)):
        optimizer = torch.optim.AdamW(parameter_groups(model, 0.01), lr=LR)
        runs[name] = _train(model, batches, optimizer, schedule(optimizer, WARMUP, STEPS))
    theirs_params = dict(theirs.named_parameters())
    rows = [ParityRow(f"loss of step {i + 1}", abs(a - b)) for i, (a, b) in enumerate(zip(runs["ours"], runs["theirs"]))]
    rows += [ParityRow(f"after {STEPS} steps: {n}", max_abs_diff(p, theirs_params[n])) for n, p in ours.named_parameters()]
    record_parity(f"training: {STEPS} AdamW steps with warm-up, decay and clipping, dropout on ({class_name})", rows)
    assert all(r.ok for r in rows), [(r.name, r.max_abs_diff) for r in rows if not r.ok]
    moved = max(max_abs_diff(p, start[n]) for n, p in ours.named_parameters())
    assert moved > 100 * FP32_ATOL  # the steps moved the weights: the comparison compares something


def test_google_adam_weight_decay_follows_its_formula():
    """Google's update, written out: no bias correction, eps outside the root, decay added to
    the update, none for LayerNorm and biases; its schedule's decay starts at step 0."""
    torch.manual_seed(0)
    model = torch.nn.Sequential()
    model.add_module("dense", torch.nn.Linear(3, 2))
    model.add_module("LayerNorm", torch.nn.LayerNorm(2))
    optimizer = AdamWeightDecay(parameter_groups(model), lr=0.1)
    scheduler = get_google_schedule(optimizer, num_warmup_steps=2, num_training_steps=10)
    expected = {n: p.detach().clone() for n, p in model.named_parameters()}
    m = {n: torch.zeros_like(p) for n, p in expected.items()}
    v = {n: torch.zeros_like(p) for n, p in expected.items()}
    x = torch.randn(5, 3)
    for step in range(6):
        lr = 0.1 * (step / 2 if step < 2 else 1 - step / 10)
        assert math.isclose(optimizer.param_groups[0]["lr"], lr, abs_tol=1e-12)
        loss = model(x).pow(2).sum()
        loss.backward()
        grads = {n: p.grad.clone() for n, p in model.named_parameters()}
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
        for n in expected:
            m[n] = 0.9 * m[n] + 0.1 * grads[n]
            v[n] = 0.999 * v[n] + 0.001 * grads[n] ** 2
            update = m[n] / (v[n].sqrt() + 1e-6)
            if n == "dense.weight":  # the only parameter that is neither a bias nor LayerNorm
                update = update + 0.01 * expected[n]
            expected[n] = expected[n] - lr * update
        for n, p in model.named_parameters():
            assert torch.allclose(p, expected[n], atol=FP32_ATOL, rtol=0), (step, n)  # same math, other op order


@pytest.mark.parametrize("call,message", [
    (lambda o: get_linear_schedule_with_warmup(o, 5, 0), "num_training_steps must be a positive int, got 0"),
    (lambda o: get_google_schedule(o, 11, 10), r"num_warmup_steps must be an int from 0 to num_training_steps \(10\)"),
    (lambda o: AdamWeightDecay([torch.nn.Parameter(torch.zeros(1))], lr=-1), "must be >= 0"),
])
def test_bad_optimiser_arguments_are_named(call, message):
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1)
    with pytest.raises(ValueError, match=message):
        call(optimizer)
