"""Shared helpers: activations against transformers', the extended attention mask (shape,
fill value, causal rule, no NaN on fully masked rows), chunked feed-forward, output containers."""

from __future__ import annotations

import pytest
import torch
import transformers.activations
from hypothesis import given, settings
from hypothesis import strategies as st

from mini_hf_bert import (
    ACT2FN,
    BertConfig,
    BertModel,
    apply_chunking_to_forward,
    get_extended_attention_mask,
)
from mini_hf_bert.modeling_outputs import BaseModelOutputWithPoolingAndCrossAttentions
from mini_hf_bert.parity.compare import FP32_ATOL


@pytest.mark.parametrize("name", sorted(ACT2FN))
def test_activation_equals_transformers(name):
    x = torch.linspace(-8, 8, 4001, dtype=torch.float32)
    ours = ACT2FN[name](x)
    theirs = transformers.activations.ACT2FN[name](x)
    # Same formula, same ops: bit-identical.
    assert torch.equal(ours, theirs), (name, (ours - theirs).abs().max())


def test_gelu_and_gelu_new_differ_as_documented():
    """The erf GELU ('gelu', transformers' reading of Google configs) and the tanh one
    ('gelu_new', google-research/bert's code) differ by up to ~5e-4 per activation."""
    x = torch.linspace(-6, 6, 10001)
    gap = (ACT2FN["gelu"](x) - ACT2FN["gelu_new"](x)).abs().max().item()
    assert 1e-4 < gap < 1e-3


# ---------------------------------------------------------------------- masks


