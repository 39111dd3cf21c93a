"""head_mask and prune_heads, which transformers 5.x removed, against 4.57.6."""

from __future__ import annotations

import json

import pytest
import torch
import transformers

import mini_hf_bert
from mini_hf_bert.parity.compare import compare_outputs

CONFIG = dict(vocab_size=120, hidden_size=96, num_attention_heads=6, num_hidden_layers=3, intermediate_size=160,
              max_position_embeddings=40)
PRUNE = {0: [1, 4], 2: [0, 2, 5]}


def _pair(class_name: str = "BertModel", implementation: str = "eager", **extra):
    torch.manual_seed(0)
    theirs = getattr(transformers, class_name)(transformers.BertConfig(attn_implementation=implementation, **CONFIG, **extra)).eval()
    ours = getattr(mini_hf_bert, class_name)(mini_hf_bert.BertConfig(attn_implementation=implementation, **CONFIG, **extra)).eval()
    ours.load_state_dict(theirs.state_dict(), strict=True)
    return ours, theirs


def _inputs():
    g = torch.Generator().manual_seed(3)
    mask = torch.ones(2, 11, dtype=torch.long)
    mask[1, 7:] = 0
    return dict(input_ids=torch.randint(0, 120, (2, 11), generator=g), attention_mask=mask)


HEAD_MASKS = {
    "one-for-all-layers": torch.tensor([1.0, 0.0, 1.0, 1.0, 0.0, 1.0]),
    "per-layer": torch.tensor([[1.0, 1, 1, 1, 1, 0], [0, 1, 0, 1, 0, 1], [1, 1, 1, 1, 1, 1]]),
    "soft": torch.linspace(0.1, 1.0, 18).view(3, 6),
}


@pytest.mark.parametrize("implementation", ["eager", "sdpa"])
@pytest.mark.parametrize("name", sorted(HEAD_MASKS))
def test_head_mask_equals_transformers_4(name, implementation, record_parity):
    ours, theirs = _pair(implementation=implementation)
    with torch.no_grad():
        a = ours(**_inputs(), head_mask=HEAD_MASKS[name], output_attentions=True, output_hidden_states=True)
        b = theirs(**_inputs(), head_mask=HEAD_MASKS[name], output_attentions=True, output_hidden_states=True)
    rows = record_parity("head_mask (N,) / (L, N) / soft, eager and sdpa->eager fallback",
                         compare_outputs(a, b, ["last_hidden_state", "pooler_output", "hidden_states", "attentions"]))
    assert all(r.ok for r in rows), [(r.name, r.max_abs_diff) for r in rows if not r.ok]
    # the mask did something: a silenced head's probabilities are all zero
    if name == "one-for-all-layers":
        assert torch.count_nonzero(a.attentions[0][:, 1]) == 0


def test_head_mask_reaches_the_task_heads():
    ours, theirs = _pair("BertForSequenceClassification", num_labels=3)
    labels = torch.tensor([0, 2])
    with torch.no_grad():
        a = ours(**_inputs(), head_mask=HEAD_MASKS["per-layer"], labels=labels)
        b = theirs(**_inputs(), head_mask=HEAD_MASKS["per-layer"], labels=labels)
    assert all(r.ok for r in compare_outputs(a, b, ["logits", "loss"]))


def test_pruned_model_equals_transformers_4(record_parity):
    ours, theirs = _pair()
    ours.prune_heads(PRUNE)
    theirs.prune_heads(PRUNE)
    assert {k: tuple(v.shape) for k, v in ours.state_dict().items()} == {k: tuple(v.shape) for k, v in theirs.state_dict().items()}
    assert ours.encoder.layer[2].attention.self.query.weight.shape == (3 * 16, 96)  # really smaller
    with torch.no_grad():
        a = ours(**_inputs(), output_attentions=True)
        b = theirs(**_inputs(), output_attentions=True)
    rows = record_parity("pruned heads (2 layers pruned, then again)", compare_outputs(a, b, ["last_hidden_state", "attentions"]))
    assert a.attentions[2].shape[1] == 3 and all(r.ok for r in rows)
    # pruning more (and some already pruned) counts original head indices, as 4.x does
    ours.prune_heads({2: [2, 3]})
    theirs.prune_heads({2: [2, 3]})
    with torch.no_grad():
        rows = record_parity("pruned heads (2 layers pruned, then again)",
                             compare_outputs(ours(**_inputs()), theirs(**_inputs()), ["last_hidden_state"]))
    assert ours.encoder.layer[2].attention.self.num_attention_heads == 2 and all(r.ok for r in rows)
    assert ours.config.pruned_heads == {0: [1, 4], 2: [0, 2, 3, 5]}


