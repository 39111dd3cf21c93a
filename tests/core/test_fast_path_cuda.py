"""The fast path on a GPU: its varlen attention (one call for every sequence of a padded
batch: flash attention in fp16/bf16, the memory-efficient kernel in fp32) computes what
one SDPA call per run computes, and its CUDA graphs what the layers compute one by one.

The packing (cumulative offsets, the (M, N, D) view, the result's (M, N·D) rows) is
checked on every machine, with the kernel replaced by attention written out per sequence;
the rest needs a CUDA GPU and torch's varlen kernel, and is skipped without them (CI has
no GPU: these ran on an H100, see docs/performance.md's GPU section).
Tolerances: mini_hf_bert/parity/compare.py.
"""

from __future__ import annotations

import dataclasses

import pytest
import torch
import torch.nn.functional as F

from mini_hf_bert import BertConfig, BertModel, modeling_bert_fast
from mini_hf_bert.parity.compare import FAST_FP32_ATOL, LOW_PRECISION_ERROR_RATIO, rms_diff

SMALL = dict(vocab_size=211, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
             max_position_embeddings=40, initializer_range=0.2)  # head size 16: flash attention's smallest
LENGTHS = [12, 9, 9, 5, 12, 1, 30]  # five runs of lengths once packed shortest first
CUDA = torch.cuda.is_available() and modeling_bert_fast.varlen_kernel() is not None
needs_cuda = pytest.mark.skipif(not CUDA, reason="needs a CUDA GPU and torch.nn.attention.varlen")


def _attention_per_sequence(q, k, v, cu_seq_q, cu_seq_k, max_q, max_k, *, scale):
    """What varlen_attn computes, written out: SDPA over each sequence's rows alone."""
    assert torch.equal(cu_seq_q, cu_seq_k) and cu_seq_q.dtype == torch.int32
    bounds = cu_seq_q.tolist()
    assert max_q == max_k == max(b - a for a, b in zip(bounds, bounds[1:]))
    contexts = []
    for start, end in zip(bounds, bounds[1:]):
        qs, ks, vs = (x[start:end].transpose(0, 1) for x in (q, k, v))  # (N, L, D)
        contexts.append(F.scaled_dot_product_attention(qs, ks, vs, scale=scale).transpose(0, 1))  # (L, N, D)
    return torch.cat(contexts)  # (M, N, D)


def _packed(lengths: list[int], heads: int = 4, head_dim: int = 16, seed: int = 0):
    generator = torch.Generator().manual_seed(seed)
    rows = sum(lengths)
    qkv = torch.randn(rows, 3 * heads * head_dim, generator=generator)  # (M, 3·N·D), as the fused product gives
    runs = modeling_bert_fast._runs(sorted(lengths))
    return (*qkv.chunk(3, dim=-1), runs)  # three (M, N·D) views


def _efficient_per_sequence(q, k, v, offsets, longest, scaling):
    """What _efficient_varlen_attention computes, written out (its kernel is CUDA's alone)."""
    return _attention_per_sequence(q, k, v, offsets, offsets, longest, longest, scale=scaling)


def test_varlen_packing_matches_attention_per_run(monkeypatch):
    monkeypatch.setattr(modeling_bert_fast, "_efficient_varlen_attention", _efficient_per_sequence)
    query, key, value, runs = _packed(LENGTHS)
    assert len(runs) == 5
    packed = modeling_bert_fast._varlen_attention(query, key, value, runs, 4, 0.25)  # (M, N·D)
    with modeling_bert_fast.using_options(varlen_attention=False):
        per_run = modeling_bert_fast._attention(query, key, value, runs, 4, 0.25, None)  # (M, N·D)
    assert packed.shape == per_run.shape == (sum(LENGTHS), 64)
    torch.testing.assert_close(packed, per_run, atol=FAST_FP32_ATOL, rtol=0)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
