"""bert2bert and transformers 4.57.6's caches: its EncoderDecoderModel over our halves
generates what it generates over its own (greedy and beam search pass its
EncoderDecoderCache through our decoder), and our decoder fills a 4.57.6
EncoderDecoderCache given to it, as its own BertLMHeadModel does."""

from __future__ import annotations

import pytest
import torch
import transformers

import mini_hf_bert
from mini_hf_bert.parity.compare import FP32_ATOL

CONFIG = dict(vocab_size=120, hidden_size=64, num_attention_heads=4, num_hidden_layers=2, intermediate_size=96)


def _halves():
    torch.manual_seed(0)
    encoder = transformers.BertModel(transformers.BertConfig(**CONFIG))
    decoder = transformers.BertLMHeadModel(transformers.BertConfig(**CONFIG, is_decoder=True, add_cross_attention=True))
    ours_encoder = mini_hf_bert.BertModel(mini_hf_bert.BertConfig(**CONFIG))
    ours_decoder = mini_hf_bert.BertLMHeadModel(mini_hf_bert.BertConfig(**CONFIG, is_decoder=True, add_cross_attention=True))
    ours_encoder.load_state_dict(encoder.state_dict())
    ours_decoder.load_state_dict(decoder.state_dict(), strict=False)  # 4.57.6 also saves cls.predictions.decoder.bias
    return (ours_encoder.eval(), ours_decoder.eval()), (encoder.eval(), decoder.eval())


@pytest.mark.parametrize("num_beams", [1, 3])
def test_encoder_decoder_generate_equals_4x(num_beams):
    ids = torch.randint(4, 120, (2, 8), generator=torch.Generator().manual_seed(1))
    generated = []
    for encoder, decoder in _halves():
        model = transformers.EncoderDecoderModel(encoder=encoder, decoder=decoder).eval()
        model.config.decoder_start_token_id, model.config.pad_token_id, model.config.eos_token_id = 2, 0, 3
        model.generation_config.decoder_start_token_id = 2
        model.generation_config.pad_token_id, model.generation_config.eos_token_id = 0, 3
        generated.append(model.generate(ids, max_new_tokens=6, num_beams=num_beams))
    assert torch.equal(generated[0], generated[1])


def test_decoder_fills_a_4x_encoder_decoder_cache():
    (_, ours), (_, theirs) = _halves()
    g = torch.Generator().manual_seed(2)
    states, labels = torch.randn(2, 5, 64, generator=g), torch.randint(4, 120, (2, 6), generator=g)
    logits = []
    with torch.no_grad():
        for model in (ours, theirs):
            cache = transformers.EncoderDecoderCache(transformers.DynamicCache(), transformers.DynamicCache())
            first = model(labels[:, :4], encoder_hidden_states=states, past_key_values=cache, use_cache=True)
            second = model(labels[:, 4:], encoder_hidden_states=states, past_key_values=cache, use_cache=True)
            assert cache.get_seq_length() == 6
            logits.append(torch.cat([first.logits, second.logits], dim=1))
    assert (logits[0] - logits[1]).abs().max() < FP32_ATOL
