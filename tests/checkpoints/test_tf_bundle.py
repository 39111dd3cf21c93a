"""The pure-Python TensorFlow checkpoint reader against checkpoints real TensorFlow wrote
(tests/fixtures/tf, made by tools/make_tf_fixture.py): every tensor bit-exact, CRC-32C as
TensorFlow computes it, and clear errors for corrupt, truncated and hostile files."""

from __future__ import annotations

import os
import random
import shutil
import zlib

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from safetensors.torch import load_file

from mini_hf_bert import CheckpointError
from mini_hf_bert.checkpoints import crc32c
from mini_hf_bert.checkpoints.tf_bundle import TFCheckpoint
from ..paths import FIXTURES

TF_FIXTURES = os.path.join(FIXTURES, "tf")
CHECKPOINTS = {
    "bert_pretraining": "bert_pretraining/bert_model.ckpt",
    "sharded": "sharded/model.ckpt",
    "dtypes": "dtypes/model.ckpt",
}


@pytest.fixture(scope="module")
def reference() -> dict[str, torch.Tensor]:
    """What TensorFlow itself read back from each fixture checkpoint."""
    return load_file(os.path.join(TF_FIXTURES, "reference.safetensors"))


@pytest.mark.parametrize("label", sorted(CHECKPOINTS))
def test_every_tensor_equals_what_tensorflow_reads(label, reference):
    checkpoint = TFCheckpoint(os.path.join(TF_FIXTURES, CHECKPOINTS[label]))
    expected = {k.split("/", 1)[1]: v for k, v in reference.items() if k.startswith(label + "/")}
    assert sorted(checkpoint.keys()) == sorted(expected)
    for name, want in expected.items():
        got = checkpoint.read(name)
        if got.dtype == torch.bfloat16:  # the reference holds bfloat16 widened to float32
            got = got.float()
        assert got.shape == want.shape and got.dtype == want.dtype and torch.equal(got, want), name


def test_google_names_slots_and_step_are_listed():
    checkpoint = TFCheckpoint(os.path.join(TF_FIXTURES, CHECKPOINTS["bert_pretraining"]))
    names = set(checkpoint.keys())
    assert "bert/encoder/layer_1/attention/self/query/kernel" in names
    assert "bert/encoder/layer_1/attention/self/query/kernel/adam_m" in names
    assert "cls/seq_relationship/output_weights" in names and "global_step" in names
    assert checkpoint.entries["bert/encoder/layer_0/intermediate/dense/kernel"].shape == (16, 24)  # [in, out]
    assert checkpoint.read("global_step").item() == 1000


def test_multi_shard_checkpoint_uses_both_shards():
    checkpoint = TFCheckpoint(os.path.join(TF_FIXTURES, CHECKPOINTS["sharded"]))
    assert checkpoint.num_shards == 2
    assert {e.shard_id for e in checkpoint.entries.values()} == {0, 1}


def test_dtypes_are_read_as_stored():
    checkpoint = TFCheckpoint(os.path.join(TF_FIXTURES, CHECKPOINTS["dtypes"]))
    dtypes = {name: checkpoint.read(name).dtype for name in checkpoint.keys()}
    assert dtypes == {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16, "f64": torch.float64,
                      "i32": torch.int32, "i64": torch.int64, "scalar": torch.float32, "empty": torch.float32}
    assert checkpoint.read("scalar").shape == () and checkpoint.read("empty").shape == (0, 4)
    assert checkpoint.read("i64").tolist() == [-(2**40), 0, 2**40 + 7]


# ------------------------------------------------------------------------- CRC-32C


def test_crc32c_check_value_and_mask():
    assert crc32c.crc32c(b"123456789") == 0xE3069283  # the published CRC-32C check value
    assert crc32c.crc32c(b"") == 0
    for value in (0, 1, 0xE3069283, 0xFFFFFFFF):
        assert crc32c.unmask(crc32c.mask(value)) == value
    assert crc32c.mask(0) == 0xA282EAD8


@settings(max_examples=40, deadline=None)
@given(data=st.binary(min_size=0, max_size=20_000), lanes=st.sampled_from([None, 2, 8, 64, 1024]))
def test_parallel_crc_equals_the_byte_loop(data, lanes):
    byte_loop = crc32c._update_bytes(0xFFFFFFFF, data) ^ 0xFFFFFFFF
    assert crc32c.crc32c(data, lanes=lanes) == byte_loop


def test_an_input_large_enough_for_lanes_takes_them_and_agrees():
    """The split chosen for a real tensor (more than 128 KB) runs the vectorised path, and
    small ones the byte loop, which is faster there; both give the byte loop's value."""
    data = random.Random(0).randbytes(300_000)
    assert crc32c._lanes_for(len(data)) > 1 and crc32c._lanes_for(20_000) == 1
    assert crc32c.crc32c(data) == crc32c._update_bytes(0xFFFFFFFF, data) ^ 0xFFFFFFFF


def test_crc_differs_from_plain_crc32():
    """CRC-32C is not zlib's CRC-32 (a different polynomial): a reader using the wrong one would fail."""
    assert crc32c.crc32c(b"bert") != zlib.crc32(b"bert")


