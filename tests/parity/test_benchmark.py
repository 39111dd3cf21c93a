"""The benchmark's machinery (python -m mini_hf_bert benchmark), on a small model: every
contender runs and computes the same function. Timings are never asserted here. Marked
cpu_kernels: `make test` runs this file again under its AVX2 emulation."""

from __future__ import annotations

import os

import pytest

from mini_hf_bert import BertConfig, modeling_bert_fast
from mini_hf_bert_benchmarks import inference as benchmark
from mini_hf_bert.__main__ import main
from mini_hf_bert.parity.compare import (
    BF16_MIN_COSINE,
    FAST_FP32_ATOL,
    FP32_STREAM_ERROR_RATIO,
    INT8_MIN_COSINE,
    ONNX_ATOL,
)

pytestmark = pytest.mark.cpu_kernels

SMALL = BertConfig(vocab_size=1200, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
                   max_position_embeddings=512)


@pytest.fixture(scope="module")
def report():
    peers = tuple(peer for peer in benchmark.PEERS if peer != "compile")  # compiling takes minutes
    return benchmark.run_benchmark(workloads=("W1", "W2"), dtypes=("fp32", "bf16"), runs=1, config=SMALL,
                                   peers=peers, first_output=False, accuracy=False)


#: Why the fast path's int8 route does not run on this CPU (None: it runs); the int8
#: rows are then left out, with a note (tests/core/test_fast_path.py tests the fallback).
INT8_PROBLEM = modeling_bert_fast.int8_kernel_problem()
OURS_INT8 = {benchmark.INT8} if INT8_PROBLEM is None else set()
INT8_ROWS = {"CTranslate2, int8"} | OURS_INT8


def test_every_contender_runs_and_agrees_with_fp32(report):
    fp32 = {t.contender: t for t in report.timings if t.dtype == "fp32" and t.workload == "W1"}
    assert {"mini_hf_bert fast", "mini_hf_bert sdpa", "transformers eager", "transformers sdpa", "ONNX Runtime",
            "OpenVINO", "CTranslate2", "nn.TransformerEncoder (nested tensors)"} | INT8_ROWS <= fp32.keys()
    not_in_fp32 = {benchmark.ABLATIONS["route"][1], benchmark.ABLATIONS["fp32_stream"][1]}
    assert {label for _, label in benchmark.ABLATIONS.values()} - fp32.keys() <= not_in_fp32
    for name, timing in fp32.items():
        assert timing.ms > 0 and timing.tokens_per_s > 0 and timing.ratio > 0
        if name in INT8_ROWS:  # quantized: close to fp32 (tests/core/test_fast_path.py bounds it), never equal
            assert timing.max_diff > FAST_FP32_ATOL, (name, timing.max_diff)
            continue
        atol = FAST_FP32_ATOL if name.startswith(("mini_hf_bert", "fast", "transformers")) else ONNX_ATOL
        assert timing.max_diff <= atol, (name, timing.max_diff)
    assert fp32["transformers sdpa"].ratio == 1.0


def test_bf16_rows_measure_their_distance_from_fp32(report):
    bf16 = {t.contender: t for t in report.timings if t.dtype == "bf16" and t.workload == "W1"}
    assert "ONNX Runtime" not in bf16 and "CTranslate2" not in bf16 and "mini_hf_bert fast" in bf16
    if os.environ.get("ONEDNN_MAX_CPU_ISA") and "OpenVINO" not in bf16:
        # The AVX2 emulation (Makefile): OpenVINO's CPU plugin reads bf16 from the CPU's
        # flags, but its oneDNN obeys the cap and has no bf16 kernels, so it cannot compile.
        assert any(note.startswith("OpenVINO did not compile for bf16") for note in report.notes), report.notes
    else:
        assert "OpenVINO" in bf16, report.notes
    assert any("fp32 only" in note for note in report.notes)
    assert any("CTranslate2 runs fp32 and int8" in note for note in report.notes)
    low_stream = bf16[benchmark.ABLATIONS["fp32_stream"][1]]
    assert 0 < bf16["mini_hf_bert fast"].max_diff < low_stream.max_diff
    assert bf16["transformers sdpa"].max_diff > FAST_FP32_ATOL  # against fp32, not against itself


def test_a_peer_that_is_missing_becomes_a_note(monkeypatch):
    monkeypatch.setattr(benchmark.engines, "openvino_model", lambda model, example: None)
    monkeypatch.setattr(benchmark.engines, "ctranslate2_available", lambda: False)
    report = benchmark.run_benchmark(workloads=("W2",), dtypes=("fp32",), runs=1, config=SMALL, ablations=False,
                                     peers=("openvino", "ctranslate2"), first_output=False, accuracy=False)
    assert {t.contender for t in report.timings} == {"mini_hf_bert fast", "mini_hf_bert sdpa"} | OURS_INT8
    assert "OpenVINO is not installed (pip install 'mini_hf_bert[bench]')." in report.notes
    assert "CTranslate2 is not installed (pip install 'mini_hf_bert[bench]')." in report.notes


