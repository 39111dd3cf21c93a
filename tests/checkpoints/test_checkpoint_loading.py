"""Loading HF-format checkpoints: the hub's legacy bert-base layout, prefixes both ways,
sharded indexes, .bin and safetensors, save/load round trips with transformers."""

from __future__ import annotations

import json
import logging
import os
import shutil

import pytest
import torch
import transformers
from safetensors.torch import load_file, save_file

import mini_hf_bert
from mini_hf_bert import BertModel
from mini_hf_bert.parity.compare import FP32_ATOL, compare_outputs

from ..conftest import make_model_pair, small_config_kwargs


def _ids(vocab: int, batch: int = 2, seq: int = 16, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, vocab, (batch, seq), generator=g)
    mask = torch.ones(batch, seq, dtype=torch.long)
    mask[1, 10:] = 0
    return dict(input_ids=ids, attention_mask=mask, token_type_ids=torch.randint(0, 2, (batch, seq), generator=g))


# ------------------------------------------------------------- the official layout


def test_bert_base_legacy_layout_loads_and_matches_transformers(bert_base_legacy_dir, caplog, record_parity):
    """12 x 768, vocab 30522, pytorch_model.bin with gamma/beta, bert. prefix, no decoder
    bias, a stray position_ids buffer: the layout of bert-base-uncased on the hub."""
    raw = torch.load(os.path.join(bert_base_legacy_dir, "pytorch_model.bin"), weights_only=True)
    assert "bert.embeddings.LayerNorm.gamma" in raw and "cls.predictions.decoder.bias" not in raw

    with caplog.at_level(logging.INFO, logger="mini_hf_bert"):  # unused heads are said at INFO
        ours, info = BertModel.from_pretrained(bert_base_legacy_dir, output_loading_info=True)
    assert info["missing_keys"] == set() and info["mismatched_keys"] == set()
    assert sorted(info["unexpected_keys"]) == sorted(k for k in raw if k.startswith("cls."))
    assert ("bert.encoder.layer.11.output.LayerNorm.beta", "encoder.layer.11.output.LayerNorm.bias") in info["renamed_keys"]
    assert info["dropped_buffers"] == ["bert.embeddings.position_ids"]
    assert "cls.predictions.bias" in caplog.text  # unused weights are reported by name

    # Every parameter holds exactly the file's tensor under its legacy name.
    for name, param in ours.named_parameters():
        legacy = "bert." + name.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta")
        assert torch.equal(param, raw[legacy]), name

    theirs = transformers.BertModel.from_pretrained(bert_base_legacy_dir, dtype=torch.float32).eval()
    inputs = _ids(30522)
    with torch.no_grad():
        a, b = ours(**inputs, output_hidden_states=True), theirs(**inputs, output_hidden_states=True)
    rows = compare_outputs(a, b, ["last_hidden_state", "pooler_output", "hidden_states"])
    record_parity("bert-base 12x768 legacy hub layout (.bin, gamma/beta, bert.)", rows)
    assert len(rows) == 15 and all(r.ok for r in rows), [(r.name, r.max_abs_diff) for r in rows if not r.ok]


def test_prefix_is_added_for_a_head_model(tmp_path):
    """A BertModel checkpoint (no prefix) fits a model that keeps the encoder under .bert."""

    class Wrapper(mini_hf_bert.BertPreTrainedModel):
        def __init__(self, config):
            super().__init__(config)
            self.bert = BertModel(config)

    config = mini_hf_bert.BertConfig(**small_config_kwargs("tiny"))
    torch.manual_seed(0)
    source = BertModel(config)
    source.save_pretrained(tmp_path)
    wrapped, info = Wrapper.from_pretrained(tmp_path, output_loading_info=True)
    assert info["missing_keys"] == set() and info["unexpected_keys"] == set()
    for name, param in source.named_parameters():
        assert torch.equal(param, wrapped.get_parameter("bert." + name))


# ------------------------------------------------------------------- file forms


@pytest.fixture
def small_pair():
    return make_model_pair(small_config_kwargs("tiny"), "sdpa")


def _check_same(ours: BertModel, theirs, vocab: int = 211):
    inputs = _ids(vocab)
    with torch.no_grad():
        rows = compare_outputs(ours(**inputs), theirs(**inputs), ["last_hidden_state", "pooler_output"])
    assert all(r.ok for r in rows), rows


def test_transformers_saved_directory_loads(tmp_path, small_pair):
    _, theirs = small_pair
    theirs.save_pretrained(tmp_path)  # model.safetensors
    assert os.path.isfile(tmp_path / "model.safetensors")
    _check_same(BertModel.from_pretrained(tmp_path), theirs)


def test_pytorch_model_bin_loads(tmp_path, small_pair):
    _, theirs = small_pair
    theirs.config.save_pretrained(tmp_path)
    torch.save(theirs.state_dict(), tmp_path / "pytorch_model.bin")
    _check_same(BertModel.from_pretrained(tmp_path), theirs)