def test_stored_crcs_are_masked():
    """TensorFlow stores Mask(crc) in BundleEntryProto.crc32c; the unmasked value is the raw CRC."""
    checkpoint = TFCheckpoint(os.path.join(TF_FIXTURES, CHECKPOINTS["dtypes"]))
    entry = checkpoint.entries["f32"]
    raw = checkpoint.read("f32", verify=False).contiguous().view(torch.uint8)
    assert crc32c.unmask(entry.crc32c) == crc32c.crc32c(raw) != entry.crc32c


# --------------------------------------------------------------------- broken files


@pytest.fixture
def copy(tmp_path):
    """A writable copy of one fixture checkpoint; returns its prefix."""

    def make(label: str) -> str:
        source_dir = os.path.dirname(os.path.join(TF_FIXTURES, CHECKPOINTS[label]))
        target = tmp_path / label
        shutil.copytree(source_dir, target)
        return str(target / os.path.basename(CHECKPOINTS[label]))

    return make


def _flip(path: str, position: int) -> None:
    data = bytearray(open(path, "rb").read())
    data[position] ^= 0x40
    open(path, "wb").write(bytes(data))


def test_flipped_data_byte_fails_the_tensor_crc(copy):
    prefix = copy("bert_pretraining")
    checkpoint = TFCheckpoint(prefix)
    entry = checkpoint.entries["bert/pooler/dense/kernel"]
    checkpoint.close()
    _flip(prefix + ".data-00000-of-00001", entry.offset + 5)
    with pytest.raises(CheckpointError, match="tensor 'bert/pooler/dense/kernel': CRC-32C mismatch .* the data is corrupt"):
        TFCheckpoint(prefix).read("bert/pooler/dense/kernel")
    assert TFCheckpoint(prefix).read("bert/pooler/dense/bias").shape == (16,)  # other tensors still read


def test_truncated_data_shard(copy):
    prefix = copy("bert_pretraining")
    data_path = prefix + ".data-00000-of-00001"
    with open(data_path, "r+b") as f:
        f.truncate(1000)
    with pytest.raises(CheckpointError, match=r"tensor 'cls/predictions/output_bias': bytes \[\d+, \d+\) lie outside .* \(1000 bytes; truncated\?\)"):
        TFCheckpoint(prefix).read("cls/predictions/output_bias")


def test_missing_shard(copy):
    prefix = copy("sharded")
    os.remove(prefix + ".data-00001-of-00002")
    checkpoint = TFCheckpoint(prefix)
    shard1 = next(n for n, e in checkpoint.entries.items() if e.shard_id == 1)
    with pytest.raises(CheckpointError, match="data-00001-of-00002: cannot open data shard"):
        checkpoint.read(shard1)


@pytest.mark.parametrize("keep", [0, 10, 47, 200])
def test_truncated_index(copy, keep):
    prefix = copy("bert_pretraining")
    with open(prefix + ".index", "r+b") as f:
        f.truncate(keep)
    with pytest.raises(CheckpointError, match=r"bert_model\.ckpt\.index: "):
        TFCheckpoint(prefix)


def test_bad_magic(copy):
    prefix = copy("dtypes")
    _flip(prefix + ".index", os.path.getsize(prefix + ".index") - 1)
    with pytest.raises(CheckpointError, match="bad magic number .* not a TensorFlow checkpoint index"):
        TFCheckpoint(prefix)


def test_flipped_index_byte_fails_the_block_crc(copy):
    prefix = copy("bert_pretraining")
    _flip(prefix + ".index", 100)
    with pytest.raises(CheckpointError, match="data block at offset 0 fails its CRC-32C check"):
        TFCheckpoint(prefix)


def test_missing_index(tmp_path):
    with pytest.raises(CheckpointError, match="nope.index: no such file"):
        TFCheckpoint(str(tmp_path / "nope"))


def test_not_an_index_at_all(tmp_path):
    (tmp_path / "x.index").write_bytes(b'{"weight_map": {}}' * 10)
    with pytest.raises(CheckpointError, match="x.index: bad magic number"):
        TFCheckpoint(str(tmp_path / "x"))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_fuzzed_index_never_crashes(tmp_path_factory, data):
    """Mutated index bytes (flips, truncation, garbage runs) end in a CheckpointError or a
    successful parse, never another exception or a hang."""
    original = open(os.path.join(TF_FIXTURES, CHECKPOINTS["dtypes"]) + ".index", "rb").read()
    mutated = bytearray(original)
    for _ in range(data.draw(st.integers(1, 4))):
        kind = data.draw(st.sampled_from(["flip", "byte", "truncate", "splice"]))
        position = data.draw(st.integers(0, max(len(mutated) - 1, 0)))
        if not mutated:
            break
        if kind == "flip":
            mutated[position] ^= 1 << data.draw(st.integers(0, 7))
        elif kind == "byte":
            mutated[position] = data.draw(st.integers(0, 255))
        elif kind == "truncate":
            del mutated[position:]
        else:
            mutated[position:position] = data.draw(st.binary(min_size=1, max_size=16))
    directory = tmp_path_factory.mktemp("fuzz")
    prefix = str(directory / "model.ckpt")
    open(prefix + ".index", "wb").write(bytes(mutated))
    shutil.copy(os.path.join(TF_FIXTURES, CHECKPOINTS["dtypes"]) + ".data-00000-of-00001", prefix + ".data-00000-of-00001")
    try:
        checkpoint = TFCheckpoint(prefix)
        for name in checkpoint.keys():
            checkpoint.read(name)
    except CheckpointError:
        pass