def test_varlen_kernel_by_dtype(monkeypatch, dtype):
    """Flash attention's varlen call in fp16 and bf16; the memory-efficient kernel in fp32."""
    called = []
    monkeypatch.setattr(modeling_bert_fast, "varlen_kernel", lambda: lambda *args, **kwargs: (
        called.append("flash") or _attention_per_sequence(*args, **kwargs)))
    monkeypatch.setattr(modeling_bert_fast, "_efficient_varlen_attention",
                        lambda *args: called.append("efficient") or _efficient_per_sequence(*args))
    query, key, value, runs = _packed(LENGTHS)
    modeling_bert_fast._varlen_attention(query.to(dtype), key.to(dtype), value.to(dtype), runs, 4, 0.25)
    assert called == ["efficient" if dtype == torch.float32 else "flash"]


def test_varlen_runs_only_on_cuda():
    query = torch.zeros(4, 64, dtype=torch.bfloat16)
    assert not modeling_bert_fast.varlen_applies(query)  # a CPU tensor: one SDPA call per run
    assert not modeling_bert_fast.varlen_applies(query.float())
    if CUDA:
        assert modeling_bert_fast.varlen_applies(query.cuda())
        assert modeling_bert_fast.varlen_applies(query.float().cuda())  # the memory-efficient kernel
        assert not modeling_bert_fast.varlen_applies(query.float().cuda().requires_grad_())  # training: per run
        with modeling_bert_fast.using_options(varlen_attention=False):
            assert not modeling_bert_fast.varlen_applies(query.cuda())


def _model(dtype: torch.dtype, implementation: str = "fast") -> BertModel:
    torch.manual_seed(0)
    model = BertModel(BertConfig(**SMALL, attn_implementation=implementation)).eval()
    return model.to("cuda", dtype)


def _batch():
    generator = torch.Generator().manual_seed(1)
    ids = torch.randint(1, SMALL["vocab_size"], (len(LENGTHS), max(LENGTHS)), generator=generator)
    mask = torch.zeros_like(ids)
    for row, length in enumerate(LENGTHS):
        mask[row, :length] = 1
    return ids.cuda(), mask.cuda()


@needs_cuda
def test_fast_equals_eager_on_cuda_in_fp32():
    ids, mask = _batch()
    with torch.inference_mode():
        fast = _model(torch.float32)(ids, attention_mask=mask).last_hidden_state
        eager = _model(torch.float32, "eager")(ids, attention_mask=mask).last_hidden_state
    real = mask.bool()
    torch.testing.assert_close(fast[real], eager[real], atol=FAST_FP32_ATOL, rtol=0)


@needs_cuda
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("varlen", [True, False])
def test_fast_in_half_precision_on_cuda_is_as_close_to_fp32_as_eager(dtype, varlen):
    ids, mask = _batch()
    real = mask.bool()
    with torch.inference_mode():
        fp32 = _model(torch.float32, "eager")(ids, attention_mask=mask).last_hidden_state[real]
        eager = _model(dtype, "eager")(ids, attention_mask=mask).last_hidden_state[real].float()
        with modeling_bert_fast.using_options(varlen_attention=varlen):
            fast = _model(dtype)(ids, attention_mask=mask).last_hidden_state[real].float()
    assert rms_diff(fast, fp32) <= LOW_PRECISION_ERROR_RATIO * rms_diff(eager, fp32)


@needs_cuda
def test_varlen_attention_trains_on_cuda():
    """Gradients flow through the varlen kernel (dropout off: with dropout the path attends
    per run), and match those of one SDPA call per run."""
    ids, mask = _batch()
    grads = []
    for varlen in (True, False):
        model = _model(torch.bfloat16)
        model.train()
        for module in model.modules():
            if isinstance(module, torch.nn.Dropout):
                module.p = 0.0
        with modeling_bert_fast.using_options(varlen_attention=varlen):
            out = model(ids, attention_mask=mask).last_hidden_state
        out[mask.bool()].float().square().mean().backward()
        grads.append(model.encoder.layer[0].attention.self.query.weight.grad.float())
    assert grads[0].abs().max() > 0
    assert rms_diff(grads[0], grads[1]) <= 0.05 * grads[1].pow(2).mean().sqrt()


