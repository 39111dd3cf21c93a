"""What docs/versions.md (and docs/zh/versions.md) says the mask constants and the 3.4.0-style
call do, computed: a fully padded row under -10000, finfo.min and -inf, and a fifth
positional argument."""

from __future__ import annotations

import pytest
import torch

from mini_hf_bert import BertConfig, BertModel
from mini_hf_bert.masking_utils import get_extended_attention_mask
from mini_hf_bert.parity.compare import FP32_ATOL

#: Scores that are multiples of 1/8, so that s - 10000 is exact in fp32 (10000 needs 14 bits,
#: eighths 3 more, under fp32's 24): the only rounding left is softmax's own.
SCORES = torch.tensor([[1.0, -0.5, 2.25, 0.125, -3.0]])


def test_minus_10000_on_a_fully_padded_row_is_softmax_of_the_scores_not_uniform():
    shifted = torch.softmax(SCORES - 10000.0, dim=-1)
    torch.testing.assert_close(shifted, torch.softmax(SCORES, dim=-1), atol=FP32_ATOL, rtol=0)
    uniform = torch.full_like(SCORES, 1 / SCORES.shape[-1])
    assert (shifted - uniform).abs().max() > 0.1


def test_finfo_min_on_a_fully_padded_row_is_uniform():
    # the additive mask this package builds, for a row with every key padded
    mask = get_extended_attention_mask(torch.zeros(1, SCORES.shape[-1]), (1, SCORES.shape[-1]), torch.float32)
    row = torch.softmax(SCORES + mask[0, 0], dim=-1)
    assert torch.equal(SCORES + mask[0, 0], torch.full_like(SCORES, torch.finfo(torch.float32).min))
    torch.testing.assert_close(row, torch.full_like(SCORES, 1 / SCORES.shape[-1]), atol=FP32_ATOL, rtol=0)


def test_minus_inf_on_a_fully_padded_row_is_nan():
    assert torch.softmax(SCORES - float("inf"), dim=-1).isnan().all()


def test_the_model_gives_a_fully_padded_row_uniform_attention():
    torch.manual_seed(0)
    config = BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=32, attn_implementation="eager")
    model = BertModel(config).eval()
    input_ids = torch.randint(1, 50, (2, 6))
    attention_mask = torch.ones(2, 6, dtype=torch.long)
    attention_mask[1] = 0  # the second row: every key padded
    with torch.no_grad():
        out = model(input_ids, attention_mask, output_attentions=True)
    for probs in out.attentions:  # (B, N, T, S) per layer
        torch.testing.assert_close(probs[1], torch.full_like(probs[1], 1 / 6), atol=FP32_ATOL, rtol=0)
        assert not torch.allclose(probs[0], torch.full_like(probs[0], 1 / 6), atol=1e-3)
    assert torch.isfinite(out.last_hidden_state).all()


@pytest.mark.parametrize("doc", ["docs/versions.md", "docs/zh/versions.md"])
def test_a_head_mask_passed_fifth_is_refused_as_the_doc_quotes(doc):
    """The doc quotes the refusal of 3.4.0's ``model(ids, mask, tt, None, head_mask)``: the
    message raised here, and a fifth ``None`` still meaning nothing."""
    import os
    import re

    from ..paths import ROOT

    model = BertModel(BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                 intermediate_size=32)).eval()
    ids = torch.ones(1, 3, dtype=torch.long)
    with pytest.raises(ValueError) as error:
        model(ids, None, None, None, torch.ones(2))
    with open(os.path.join(ROOT, doc), encoding="utf-8") as f:
        text = f.read()
    quoted = re.search(r"```\n(inputs_embeds must be .*?)```", text, re.S).group(1)
    assert " ".join(quoted.split()) == str(error.value)
    with torch.no_grad():
        assert torch.equal(model(ids, None, None, None, None)[0], model(ids)[0])
