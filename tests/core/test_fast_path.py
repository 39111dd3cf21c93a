"""attn_implementation="fast" (mini_hf_bert/modeling_bert_fast.py) computes what eager computes.

On real tokens, for padded and unpadded batches, in fp32 / bf16 / fp16, for BertModel and
the task heads, with every optimisation on or off; and what it does not do itself
(output_attentions, head_mask, relative positions, ...) falls back to the reference layers.
Tolerances: mini_hf_bert/parity/compare.py.
"""

from __future__ import annotations

import itertools

import pytest
import torch
import transformers

import mini_hf_bert
from mini_hf_bert import BertConfig, BertModel, modeling_bert_fast
from mini_hf_bert.parity.compare import (
    BF16_MIN_COSINE,
    FAST_FP32_ATOL,
    FP32_ATOL,
    LOW_PRECISION_ERROR_RATIO,
    compare_outputs,
)

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


@pytest.mark.parametrize("case", ["left padding", "3D mask", "float mask", "training"])
def test_other_cases_fall_back_to_the_reference(case):
    model, batch = make_model(), make_batch(BATCHES["padded"])
    if case == "left padding":  # position 0 is padding: the pooler reads it, so every position is computed
        batch["attention_mask"] = batch["attention_mask"].flip(1)
    elif case == "3D mask":
        batch["attention_mask"] = batch["attention_mask"][:, None, :].expand(-1, 12, -1).clone()
    elif case == "float mask":
        batch["attention_mask"] = batch["attention_mask"].float() * 0.5
    assert not modeling_bert_fast.applies(model.train(case == "training"), batch["attention_mask"], 6, 12,
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


def test_from_pretrained_selects_fast_and_bad_options_are_refused(minilm_dir):
    model = BertModel.from_pretrained(minilm_dir, attn_implementation="fast")
    assert model.config.attn_implementation == "fast"
    with pytest.raises(ValueError, match="route='mkl' is not one of"):
        with modeling_bert_fast.using_options(route="mkl"):
            pass
    assert modeling_bert_fast.OPTIONS == modeling_bert_fast.FastOptions()
    built = make_model()
    built.set_attn_implementation("fast")  # on a built model, as transformers 5.x
    assert built.config.attn_implementation == "fast" and built.encoder.layer[0].attention.self.config is built.config
    with pytest.raises(ValueError, match="attn_implementation='flash' is not one of"):
        built.set_attn_implementation("flash")
    with pytest.raises(ValueError, match="attn_implementation='fastest' is not one of"):
        BertModel(BertConfig(**SMALL, attn_implementation="fastest"))