def test_gpu_benchmark_refuses_a_device_it_cannot_use():
    from mini_hf_bert_benchmarks import gpu as benchmark_gpu

    with pytest.raises(ValueError, match="--device tpu: the GPU benchmark runs on cuda"):
        benchmark_gpu.run_gpu_benchmark(device="tpu")
    if not torch.cuda.is_available():
        with pytest.raises(RuntimeError, match="--device cuda: torch .* sees no CUDA GPU"):
            benchmark_gpu.run_gpu_benchmark(device="cuda")
    with pytest.raises(ValueError, match="dtype 'fp64'"):
        benchmark_gpu.run_gpu_benchmark(dtypes=("fp64",))


@needs_cuda
def test_gpu_benchmark_runs_every_contender():
    from mini_hf_bert_benchmarks import gpu as benchmark_gpu

    config = BertConfig(**SMALL)
    report = benchmark_gpu.run_gpu_benchmark(workloads=("W1", "W2"), dtypes=("fp16", "fp32"), runs=2,
                                             config=dataclasses.replace(config, max_position_embeddings=512))
    assert not report.notes
    names = {t.contender for t in report.timings}
    assert {"mini_hf_bert fast", "transformers sdpa"} <= names
    for t in report.timings:
        assert t.ms > 0, t
        if t.dtype == "fp32" and t.contender.startswith("mini_hf_bert"):
            assert t.max_diff <= FAST_FP32_ATOL, t
    text = benchmark_gpu.format_gpu_report(report)
    assert text.count("### W") == 4 and "GPU: " in text
    assert benchmark_gpu.report_from_json(benchmark_gpu.report_to_json(report)) == report


# ------------------------------------------------------------------ CUDA graphs


def test_no_graph_is_captured_on_the_cpu():
    torch.manual_seed(0)
    model = BertModel(BertConfig(**SMALL, attn_implementation="fast")).eval()
    ids = torch.randint(1, SMALL["vocab_size"], (2, 6))
    with torch.inference_mode():
        for _ in range(modeling_bert_fast.GRAPH_AFTER_CALLS + 1):
            model(ids)
    weights = modeling_bert_fast.fast_weights(model)
    assert weights.graphs == {} and weights.sightings == {}


@needs_cuda
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_a_graphed_call_equals_the_layers_run_one_by_one(dtype):
    ids, mask = _batch()
    real = mask.bool()
    model = _model(dtype)
    with torch.inference_mode():
        with modeling_bert_fast.using_options(cuda_graphs=False):
            expected = model(ids, attention_mask=mask).last_hidden_state[real].float()
        outputs = [model(ids, attention_mask=mask).last_hidden_state[real].float()
                   for _ in range(modeling_bert_fast.GRAPH_AFTER_CALLS + 1)]
    weights = modeling_bert_fast.fast_weights(model)
    assert len(weights.graphs) == 1 and None not in weights.graphs.values()  # captured, and replayed last
    atol = FAST_FP32_ATOL if dtype == torch.float32 else 0.0  # the same kernels on the same rows
    for output in outputs:
        torch.testing.assert_close(output, expected, atol=atol, rtol=0)


@needs_cuda
def test_no_graph_is_captured_under_autocast():
    """A graph replays the kernels it captured: one captured under autocast would run a
    later fp32 call in half precision, so autocast calls run the layers one by one."""
    ids, mask = _batch()
    model = _model(torch.float32)
    with torch.inference_mode(), torch.autocast("cuda", dtype=torch.float16):
        for _ in range(modeling_bert_fast.GRAPH_AFTER_CALLS + 1):
            model(ids, attention_mask=mask)
    assert not modeling_bert_fast.fast_weights(model).graphs


@needs_cuda
def test_a_replay_does_not_overwrite_an_earlier_output():
    ids, mask = _batch()
    model = _model(torch.float32)
    with torch.inference_mode():
        for _ in range(modeling_bert_fast.GRAPH_AFTER_CALLS):
            first = model(ids, attention_mask=mask).last_hidden_state
        kept = first.clone()
        model(ids.flip(1), attention_mask=mask)  # the same shape: the same graph, other tokens
    assert torch.equal(first, kept)