def test_pruned_checkpoint_round_trips_both_ways(tmp_path):
    ours, theirs = _pair()
    theirs.prune_heads(PRUNE)
    theirs.save_pretrained(tmp_path / "theirs")
    loaded = mini_hf_bert.BertModel.from_pretrained(tmp_path / "theirs")  # config.pruned_heads shrinks it first
    assert loaded.config.pruned_heads == {0: [1, 4], 2: [0, 2, 5]}
    with torch.no_grad():
        assert all(r.ok for r in compare_outputs(loaded(**_inputs()), theirs(**_inputs()), ["last_hidden_state"]))
    loaded.save_pretrained(tmp_path / "ours")
    assert json.loads((tmp_path / "ours" / "config.json").read_text())["pruned_heads"] == {"0": [1, 4], "2": [0, 2, 5]}
    back = transformers.BertModel.from_pretrained(tmp_path / "ours").eval()
    with torch.no_grad():
        assert all(r.ok for r in compare_outputs(back(**_inputs()), theirs(**_inputs()), ["last_hidden_state"]))


def test_a_negative_layer_counts_from_the_end_as_transformers_4():
    """4.57.6's prune_heads({-1: [0]}) prunes the last layer (its encoder.layer[-1]): the same
    shapes and outputs here, recorded under the layer's own index (4.x records -1, which
    its own reload then applies to the last layer again)."""
    ours, theirs = _pair()
    ours.prune_heads({-1: [0], -3: [1]})
    theirs.prune_heads({-1: [0], -3: [1]})
    assert {k: tuple(v.shape) for k, v in ours.state_dict().items()} == {k: tuple(v.shape) for k, v in theirs.state_dict().items()}
    with torch.no_grad():
        assert all(r.ok for r in compare_outputs(ours(**_inputs()), theirs(**_inputs()), ["last_hidden_state"]))
    assert ours.config.pruned_heads == {2: [0], 0: [1]}


def test_a_negative_layer_in_config_pruned_heads_counts_from_the_end_as_transformers_4(tmp_path):
    """4.57.6 builds a model from ``config.pruned_heads={0: [...], -1: [0]}`` by pruning
    ``encoder.layer[-1]``, and writes the -1 to config.json (its
    ``test_head_pruning_save_load_from_config_init``): the same shapes and outputs here, from
    the config and from 4.57.6's config.json, the layer stored under its own index."""
    pruned = {0: [1, 2, 3], -1: [0], 2: [4]}
    torch.manual_seed(0)
    theirs = transformers.BertModel(transformers.BertConfig(**CONFIG, pruned_heads=pruned)).eval()
    ours = mini_hf_bert.BertModel(mini_hf_bert.BertConfig(**CONFIG, pruned_heads=pruned)).eval()
    assert ours.config.pruned_heads == {0: [1, 2, 3], 2: [0, 4]}
    assert {k: tuple(v.shape) for k, v in ours.state_dict().items()} == {k: tuple(v.shape) for k, v in theirs.state_dict().items()}
    ours.load_state_dict(theirs.state_dict(), strict=True)
    with torch.no_grad():
        assert all(r.ok for r in compare_outputs(ours(**_inputs()), theirs(**_inputs()), ["last_hidden_state"]))
    theirs.save_pretrained(tmp_path)
    assert "-1" in json.loads((tmp_path / "config.json").read_text())["pruned_heads"]
    loaded = mini_hf_bert.BertModel.from_pretrained(tmp_path).eval()
    with torch.no_grad():
        assert all(r.ok for r in compare_outputs(loaded(**_inputs()), theirs(**_inputs()), ["last_hidden_state"]))


@pytest.mark.parametrize("heads,message", [
    ({0: [6]}, "head 6 of layer 0 does not exist; heads are 0..5"),
    ({3: [0]}, "layer 3 does not exist; the model has layers 0..2"),
    ({-4: [0]}, "layer -4 does not exist; the model has layers 0..2"),
])
def test_pruning_what_does_not_exist_is_an_error(heads, message):
    ours, _ = _pair()
    with pytest.raises(ValueError, match=message):
        ours.prune_heads(heads)


@pytest.mark.parametrize("shape", [(5,), (3, 5), (2, 6), (3, 6, 1)])
def test_head_mask_of_the_wrong_size_is_an_error(shape):
    ours, _ = _pair()
    with pytest.raises(ValueError, match=r"head_mask must be \(num_heads,\) = \(6,\) or \(num_layers, num_heads\) = \(3, 6\)"):
        ours(**_inputs(), head_mask=torch.ones(shape))
