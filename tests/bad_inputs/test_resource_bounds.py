"""Issue 36's resource cases: inputs that used to hang or fill the disk, each refused
before any work, naming the file and why, with nothing left behind."""

from __future__ import annotations

import json
import os
import re
import struct
import tempfile
import threading
import zipfile

import pytest
import torch
from safetensors.torch import save_file

import mini_hf_bert
from mini_hf_bert.checkpoints import CheckpointError
from mini_hf_bert.checkpoints import resolve

from ..conftest import small_config_kwargs

#: How long a refusal may take: it must come before any read, so a blocking one is a hang.
REFUSAL_SECONDS = 30


def _within(seconds: float, call) -> BaseException | None:
    """Run ``call`` in a daemon thread; fail if it is still running after ``seconds`` (a hang,
    such as opening a named pipe no one writes to), else return what it raised."""
    raised: list[BaseException | None] = [None]

    def run():
        try:
            call()
        except BaseException as e:  # noqa: BLE001 - handed back to the test
            raised[0] = e

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still running after {seconds} s: a hang"
    return raised[0]


def _sharded_checkpoint(directory, shard_suffix: str) -> str:
    """A two-shard checkpoint whose second shard is then replaced by a named pipe."""
    model = mini_hf_bert.BertModel(mini_hf_bert.BertConfig(**small_config_kwargs("tiny")))
    model.save_pretrained(directory, safe_serialization=shard_suffix == "safetensors", max_shard_size="40kB")
    shards = sorted(name for name in os.listdir(directory) if name.endswith("." + shard_suffix))
    assert len(shards) > 1
    os.remove(os.path.join(directory, shards[-1]))
    os.mkfifo(os.path.join(directory, shards[-1]))
    return os.path.join(directory, shards[-1])


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are a POSIX feature")
@pytest.mark.parametrize("suffix", ["safetensors", "bin"])
def test_a_named_pipe_shard_is_refused_naming_it_not_read(tmp_path, suffix):
    pipe = _sharded_checkpoint(tmp_path / "model", suffix)
    for call in (lambda: mini_hf_bert.BertModel.from_pretrained(tmp_path / "model"),
                 lambda: __import__("mini_hf_bert.checkpoints.convert", fromlist=["convert"]).convert(
                     str(tmp_path / "model"), str(tmp_path / "converted"), progress=False)):
        raised = _within(REFUSAL_SECONDS, call)
        assert isinstance(raised, CheckpointError), raised
        assert f"{pipe}: is a named pipe, not a regular file" in str(raised)
    assert not (tmp_path / "converted").exists()


def _overlapping_zip(path, copies: int, payload_bytes: int) -> None:
    """A zip bomb zipfile does not notice: one deflated run of zeros, and ``copies`` central
    directory entries (different names) that all point at it."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("w000.bin", b"\0" * payload_bytes)
    data = path.read_bytes()
    end = data.rfind(b"PK\x05\x06")
    central_size, central_offset = struct.unpack("<II", data[end + 12:end + 20])
    entry = data[central_offset:central_offset + central_size]
    name_at = 46
    entries = b"".join(entry[:name_at] + f"w{i:03d}.bin".encode() + entry[name_at + 8:] for i in range(copies))
    record = data[end:end + 22]
    record = record[:8] + struct.pack("<HHII", copies, copies, len(entries), central_offset) + record[20:]
    path.write_bytes(data[:central_offset] + entries + record)


def _extraction_dirs() -> set[str]:
    return {name for name in os.listdir(tempfile.gettempdir()) if name.startswith("mini_hf_bert_zip_")}


def test_a_zip_whose_entries_overlap_is_refused_before_extraction(tmp_path):
    """40 entries over one 4 MiB run of zeros: 160 MiB declared from a few KB, under the
    16 GiB total bound, and Python's zipfile reads it as 40 files."""
    path = tmp_path / "bomb.zip"
    _overlapping_zip(path, copies=40, payload_bytes=4 * 1024 * 1024)
    assert len(zipfile.ZipFile(path).infolist()) == 40
    before = _extraction_dirs()
    with pytest.raises(CheckpointError, match=r"bomb.zip: members 'w000.bin' and 'w001.bin' overlap \(they share "
                                              r"compressed bytes, as zip bombs do\); refusing to extract it"):
        mini_hf_bert.BertModel.from_pretrained(path)
    assert _extraction_dirs() == before  # nothing extracted, nothing left behind


