"""from_pretrained builds on the meta device and assigns the checkpoint's memory-mapped
tensors: no random init, no copy, the file never written, nothing left on meta.

The speed this buys is measured by tools/benchmark_loading.py (docs/loading.md, kept
current by test_docs_current.py); these tests pin the properties that produce it.
"""

from __future__ import annotations

import hashlib
import logging
import os

import pytest
import torch

import mini_hf_bert
from mini_hf_bert import BertForPreTraining, BertModel
from mini_hf_bert.checkpoints.loading import init_empty_weights

from ..conftest import small_config_kwargs


def _rss_mib(field: str) -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise AssertionError(f"no {field} in /proc/self/status")


def _sha256(path) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def test_init_empty_weights_puts_parameters_on_meta_and_keeps_buffers():
    config = mini_hf_bert.BertConfig(**small_config_kwargs("tiny"))
    with init_empty_weights():
        model = BertForPreTraining(config)
    assert all(p.is_meta for p in model.parameters())
    embeddings = model.bert.embeddings
    assert not embeddings.position_ids.is_meta and not embeddings.token_type_ids.is_meta
    assert torch.equal(embeddings.position_ids[0], torch.arange(config.max_position_embeddings))
    # Outside the context, construction is ordinary again.
    assert not any(p.is_meta for p in BertModel(config).parameters())


def test_bert_base_loads_without_copying_or_initialising(bert_base_legacy_dir):
    """Peak RSS while loading bert-base's 420 MiB of weights stays far below one copy: the
    weights are neither randomly initialised nor copied out of the memory-mapped file
    (either would touch every page)."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # reset the peak (VmHWM) to the current RSS
    before = _rss_mib("VmHWM")
    model = BertForPreTraining.from_pretrained(bert_base_legacy_dir)
    grown = _rss_mib("VmHWM") - before
    weights = sum(p.numel() * p.element_size() for p in model.parameters()) / 2**20
    assert weights > 400
    assert grown < 0.1 * weights, f"loading grew peak RSS by {grown:.0f} MiB for {weights:.0f} MiB of weights"


@pytest.mark.parametrize("safe", [True, False], ids=["safetensors", "bin"])
def test_training_the_loaded_model_never_writes_the_file(tmp_path, safe):
    config = mini_hf_bert.BertConfig(**small_config_kwargs("tiny"))
    torch.manual_seed(0)
    BertForPreTraining(config).save_pretrained(tmp_path, safe_serialization=safe)
    path = tmp_path / ("model.safetensors" if safe else "pytorch_model.bin")
    digest = _sha256(path)
    model = BertForPreTraining.from_pretrained(tmp_path)
    original = {k: v.clone() for k, v in model.state_dict().items()}
    with torch.no_grad():
        for p in model.parameters():
            p.add_(1.0)  # copy-on-write pages: the process's copy changes, the file does not
    assert _sha256(path) == digest
    reloaded = BertForPreTraining.from_pretrained(tmp_path)
    for key, value in reloaded.state_dict().items():
        assert torch.equal(value, original[key]), key
    assert all(p.requires_grad for p in model.parameters())


def test_nothing_is_left_on_meta_and_buffers_are_rebuilt(tmp_path):
    config = mini_hf_bert.BertConfig(**small_config_kwargs("tiny"))
    BertForPreTraining(config).save_pretrained(tmp_path)
    model = BertForPreTraining.from_pretrained(tmp_path)
    assert not any(t.is_meta for t in [*model.parameters(), *model.buffers()])
    embeddings = model.bert.embeddings
    assert torch.equal(embeddings.position_ids, torch.arange(config.max_position_embeddings).unsqueeze(0))
    assert torch.equal(embeddings.token_type_ids, torch.zeros(1, config.max_position_embeddings, dtype=torch.long))
    # The ties survive assignment: one Parameter, two names.
    assert model.cls.predictions.decoder.weight is model.bert.embeddings.word_embeddings.weight
    assert model.cls.predictions.decoder.bias is model.cls.predictions.bias


def test_weights_the_checkpoint_lacks_get_a_real_initialisation(tmp_path, caplog):
    """The pooler of a checkpoint saved without one is built from meta with the model's own
    init (normal(0, initializer_range) weight, zero bias), not left as uninitialised memory."""
    config = mini_hf_bert.BertConfig(**small_config_kwargs("tiny"), initializer_range=0.02)
    BertModel(config, add_pooling_layer=False).save_pretrained(tmp_path)
    with caplog.at_level(logging.WARNING, logger="mini_hf_bert"):
        model = BertModel.from_pretrained(tmp_path)
    weight, bias = model.pooler.dense.weight, model.pooler.dense.bias
    assert torch.equal(bias, torch.zeros_like(bias))
    assert torch.isfinite(weight).all() and 0.015 < weight.std().item() < 0.025 and abs(weight.mean().item()) < 0.005


def test_non_strict_load_initialises_a_mis_shaped_layer_norm(tmp_path, caplog):
    config = mini_hf_bert.BertConfig(**small_config_kwargs("tiny"))
    torch.manual_seed(0)
    BertModel(config).save_pretrained(tmp_path)
    from safetensors.torch import load_file, save_file

    state = load_file(tmp_path / "model.safetensors")
    state["encoder.layer.1.output.LayerNorm.weight"] = torch.full((5,), 7.0)
    save_file(state, tmp_path / "model.safetensors")
    with caplog.at_level(logging.WARNING, logger="mini_hf_bert"):
        model = BertModel.from_pretrained(tmp_path, strict=False)
    layer_norm = model.encoder.layer[1].output.LayerNorm
    assert torch.equal(layer_norm.weight, torch.ones(config.hidden_size))  # LayerNorm init: ones
    assert torch.equal(layer_norm.bias, state["encoder.layer.1.output.LayerNorm.bias"])  # its sibling loaded


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_dtype_applies_to_loaded_and_initialised_weights(tmp_path, dtype, caplog):
    config = mini_hf_bert.BertConfig(**small_config_kwargs("tiny"))
    BertModel(config, add_pooling_layer=False).save_pretrained(tmp_path)
    with caplog.at_level(logging.WARNING, logger="mini_hf_bert"):
        model = BertModel.from_pretrained(tmp_path, dtype=dtype)
    assert {p.dtype for p in model.parameters()} == {dtype}
    assert model.embeddings.position_ids.dtype == torch.long


def test_os_file_replaced_under_a_loaded_model_does_not_disturb_it(tmp_path):
    """save_pretrained into the directory a model was loaded from writes a new file and
    renames it into place; the memory-mapped old one stays valid for the loaded model."""
    config = mini_hf_bert.BertConfig(**small_config_kwargs("tiny"))
    torch.manual_seed(0)
    BertModel(config).save_pretrained(tmp_path)
    model = BertModel.from_pretrained(tmp_path)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    torch.manual_seed(1)
    BertModel(config).save_pretrained(tmp_path)  # different weights, same path
    assert os.path.isfile(tmp_path / "model.safetensors")
    for key, value in model.state_dict().items():
        assert torch.equal(value, before[key]), key
