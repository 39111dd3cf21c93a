"""attn_implementation="fast" (mini_hf_bert/modeling_bert_fast.py) computes what eager computes.

On real tokens, for padded and unpadded batches, in fp32 / bf16 / fp16, for BertModel and
the task heads, with every optimisation on or off; and what it does not do itself
(output_attentions, head_mask, relative positions, ...) falls back to the reference layers.
Tolerances: mini_hf_bert/parity/compare.py. Marked cpu_kernels: `make test` runs this file
again under its AVX2 emulation.
"""

from __future__ import annotations

import itertools
import sys

import pytest
import torch
import transformers

import mini_hf_bert
from mini_hf_bert import BertConfig, BertModel, modeling_bert_fast
from mini_hf_bert.parity.compare import (
    BF16_MIN_COSINE,
    DROPOUT_RATE_SIGMAS,
    FAST_FP32_ATOL,
    FP32_ATOL,
    FP32_STREAM_ERROR_RATIO,
    INT8_MIN_COSINE,
    LOW_PRECISION_ERROR_RATIO,
    compare_outputs,
    rms_diff,
)

pytestmark = pytest.mark.cpu_kernels

SMALL = dict(vocab_size=211, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
             max_position_embeddings=40, initializer_range=0.2)  # peaked attention: a wrong scale shows
#: Batches: lengths per row (T = the longest); equal lengths = no padding.
BATCHES = {
    "padded": [12, 9, 9, 5, 12, 1],
    "unpadded": [12, 12, 12],
    "one sequence": [7],
}


def make_model(cls=BertModel, seed: int = 0, **overrides) -> torch.nn.Module:
    torch.manual_seed(seed)
    model = cls(BertConfig(**(SMALL | overrides)))
    # LayerNorm weights and biases away from 1 and 0, so that a skipped or swapped one shows.
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if "LayerNorm" in name:
                parameter.add_(torch.randn_like(parameter) * 0.1)
    return model.eval()