def test_a_zip_that_expands_like_no_checkpoint_is_refused(tmp_path):
    path = tmp_path / "zeros.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("bert_config.json", json.dumps({"hidden_size": 64}))
        archive.writestr("bert_model.ckpt.data-00000-of-00001", b"\0" * (8 * 1024 * 1024))
    before = _extraction_dirs()
    with pytest.raises(CheckpointError, match=r"zeros.zip: its \d+ compressed bytes unpack to \d+, \d+x; no checkpoint "
                                              r"compresses past 20x"):
        mini_hf_bert.BertModel.from_pretrained(path)
    assert _extraction_dirs() == before


def test_a_zip_larger_than_the_free_space_is_refused(tmp_path, monkeypatch):
    """The free space is read before extracting; here the disk is made to look nearly full."""
    path = tmp_path / "weights.zip"
    weights = {"w": torch.randn(256, 256)}
    save_file(weights, str(tmp_path / "model.safetensors"))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        archive.write(tmp_path / "model.safetensors", "model/model.safetensors")
    monkeypatch.setattr(resolve.shutil, "disk_usage", lambda where: type("Usage", (), {"free": 1000})())
    before = _extraction_dirs()
    with pytest.raises(CheckpointError, match=r"weights.zip: unpacks to \d+ bytes, more than the 1000 bytes free in "):
        mini_hf_bert.BertModel.from_pretrained(path)
    assert _extraction_dirs() == before


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are a POSIX feature")
def test_a_named_pipe_named_by_transformers_weights_is_refused_naming_it(tmp_path):
    model = mini_hf_bert.BertModel(mini_hf_bert.BertConfig(**small_config_kwargs("tiny")))
    model.save_pretrained(tmp_path)
    os.mkfifo(tmp_path / "pipe.safetensors")
    values = json.loads((tmp_path / "config.json").read_text())
    values["transformers_weights"] = "pipe.safetensors"
    (tmp_path / "config.json").write_text(json.dumps(values))
    raised = _within(REFUSAL_SECONDS, lambda: mini_hf_bert.BertModel.from_pretrained(tmp_path))
    assert isinstance(raised, CheckpointError), raised
    assert f"{tmp_path / 'pipe.safetensors'}: is a named pipe, not a regular file" in str(raised)


# ------------------------------------------------------------------ the size of a config

#: Each field at a size no BERT has, beside the weights of a 2-layer model: what the
#: model would cost is found from the config and refused before anything is built.
IMPOSSIBLE_CONFIGS = {
    "num_hidden_layers": (10**6, r"num_hidden_layers=1000000: more layers than Limits.hidden_layers=1024 .*"
                                 r"pass limits=Limits\(hidden_layers=1000000\)"),
    "max_position_embeddings": (10**9, r"the model would hold at least [\d.]+ GiB of parameters, more than "
                                       r"Limits.model_bytes=16.0 GiB; most of it is max_position_embeddings=1000000000"),
    "intermediate_size": (10**9, r"more than Limits.model_bytes=16.0 GiB; most of it is num_hidden_layers=2 layers "
                                 r"of hidden_size=\d+, intermediate_size=1000000000"),
    "vocab_size": (10**9, r"more than Limits.model_bytes=16.0 GiB; most of it is vocab_size=1000000000"),
}


def _with_config(directory, **changes) -> str:
    mini_hf_bert.BertModel(mini_hf_bert.BertConfig(**small_config_kwargs("tiny"))).save_pretrained(directory)
    path = os.path.join(directory, "config.json")
    with open(path) as f:
        values = json.load(f)
    with open(path, "w") as f:
        json.dump(values | changes, f)
    return path


@pytest.mark.parametrize("field", sorted(IMPOSSIBLE_CONFIGS))
@pytest.mark.parametrize("relaxed", [{"strict": False}, {"ignore_mismatched_sizes": True},
                                     {"strict": False, "ignore_mismatched_sizes": True}], ids=str)