def _reference_additive(keep: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """The definition, element by element: 0 where allowed, finfo(dtype).min where not."""
    out = torch.empty(keep.shape, dtype=dtype)
    for index in torch.cartesian_prod(*[torch.arange(s) for s in keep.shape]):
        idx = tuple(index.tolist())
        out[idx] = 0.0 if keep[idx] else torch.finfo(dtype).min
    return out


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_2d_mask_becomes_additive_b11s(dtype):
    mask = torch.tensor([[1, 1, 1, 0], [1, 0, 0, 0]])
    ext = get_extended_attention_mask(mask, (2, 4), dtype=dtype)
    assert ext.shape == (2, 1, 1, 4) and ext.dtype == dtype
    assert torch.equal(ext, _reference_additive(mask.bool()[:, None, None, :], dtype))
    assert ext.min().item() == torch.finfo(dtype).min  # not 3.4's -10000


def test_3d_mask_becomes_b1ts():
    keep = torch.tensor([[[1, 0, 1], [0, 1, 1], [1, 1, 0]]])
    ext = get_extended_attention_mask(keep, (1, 3))
    assert ext.shape == (1, 1, 3, 3)
    assert torch.equal(ext, _reference_additive(keep.bool()[:, None], torch.float32))


def test_decoder_mask_is_causal_and_respects_padding():
    mask = torch.tensor([[1, 1, 1, 0]])
    ext = get_extended_attention_mask(mask, (1, 4), is_decoder=True)
    assert ext.shape == (1, 1, 4, 4)
    keep = torch.tensor([[j <= i and mask[0, j] == 1 for j in range(4)] for i in range(4)])
    assert torch.equal(ext[0, 0], _reference_additive(keep, torch.float32))


def test_decoder_mask_with_past_keys_sees_the_whole_past():
    mask = torch.ones(1, 5)  # 3 cached keys + 2 new queries
    ext = get_extended_attention_mask(mask, (1, 2), is_decoder=True)
    assert ext.shape == (1, 1, 2, 5)
    keep = torch.tensor([[True, True, True, True, False], [True] * 5])
    assert torch.equal(ext[0, 0], _reference_additive(keep, torch.float32))


@settings(max_examples=60, deadline=None)
@given(
    batch=st.integers(1, 3), seq=st.integers(1, 6), decoder=st.booleans(), data=st.data(),
)
def test_mask_property_matches_definition(batch, seq, decoder, data):
    bits = data.draw(st.lists(st.integers(0, 1), min_size=batch * seq, max_size=batch * seq))
    mask = torch.tensor(bits).view(batch, seq)
    ext = get_extended_attention_mask(mask, (batch, seq), is_decoder=decoder)
    if decoder:
        causal = torch.tril(torch.ones(seq, seq, dtype=torch.bool))
        keep = causal[None] & mask.bool()[:, None, :]
        expected = _reference_additive(keep[:, None], torch.float32)
    else:
        expected = _reference_additive(mask.bool()[:, None, None, :], torch.float32)
    assert torch.equal(ext, expected)


@pytest.mark.parametrize(
    "shape,input_shape,is_decoder,message",
    [
        ((4,), (1, 4), False, "must be 2D \\(batch, seq\\) or 3D"),
        ((1, 1, 4, 4), (1, 4), False, "must be 2D \\(batch, seq\\) or 3D"),
        ((2, 5), (2, 4), False, "must be \\(batch, seq\\) = \\(2, 4\\)"),
        ((3, 4), (2, 4), False, "must be \\(batch, seq\\) = \\(2, 4\\)"),
        ((2, 3), (2, 4), True, "must be \\(batch, seq\\) = \\(2, >= 4\\)"),
        ((2, 4, 3), (2, 5), False, "must be \\(batch, from_seq, to_seq\\)"),
    ],
)
def test_bad_mask_shapes_are_rejected_clearly(shape, input_shape, is_decoder, message):
    with pytest.raises(ValueError, match=message):
        get_extended_attention_mask(torch.ones(shape), input_shape, is_decoder=is_decoder)


@pytest.mark.parametrize("implementation", ["eager", "sdpa"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_fully_masked_rows_never_give_nan(implementation, dtype):
    config = BertConfig(vocab_size=50, hidden_size=32, num_attention_heads=4, num_hidden_layers=2,
                        intermediate_size=64, attn_implementation=implementation)
    torch.manual_seed(0)
    model = BertModel(config).eval().to(dtype)
    ids = torch.randint(0, 50, (3, 6))
    mask2d = torch.tensor([[1] * 6, [0] * 6, [1, 1, 0, 0, 0, 0]])  # row 1: every key masked
    mask3d = torch.ones(3, 6, 6, dtype=torch.long)
    mask3d[0, 2, :] = 0  # query 2 of example 0 may attend nothing
    for mask in (mask2d, mask3d):
        with torch.no_grad():
            out = model(ids, attention_mask=mask, output_attentions=(implementation == "eager"))
        assert torch.isfinite(out.last_hidden_state).all() and torch.isfinite(out.pooler_output).all()


def test_model_method_form_uses_config_is_decoder():
    config = BertConfig(vocab_size=50, hidden_size=32, num_attention_heads=4, num_hidden_layers=1, intermediate_size=64)
    model = BertModel(config)
    ext = model.get_extended_attention_mask(torch.ones(2, 3), (2, 3))
    assert ext.shape == (2, 1, 1, 3) and ext.dtype == torch.float32


# ---------------------------------------------------------------------- chunking


def test_chunking_equals_whole_tensor():
    lin = torch.nn.Linear(8, 8)
    x = torch.randn(2, 10, 8)
    whole = apply_chunking_to_forward(lin, 0, 1, x)
    for chunk in (1, 3, 5, 10, 64):
        torch.testing.assert_close(apply_chunking_to_forward(lin, chunk, 1, x), whole, atol=FP32_ATOL, rtol=0)


def test_chunking_rejects_unequal_inputs():
    with pytest.raises(ValueError, match="same size along dim 1"):
        apply_chunking_to_forward(lambda a, b: a + b, 2, 1, torch.ones(1, 4), torch.ones(1, 5))


# ---------------------------------------------------------------------- outputs


def test_model_output_behaves_like_transformers():
    h, p = torch.ones(1, 2, 3), torch.zeros(1, 3)
    out = BaseModelOutputWithPoolingAndCrossAttentions(last_hidden_state=h, pooler_output=p)
    assert out[0] is h and out[1] is p and out["pooler_output"] is p
    assert out.to_tuple() == (h, p) and list(out.keys()) == ["last_hidden_state", "pooler_output"]
    assert len(out) == 2 and list(out) == ["last_hidden_state", "pooler_output"]
    with pytest.raises(KeyError, match="attentions"):
        out["attentions"]


def test_mean_resizing_takes_the_mean_where_the_covariance_is_singular_whether_or_not_torch_validates():
    """Fewer rows than dimensions make Σ singular: torch.distributions raises ValueError when it
    validates its arguments and LinAlgError from the Cholesky factorisation when it does not
    (a global switch some library may turn off); either way the new rows are the mean."""
    from mini_hf_bert.modeling_utils import _rows_near_the_mean

    weight = torch.randn(3, 8)  # 3 rows in 8 dimensions
    before = torch.distributions.Distribution._validate_args
    try:
        for validate in (True, False):
            torch.distributions.Distribution.set_default_validate_args(validate)
            rows = _rows_near_the_mean(weight, 2)
            assert torch.equal(rows, weight.mean(dim=0).expand(2, -1))
    finally:
        torch.distributions.Distribution.set_default_validate_args(before)
