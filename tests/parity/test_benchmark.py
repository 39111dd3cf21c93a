"""The benchmark's machinery (python -m mini_hf_bert benchmark), on a small model: every
contender runs and computes the same function. Timings are never asserted here."""

from __future__ import annotations

import pytest

from mini_hf_bert import BertConfig
from mini_hf_bert.parity import benchmark
from mini_hf_bert.commands.cli import main
from mini_hf_bert.parity.compare import FAST_FP32_ATOL, ONNX_ATOL

SMALL = BertConfig(vocab_size=1200, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
                   max_position_embeddings=512)


@pytest.fixture(scope="module")
def report():
    return benchmark.run_benchmark(workloads=("W1", "W2"), dtypes=("fp32", "bf16"), runs=1, config=SMALL,
                                   peers=("transformers", "onnxruntime", "nested"), first_output=False)


def test_every_contender_runs_and_agrees_with_transformers(report):
    fp32 = {t.contender: t for t in report.timings if t.dtype == "fp32" and t.workload == "W1"}
    assert {"mini_hf_bert fast", "mini_hf_bert sdpa", "transformers eager", "transformers sdpa", "ONNX Runtime",
            "nn.TransformerEncoder (nested tensors)"} <= fp32.keys()
    assert {label for _, label in benchmark.ABLATIONS.values()} - fp32.keys() <= {benchmark.ABLATIONS["route"][1]}
    for name, timing in fp32.items():
        atol = FAST_FP32_ATOL if name.startswith(("mini_hf_bert", "fast", "transformers")) else ONNX_ATOL
        assert timing.max_diff <= atol, (name, timing.max_diff)
        assert timing.ms > 0 and timing.tokens_per_s > 0 and timing.ratio > 0
    assert fp32["transformers sdpa"].ratio == 1.0
    bf16 = {t.contender for t in report.timings if t.dtype == "bf16"}
    assert "ONNX Runtime" not in bf16 and "mini_hf_bert fast" in bf16
    assert any("fp32 only" in note for note in report.notes)


def test_report_prints_every_case_with_its_roofline(report):
    text = benchmark.format_report(report)
    for case in ("W1: 8 x 128, 742 real tokens of 1024 (28% padding), fp32", "W2: 1 x 16, 16 real tokens of 16 "
                 "(0% padding), bf16"):
        assert f"### {case}" in text
    assert text.count("GEMM roofline on the real tokens") == 4
    assert text.count("| mini_hf_bert fast |") == 4 and "Extra memory of the fast path" in text


def test_gemm_flops_counts_linears_on_real_tokens_and_attention_per_sequence():
    config = BertConfig(vocab_size=10, hidden_size=2, num_hidden_layers=3, num_attention_heads=1, intermediate_size=4)
    # Per layer, by hand: Linears 2·M·H·(3H + H + 2I) = 2·5·2·16 = 320 on M = 5 tokens;
    # attention 2·2·(3² + 2²)·H = 104 (QKᵀ and PV within each sequence, never across).
    assert benchmark.gemm_flops(config, (3, 2)) == 3 * (320 + 104)


@pytest.mark.parametrize("argv, message", [
    (["benchmark", "--workload", "W9"], "invalid choice: 'W9'"),
    (["benchmark", "--runs", "0"], "runs must be at least 1"),
])
def test_cli_refuses_bad_arguments_in_one_line(argv, message, capsys):
    try:
        code = main(argv)
    except SystemExit as stopped:  # argparse's own refusals
        code = stopped.code
    assert code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