def test_report_prints_every_case_with_its_roofline(report):
    text = benchmark.format_report(report)
    for case in ("W1: 8 x 128, 742 real tokens of 1024 (28% padding), fp32", "W2: 1 x 16, 16 real tokens of 16 "
                 "(0% padding), bf16"):
        assert f"### {case}" in text
    assert text.count("GEMM roofline on the real tokens") == 4
    assert text.count("| mini_hf_bert fast |") == 4 and "Extra memory of the fast path" in text
    assert "| contender | ms | real tokens/s | vs transformers sdpa | max abs diff vs fp32 |" in text


def test_accuracy_on_the_real_checkpoint_has_every_uncompiled_mode_within_its_bounds(minilm_dir):
    """bf16 and int8 on all-MiniLM-L6-v2 within their bounds; the fp32 stream's promise in
    RMS distance (why not max |diff|: FP32_STREAM_ERROR_RATIO's comment)."""
    rows = {a.mode: a for a in benchmark.real_checkpoint_accuracy(minilm_dir, compile_modes=False)}
    expected = {mode for mode, (_, _, options) in benchmark.ACCURACY_MODES.items() if not options.get("compile")
                and (INT8_PROBLEM is None or options.get("route") != "int8")}
    assert rows.keys() == expected
    for row in rows.values():
        cosine_bound = INT8_MIN_COSINE if row.mode.startswith("int8") else BF16_MIN_COSINE
        assert row.min_token_cosine >= cosine_bound and row.min_sentence_cosine >= cosine_bound, row
        assert row.ranking_kept and row.max_diff > FAST_FP32_ATOL, row  # low precision: never fp32's result
        assert 0 < row.rms_diff < row.max_diff, row
    stream = rows["bf16, fast (residual stream and LayerNorm in fp32)"].rms_diff
    assert stream <= FP32_STREAM_ERROR_RATIO * rows["bf16, transformers-style (eager)"].rms_diff
    assert stream < rows["bf16, fast, residual stream and LayerNorm in bf16"].rms_diff


def test_int8_rows_are_left_out_with_a_note_where_int8_does_not_run(monkeypatch):
    reason = "route 'int8' needs int8 products summed in int32; a reason for this test"
    monkeypatch.setattr(modeling_bert_fast, "int8_kernel_problem", lambda: reason)
    monkeypatch.setattr(benchmark, "real_checkpoint_accuracy", lambda compile_modes: [])
    report = benchmark.run_benchmark(workloads=("W2",), dtypes=("fp32",), runs=1, config=SMALL, ablations=False,
                                     peers=(), first_output=False, accuracy=True)
    assert benchmark.INT8 not in {t.contender for t in report.timings}
    assert f"The fast path's int8 rows are left out: {reason}." in report.notes


def test_report_prints_the_accuracy_table():
    row = benchmark.Accuracy("int8, fast (per-token dynamic)", 0.19, 0.031, 0.9928, 0.9944, True)
    report = benchmark.Report("machine", [], {}, {}, {}, [], [row])
    text = benchmark.format_report(report)
    assert "| int8, fast (per-token dynamic) | 1.9e-01 | 3.1e-02 | 0.9928 | 0.9944 | yes |" in text


def test_gemm_flops_counts_linears_on_real_tokens_and_attention_per_sequence():
    config = BertConfig(vocab_size=10, hidden_size=2, num_hidden_layers=3, num_attention_heads=1, intermediate_size=4)
    # Per layer, by hand: Linears 2·M·H·(3H + H + 2I) = 2·5·2·16 = 320 on M = 5 tokens;
    # attention 2·2·(3² + 2²)·H = 104 (QKᵀ and PV within each sequence, never across).
    assert benchmark.gemm_flops(config, (3, 2)) == 3 * (320 + 104)


@pytest.mark.parametrize("argv, message", [
    (["benchmark", "--workload", "W9"], "invalid choice: 'W9'"),
    (["benchmark", "--runs", "0"], "runs must be between 1 and 1000, got 0"),
    (["benchmark", "--runs", "1000000000"], "runs must be between 1 and 1000, got 1000000000"),
    (["benchmark", "--dtype", "int4"], "invalid choice: 'int4'"),
])
def test_cli_refuses_bad_arguments_in_one_line(argv, message, capsys):
    try:
        code = main(argv)
    except SystemExit as stopped:  # argparse's own refusals
        code = stopped.code
    assert code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
