"""Issue 36's resource cases: inputs that used to hang or fill the disk, each refused
before any work, naming the file and why, with nothing left behind."""

from __future__ import annotations

import json
import os
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