def test_an_impossible_config_is_refused_before_building_whatever_strict_is(tmp_path, field, relaxed):
    """With strict on, the checkpoint's shapes refuse such a config first (the layers it
    lacks, its position table; tests/bad_inputs/bad_inputs.py); relaxed, the bound does."""
    value, message = IMPOSSIBLE_CONFIGS[field]
    config_path = _with_config(tmp_path, **{field: value})
    files = sorted(os.listdir(tmp_path))
    raised = _within(REFUSAL_SECONDS, lambda: mini_hf_bert.BertModel.from_pretrained(tmp_path, **relaxed))
    assert isinstance(raised, CheckpointError), raised
    assert str(raised).startswith(f"{config_path}: ")
    assert re.search(message, str(raised)), raised
    assert sorted(os.listdir(tmp_path)) == files


def test_a_bound_is_raised_by_its_named_argument_only(tmp_path):
    """Limits(...) moves the bound both ways; nothing else does."""
    _with_config(tmp_path)
    loaded = mini_hf_bert.BertModel.from_pretrained(tmp_path)
    parameter_bytes = sum(p.numel() * p.element_size() for p in loaded.parameters())
    with pytest.raises(CheckpointError, match=r"more layers than Limits.hidden_layers=1 .*Limits\(hidden_layers=2\)"):
        mini_hf_bert.BertModel.from_pretrained(tmp_path, limits=mini_hf_bert.Limits(hidden_layers=1))
    # The estimate counts the embeddings and the layers, which are most of a model: below
    # what the built model holds, and within its pooler and LayerNorms of it.
    small = mini_hf_bert.Limits(model_bytes=parameter_bytes // 2)
    with pytest.raises(CheckpointError, match=r"more than Limits.model_bytes="):
        mini_hf_bert.BertModel.from_pretrained(tmp_path, limits=small, strict=False, ignore_mismatched_sizes=True)
    assert mini_hf_bert.BertModel.from_pretrained(tmp_path, limits=mini_hf_bert.Limits(model_bytes=parameter_bytes))


def test_convert_and_state_dict_loading_keep_the_bound(tmp_path):
    from mini_hf_bert.checkpoints.convert import convert
    config_path = _with_config(tmp_path / "model", intermediate_size=10**9)
    with pytest.raises(CheckpointError, match=rf"^{config_path}: the model would hold at least .*intermediate_size=1000000000"):
        convert(str(tmp_path / "model"), str(tmp_path / "out"), progress=False)
    assert not (tmp_path / "out").exists()
    config = mini_hf_bert.BertConfig(**small_config_kwargs("tiny") | {"vocab_size": 10**9})
    with pytest.raises(CheckpointError, match=r"^config=: the model would hold at least .*vocab_size=1000000000"):
        mini_hf_bert.BertModel.from_pretrained(None, config=config, state_dict={}, strict=False)


@pytest.mark.parametrize("bad, error, message", [
    ({"model_bytes": 0}, ValueError, r"Limits.model_bytes must be a positive int, got 0"),
    ({"hidden_layers": 2.5}, ValueError, r"Limits.hidden_layers must be a positive int, got 2.5"),
    ({"text_chars": True}, ValueError, r"Limits.text_chars must be a positive int, got True"),
])
def test_a_bad_bound_is_refused_by_name(bad, error, message):
    with pytest.raises(error, match=message):
        mini_hf_bert.Limits(**bad)


def test_limits_must_be_a_limits(tmp_path):
    _with_config(tmp_path)
    with pytest.raises(TypeError, match=r"limits must be a mini_hf_bert.Limits, got dict"):
        mini_hf_bert.BertModel.from_pretrained(tmp_path, limits={"model_bytes": 1})


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are a POSIX feature")
def test_a_named_pipe_among_a_published_form_s_files_is_refused_naming_it(tmp_path):
    """libhdf5 and msgpack would wait forever on a pipe: each form's files are checked first."""
    import shutil

    from ..paths import FIXTURES

    preset = tmp_path / "keras_hub"
    shutil.copytree(os.path.join(FIXTURES, "formats", "keras_hub"), preset)
    os.remove(preset / "task.weights.h5")
    os.mkfifo(preset / "task.weights.h5")
    os.mkfifo(tmp_path / "weights.msgpack")
    for source, named in ((preset, preset / "task.weights.h5"), (tmp_path / "weights.msgpack", tmp_path / "weights.msgpack")):
        raised = _within(REFUSAL_SECONDS, lambda: mini_hf_bert.BertModel.from_pretrained(source))
        assert isinstance(raised, CheckpointError), raised
        assert f"{named}: is a named pipe, not a regular file" in str(raised)