def make_batch(lengths: list[int], seed: int = 1, vocab_size: int = SMALL["vocab_size"]) -> dict[str, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    width = max(lengths)
    ids = torch.randint(1, vocab_size, (len(lengths), width), generator=generator)
    mask = torch.zeros(len(lengths), width, dtype=torch.long)
    for row, length in enumerate(lengths):
        mask[row, :length] = 1
    types = (torch.arange(width)[None, :] >= width // 2).long().expand(len(lengths), width).clone()
    return dict(input_ids=ids.masked_fill(mask == 0, 0), attention_mask=mask, token_type_ids=types)


def run(model: torch.nn.Module, implementation: str, batch: dict, **kwargs):
    model.config.attn_implementation = implementation
    with torch.no_grad():
        return model(**batch, **kwargs)


def real(t: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The rows of real tokens, (M, ...), from (B, T, ...)."""
    return t[mask.bool()].float()


@pytest.mark.parametrize("batch_name", list(BATCHES))
@pytest.mark.parametrize("route", ["auto", "aten", "onednn"])
def test_fp32_equals_eager_on_real_tokens(batch_name, route):
    if route == "onednn" and not torch.backends.mkldnn.is_available():
        pytest.skip("this torch has no oneDNN")
    model, batch = make_model(), make_batch(BATCHES[batch_name])
    with modeling_bert_fast.using_options(route=None if route == "auto" else route):
        fast = run(model, "fast", batch)
    eager = run(model, "eager", batch)
    mask = batch["attention_mask"]
    # The same products as eager's (route aten) sum in the same order: the reference bound.
    atol = FP32_ATOL if route == "aten" else FAST_FP32_ATOL
    torch.testing.assert_close(real(fast.last_hidden_state, mask), real(eager.last_hidden_state, mask), atol=atol, rtol=0)
    torch.testing.assert_close(fast.pooler_output, eager.pooler_output, atol=atol, rtol=0)
    assert torch.count_nonzero(fast.last_hidden_state[mask == 0]) == 0, "padding positions hold 0"


@pytest.mark.parametrize("options", [dict(zip(("unpad", "fuse_qkv", "fuse_gelu", "matmul_attention", "route"), values))
                                     for values in itertools.product((True, False), (True, False), (True, False),
                                                                     (True, False), ("aten", "onednn"))])
def test_every_combination_of_optimisations_equals_eager(options):
    model, batch = make_model(), make_batch(BATCHES["padded"])
    with modeling_bert_fast.using_options(**options):
        fast = run(model, "fast", batch)
    eager = run(model, "eager", batch)
    mask = batch["attention_mask"]
    torch.testing.assert_close(real(fast.last_hidden_state, mask), real(eager.last_hidden_state, mask),
                               atol=FAST_FP32_ATOL, rtol=0)


@pytest.mark.parametrize("batch_name", ["padded", "unpadded"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_low_precision_is_as_close_to_fp32_as_eager_is(dtype, batch_name):
    """bf16 / fp16: no fixed bound between two roundings; fast must be no further from the
    fp32 result than eager in the same dtype, and keep every token's direction."""
    batch = make_batch(BATCHES[batch_name])
    mask = batch["attention_mask"]
    reference = real(run(make_model(), "eager", batch).last_hidden_state, mask)
    model = make_model().to(dtype)
    fast = real(run(model, "fast", batch).last_hidden_state, mask)
    eager = real(run(model, "eager", batch).last_hidden_state, mask)
    assert fast.dtype == torch.float32 and model.embeddings.LayerNorm.weight.dtype == dtype
    fast_error, eager_error = (fast - reference).abs().max(), (eager - reference).abs().max()
    assert fast_error <= LOW_PRECISION_ERROR_RATIO * eager_error, (fast_error, eager_error)
    cosine = torch.nn.functional.cosine_similarity(fast, reference, dim=-1)
    assert cosine.min() > BF16_MIN_COSINE, cosine.min()


@pytest.mark.parametrize("batch_name", ["padded", "one sequence"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_fp32_stream_brings_low_precision_closer_to_fp32(dtype, batch_name):
    """The residual stream and LayerNorm in fp32: against fp32 on the same (rounded)
    weights, fast is closer than eager in the same dtype by FP32_STREAM_ERROR_RATIO, and
    closer than itself with the stream in the low dtype (the option's own effect), in RMS
    distance over the real tokens' values."""
    batch = make_batch(BATCHES[batch_name])
    mask = batch["attention_mask"]
    model = make_model().to(dtype)
    reference = real(run(make_model().to(dtype).float(), "eager", batch).last_hidden_state, mask)

    def error(implementation: str, **options) -> float:
        with modeling_bert_fast.using_options(**options):
            output = run(model, implementation, batch).last_hidden_state
        assert output.dtype == dtype  # rounded once, at the end, to the model's dtype
        return rms_diff(real(output, mask), reference)  # why RMS: FP32_STREAM_ERROR_RATIO's comment

    fast, eager, low_stream = error("fast"), error("eager"), error("fast", fp32_stream=False)
    assert fast <= FP32_STREAM_ERROR_RATIO * eager, (fast, eager)
    assert fast < low_stream, (fast, low_stream)


#: Why route "int8" does not run on this CPU, or None where it runs
#: (``int8_kernel_problem``): the int8 tests assert its accuracy where it runs, and that
#: the default route ran instead where it does not.
INT8_PROBLEM = modeling_bert_fast.int8_kernel_problem()


def test_int8_runs_only_where_its_products_are_exact():
    """Where route "int8" runs, torch._int_mm sums full-range int8 products exactly in
    int32; where a product here is not exact (oneDNN's kernels without VNNI add pairs of
    products in 16 bits, which saturate), int8_kernel_problem says so."""
    generator = torch.Generator().manual_seed(0)
    activations = torch.randint(-127, 128, (33, 768), dtype=torch.int8, generator=generator)  # (M, K)
    weights = torch.randint(-127, 128, (768, 96), dtype=torch.int8, generator=generator)  # (K, N)
    exact = torch.equal(torch._int_mm(activations, weights).long(), activations.long() @ weights.long())
    if INT8_PROBLEM is None:
        assert exact, "int8 products here are not exact, and route int8 would run"
    if not exact:
        assert INT8_PROBLEM is not None and "saturates" in INT8_PROBLEM, INT8_PROBLEM


def int8_fallback_messages(model: torch.nn.Module, batch: dict, caplog) -> list[str]:
    """Route "int8" where it cannot run: asserts the default route's result ran instead,
    and returns what was said about it."""
    default = run(model, "fast", batch).last_hidden_state
    modeling_bert_fast._WARNED.clear()
    with caplog.at_level("WARNING", logger="mini_hf_bert.modeling_bert_fast"):
        with modeling_bert_fast.using_options(route="int8"):
            fallback = run(model, "fast", batch).last_hidden_state
            run(model, "fast", batch)
            assert modeling_bert_fast.fast_weights(model).route != "int8"
    assert torch.equal(fallback, default)
    return [r.getMessage() for r in caplog.records if "route 'int8'" in r.getMessage()]


def test_int8_falls_back_where_its_products_cannot_serve_it(caplog, monkeypatch):
    """A CPU whose int8 products saturate or crawl (this CPU's reason, or a stand-in where
    it has none): route "int8" runs the default route, and says why once."""
    reason = INT8_PROBLEM or "route 'int8' needs int8 products summed in int32 at speed; a stand-in"
    monkeypatch.setattr(modeling_bert_fast, "int8_kernel_problem", lambda: reason)
    messages = int8_fallback_messages(make_model(), make_batch(BATCHES["padded"]), caplog)
    assert messages == [f"{reason}: running the default route instead"]


def test_int8_is_close_to_fp32_on_the_real_checkpoint(minilm_dir):
    """Route "int8" on all-MiniLM-L6-v2: every demo sentence's embedding keeps cosine >=
    INT8_MIN_COSINE with fp32, the similarity ranking is unchanged, and the result is not
    fp32's (the products really ran in int8)."""
    from mini_hf_bert.checkpoints.convert import load_tokenizer
    from mini_hf_bert.checkpoints.bundled import DEFAULT_SENTENCES
    from mini_hf_bert.pipelines.sentence_embeddings import encode_sentences

    model = BertModel.from_pretrained(minilm_dir, attn_implementation="fast")
    tokenizer = load_tokenizer(minilm_dir)
    with torch.inference_mode():
        fp32 = encode_sentences(model, tokenizer, list(DEFAULT_SENTENCES))  # (S, H), unit length
        with modeling_bert_fast.using_options(route="int8"):
            int8 = encode_sentences(model, tokenizer, list(DEFAULT_SENTENCES))
    cosine = (fp32 * int8).sum(dim=-1)  # (S,)
    assert cosine.min() >= INT8_MIN_COSINE, cosine
    if INT8_PROBLEM is None:
        assert (fp32 - int8).abs().max() > FAST_FP32_ATOL, "int8 gave fp32's result: it did not run"
    else:  # the default route ran instead
        assert torch.equal(fp32, int8)
    ranking = lambda e: (e @ e.T).argsort(dim=1, descending=True)  # noqa: E731
    assert torch.equal(ranking(fp32), ranking(int8))


def test_int8_on_a_small_model_equals_eager_within_its_cosine_and_stores_a_quarter():
    model, batch = make_model(), make_batch(BATCHES["padded"])
    mask = batch["attention_mask"]
    eager = real(run(model, "eager", batch).last_hidden_state, mask)
    with modeling_bert_fast.using_options(route="int8"):
        int8 = run(model, "fast", batch)
        nbytes = modeling_bert_fast.fast_weights_nbytes(model)
    cosine = torch.nn.functional.cosine_similarity(real(int8.last_hidden_state, mask), eager, dim=-1)
    assert cosine.min() >= INT8_MIN_COSINE, cosine.min()
    assert torch.count_nonzero(int8.last_hidden_state[mask == 0]) == 0
    if INT8_PROBLEM is not None:  # the default route ran instead
        assert torch.equal(int8.last_hidden_state, run(model, "fast", batch).last_hidden_state)
        return
    hidden, inner, layers = SMALL["hidden_size"], SMALL["intermediate_size"], SMALL["num_hidden_layers"]
    weights = layers * (4 * hidden * hidden + 2 * hidden * inner) + hidden * hidden  # encoder Linears + pooler
    outputs = layers * (5 * hidden + inner) + hidden  # a scale per output: QKV 3H, O H, FFN I and H; pooler H
    stacked_qkv_bias = layers * 3 * hidden
    assert nbytes == weights * 1 + outputs * 4 + stacked_qkv_bias * 4  # int8 weights, fp32 scales, the QKV bias copy


def test_int8_compiled_keeps_its_cosine():
    """int8 under option compile, within INT8_MIN_COSINE of fp32. On AMX inductor rewrites
    the quantized products into oneDNN's pre-packed int8 kernels (quantization fused);
    without AMX, where oneDNN has only its reference kernel for them, they stay
    torch._int_mm (compile_freezes). Where int8 does not run here, the default route is
    compiled instead."""
    from torch._inductor.utils import run_and_get_code

    model, batch = make_model(), make_batch(BATCHES["one sequence"])
    mask = batch["attention_mask"]
    eager = real(run(model, "eager", batch).last_hidden_state, mask)
    with modeling_bert_fast.using_options(route="int8", compile=True):
        output, code = run_and_get_code(lambda: run(model, "fast", batch))
        int8 = real(output.last_hidden_state, mask)
        assert modeling_bert_fast.fast_weights(model).compiled[((1, 7),)] is not None
    code = "\n".join(code)  # the generated source of the compiled encoder
    if INT8_PROBLEM is not None:
        assert "qlinear" not in code and "_int_mm" not in code
    elif torch.cpu._is_amx_tile_supported():
        assert "onednn.qlinear_pointwise" in code
    else:
        assert "_int_mm" in code and "qlinear" not in code
    cosine = torch.nn.functional.cosine_similarity(int8, eager, dim=-1)
    assert cosine.min() >= INT8_MIN_COSINE, cosine.min()
    if INT8_PROBLEM is None:
        assert (int8 - eager).abs().max() > FAST_FP32_ATOL  # quantized, not fp32
    else:  # the default route, compiled: fp32 within the fast path's bound
        torch.testing.assert_close(int8, eager, atol=FAST_FP32_ATOL, rtol=0)


def test_int8_falls_back_where_it_cannot_run(caplog):
    """bf16 weights: route "int8" runs the default route instead, and says so once."""
    messages = int8_fallback_messages(make_model().to(torch.bfloat16), make_batch(BATCHES["padded"]), caplog)
    assert len(messages) == 1 and "torch.bfloat16" in messages[0] and "default route" in messages[0]


def _compiling_messages(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith("compiling the fast path")]


def test_compiled_equals_eager_and_compiles_once_per_shape(caplog):
    """Option compile: one torch.compile (inductor, freezing) per batch shape, said before
    it runs, cached; fp32 within the fast path's bound (inductor reorders sums too)."""
    model, batch = make_model(), make_batch(BATCHES["one sequence"])
    mask = batch["attention_mask"]
    eager = run(model, "eager", batch)
    with caplog.at_level("WARNING", logger="mini_hf_bert.modeling_bert_fast"):
        with modeling_bert_fast.using_options(compile=True):
            first, second = run(model, "fast", batch), run(model, "fast", batch)
            compiled = modeling_bert_fast.fast_weights(model).compiled
    for output in (first, second):
        torch.testing.assert_close(real(output.last_hidden_state, mask), real(eager.last_hidden_state, mask),
                                   atol=FAST_FP32_ATOL, rtol=0)
        torch.testing.assert_close(output.pooler_output, eager.pooler_output, atol=FAST_FP32_ATOL, rtol=0)
    assert list(compiled) == [((1, 7),)] and compiled[((1, 7),)] is not None
    assert _compiling_messages(caplog) == ["compiling the fast path for batch shape [1 x 7] (sequences x tokens): "
                                           "once per shape, about 15 s for bert-base on 2 cores"]


def _assert_uncompiled_equals_eager(model, batch, caplog, expected_warning: str, **options) -> None:
    mask = batch["attention_mask"]
    eager = run(model, "eager", batch)
    modeling_bert_fast._WARNED.clear()
    with caplog.at_level("WARNING", logger="mini_hf_bert.modeling_bert_fast"):
        with modeling_bert_fast.using_options(compile=True, **options):
            fast = run(model, "fast", batch)
    torch.testing.assert_close(real(fast.last_hidden_state, mask), real(eager.last_hidden_state, mask),
                               atol=FAST_FP32_ATOL, rtol=0)
    assert any(expected_warning in r.getMessage() for r in caplog.records), [r.getMessage() for r in caplog.records]


def test_compile_falls_back_on_another_route(caplog):
    _assert_uncompiled_equals_eager(make_model(), make_batch(BATCHES["padded"]), caplog,
                                    "option compile runs on routes ('aten', 'int8')", route="onednn")
    assert not _compiling_messages(caplog)


def test_compile_falls_back_past_the_shape_limit(caplog, monkeypatch):
    monkeypatch.setattr(modeling_bert_fast, "COMPILED_SHAPES_MAX", modeling_bert_fast._compiled_shapes)
    _assert_uncompiled_equals_eager(make_model(), make_batch(BATCHES["padded"]), caplog,
                                    "batch shapes are compiled already; new shapes run uncompiled")
    assert not _compiling_messages(caplog)


def test_compile_falls_back_when_the_compiler_fails(caplog, monkeypatch):
    def failing_compile(module, dynamic):
        def call(x):
            raise RuntimeError("inductor: no C++ compiler found")
        return call

    monkeypatch.setattr(torch, "compile", failing_compile)
    model, batch = make_model(), make_batch(BATCHES["unpadded"])
    _assert_uncompiled_equals_eager(model, batch, caplog,
                                    "torch.compile failed (RuntimeError: inductor: no C++ compiler found)")
    with modeling_bert_fast.using_options(compile=True):
        assert modeling_bert_fast.fast_weights(model).compiled == {((3, 12),): None}  # not tried again


def test_compile_is_not_used_when_gradients_are_needed(caplog):
    model, batch = make_model(), make_batch(BATCHES["one sequence"])
    model.config.attn_implementation = "fast"
    with caplog.at_level("WARNING", logger="mini_hf_bert.modeling_bert_fast"):
        with modeling_bert_fast.using_options(compile=True):
            fast = model(**batch)
    assert fast.last_hidden_state.requires_grad and not _compiling_messages(caplog)


HEADS = {
    "BertForSequenceClassification": ("logits",),
    "BertForTokenClassification": ("logits",),
    "BertForQuestionAnswering": ("start_logits", "end_logits"),
    "BertForMaskedLM": ("logits",),
    "BertForPreTraining": ("prediction_logits", "seq_relationship_logits"),
    "BertForNextSentencePrediction": ("logits",),
}


@pytest.mark.parametrize("class_name", list(HEADS))
def test_heads_equal_eager(class_name):
    model = make_model(getattr(mini_hf_bert, class_name), num_labels=2 if class_name.endswith("Answering") else 3)
    batch = make_batch(BATCHES["padded"])
    mask = batch["attention_mask"]
    fast, eager = run(model, "fast", batch), run(model, "eager", batch)
    for field in HEADS[class_name]:
        a, b = getattr(fast, field), getattr(eager, field)
        if a.dim() >= 2 and a.shape[:2] == mask.shape:  # per token: compare real tokens
            a, b = real(a, mask), real(b, mask)
        torch.testing.assert_close(a, b, atol=FAST_FP32_ATOL, rtol=0, msg=field)


def test_multiple_choice_equals_eager():
    model = make_model(mini_hf_bert.BertForMultipleChoice)
    batch = make_batch([10, 6, 8, 10, 3, 7])
    choices = {k: v.view(2, 3, -1) for k, v in batch.items()}  # (batch 2, 3 choices, T)
    fast, eager = run(model, "fast", choices), run(model, "eager", choices)
    torch.testing.assert_close(fast.logits, eager.logits, atol=FAST_FP32_ATOL, rtol=0)


def test_real_checkpoint_matches_transformers(minilm_dir, minilm_tokenizer, record_parity):
    texts = ["A man is playing a guitar.", "Hi", "The quick brown fox jumps over the lazy dog near the river bank."]
    batch = dict(minilm_tokenizer(texts, padding=True, return_tensors="pt"))
    ours = BertModel.from_pretrained(minilm_dir, attn_implementation="fast")
    theirs = transformers.BertModel.from_pretrained(minilm_dir, attn_implementation="sdpa", dtype=torch.float32).eval()
    with torch.no_grad():
        a, b = ours(**batch), theirs(**batch)
    mask = batch["attention_mask"].bool()
    a.last_hidden_state, b.last_hidden_state = a.last_hidden_state[mask], b.last_hidden_state[mask]  # real tokens
    rows = record_parity('attn_implementation="fast", all-MiniLM-L6-v2, real tokens',
                         compare_outputs(a, b, ["last_hidden_state", "pooler_output"], atol=FAST_FP32_ATOL))
    assert all(r.ok for r in rows), [(r.name, r.max_abs_diff) for r in rows]


# --------------------------------------------------------------------------------------
# What the fast path leaves to the reference layers
# --------------------------------------------------------------------------------------


def test_output_attentions_falls_back_and_returns_eager_probabilities():
    model, batch = make_model(), make_batch(BATCHES["padded"])
    fast = run(model, "fast", batch, output_attentions=True, output_hidden_states=True)
    eager = run(model, "eager", batch, output_attentions=True, output_hidden_states=True)
    rows = compare_outputs(fast, eager, ["last_hidden_state", "attentions", "hidden_states"])
    assert len(rows) == 1 + 2 + 3 and all(r.ok for r in rows)


def test_head_mask_falls_back_and_silences_the_head():
    model, batch = make_model(), make_batch(BATCHES["padded"])
    head_mask = torch.tensor([1.0, 0.0, 1.0, 1.0])
    fast = run(model, "fast", batch, head_mask=head_mask)
    eager = run(model, "eager", batch, head_mask=head_mask)
    plain = run(model, "eager", batch)
    torch.testing.assert_close(fast.last_hidden_state, eager.last_hidden_state, atol=FP32_ATOL, rtol=0)
    assert (fast.last_hidden_state - plain.last_hidden_state).abs().max() > 1e-3  # the mask did something


@pytest.mark.parametrize("kind", ["relative_key", "relative_key_query"])
def test_relative_positions_fall_back(kind):
    model, batch = make_model(position_embedding_type=kind), make_batch(BATCHES["padded"])
    fast, eager = run(model, "fast", batch), run(model, "eager", batch)
    torch.testing.assert_close(fast.last_hidden_state, eager.last_hidden_state, atol=FP32_ATOL, rtol=0)


@pytest.mark.parametrize("case", ["left padding", "3D mask", "float mask", "gradient checkpointing"])
def test_other_cases_fall_back_to_the_reference(case):
    model, batch = make_model(), make_batch(BATCHES["padded"])
    if case == "left padding":  # position 0 is padding: the pooler reads it, so every position is computed
        batch["attention_mask"] = batch["attention_mask"].flip(1)
    elif case == "3D mask":
        batch["attention_mask"] = batch["attention_mask"][:, None, :].expand(-1, 12, -1).clone()
    elif case == "float mask":
        batch["attention_mask"] = batch["attention_mask"].float() * 0.5
    elif case == "gradient checkpointing":  # the reference layers recompute their activations
        model.gradient_checkpointing_enable()
        model.train()
    assert not modeling_bert_fast.applies(model, batch["attention_mask"], 6, 12,
                                          head_mask=None, output_attentions=False, output_hidden_states=False,
                                          encoder_hidden_states=None, past_key_values=None)
    torch.manual_seed(0)
    fast = run(model, "fast", batch)
    torch.manual_seed(0)
    sdpa = run(model, "sdpa", batch)
    assert torch.equal(fast.last_hidden_state, sdpa.last_hidden_state)  # the very same layers ran


def test_inputs_embeds_and_position_ids():
    model, batch = make_model(), make_batch(BATCHES["padded"])
    embeds = model.embeddings.word_embeddings(batch.pop("input_ids")).detach()
    batch |= dict(inputs_embeds=embeds, position_ids=torch.arange(12).flip(0)[None, :])
    fast, eager = run(model, "fast", batch), run(model, "eager", batch)
    mask = batch["attention_mask"]
    torch.testing.assert_close(real(fast.last_hidden_state, mask), real(eager.last_hidden_state, mask),
                               atol=FAST_FP32_ATOL, rtol=0)


def test_gradients_flow_and_equal_eager_when_needed():
    """In eval with autograd on, the fast path keeps to differentiable ops on the parameters."""
    batch = make_batch(BATCHES["padded"])
    mask = batch["attention_mask"].bool()
    grads = {}
    for implementation in ("fast", "eager"):
        model = make_model()
        model.config.attn_implementation = implementation
        out = model(**batch).last_hidden_state
        out[mask].pow(2).sum().backward()
        grads[implementation] = {n: p.grad for n, p in model.named_parameters() if p.grad is not None}
    assert grads["fast"].keys() == grads["eager"].keys() and len(grads["fast"]) > 20
    for name, grad in grads["eager"].items():
        torch.testing.assert_close(grads["fast"][name], grad, atol=FAST_FP32_ATOL, rtol=1e-4, msg=name)


def test_changed_weights_are_seen():
    """The derived weights (stacked QKV, packed copies) follow in-place changes and reloads."""
    model, batch = make_model(), make_batch(BATCHES["padded"])
    mask = batch["attention_mask"]
    before = run(model, "fast", batch).last_hidden_state
    with torch.no_grad():
        model.encoder.layer[1].attention.self.value.weight.mul_(2.0)
    after = run(model, "fast", batch).last_hidden_state
    eager = run(model, "eager", batch).last_hidden_state
    assert (after - before).abs().max() > 1e-2
    torch.testing.assert_close(real(after, mask), real(eager, mask), atol=FAST_FP32_ATOL, rtol=0)
    model.load_state_dict(make_model(seed=5).state_dict())
    reloaded = run(model, "fast", batch).last_hidden_state
    torch.testing.assert_close(real(reloaded, mask), real(run(model, "eager", batch).last_hidden_state, mask),
                               atol=FAST_FP32_ATOL, rtol=0)


def test_extra_memory_is_the_stacked_qkv_on_the_aten_route():
    model = make_model()
    hidden, layers = SMALL["hidden_size"], SMALL["num_hidden_layers"]
    with modeling_bert_fast.using_options(route="aten"):
        assert modeling_bert_fast.fast_weights_nbytes(model) == layers * (3 * hidden * hidden + 3 * hidden) * 4
    with modeling_bert_fast.using_options(route="aten", fuse_qkv=False):
        assert modeling_bert_fast.fast_weights_nbytes(model) == 0  # the parameters themselves
    assert "encoder" in dict(model.named_children()) and not any("fast" in k for k in model.state_dict())


def test_extra_memory_on_the_onednn_route_is_the_packed_copies_alone():
    """The packed weights once more, and the stacked QKV bias; not the stacked QKV weight,
    which no product of that route reads."""
    if not torch.backends.mkldnn.is_available():
        pytest.skip("no oneDNN in this torch build")
    model = make_model()
    hidden, inner, layers = SMALL["hidden_size"], SMALL["intermediate_size"], SMALL["num_hidden_layers"]
    linears = 4 * hidden * hidden + 2 * hidden * inner  # Q, K, V, O and the feed-forward pair
    with modeling_bert_fast.using_options(route="onednn"):
        assert modeling_bert_fast.fast_weights_nbytes(model) == (layers * (linears + 3 * hidden) + hidden * hidden) * 4


def test_from_pretrained_selects_fast_and_bad_options_are_refused(minilm_dir):
    model = BertModel.from_pretrained(minilm_dir, attn_implementation="fast")
    assert model.config.attn_implementation == "fast"
    with pytest.raises(ValueError, match="route='mkl' is not one of"):
        with modeling_bert_fast.using_options(route="mkl"):
            pass
    assert modeling_bert_fast.current_options() == modeling_bert_fast.FastOptions()
    built = make_model()
    built.set_attn_implementation("fast")  # on a built model, as transformers 5.x
    assert built.config.attn_implementation == "fast" and built.encoder.layer[0].attention.self.config is built.config
    with pytest.raises(ValueError, match='`attn_implementation="flash"` is not supported; choose one of'):
        built.set_attn_implementation("flash")
    with pytest.raises(ValueError, match='`attn_implementation="fastest"` is not supported; choose one of'):
        BertModel(BertConfig(**SMALL, attn_implementation="fastest"))


# --------------------------------------------------------------------------------------
# Training: the same packed rows through differentiable ops, with fast_dropout
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("batch_name", ["padded", "unpadded"])
@pytest.mark.parametrize("fuse_qkv", [True, False])
def test_training_step_equals_eager_without_dropout(batch_name, fuse_qkv):
    """Pre-training's own loss (MLM at the masked positions, NSP) in train mode, dropout 0:
    the fast path's loss and every parameter's gradient equal the reference's."""
    from mini_hf_bert import BertForPreTraining
    from mini_hf_bert.training.pretraining import masked_predictions

    batch = make_batch(BATCHES[batch_name])
    labels = torch.full_like(batch["input_ids"], -100)
    chosen = (torch.arange(labels.numel()).view(labels.shape) % 3 == 0) & batch["attention_mask"].bool()
    labels[chosen] = batch["input_ids"][chosen]
    batch |= dict(labels=labels, next_sentence_label=torch.tensor([0, 1, 1, 0, 1, 0][: len(labels)]))
    losses, grads = {}, {}
    for implementation in ("fast", "eager"):
        model = make_model(BertForPreTraining, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0).train()
        model.config.attn_implementation = implementation
        with modeling_bert_fast.using_options(fuse_qkv=fuse_qkv):
            mlm_logits, mlm_labels, nsp_logits = masked_predictions(model, batch)
            loss = (torch.nn.functional.cross_entropy(mlm_logits, mlm_labels)
                    + torch.nn.functional.cross_entropy(nsp_logits, batch["next_sentence_label"]))
            loss.backward()
        losses[implementation] = loss.detach()
        grads[implementation] = {n: p.grad for n, p in model.named_parameters() if p.grad is not None}
    torch.testing.assert_close(losses["fast"], losses["eager"], atol=FAST_FP32_ATOL, rtol=0)
    assert grads["fast"].keys() == grads["eager"].keys() and len(grads["fast"]) > 30
    for name, grad in grads["eager"].items():
        torch.testing.assert_close(grads["fast"][name], grad, atol=FAST_FP32_ATOL, rtol=1e-4, msg=name)


def test_training_with_dropout_runs_the_fast_path_reproducibly():
    model, batch = make_model(hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1), make_batch(BATCHES["padded"])
    model.train()
    assert modeling_bert_fast.applies(model, batch["attention_mask"], 6, 12, head_mask=None, output_attentions=False,
                                      output_hidden_states=False, encoder_hidden_states=None, past_key_values=None)
    outputs = []
    for seed in (0, 0, 1):
        torch.manual_seed(seed)
        outputs.append(run(model, "fast", batch).last_hidden_state)
    padding = ~batch["attention_mask"].bool()
    assert torch.equal(outputs[0][padding], torch.zeros_like(outputs[0][padding]))  # packed rows only: the fast path ran
    assert torch.equal(outputs[0], outputs[1])  # the seed decides the draws
    assert not torch.allclose(outputs[0], outputs[2])  # and dropout is drawn
    evaluated = run(model.eval(), "fast", batch).last_hidden_state
    assert not torch.allclose(outputs[0], evaluated)


@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_fast_dropout_keeps_the_expectation_at_its_stated_rate(p):
    torch.manual_seed(0)
    units = 1 << 20
    out = modeling_bert_fast.fast_dropout(torch.ones(units), p)
    levels = 2**modeling_bert_fast.DROPOUT_BITS
    rate = round(p * levels) / levels  # the probability it states
    assert abs(rate - p) <= 0.5 / levels
    dropped = int((out == 0).sum())
    assert abs(dropped - units * rate) <= DROPOUT_RATE_SIGMAS * (units * rate * (1 - rate)) ** 0.5
    kept = out[out != 0]
    assert torch.equal(kept, torch.full_like(kept, 1 / (1 - rate)))  # kept units scaled by the kept share exactly
    # each of the four 16-bit draws in a 64-bit number is used, and each is uniform
    for lane in range(4):
        lane_dropped = int((out.view(-1, 4)[:, lane] == 0).sum())
        lane_units = units // 4
        assert abs(lane_dropped - lane_units * rate) <= DROPOUT_RATE_SIGMAS * (lane_units * rate * (1 - rate)) ** 0.5


def test_fast_dropout_edges_and_gradient():
    x = torch.randn(3, 5, requires_grad=True)
    assert modeling_bert_fast.fast_dropout(x, 0.0) is x
    assert torch.equal(modeling_bert_fast.fast_dropout(x, 1.0), torch.zeros(3, 5))
    torch.manual_seed(3)
    out = modeling_bert_fast.fast_dropout(x, 0.5)
    out.sum().backward()
    assert torch.equal(x.grad, (out.detach() / x.detach()).nan_to_num())  # d out / d x: 0 or the scale, per unit


def test_weights_swapped_in_by_a_new_module_are_seen():
    """A Linear replaced by another (as adapters and pruning do) rebuilds the derived weights."""
    model, batch = make_model(), make_batch(BATCHES["padded"])
    mask = batch["attention_mask"]
    before = run(model, "fast", batch).last_hidden_state
    torch.manual_seed(7)
    model.encoder.layer[0].output.dense = torch.nn.Linear(SMALL["intermediate_size"], SMALL["hidden_size"]).eval()
    after = run(model, "fast", batch).last_hidden_state
    assert (after - before).abs().max() > 1e-2
    torch.testing.assert_close(real(after, mask), real(run(model, "eager", batch).last_hidden_state, mask),
                               atol=FAST_FP32_ATOL, rtol=0)


# ---- option huge_pages ----------------------------------------------------------------------

def _kernel_can_collapse() -> str | None:
    """Why this machine cannot move memory into huge pages (None: it can), read apart from
    the code under test: Linux 6.1+ (MADV_COLLAPSE) with transparent huge pages not off."""
    import platform
    import re
    if not sys.platform.startswith("linux"):
        return "not Linux"
    version = tuple(int(part) for part in re.match(r"(\d+)\.(\d+)", platform.release()).groups())
    if version < (6, 1):
        return f"Linux {platform.release()} has no MADV_COLLAPSE (6.1+)"
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as setting:
            if "[never]" in setting.read():
                return "transparent huge pages are off on this machine"
    except OSError:
        return "this kernel has no transparent huge pages"
    return None


def _huge_kib_of_mapping(address: int) -> int:
    """AnonHugePages (KiB) of the mapping holding ``address``, as /proc/self/smaps says."""
    inside = False
    with open("/proc/self/smaps") as smaps:
        for line in smaps:
            head = line.split()[0]
            if "-" in head and ":" not in head:  # a mapping's first line: start-end perms ...
                start, end = (int(value, 16) for value in head.split("-"))
                inside = start <= address < end
            elif inside and head == "AnonHugePages:":
                return int(line.split()[1])
    raise AssertionError(f"no mapping holds {address:#x}")


HUGE_PAGES_MODEL = dict(hidden_size=512, intermediate_size=4096, num_hidden_layers=1, num_attention_heads=8)


def test_huge_pages_hold_the_packed_weights_and_change_no_result():
    why_not = _kernel_can_collapse()
    if why_not or not torch.backends.mkldnn.is_available():
        pytest.skip(why_not or "no oneDNN in this torch build")
    model, batch = make_model(**HUGE_PAGES_MODEL), make_batch(BATCHES["padded"])
    with modeling_bert_fast.using_options(route="onednn", huge_pages=False):
        plain = modeling_bert_fast.fast_weights(model)
        small_pages = run(model, "fast", batch).last_hidden_state
    with modeling_bert_fast.using_options(route="onednn"):
        weights = modeling_bert_fast.fast_weights(model)
        huge = run(model, "fast", batch).last_hidden_state
    assert plain.huge_page_bytes == 0
    # (4096, 512) fp32 = 8 MiB per feed-forward weight: at least 3 whole 2 MiB pages inside each.
    assert weights.huge_page_bytes >= 2 * 3 * modeling_bert_fast.HUGE_PAGE
    packed = weights.layers[0].intermediate.packed
    inside = torch.ops.mkldnn.data_ptr(packed) + torch.ops.mkldnn._nbytes(packed) // 2
    assert _huge_kib_of_mapping(inside) >= modeling_bert_fast.HUGE_PAGE // 1024, "the kernel maps it in 2 MiB pages"
    # The same bytes at the same addresses through the same kernel, in one process: the same result.
    assert torch.equal(huge, small_pages)


def test_into_huge_pages_moves_whole_pages_and_keeps_every_byte():
    why_not = _kernel_can_collapse()
    if why_not:
        pytest.skip(why_not)
    huge_page = modeling_bert_fast.HUGE_PAGE
    values = torch.randn(4 * huge_page // 4)  # 8 MiB of fp32
    before = values.clone()
    moved = modeling_bert_fast.into_huge_pages(values)
    assert 3 * huge_page <= moved <= 4 * huge_page and moved % huge_page == 0
    assert torch.equal(values, before)
    assert modeling_bert_fast.into_huge_pages(torch.randn(1000)) == 0, "no whole 2 MiB page inside"
    assert modeling_bert_fast.into_huge_pages(values.view(-1, 1024).t()) == 0, "not contiguous: not its span"


@pytest.mark.parametrize("setting", ["always madvise [never]\n", None])
def test_into_huge_pages_respects_huge_pages_switched_off(tmp_path, monkeypatch, setting):
    """THP set to "never" by the administrator, or no THP in the kernel: nothing is moved."""
    path = tmp_path / "enabled"
    if setting is not None:
        path.write_text(setting)
    monkeypatch.setattr(modeling_bert_fast, "THP_SETTING", str(path))
    modeling_bert_fast._madvise.cache_clear()
    try:
        assert modeling_bert_fast.into_huge_pages(torch.randn(4 * modeling_bert_fast.HUGE_PAGE // 4)) == 0
    finally:
        modeling_bert_fast._madvise.cache_clear()


#: Malformed calls: the fast path is given BertModel.forward's arguments unchecked, so it
#: must decline each (or check it) and leave the same one-line error the eager model gives.
MALFORMED_CALLS = {
    "mask as a list": dict(input_ids=torch.tensor([[1, 2, 3]]), attention_mask=[[1, 1, 1]]),
    "mask of another shape": dict(input_ids=torch.tensor([[1, 2, 3]]), attention_mask=torch.ones(1, 5)),
    "mask values 2": dict(input_ids=torch.tensor([[1, 2, 3]]), attention_mask=torch.full((1, 3), 2)),
    "ids as a list": dict(input_ids=[[1, 2, 3]]),
    "ids 1-D": dict(input_ids=torch.tensor([1, 2, 3])),
    "ids past the vocabulary": dict(input_ids=torch.tensor([[1, 999]])),
    "ids and embeddings": dict(input_ids=torch.tensor([[1, 2, 3]]), inputs_embeds=torch.zeros(1, 3, 32)),
    "neither": dict(),
    "float ids": dict(input_ids=torch.tensor([[1.0, 2.0]])),
    "an unknown keyword": dict(input_ids=torch.tensor([[1, 2, 3]]), foo=1),
}


@pytest.mark.parametrize("name", list(MALFORMED_CALLS))
def test_a_malformed_call_gets_the_eager_models_error(name):
    errors = []
    for implementation in ("eager", "fast"):
        model = BertModel(BertConfig(**SMALL, attn_implementation=implementation)).eval()
        with pytest.raises((TypeError, ValueError)) as caught, torch.no_grad():
            model(**MALFORMED_CALLS[name])
        errors.append((type(caught.value), str(caught.value)))
    assert errors[0] == errors[1]