@needs_cuda
def test_graphs_follow_changed_weights_and_serve_no_grad_after_inference_mode():
    ids, mask = _batch()
    real = mask.bool()
    model = _model(torch.float32)
    reference = _model(torch.float32, "eager")
    with torch.inference_mode():
        for _ in range(modeling_bert_fast.GRAPH_AFTER_CALLS):
            model(ids, attention_mask=mask)
    with torch.no_grad():
        for m in (model, reference):
            m.encoder.layer[0].output.dense.weight.mul_(2.0)  # in place: the graph's weights are stale
        for _ in range(modeling_bert_fast.GRAPH_AFTER_CALLS + 1):
            fast = model(ids, attention_mask=mask).last_hidden_state
        eager = reference(ids, attention_mask=mask).last_hidden_state
    assert len(modeling_bert_fast.fast_weights(model).graphs) == 1
    torch.testing.assert_close(fast[real], eager[real], atol=FAST_FP32_ATOL, rtol=0)


@needs_cuda
def test_shapes_past_the_limit_run_without_a_graph(monkeypatch, caplog):
    monkeypatch.setattr(modeling_bert_fast, "GRAPHED_SHAPES_MAX", 1)
    model = _model(torch.float32)
    ids, mask = _batch()
    with torch.inference_mode():
        for rows in (len(LENGTHS), 2):
            for _ in range(modeling_bert_fast.GRAPH_AFTER_CALLS):
                out = model(ids[:rows], attention_mask=mask[:rows]).last_hidden_state
        eager = _model(torch.float32, "eager")(ids[:2], attention_mask=mask[:2]).last_hidden_state
    assert len(modeling_bert_fast.fast_weights(model).graphs) == 1
    assert "1 batch shapes are captured already" in caplog.text
    real = mask[:2].bool()
    torch.testing.assert_close(out[real], eager[real], atol=FAST_FP32_ATOL, rtol=0)


def test_sequence_offsets_made_in_inference_mode_serve_training_later():
    """The offsets are cached across calls: one made under torch.inference_mode must still
    be a tensor autograd may save (a training step's varlen backward does)."""
    modeling_bert_fast.sequence_offsets.cache_clear()
    with torch.inference_mode():
        offsets = modeling_bert_fast.sequence_offsets(((2, 3), (1, 5)), torch.device("cpu"))
    assert offsets.tolist() == [0, 3, 6, 11] and offsets.dtype == torch.int32
    assert not offsets.is_inference()


@needs_cuda
def test_graphs_serve_threads_and_other_streams():
    """Two threads replaying one graph get each their own result; a call from another
    stream than the capture's runs the layers one by one, with the same result."""
    import threading

    ids, mask = _batch()
    real = mask.bool()
    model = _model(torch.float32)
    inputs = [ids, ids.flip(1)]  # one shape, other tokens
    with torch.inference_mode():
        expected = [model(batch, attention_mask=mask).last_hidden_state for batch in inputs]
        for batch in inputs:
            model(batch, attention_mask=mask)  # the second sighting: captured
    graph = next(iter(modeling_bert_fast.fast_weights(model).graphs.values()))
    assert graph is not None
    failures = []

    def calls(index: int) -> None:
        with torch.inference_mode():
            for _ in range(20):
                out = model(inputs[index], attention_mask=mask).last_hidden_state
                if not torch.allclose(out[real], expected[index][real], atol=FAST_FP32_ATOL, rtol=0):
                    failures.append(index)

    threads = [threading.Thread(target=calls, args=(index,)) for index in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    side = torch.cuda.Stream()
    with torch.inference_mode(), torch.cuda.stream(side):
        assert graph(graph.input) is None
        out = model(ids, attention_mask=mask).last_hidden_state
    side.synchronize()
    torch.testing.assert_close(out[real], expected[0][real], atol=FAST_FP32_ATOL, rtol=0)


def test_a_cpu_process_never_imports_the_varlen_kernel():
    """Importing torch.nn.attention.varlen takes about a second (it registers custom ops):
    the fast path imports it on a GPU's first varlen call, never for a CPU's first output."""
    import subprocess
    import sys

    script = ("import sys, torch\nfrom mini_hf_bert import BertConfig, BertModel\n"
              f"model = BertModel(BertConfig(**{SMALL!r}, attn_implementation='fast')).eval()\n"
              "with torch.inference_mode():\n"
              "    model(torch.tensor([[5, 6, 7], [5, 6, 0]]), attention_mask=torch.tensor([[1, 1, 1], [1, 1, 0]]))\n"
              "print('torch.nn.attention.varlen' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
