"""Decoder mode against transformers 5.x: causal self-attention, cross-attention over an
encoder's states, and the key/value cache, which must give the same logits token by token
as one pass over the whole sequence."""

from __future__ import annotations

import pytest
import torch
import transformers

import mini_hf_bert
from mini_hf_bert.parity.compare import ParityRow, compare_outputs, max_abs_diff

from ..conftest import small_config_kwargs

B, T, S = 2, 9, 7  # batch, decoder length, encoder length


def _pair(implementation: str, cross: bool = True, class_name: str = "BertLMHeadModel"):
    kwargs = dict(small_config_kwargs("h96-3heads-relu"), is_decoder=True, add_cross_attention=cross)
    torch.manual_seed(0)
    theirs = getattr(transformers, class_name)(transformers.BertConfig(**kwargs))
    theirs.set_attn_implementation(implementation)
    ours = getattr(mini_hf_bert, class_name)(mini_hf_bert.BertConfig(attn_implementation=implementation, **kwargs))
    ours.load_state_dict(theirs.state_dict(), strict=True)
    ours.tie_weights()
    return ours.eval(), theirs.eval()


def _data(seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, 211, (B, T), generator=g)
    encoder_states = torch.randn(B, S, 96, generator=g)
    encoder_mask = torch.ones(B, S, dtype=torch.long)
    encoder_mask[1, 4:] = 0  # the second example's encoder input is padded
    return ids, encoder_states, encoder_mask


@pytest.mark.parametrize("implementation", ["eager", "sdpa"])
def test_decoder_with_cross_attention_matches_transformers(implementation, record_parity):
    ours, theirs = _pair(implementation)
    ids, enc, enc_mask = _data()
    kwargs = dict(encoder_hidden_states=enc, encoder_attention_mask=enc_mask, output_hidden_states=True,
                  output_attentions=implementation == "eager", labels=ids, use_cache=False)
    with torch.no_grad():
        a, b = ours(ids, **kwargs), theirs(ids, **kwargs)
    fields = ["logits", "loss", "hidden_states"] + (["attentions", "cross_attentions"] if implementation == "eager" else [])
    rows = record_parity(f"decoder: causal self-attention + cross-attention, logits/loss/attentions ({implementation})",
                         compare_outputs(a, b, fields))
    assert all(r.ok for r in rows), [(r.name, r.max_abs_diff) for r in rows if not r.ok]
    if implementation == "eager":
        assert a.cross_attentions[0].shape == (B, 3, T, S)
        assert torch.count_nonzero(a.cross_attentions[0][1, :, :, 4:]) == 0  # encoder padding gets no weight
        assert torch.count_nonzero(torch.triu(a.attentions[0][0, 0], diagonal=1)) == 0  # causal


@pytest.mark.parametrize("cross", [False, True])
@pytest.mark.parametrize("implementation", ["eager", "sdpa"])
def test_cached_generation_equals_the_full_forward(implementation, cross, record_parity):
    """Prefix of 4 tokens, then one token at a time with the cache: every step's logits
    equal those of one pass over the whole sequence, ours and transformers'."""
    ours, theirs = _pair(implementation, cross=cross)
    ids, enc, enc_mask = _data(1)
    cross_kwargs = dict(encoder_hidden_states=enc, encoder_attention_mask=enc_mask) if cross else {}
    with torch.no_grad():
        full_ours = ours(ids, **cross_kwargs, use_cache=False).logits  # (B, T, V)
        full_theirs = theirs(ids, **cross_kwargs, use_cache=False).logits
        steps = []
        out = ours(ids[:, :4], **cross_kwargs, use_cache=True)
        steps.append(out.logits)
        cache = out.past_key_values
        assert len(cache) == 2 and len(cache[0]) == (4 if cross else 2) and cache[0][0].shape[2] == 4
        for t in range(4, T):
            out = ours(ids[:, t : t + 1], **cross_kwargs, past_key_values=cache, use_cache=True)
            steps.append(out.logits)
            cache = out.past_key_values
        stepped = torch.cat(steps, dim=1)  # (B, T, V)
    assert cache[0][0].shape[2] == T
    rows = [ParityRow("stepped vs own full", max_abs_diff(stepped, full_ours)),
            ParityRow("stepped vs transformers full", max_abs_diff(stepped, full_theirs))]
    record_parity(f"decoder: cached token-by-token logits vs full forward ({implementation})", rows)
    assert all(r.ok for r in rows), rows


def test_greedy_decoding_with_cache_picks_the_same_tokens_as_transformers():
    ours, theirs = _pair("sdpa", cross=False)
    prompt = torch.randint(0, 211, (1, 3), generator=torch.Generator().manual_seed(5))

    def greedy(model, steps: int = 6) -> torch.Tensor:
        ids, cache, new = prompt, None, prompt
        with torch.no_grad():
            for _ in range(steps):
                out = model(new, past_key_values=cache, use_cache=True)
                cache = out.past_key_values
                new = out.logits[:, -1:].argmax(-1)  # (1, 1)
                ids = torch.cat([ids, new], dim=1)
        return ids

    assert torch.equal(greedy(ours), greedy(theirs))


def test_cross_attention_inputs_need_add_cross_attention():
    model = mini_hf_bert.BertModel(mini_hf_bert.BertConfig(**small_config_kwargs("tiny"), is_decoder=True)).eval()
    with pytest.raises(ValueError, match="no cross-attention layers: build it with is_decoder=True and add_cross_attention=True"):
        model(torch.ones(1, 3, dtype=torch.long), encoder_hidden_states=torch.zeros(1, 4, 64))
    encoder = mini_hf_bert.BertModel(mini_hf_bert.BertConfig(**small_config_kwargs("tiny"))).eval()
    out = encoder(torch.ones(1, 3, dtype=torch.long))
    # An encoder takes past_key_values only as a prefix (peft's prefix tuning): a (K, V) per layer.
    with pytest.raises(ValueError, match=r"past_key_values must hold one \(K, V\[, cross K, cross V\]\) tuple per "
                                         r"layer \(2\), as a prefix has them"):
        encoder(torch.ones(1, 3, dtype=torch.long), past_key_values=((out.last_hidden_state,),))


def test_wrong_encoder_inputs_say_what_was_expected():
    ours, _ = _pair("eager")
    ids, enc, enc_mask = _data()
    with pytest.raises(ValueError, match=r"encoder_hidden_states must be \(batch, encoder_seq, hidden_size\) = \(2, \*, 96\)"):
        ours(ids, encoder_hidden_states=enc[..., :50])
    with pytest.raises(ValueError, match=r"encoder_attention_mask must be \(batch, encoder_seq\) = \(2, 7\)"):
        ours(ids, encoder_hidden_states=enc, encoder_attention_mask=enc_mask[:, :5])
    with pytest.raises(ValueError, match="one \\(K, V\\[, cross K, cross V\\]\\) tuple per layer"):
        ours(ids, encoder_hidden_states=enc, past_key_values=())
