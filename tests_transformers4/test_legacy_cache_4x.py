"""Past keys and values in the 4.x forms: a list of per-layer [key, value] pairs (no
cross-attention pair), and 4.57.6's ``EncoderDecoderCache.from_legacy_cache`` of such pairs,
given to an encoder and to a decoder with and without cross-attention.

The first test is transformers' ``BertModelTest.test_sdpa_ignored_mask``
(tests/models/bert/test_modeling_bert.py at commit 51d732709e5ae424e8fb6c4e58b72057a3e413c2,
removed upstream by #38301), ported: the hub's tiny-random-BertModel and its tokenizer are
replaced by a tiny BERT of the same shape drawn here and fixed token ids; the assertions are
the authors'. The second holds our decoder equal to 4.57.6's own for the cache it builds.
"""

from __future__ import annotations

import pytest
import torch
import transformers
from transformers.cache_utils import EncoderDecoderCache

import mini_hf_bert
from mini_hf_bert.parity.compare import FP32_ATOL

#: hf-internal-testing/tiny-random-BertModel's shape.
TINY = dict(vocab_size=1124, hidden_size=32, num_hidden_layers=5, num_attention_heads=4, intermediate_size=37)


def _pairs(config: dict, batch: int = 1, length: int = 3) -> list[list[torch.Tensor]]:
    generator = torch.Generator().manual_seed(0)
    shape = (batch, config["num_attention_heads"], length, config["hidden_size"] // config["num_attention_heads"])
    return [[torch.rand(shape, generator=generator), torch.rand(shape, generator=generator)]
            for _ in range(config["num_hidden_layers"])]


def test_sdpa_ignored_mask(tmp_path):
    torch.manual_seed(0)
    mini_hf_bert.BertModel(mini_hf_bert.BertConfig(**TINY)).save_pretrained(tmp_path)
    pkv = _pairs(TINY)

    model = mini_hf_bert.BertModel.from_pretrained(tmp_path, attn_implementation="eager")
    model_sdpa = mini_hf_bert.BertModel.from_pretrained(tmp_path, attn_implementation="sdpa")

    model = model.eval()
    model_sdpa = model_sdpa.eval()

    inp = {"input_ids": torch.tensor([[2, 51, 347, 9, 1003, 12, 3]]), "token_type_ids": torch.zeros(1, 7, dtype=torch.long)}

    with torch.no_grad():
        res_eager = model(**inp)
        res_sdpa = model_sdpa(**inp)
        assert torch.allclose(res_eager.last_hidden_state, res_sdpa.last_hidden_state, atol=1e-5, rtol=1e-4)

        # Case where query length != kv_length.
        res_eager = model(**inp, past_key_values=pkv)
        res_sdpa = model_sdpa(**inp, past_key_values=pkv)
        assert torch.allclose(res_eager.last_hidden_state, res_sdpa.last_hidden_state, atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("cross_attention", [False, True], ids=["decoder", "decoder-with-cross-attention"])
def test_a_cache_from_self_attention_pairs_only_runs_as_in_4x(cross_attention):
    """4.57.6's ``EncoderDecoderCache.from_legacy_cache`` of [key, value] pairs alone leaves the
    cross-attention cache empty; a decoder fills it from ``encoder_hidden_states``. Ours
    reads the same cache and returns the same states and keys as 4.57.6's own model."""
    config = dict(vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=37,
                  is_decoder=True, add_cross_attention=cross_attention)
    torch.manual_seed(0)
    theirs = transformers.BertModel(transformers.BertConfig(**config)).eval()
    ours = mini_hf_bert.BertModel(mini_hf_bert.BertConfig(**config)).eval()
    ours.load_state_dict(theirs.state_dict())
    inputs = {"input_ids": torch.tensor([[5, 17, 42, 8]]), "attention_mask": torch.ones(1, 7, dtype=torch.long)}
    if cross_attention:
        inputs["encoder_hidden_states"] = torch.rand(1, 5, 32, generator=torch.Generator().manual_seed(1))
    outputs = {}
    for name, model in (("theirs", theirs), ("ours", ours)):
        cache = EncoderDecoderCache.from_legacy_cache(tuple(tuple(pair) for pair in _pairs(config)))
        with torch.no_grad():
            outputs[name] = model(**inputs, past_key_values=cache, use_cache=True)
    torch.testing.assert_close(outputs["ours"].last_hidden_state, outputs["theirs"].last_hidden_state,
                               rtol=0, atol=FP32_ATOL)
    for layer in range(config["num_hidden_layers"]):
        for which in ("keys", "values"):
            torch.testing.assert_close(
                getattr(outputs["ours"].past_key_values.self_attention_cache.layers[layer], which),
                getattr(outputs["theirs"].past_key_values.self_attention_cache.layers[layer], which), rtol=0, atol=0)
    assert outputs["ours"].past_key_values.get_seq_length() == 7
