"""What transformers 5.x no longer has, against 4.57.6: get_extended_attention_mask
itself, and BertModel through 4.x's own mask path (eager and sdpa classes)."""

from __future__ import annotations

import pytest
import torch
import transformers

import mini_hf_bert
from mini_hf_bert import get_extended_attention_mask
from mini_hf_bert.parity.compare import FP32_ATOL, compare_outputs

CONFIG = dict(vocab_size=120, hidden_size=96, num_attention_heads=3, num_hidden_layers=2, intermediate_size=160,
              max_position_embeddings=40)


def _hf_model(is_decoder: bool = False, implementation: str = "eager", **extra):
    torch.manual_seed(0)
    config = transformers.BertConfig(is_decoder=is_decoder, attn_implementation=implementation, **CONFIG, **extra)
    return transformers.BertModel(config).eval()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("is_decoder", [False, True])
def test_extended_mask_equals_transformers_4(dtype, is_decoder):
    hf = _hf_model(is_decoder=is_decoder)
    g = torch.Generator().manual_seed(1)
    for shape, input_shape in [((3, 7), (3, 7)), ((2, 9, 9), (2, 9))]:
        mask = (torch.rand(shape, generator=g) > 0.3).long()
        theirs = hf.get_extended_attention_mask(mask, input_shape, dtype=dtype)
        ours = get_extended_attention_mask(mask, input_shape, dtype=dtype, is_decoder=is_decoder)
        assert ours.dtype == theirs.dtype and torch.equal(ours, theirs), (shape, dtype)


def test_decoder_mask_with_past_equals_transformers_4():
    hf = _hf_model(is_decoder=True)
    mask = torch.tensor([[1, 1, 0, 1, 1, 1], [1, 1, 1, 1, 1, 0]])  # 4 cached keys + 2 new queries
    theirs = hf.get_extended_attention_mask(mask, (2, 2))
    assert torch.equal(get_extended_attention_mask(mask, (2, 2), is_decoder=True), theirs)


@pytest.mark.parametrize("implementation", ["eager", "sdpa"])
def test_bert_model_equals_transformers_4(implementation, record_parity):
    theirs = _hf_model(implementation=implementation)
    assert type(theirs.encoder.layer[0].attention.self).__name__ == (
        "BertSelfAttention" if implementation == "eager" else "BertSdpaSelfAttention")
    ours = mini_hf_bert.BertModel(mini_hf_bert.BertConfig(attn_implementation=implementation, **CONFIG)).eval()
    ours.load_state_dict(theirs.state_dict(), strict=True)
    g = torch.Generator().manual_seed(2)
    ids = torch.randint(0, 120, (3, 12), generator=g)
    mask = torch.ones(3, 12, dtype=torch.long)
    mask[1, 8:] = 0
    mask3d = (torch.rand(3, 12, 12, generator=g) > 0.3).long() | torch.eye(12, dtype=torch.long)
    for attention_mask in (mask, mask3d):  # 4.x still takes 3D masks itself
        with torch.no_grad():
            a = ours(ids, attention_mask, output_hidden_states=True, output_attentions=implementation == "eager")
            b = theirs(ids, attention_mask, output_hidden_states=True, output_attentions=implementation == "eager")
        fields = ["last_hidden_state", "pooler_output", "hidden_states"] + (["attentions"] if implementation == "eager" else [])
        rows = record_parity(f"BertModel, 2D and 3D masks through 4.x's own mask path ({implementation})",
                             compare_outputs(a, b, fields))
        assert all(r.ok for r in rows), [(r.name, r.max_abs_diff) for r in rows if not r.ok]
        assert max(r.max_abs_diff for r in rows) < FP32_ATOL


@pytest.mark.parametrize("ids", [[[5, 6, 0]], [[0, 6, 7]], [[5, 0, 7]], [[5, 6, 7]]])
def test_the_padding_warning_is_given_when_transformers_4_gives_it(ids, caplog):
    """4.57.6 warns when input_ids start or end with the pad token and no mask is given
    (warn_if_padding_and_no_attention_mask), once; so do we, for the same inputs."""
    import logging

    from mini_hf_bert import validation

    ours = mini_hf_bert.BertModel(mini_hf_bert.BertConfig(**CONFIG)).eval()
    theirs = _hf_model()
    validation._warn_once.cache_clear()
    transformers.utils.logging.get_logger("transformers.modeling_utils").warning_once.cache_clear()
    said = {}
    for name, model, logger in (("ours", ours, "mini_hf_bert.validation"), ("theirs", theirs, "transformers.modeling_utils")):
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger=logger), torch.no_grad():
            model(torch.tensor(ids))
        said[name] = "We strongly recommend passing in an `attention_mask`" in caplog.text
    assert said["ours"] == said["theirs"] == (ids[0][0] == 0 or ids[0][-1] == 0), said


def test_the_padding_warning_is_on_our_logger_not_transformers():
    """A kept difference (docs/conformance.md): 4.57.6's own test of this warning
    (test_for_warning_if_padding_and_no_attention_mask) captures transformers'
    ``transformers.modeling_utils`` logger; ours warns on ``mini_hf_bert.validation``, so that
    capture sees nothing from our model, and a capture of our logger sees the warning.
    (The capture is testing_utils.CaptureLogger's: a stream handler on the logger. That module
    is not imported here: it imports datasets, which needs a newer huggingface_hub than 4.x's.)"""
    import io
    import logging

    from mini_hf_bert import validation

    ours = mini_hf_bert.BertModel(mini_hf_bert.BertConfig(**CONFIG)).eval()
    ids = torch.tensor([[0, 6, 7]])
    theirs_logger = transformers.utils.logging.get_logger("transformers.modeling_utils")
    for logger, expected in ((theirs_logger, False), (validation.logger, True)):
        validation._warn_once.cache_clear()
        stream = io.StringIO()
        handler = logging.StreamHandler(stream)
        logger.addHandler(handler)
        try:
            with torch.no_grad():
                ours(ids)
        finally:
            logger.removeHandler(handler)
        assert ("We strongly recommend passing in an `attention_mask`" in stream.getvalue()) is expected, logger.name
