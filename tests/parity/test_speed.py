"""The benchmark that ships in the package (mini_hf_bert/parity/speed.py): mini_hf_bert's
eager, sdpa and fast paths on the same weights, with nothing else installed; and the
commands when the benchmarks beside the package (benchmarks/) are not installed."""

from __future__ import annotations

import argparse

import pytest

from mini_hf_bert.commands import benchmark as command
from mini_hf_bert.parity import speed
from mini_hf_bert.parity.compare import FAST_FP32_ATOL, FP32_ATOL

TINY = dict(vocab_size=1200, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
            max_position_embeddings=512)


@pytest.fixture
def tiny_model(monkeypatch):
    """run_speed times a model of this shape instead of bert-base's: seconds, not minutes."""
    monkeypatch.setattr(speed, "BERT_BASE", TINY)


def test_every_path_is_timed_and_checked_against_eager(tiny_model):
    timings = speed.run_speed(workloads=("W1", "W2"), dtypes=("fp32",), runs=2)
    assert [(t.workload, t.path) for t in timings] == [(w, p) for w in ("W1", "W2") for p in speed.PATHS]
    for t in timings:
        workload = speed.WORKLOADS[t.workload]
        assert t.ms > 0 and t.tokens_per_s == pytest.approx(workload.real_tokens / (t.ms / 1000))
        eager = next(e for e in timings if e.workload == t.workload and e.path == "eager")
        assert t.speedup == pytest.approx(eager.ms / t.ms)
        # fp32 eager is the reference itself; sdpa reorders nothing that matters; fast
        # reorders its sums (parity/compare.py says by how much)
        bound = {"eager": 0.0, "sdpa": FP32_ATOL, "fast": FAST_FP32_ATOL}[t.path]
        assert t.max_diff <= bound, t


def test_bf16_is_measured_against_fp32(tiny_model):
    timings = speed.run_speed(workloads=("W2",), dtypes=("bf16",), runs=1)
    assert {t.dtype for t in timings} == {"bf16"}
    # bf16 is 8 mantissa bits: it moves the output, but not by whole units
    assert all(0 < t.max_diff < 0.5 for t in timings), timings


def test_the_timings_are_alternated_in_rotating_order(monkeypatch):
    monkeypatch.setattr(speed, "SETTLE_S", 0)
    order = []
    times = speed.time_alternating({name: (lambda n=name: order.append(n)) for name in "abc"}, runs=3)
    assert order == list("abc" "bca" "cab") and all(len(v) == 3 for v in times.values())


@pytest.mark.parametrize("kwargs, message", [
    (dict(workloads=("W9",)), "workload 'W9' is not one of"),
    (dict(dtypes=("fp16",)), "dtype 'fp16' is not one of"),
    (dict(runs=0), "runs must be between 1 and 1000, got 0"),
    (dict(runs=10**9), "runs must be between 1 and 1000, got 1000000000"),
])
def test_bad_cases_are_refused_before_anything_is_built(kwargs, message):
    with pytest.raises(ValueError, match=message):
        speed.run_speed(**kwargs)


def test_default_dtypes_follow_the_cpu(monkeypatch):
    monkeypatch.setattr(speed.cpu_capability, "bf16_is_native", lambda: False)
    assert speed.default_dtypes() == ("fp32",)
    monkeypatch.setattr(speed.cpu_capability, "bf16_is_native", lambda: True)
    assert speed.default_dtypes() == ("fp32", "bf16")


def test_the_table_has_a_row_per_timing():
    rows = [speed.PathTiming("eager", "W2", "fp32", 20.0, 800.0, 0.0, 1.0),
            speed.PathTiming("fast", "W2", "fp32", 10.0, 1600.0, 3e-6, 2.0)]
    text = speed.format_speed(rows, "a machine")
    lines = text.splitlines()
    assert lines[0] == "machine: a machine" and "vs eager" in lines[2]
    assert lines[3].split() == ["W2", "fp32", "eager", "20.00", "800", "1.00x", "0.0e+00"]
    assert lines[4].split() == ["W2", "fp32", "fast", "10.00", "1600", "2.00x", "3.0e-06"]


def _args(**changes) -> argparse.Namespace:
    values = dict(device="cpu", dtype=None, workload=["W2"], runs=1, quick=False)
    values.update(changes)
    return argparse.Namespace(**values)


def test_without_the_benchmarks_the_command_times_our_own_paths(tiny_model, monkeypatch, capsys):
    monkeypatch.setattr(command, "benchmarks_installed", lambda: False)
    assert command.run_benchmark(_args(dtype=["fp32"])) == 0
    out, err = capsys.readouterr()
    assert "timing mini_hf_bert's own paths only" in err and "pip install ./benchmarks" in err
    assert [line.split()[2] for line in out.splitlines()[3:]] == list(speed.PATHS)


@pytest.mark.parametrize("run, args, message", [
    (command.run_training_benchmark, _args(phase=None, documents=None), "benchmark-training: the training benchmark"),
    (command.run_benchmark, _args(device="cuda"), "--device cuda: the GPU benchmark is in the benchmarks beside"),
])
def test_without_the_benchmarks_the_rest_says_what_to_install(monkeypatch, run, args, message):
    monkeypatch.setattr(command, "benchmarks_installed", lambda: False)
    with pytest.raises(ValueError, match=message) as raised:
        run(args)
    assert command.INSTALL_BENCHMARKS in str(raised.value)


def test_the_benchmarks_are_installed_here():
    """make venv installs them: the full comparison is what the suite and the docs run."""
    assert command.benchmarks_installed()
