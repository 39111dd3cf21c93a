"""Numerical parity with transformers 5.x, fp32 on CPU, weights copied from a transformers
model: every output, every hidden state, every attention map, over several configs
and input forms, for both attention implementations."""

from __future__ import annotations

import pytest
import torch

from mini_hf_bert.parity.compare import FP32_ATOL, compare_outputs

from ..conftest import SMALL_CONFIGS, make_model_pair, small_config_kwargs

IMPLEMENTATIONS = ("eager", "sdpa")
B, T = 3, 12  # T divisible by chunk_size_feed_forward: transformers refuses a ragged last chunk


def _inputs(config_kwargs: dict, variant: str, seed: int = 0) -> tuple[dict, dict]:
    """(our kwargs, transformers' kwargs) for one input form. They differ only for the 3D
    mask, which transformers 5.x no longer accepts and takes as a prepared 4D mask instead."""
    g = torch.Generator().manual_seed(seed)
    vocab, types = config_kwargs["vocab_size"], config_kwargs.get("type_vocab_size", 2)
    input_ids = torch.randint(0, vocab, (B, T), generator=g)
    token_type_ids = torch.randint(0, types, (B, T), generator=g)
    lengths = torch.tensor([T, 9, 4])  # one full row, two padded
    padding_mask = (torch.arange(T)[None, :] < lengths[:, None]).long()  # (B, T)

    if variant == "padded":
        ours = dict(input_ids=input_ids, attention_mask=padding_mask, token_type_ids=token_type_ids)
    elif variant == "no-mask-no-token-types":
        ours = dict(input_ids=input_ids)
    elif variant == "position_ids":
        position_ids = torch.randint(0, config_kwargs["max_position_embeddings"], (B, T), generator=g)
        ours = dict(input_ids=input_ids, attention_mask=padding_mask, position_ids=position_ids)
    elif variant == "inputs_embeds":
        embeds = torch.randn(B, T, config_kwargs["hidden_size"], generator=g)
        ours = dict(inputs_embeds=embeds, attention_mask=padding_mask, token_type_ids=token_type_ids)
    elif variant == "3d-mask":
        # Each query sees a random subset of keys, always including itself.
        mask3d = (torch.rand(B, T, T, generator=g) > 0.4).long()
        mask3d |= torch.eye(T, dtype=torch.long)[None]
        ours = dict(input_ids=input_ids, attention_mask=mask3d, token_type_ids=token_type_ids)
        additive = torch.zeros(B, 1, T, T).masked_fill(mask3d[:, None] == 0, torch.finfo(torch.float32).min)
        return ours, dict(ours, attention_mask=additive)
    else:
        raise AssertionError(variant)
    return ours, dict(ours)


VARIANTS = ("padded", "no-mask-no-token-types", "position_ids", "inputs_embeds", "3d-mask")


@pytest.mark.parametrize("implementation", IMPLEMENTATIONS)
@pytest.mark.parametrize("config_name", sorted(SMALL_CONFIGS))
def test_bert_model_matches_transformers(config_name, implementation, record_parity):
    config_kwargs = small_config_kwargs(config_name)
    ours, theirs = make_model_pair(config_kwargs, implementation)
    for variant in VARIANTS:
        our_inputs, their_inputs = _inputs(config_kwargs, variant)
        with torch.no_grad():
            a = ours(**our_inputs, output_hidden_states=True)
            b = theirs(**their_inputs, output_hidden_states=True)
        assert len(a.hidden_states) == config_kwargs["num_hidden_layers"] + 1
        rows = compare_outputs(a, b, ["last_hidden_state", "pooler_output", "hidden_states"])
        record_parity(f"BertModel, config {config_name}: outputs + hidden states, 5 input forms ({implementation})", rows)
        bad = [r for r in rows if not r.ok]
        assert not bad, f"{variant}: {[(r.name, r.max_abs_diff) for r in bad]}"


@pytest.mark.parametrize("config_name", sorted(SMALL_CONFIGS))
def test_attention_maps_match_transformers(config_name, record_parity):
    """Every layer's attention probabilities, eager on both sides (only eager returns them)."""
    config_kwargs = small_config_kwargs(config_name)
    ours, theirs = make_model_pair(config_kwargs, "eager")
    for variant in VARIANTS:
        our_inputs, their_inputs = _inputs(config_kwargs, variant, seed=1)
        with torch.no_grad():
            a = ours(**our_inputs, output_attentions=True)
            b = theirs(**their_inputs, output_attentions=True)
        n, h = config_kwargs["num_hidden_layers"], config_kwargs["num_attention_heads"]
        assert len(a.attentions) == n and a.attentions[0].shape == (B, h, T, T)
        rows = compare_outputs(a, b, ["attentions", "last_hidden_state"])
        record_parity(f"BertModel, config {config_name}: attention maps, 5 input forms (eager)", rows)
        assert all(r.ok for r in rows), [(r.name, r.max_abs_diff) for r in rows if not r.ok]