def test_legacy_non_zip_torch_save_loads(tmp_path, small_pair):
    _, theirs = small_pair
    theirs.config.save_pretrained(tmp_path)
    torch.save(theirs.state_dict(), tmp_path / "pytorch_model.bin", _use_new_zipfile_serialization=False)
    _check_same(BertModel.from_pretrained(tmp_path), theirs)


@pytest.mark.parametrize("fmt", ["safetensors", "bin"])
def test_sharded_checkpoint_loads(tmp_path, minilm_dir, fmt):
    tensors = load_file(os.path.join(minilm_dir, "model.safetensors"))
    names = sorted(tensors)
    shards = {f"model-0000{i + 1}-of-00003.{fmt}": names[i::3] for i in range(3)}
    weight_map = {}
    for shard, keys in shards.items():
        part = {k: tensors[k].contiguous() for k in keys}
        if fmt == "safetensors":
            save_file(part, tmp_path / shard, metadata={"format": "pt"})
        else:
            torch.save(part, tmp_path / shard)
        weight_map.update({k: shard for k in keys})
    index = "model.safetensors.index.json" if fmt == "safetensors" else "pytorch_model.bin.index.json"
    (tmp_path / index).write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))
    shutil.copy(os.path.join(minilm_dir, "config.json"), tmp_path)
    sharded = BertModel.from_pretrained(tmp_path)
    whole = BertModel.from_pretrained(minilm_dir)
    for (n1, p1), (n2, p2) in zip(sharded.named_parameters(), whole.named_parameters()):
        assert n1 == n2 and torch.equal(p1, p2)


def test_safetensors_preferred_over_bin(tmp_path, small_pair):
    ours, theirs = small_pair
    ours.save_pretrained(tmp_path)
    torch.save({"garbage": torch.zeros(1)}, tmp_path / "pytorch_model.bin")
    _check_same(BertModel.from_pretrained(tmp_path), theirs)


# ---------------------------------------------------------------- save / load


@pytest.mark.parametrize("safe", [True, False])
def test_save_load_round_trip_is_bit_identical(tmp_path, small_pair, safe):
    ours, _ = small_pair
    ours.save_pretrained(tmp_path, safe_serialization=safe)
    assert os.path.isfile(tmp_path / ("model.safetensors" if safe else "pytorch_model.bin"))
    assert not any(p.name.endswith(".tmp") for p in tmp_path.iterdir())
    again = BertModel.from_pretrained(tmp_path)
    for (n1, p1), (n2, p2) in zip(ours.named_parameters(), again.named_parameters()):
        assert n1 == n2 and torch.equal(p1, p2)
    assert json.loads((tmp_path / "config.json").read_text())["architectures"] == ["BertModel"]


def test_our_saved_directory_loads_in_transformers_without_warnings(tmp_path, small_pair):
    ours, theirs = small_pair
    ours.save_pretrained(tmp_path)
    loaded, info = transformers.BertModel.from_pretrained(tmp_path, output_loading_info=True, dtype=torch.float32)
    assert not info["missing_keys"] and not info["unexpected_keys"] and not info["mismatched_keys"]
    _check_same(ours.eval(), loaded.eval())


def test_missing_pooler_is_initialised_with_a_warning(tmp_path, caplog):
    """A checkpoint saved from a masked-LM model has no pooler."""
    config = mini_hf_bert.BertConfig(**small_config_kwargs("tiny"))
    torch.manual_seed(0)
    BertModel(config, add_pooling_layer=False).save_pretrained(tmp_path)
    with caplog.at_level(logging.WARNING, logger="mini_hf_bert"):
        model, info = BertModel.from_pretrained(tmp_path, output_loading_info=True)
    assert sorted(info["newly_initialized_keys"]) == ["pooler.dense.bias", "pooler.dense.weight"]
    assert "are newly initialized: pooler.dense.weight, pooler.dense.bias" in caplog.text
    assert model.pooler is not None


def test_checkpoint_saved_by_transformers_masked_lm_loads_with_pooler_warning(tmp_path, caplog):
    """transformers' BertForMaskedLM has no pooler (add_pooling_layer=False) and keeps the
    encoder under bert.: the encoder loads exactly, the pooler is new and said to be."""
    torch.manual_seed(0)
    mlm = transformers.BertForMaskedLM(transformers.BertConfig(**small_config_kwargs("tiny"))).eval()
    mlm.save_pretrained(tmp_path)
    with caplog.at_level(logging.WARNING, logger="mini_hf_bert"):
        ours, info = BertModel.from_pretrained(tmp_path, output_loading_info=True)
    assert sorted(info["newly_initialized_keys"]) == ["pooler.dense.bias", "pooler.dense.weight"]
    assert "newly initialized" in caplog.text and "pooler.dense.weight" in caplog.text
    assert all(k.startswith("cls.") for k in info["unexpected_keys"]) and info["unexpected_keys"]
    inputs = _ids(211)
    with torch.no_grad():
        a = ours(**inputs).last_hidden_state
        b = mlm.bert(**inputs).last_hidden_state
    torch.testing.assert_close(a, b, atol=FP32_ATOL, rtol=0)
