"""What ``save_pretrained`` may delete (docs/reliability.md): only its own earlier weight
files of the format it writes (the single file, the shards, the index); every other
weights file is kept and named in a warning. And a save into a new directory appears
whole: the directory is built beside its name and renamed into place."""

from __future__ import annotations

import logging
import os

import pytest
import torch

from mini_hf_bert import BertConfig, BertForPreTraining, BertModel

CONFIG = dict(vocab_size=99, hidden_size=32, num_attention_heads=2, num_hidden_layers=2, intermediate_size=64,
              max_position_embeddings=16)


def _model(cls=BertModel, seed=0):
    torch.manual_seed(seed)
    return cls(BertConfig(**CONFIG)).eval()


def test_saving_an_encoder_beside_pretraining_weights_keeps_them(tmp_path, caplog):
    """Finding 3: BertModel.from_pretrained(D).save_pretrained(D), D holding a
    BertForPreTraining pytorch_model.bin, deleted the .bin and with it the heads."""
    pretraining = _model(BertForPreTraining)
    pretraining.save_pretrained(tmp_path, safe_serialization=False)
    with open(tmp_path / "pytorch_model.bin", "rb") as f:
        heads = f.read()
    with caplog.at_level(logging.WARNING):
        BertModel.from_pretrained(tmp_path).save_pretrained(tmp_path)
    assert sorted(os.listdir(tmp_path)) == ["config.json", "model.safetensors", "pytorch_model.bin"]
    assert (tmp_path / "pytorch_model.bin").read_bytes() == heads
    assert any("kept pytorch_model.bin, a weights file this save did not write" in r.message for r in caplog.records)
    # the heads are still there to load, from the kept file
    os.remove(tmp_path / "model.safetensors")
    reloaded = BertForPreTraining.from_pretrained(tmp_path)
    assert torch.equal(reloaded.cls.seq_relationship.weight, pretraining.cls.seq_relationship.weight)


def test_a_bin_save_beside_safetensors_says_which_one_loaders_read(tmp_path, caplog):
    _model(seed=1).save_pretrained(tmp_path)
    with caplog.at_level(logging.WARNING):
        _model(seed=2).save_pretrained(tmp_path, safe_serialization=False)
    assert sorted(os.listdir(tmp_path)) == ["config.json", "model.safetensors", "pytorch_model.bin"]
    assert any("kept model.safetensors" in r.message and "from_pretrained reads model.safetensors first, not the "
               "weights just written" in r.message for r in caplog.records)


def test_someone_elses_files_are_never_deleted(tmp_path):
    names = {"pytorch_model.bin": b"someone's", "tf_model.h5": b"tf", "notes.txt": b"notes",
             "model.safetensors.bak": b"backup", "pytorch_model-00001-of-00002.bin": b"a shard of theirs"}
    for name, data in names.items():
        (tmp_path / name).write_bytes(data)
    _model().save_pretrained(tmp_path)
    for name, data in names.items():
        assert (tmp_path / name).read_bytes() == data, name


@pytest.mark.parametrize("safe", [True, False])
def test_its_own_earlier_shards_and_index_are_replaced(tmp_path, safe):
    stem, ext = ("model", "safetensors") if safe else ("pytorch_model", "bin")
    model = _model()
    model.save_pretrained(tmp_path, safe_serialization=safe, max_shard_size="20KB")
    many = sorted(f for f in os.listdir(tmp_path) if f.startswith(f"{stem}-"))
    model.save_pretrained(tmp_path, safe_serialization=safe, max_shard_size="60KB")
    fewer = sorted(f for f in os.listdir(tmp_path) if f.startswith(f"{stem}-"))
    assert 1 < len(fewer) < len(many) and all(f.endswith(f"-of-{len(fewer):05d}.{ext}") for f in fewer)
    model.save_pretrained(tmp_path, safe_serialization=safe)
    assert sorted(os.listdir(tmp_path)) == ["config.json", f"{stem}.{ext}"]
    model.save_pretrained(tmp_path, safe_serialization=safe, max_shard_size="20KB")
    assert f"{stem}.{ext}" not in os.listdir(tmp_path)  # a single file loaders would read before the new index
    assert torch.equal(BertModel.from_pretrained(tmp_path).pooler.dense.weight, model.pooler.dense.weight)


def test_a_save_into_a_new_directory_appears_whole(tmp_path, monkeypatch):
    """An error half-way leaves no directory at all (not a config.json without weights)."""
    from safetensors import torch as safetensors_torch

    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(safetensors_torch, "save_file", full_disk)
    with pytest.raises(OSError, match="No space left"):
        _model().save_pretrained(tmp_path / "new" / "model")
    assert not (tmp_path / "new" / "model").exists()
    assert [p.name for p in (tmp_path / "new").iterdir()] == []  # no staging directory left


def test_a_failed_save_into_an_existing_directory_keeps_the_earlier_save(tmp_path, monkeypatch):
    model = _model(seed=1)
    model.save_pretrained(tmp_path)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    from safetensors import torch as safetensors_torch

    real = safetensors_torch.save_file

    def half_then_fail(tensors, path, metadata=None):
        real(tensors, path, metadata=metadata)
        with open(path, "r+b") as f:
            f.truncate(100)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(safetensors_torch, "save_file", half_then_fail)
    with pytest.raises(OSError):
        torch.manual_seed(2)
        BertModel(BertConfig(**{**CONFIG, "num_hidden_layers": 3})).save_pretrained(tmp_path)  # another shape
    weights = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert weights == before  # never a truncated file, nor the other model's config beside these weights
    assert sorted(weights) == sorted(before)  # no temporary left
    assert torch.equal(BertModel.from_pretrained(tmp_path).pooler.dense.weight, model.pooler.dense.weight)
