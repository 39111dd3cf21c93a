"""position_embedding_type "relative_key" / "relative_key_query" (transformers 4.x only)."""

from __future__ import annotations

import pytest
import torch
import transformers

import mini_hf_bert
from mini_hf_bert.parity.compare import ParityRow, compare_outputs, max_abs_diff

CONFIG = dict(vocab_size=120, hidden_size=64, num_attention_heads=4, num_hidden_layers=2, intermediate_size=128,
              max_position_embeddings=24)


@pytest.mark.parametrize("implementation", ["eager", "sdpa"])
@pytest.mark.parametrize("kind", ["relative_key", "relative_key_query"])
def test_relative_positions_equal_transformers_4(kind, implementation, record_parity):
    torch.manual_seed(0)
    theirs = transformers.BertModel(transformers.BertConfig(position_embedding_type=kind, attn_implementation=implementation, **CONFIG)).eval()
    ours = mini_hf_bert.BertModel(mini_hf_bert.BertConfig(position_embedding_type=kind, attn_implementation=implementation, **CONFIG)).eval()
    ours.load_state_dict(theirs.state_dict(), strict=True)
    assert ours.encoder.layer[0].attention.self.distance_embedding.weight.shape == (2 * 24 - 1, 16)
    g = torch.Generator().manual_seed(4)
    for seq in (5, 24):  # distances up to +-(P-1) at the longest input
        ids = torch.randint(0, 120, (2, seq), generator=g)
        mask = torch.ones(2, seq, dtype=torch.long)
        mask[1, seq - 2:] = 0
        with torch.no_grad():
            a = ours(ids, mask, output_attentions=True, output_hidden_states=True)
            b = theirs(ids, mask, output_attentions=True, output_hidden_states=True)
        rows = record_parity(f"relative positions: {kind}",
                             compare_outputs(a, b, ["last_hidden_state", "pooler_output", "hidden_states", "attentions"]))
        assert all(r.ok for r in rows), [(r.name, r.max_abs_diff) for r in rows if not r.ok]


def test_relative_positions_change_the_output():
    """The distance table is used: zeroing it changes the result."""
    torch.manual_seed(0)
    model = mini_hf_bert.BertModel(mini_hf_bert.BertConfig(position_embedding_type="relative_key", **CONFIG)).eval()
    ids = torch.randint(0, 120, (1, 9))
    with torch.no_grad():
        before = model(ids).last_hidden_state
        for layer in model.encoder.layer:
            layer.attention.self.distance_embedding.weight.zero_()
        after = model(ids).last_hidden_state
    assert not torch.allclose(before, after)


@pytest.mark.parametrize("kind", ["relative_key", "relative_key_query"])
def test_relative_positions_with_cache_equal_transformers_4(kind, record_parity):
    """A decoder with relative positions, stepped with the cache, against 4.x's full pass:
    the cached queries must see their true distances to every earlier key."""
    kwargs = dict(CONFIG, position_embedding_type=kind, is_decoder=True)
    torch.manual_seed(0)
    theirs = transformers.BertLMHeadModel(transformers.BertConfig(attn_implementation="eager", **kwargs)).eval()
    ours = mini_hf_bert.BertLMHeadModel(mini_hf_bert.BertConfig(attn_implementation="eager", **kwargs)).eval()
    ours.load_state_dict(theirs.state_dict(), strict=True)
    ours.tie_weights()
    ids = torch.randint(0, 120, (2, 10), generator=torch.Generator().manual_seed(6))
    with torch.no_grad():
        full = theirs(ids, use_cache=False).logits
        out = ours(ids[:, :3], use_cache=True)
        steps, cache = [out.logits], out.past_key_values
        for t in range(3, 10):
            out = ours(ids[:, t : t + 1], past_key_values=cache, use_cache=True)
            steps.append(out.logits)
            cache = out.past_key_values
    rows = record_parity(f"relative positions + decoder cache, stepped vs 4.x full: {kind}",
                         [ParityRow("logits", max_abs_diff(torch.cat(steps, dim=1), full))])
    assert rows[0].ok, rows