def test_sdpa_with_output_attentions_falls_back_to_eager():
    config_kwargs = small_config_kwargs("tiny")
    ours_sdpa, theirs = make_model_pair(config_kwargs, "sdpa")
    theirs.set_attn_implementation("eager")
    our_inputs, _ = _inputs(config_kwargs, "padded")
    with torch.no_grad():
        a = ours_sdpa(**our_inputs, output_attentions=True)
        b = theirs(**our_inputs, output_attentions=True)
    assert a.attentions is not None and all(t is not None for t in a.attentions)
    assert all(r.ok for r in compare_outputs(a, b, ["attentions"]))


def test_eager_and_sdpa_agree_with_each_other():
    """The fast path is tested equal to the readable reference, not only to transformers."""
    config_kwargs = small_config_kwargs("h96-3heads-relu")
    eager, _ = make_model_pair(config_kwargs, "eager", seed=5)
    sdpa, _ = make_model_pair(config_kwargs, "sdpa", seed=5)
    for variant in VARIANTS:
        our_inputs, _ = _inputs(config_kwargs, variant)
        with torch.no_grad():
            rows = compare_outputs(eager(**our_inputs), sdpa(**our_inputs), ["last_hidden_state", "pooler_output"])
        assert all(r.ok for r in rows), (variant, rows)


def test_return_dict_false_gives_the_same_tuple_as_transformers():
    config_kwargs = small_config_kwargs("tiny")
    ours, theirs = make_model_pair(config_kwargs, "eager")
    our_inputs, _ = _inputs(config_kwargs, "padded")
    with torch.no_grad():
        a = ours(**our_inputs, output_hidden_states=True, output_attentions=True, return_dict=False)
        b = theirs(**our_inputs, output_hidden_states=True, output_attentions=True, return_dict=False)
    # (last_hidden_state, pooler_output, hidden_states, attentions), as transformers 4.x returns.
    # transformers 5.x appends an empty cross_attentions tuple even for an encoder; positions agree.
    assert isinstance(a, tuple) and len(a) == 4 and len(b) >= 4
    torch.testing.assert_close(a[0], b[0], atol=FP32_ATOL, rtol=0)
    torch.testing.assert_close(a[1], b[1], atol=FP32_ATOL, rtol=0)
    for x, y in zip(a[2] + a[3], b[2] + b[3]):
        torch.testing.assert_close(x, y, atol=FP32_ATOL, rtol=0)


def test_model_without_pooler_matches():
    import transformers

    import mini_hf_bert

    config_kwargs = small_config_kwargs("tiny")
    torch.manual_seed(0)
    theirs = transformers.BertModel(transformers.BertConfig(**config_kwargs), add_pooling_layer=False).eval()
    ours = mini_hf_bert.BertModel(mini_hf_bert.BertConfig(**config_kwargs), add_pooling_layer=False).eval()
    ours.load_state_dict(theirs.state_dict(), strict=True)
    our_inputs, _ = _inputs(config_kwargs, "padded")
    with torch.no_grad():
        a, b = ours(**our_inputs), theirs(**our_inputs)
    assert a.pooler_output is None and b.pooler_output is None
    assert all(r.ok for r in compare_outputs(a, b, ["last_hidden_state"]))


def test_parity_check_detects_a_real_error():
    """The harness must be able to fail: a 1e-3 change to one weight is out of tolerance."""
    config_kwargs = small_config_kwargs("tiny")
    ours, theirs = make_model_pair(config_kwargs, "eager")
    with torch.no_grad():
        ours.encoder.layer[1].output.dense.weight[0, 0] += 1e-3
    our_inputs, _ = _inputs(config_kwargs, "padded")
    with torch.no_grad():
        rows = compare_outputs(ours(**our_inputs), theirs(**our_inputs), ["last_hidden_state"])
    assert not rows[0].ok and rows[0].max_abs_diff > FP32_ATOL


def test_ragged_feed_forward_chunks_equal_unchunked():
    """transformers refuses a sequence length that chunk_size_feed_forward does not divide;
    mini_hf_bert runs a shorter last chunk, and the result equals the unchunked model's."""
    import mini_hf_bert

    kwargs = small_config_kwargs("chunked-ff")
    torch.manual_seed(3)
    chunked = mini_hf_bert.BertModel(mini_hf_bert.BertConfig(**kwargs)).eval()
    plain = mini_hf_bert.BertModel(mini_hf_bert.BertConfig(**dict(kwargs, chunk_size_feed_forward=0))).eval()
    plain.load_state_dict(chunked.state_dict())
    ids = torch.randint(0, kwargs["vocab_size"], (2, 11))  # 11 = 3 + 3 + 3 + 2
    with torch.no_grad():
        torch.testing.assert_close(chunked(ids).last_hidden_state, plain(ids).last_hidden_state, atol=FP32_ATOL, rtol=0)
