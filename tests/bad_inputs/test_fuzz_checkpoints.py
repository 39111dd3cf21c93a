"""Hostile and broken checkpoints, fuzzed: every outcome is a loaded model or one
CheckpointError naming the file -- never another exception, a hang, or a giant allocation.

What is tried (bounded example counts keep this to well under a minute in CI):

* TF index, *re-sealed*: the fixture's entries decoded, mutated at the protobuf level
  (bytes flipped, fields replaced), written back with valid block CRCs by
  ``tf_bundle_writer``, so the mutation reaches entry decoding, shape / dtype / offset
  checks and the tensor reads instead of stopping at a checksum;
* TF entries crafted field by field: absurd and negative dimensions, many dimensions,
  unknown and unsupported dtypes, offsets and sizes outside the shard, shard ids past
  the header's count, wrong CRCs, header with absurd shard counts or big-endian;
* raw block bytes mutated and re-sealed (structure fuzz under a valid CRC);
* safetensors: header JSON and bytes mutated (offsets, dtypes, shapes, lengths),
  through ``from_pretrained``;
* pytorch_model.bin: bytes mutated inside the zip (torch.load with weights_only).

``test_tf_bundle.py`` holds the plain-byte fuzz (flips/truncations stopped by CRCs).
"""

from __future__ import annotations

import collections
import json
import os
import random
import shutil
import struct

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mini_hf_bert
from mini_hf_bert import BertForPreTraining, BertModel, CheckpointError
from mini_hf_bert.checkpoints.tf_bundle import TFCheckpoint, _block_entries, read_table

from ..conftest import small_config_kwargs
from ..paths import FIXTURES
from ..checkpoints.tf_bundle_writer import (
    entry_proto,
    header_proto,
    seal,
    varint,
    write_bundle,
    write_table,
)

TF_FIXTURES = os.path.join(FIXTURES, "tf")
GOOGLE_PREFIX = os.path.join(TF_FIXTURES, "bert_pretraining", "bert_model.ckpt")
FUZZ = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

#: A crafted shape may claim exabytes; the reader must refuse it from the index alone.
#: Any allocation it attempts larger than this fails the test.
MAX_ALLOCATION_BYTES = 64 * 1024 * 1024


@pytest.fixture
def allocation_guard(monkeypatch):
    """Fail on any torch.empty / torch.zeros larger than MAX_ALLOCATION_BYTES."""
    for name in ("empty", "zeros"):
        original = getattr(torch, name)

        def guarded(*size, _original=original, **kwargs):
            dims = size[0] if len(size) == 1 and isinstance(size[0], (tuple, list, torch.Size)) else size
            numel = 1
            for d in dims:
                numel *= int(d)
            if numel * 8 > MAX_ALLOCATION_BYTES:
                raise AssertionError(f"attempted to allocate {numel} elements from a crafted checkpoint")
            return _original(*size, **kwargs)

        monkeypatch.setattr(torch, name, guarded)


def _load_everything(prefix: str) -> None:
    """Open, read every tensor, and load into the model the config describes."""
    checkpoint = TFCheckpoint(prefix)
    for name in checkpoint.keys():
        checkpoint.read(name)
    checkpoint.close()
    BertForPreTraining.from_pretrained(prefix, config=mini_hf_bert.BertConfig.from_json_file(
        os.path.join(TF_FIXTURES, "bert_pretraining", "bert_config.json")))


def _outcome(function, *args) -> str:
    try:
        function(*args)
    except CheckpointError as e:
        assert str(e).startswith(("/", "tests")) or os.sep in str(e), f"error does not name a file: {e}"
        return "refused"
    return "loaded"


def _copy_data(directory) -> str:
    prefix = str(directory / "bert_model.ckpt")
    shutil.copy(GOOGLE_PREFIX + ".data-00000-of-00001", prefix + ".data-00000-of-00001")
    return prefix


FIXTURE_ITEMS = read_table(GOOGLE_PREFIX + ".index")


# ----------------------------------------------------------- the writer itself


def test_writer_round_trips_the_tensorflow_fixture(tmp_path):
    """Entries TensorFlow wrote, rewritten by the test writer, read back identically, and a
    bundle written from scratch reads back bit-exact: the writer is checked against real
    TensorFlow output, not only against the reader it is used to test."""
    prefix = _copy_data(tmp_path)
    write_table(prefix + ".index", FIXTURE_ITEMS)
    assert read_table(prefix + ".index") == FIXTURE_ITEMS
    original, rewritten = TFCheckpoint(GOOGLE_PREFIX), TFCheckpoint(prefix)
    assert original.entries == rewritten.entries
    for name in original.keys():
        assert torch.equal(original.read(name), rewritten.read(name))

    tensors = {"a/kernel": torch.randn(3, 5), "b": torch.arange(7, dtype=torch.int64), "c": torch.randn(4).half()}
    write_bundle(str(tmp_path / "fresh"), tensors, num_shards=2)
    fresh = TFCheckpoint(str(tmp_path / "fresh"))
    assert fresh.num_shards == 2
    for name, tensor in tensors.items():
        assert torch.equal(fresh.read(name), tensor)


# ------------------------------------------------- re-sealed protobuf mutations


@FUZZ
@given(data=st.data())
def test_resealed_entry_mutations_are_refused_or_loaded(tmp_path_factory, data, allocation_guard):
    items = list(FIXTURE_ITEMS)
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.integers(0, len(items) - 1))
        key, value = items[i]
        value = bytearray(value)
        kind = data.draw(st.sampled_from(["flip", "truncate", "append", "replace"]))
        if kind == "flip" and value:
            value[data.draw(st.integers(0, len(value) - 1))] ^= 1 << data.draw(st.integers(0, 7))
        elif kind == "truncate":
            del value[data.draw(st.integers(0, len(value))):]
        elif kind == "append":
            value += data.draw(st.binary(min_size=1, max_size=12))
        else:
            value = bytearray(data.draw(st.binary(max_size=40)))
        items[i] = (key, bytes(value))
    prefix = _copy_data(tmp_path_factory.mktemp("resealed"))
    write_table(prefix + ".index", items)
    _outcome(_load_everything, prefix)


def test_seeded_random_entry_mutations(tmp_path):
    """The same kind of mutation as above, 300 times from a fixed seed with uniformly random
    bytes (hypothesis favours small, simple values; this found a field of the wrong wire
    type -- bytes where a number belongs -- crashing the decoder with a TypeError)."""
    rng = random.Random(1234)
    outcomes = collections.Counter()
    for trial in range(300):
        items = list(FIXTURE_ITEMS)
        i = rng.randrange(len(items))
        key, value = items[i]
        value = bytearray(value)
        kind = rng.choice(["flip", "truncate", "append", "replace"])
        if kind == "flip" and value:
            value[rng.randrange(len(value))] ^= 1 << rng.randrange(8)
        elif kind == "truncate":
            del value[rng.randrange(len(value) + 1):]
        elif kind == "append":
            value += rng.randbytes(rng.randrange(1, 12))
        else:
            value = bytearray(rng.randbytes(rng.randrange(40)))
        items[i] = (key, bytes(value))
        directory = tmp_path / str(trial)
        directory.mkdir()
        prefix = _copy_data(directory)
        write_table(prefix + ".index", items)
        outcomes[_outcome(_load_everything, prefix)] += 1
        shutil.rmtree(directory)
    assert outcomes["refused"] > 200  # nearly every mutation is caught (some are harmless)


def _crafted_items(entry: bytes, header: bytes | None = None) -> list[tuple[bytes, bytes]]:
    items = [(k, v) for k, v in FIXTURE_ITEMS if k != b"bert/pooler/dense/kernel"]
    items.append((b"bert/pooler/dense/kernel", entry))
    items.sort()
    if header is not None:
        items[0] = (b"", header)
    return items


DIMS = st.one_of(st.integers(0, 64), st.integers(2**31, 2**62), st.integers(-(2**63), -1), st.just(2**63 - 1))


@FUZZ
@given(
    dtype=st.sampled_from([0, 1, 2, 3, 7, 9, 14, 19, 21, 99, 2**31]),
    shape=st.lists(DIMS, max_size=6),
    shard_id=st.one_of(st.integers(0, 2), st.integers(-5, -1), st.integers(2**40, 2**62)),
    offset=st.one_of(st.integers(0, 30_000), st.integers(-(2**63), -1), st.integers(2**40, 2**63 - 1)),
    size=st.one_of(st.integers(0, 30_000), st.integers(2**40, 2**63 - 1), st.integers(-(2**63), -1)),
    crc=st.integers(0, 2**32 - 1),
)
def test_crafted_entries_are_refused_from_the_index(tmp_path_factory, allocation_guard, dtype, shape, shard_id, offset, size, crc):
    prefix = _copy_data(tmp_path_factory.mktemp("crafted"))
    write_table(prefix + ".index", _crafted_items(entry_proto(dtype, shape, shard_id, offset, size, crc)))
    assert _outcome(_load_everything, prefix) == "refused"  # this kernel can never be right


@pytest.mark.parametrize("header, message", [
    (header_proto(0), "header declares 0 shards"),
    (header_proto(10**12), "header declares 1000000000000 shards"),
    (header_proto(1, endianness=1), "big-endian"),
    (b"\xff\xff", "corrupt header entry"),
])
def test_crafted_headers(tmp_path, header, message):
    prefix = _copy_data(tmp_path)
    write_table(prefix + ".index", _crafted_items(dict(FIXTURE_ITEMS)[b"bert/pooler/dense/kernel"], header=header))
    with pytest.raises(CheckpointError, match=message):
        TFCheckpoint(prefix)


@pytest.mark.parametrize("fields, message", [
    (dict(shape=[2**62, 2**62]), r"needs \d+ bytes, but the index says"),
    (dict(shape=[-3, 16]), "negative dimension"),
    (dict(shape=[2**63 - 1, 2**63 - 1, 0], size=0), "is too large to be a tensor"),  # no elements, yet no tensor
    (dict(dtype=7), "dtype string, which mini_hf_bert does not read"),
    (dict(dtype=99), "dtype DataType 99"),
    (dict(shard_id=3), "names shard 3, but the checkpoint has 1"),
    (dict(offset=10**9), r"lie outside .*data-00000-of-00001"),
    (dict(offset=-8), "lie outside"),
    (dict(crc=0), "CRC-32C mismatch"),
    (dict(shape=[16, 16, 1]), "should be a 2-D kernel"),
    (dict(shape=[8, 32]), "wrong shape for the config"),
])
def test_each_crafted_field_has_its_own_message(tmp_path, fields, message, allocation_guard):
    entry = TFCheckpoint(GOOGLE_PREFIX).entries["bert/pooler/dense/kernel"]
    values = dict(dtype=entry.dtype, shape=list(entry.shape), shard_id=0, offset=entry.offset, size=entry.size, crc=entry.crc32c)
    values.update(fields)
    prefix = _copy_data(tmp_path)
    write_table(prefix + ".index", _crafted_items(entry_proto(**values)))
    with pytest.raises(CheckpointError, match=message) as excinfo:
        _load_everything(prefix)
    assert "bert_model.ckpt" in str(excinfo.value)  # names the file
    if "shape" not in fields or fields["shape"] == [8, 32]:
        assert "bert/pooler/dense/kernel" in str(excinfo.value)  # and the tensor


@FUZZ
@given(data=st.data())
def test_resealed_block_bytes(tmp_path_factory, data, allocation_guard):
    """Mutate the raw bytes of the data block (restart array, varint lengths, prefix
    sharing) and re-seal it: the block parser sees structure errors under a valid CRC."""
    items = FIXTURE_ITEMS[:6]
    from ..checkpoints.tf_bundle_writer import _block

    block = bytearray(_block(items, 2))
    for _ in range(data.draw(st.integers(1, 4))):
        position = data.draw(st.integers(0, len(block) - 1))
        block[position] = data.draw(st.integers(0, 255))
    index = _block([(items[-1][0], varint(0) + varint(len(block)))], 1)
    sealed = seal(bytes(block))
    metaindex = _block([], 1)
    body = sealed + seal(metaindex) + seal(index)
    footer = (varint(len(sealed)) + varint(len(metaindex)) + varint(len(sealed) + len(metaindex) + 5) + varint(len(index)))
    from mini_hf_bert.checkpoints.tf_bundle import TABLE_MAGIC

    path = tmp_path_factory.mktemp("block") / "m.index"
    path.write_bytes(body + footer.ljust(40, b"\0") + struct.pack("<Q", TABLE_MAGIC))
    try:
        _block_entries(bytes(block), "data block")  # the unit itself never raises anything else
    except Exception as e:  # noqa: BLE001
        assert type(e).__name__ == "_Malformed", repr(e)
    try:
        TFCheckpoint(str(path)[: -len(".index")])
    except CheckpointError:
        pass


# ------------------------------------------------------------------ safetensors


@pytest.fixture(scope="module")
def safetensors_bytes(tmp_path_factory) -> bytes:
    directory = tmp_path_factory.mktemp("st")
    torch.manual_seed(0)
    BertModel(mini_hf_bert.BertConfig(**small_config_kwargs("tiny"))).save_pretrained(directory)
    return (directory / "model.safetensors").read_bytes(), (directory / "config.json").read_text()


def _write_dir(directory, config: str, weights: bytes, name: str = "model.safetensors"):
    (directory / "config.json").write_text(config)
    (directory / name).write_bytes(weights)
    return directory


@FUZZ
@given(data=st.data())
def test_fuzzed_safetensors_header(tmp_path_factory, safetensors_bytes, data, allocation_guard):
    """Mutations of the JSON header's values: offsets, dtypes, shapes, plus the length prefix."""
    weights, config = safetensors_bytes
    (length,) = struct.unpack("<Q", weights[:8])
    header = json.loads(weights[8:8 + length])
    name = data.draw(st.sampled_from(sorted(k for k in header if k != "__metadata__")))
    field = data.draw(st.sampled_from(["dtype", "shape", "data_offsets", "length", "drop"]))
    if field == "dtype":
        header[name]["dtype"] = data.draw(st.sampled_from(["F16", "I64", "BOOL", "F64", "X9", "", "U8"]))
    elif field == "shape":
        header[name]["shape"] = data.draw(st.lists(st.integers(-3, 2**62), max_size=4))
    elif field == "data_offsets":
        header[name]["data_offsets"] = data.draw(st.lists(st.integers(-5, 2**63), min_size=0, max_size=3))
    elif field == "drop":
        del header[name]
    encoded = json.dumps(header).encode()
    prefix = struct.pack("<Q", len(encoded) if field != "length" else data.draw(st.integers(0, 2**64 - 1)))
    mutated = prefix + encoded + weights[8 + length:]
    directory = _write_dir(tmp_path_factory.mktemp("st_fuzz"), config, mutated)
    _outcome(BertModel.from_pretrained, directory)


@FUZZ
@given(data=st.data())
def test_fuzzed_safetensors_bytes(tmp_path_factory, safetensors_bytes, data, allocation_guard):
    weights, config = safetensors_bytes
    mutated = bytearray(weights)
    for _ in range(data.draw(st.integers(1, 4))):
        position = data.draw(st.integers(0, len(mutated) - 1))
        kind = data.draw(st.sampled_from(["byte", "truncate"]))
        if kind == "byte":
            mutated[position] = data.draw(st.integers(0, 255))
        else:
            del mutated[position:]
            if not mutated:
                break
    directory = _write_dir(tmp_path_factory.mktemp("st_bytes"), config, bytes(mutated))
    _outcome(BertModel.from_pretrained, directory)


# --------------------------------------------------------------- pytorch_model.bin


@FUZZ
@given(data=st.data())
@pytest.mark.filterwarnings("ignore::UserWarning")  # torch warns about some mutated pickles before refusing them
def test_fuzzed_torch_bin(tmp_path_factory, safetensors_bytes, data, allocation_guard):
    """Mutated bytes of a zip-format torch.save file, including inside data.pkl: torch.load
    with weights_only either refuses them or yields tensors the shape checks then judge."""
    _, config = safetensors_bytes
    directory = tmp_path_factory.mktemp("bin")
    torch.manual_seed(0)
    state = BertModel(mini_hf_bert.BertConfig(**small_config_kwargs("tiny"))).state_dict()
    torch.save(state, directory / "pytorch_model.bin")
    raw = bytearray((directory / "pytorch_model.bin").read_bytes())
    pickle_at = raw.find(b"data.pkl")
    for _ in range(data.draw(st.integers(1, 3))):
        near_pickle = data.draw(st.booleans()) and pickle_at >= 0
        low = pickle_at if near_pickle else 0
        position = data.draw(st.integers(low, min(len(raw) - 1, low + 2000) if near_pickle else len(raw) - 1))
        raw[position] = data.draw(st.integers(0, 255))
    _write_dir(directory, config, bytes(raw), name="pytorch_model.bin")
    _outcome(BertModel.from_pretrained, directory)


def test_safetensors_with_a_giant_declared_tensor_is_refused(tmp_path, safetensors_bytes, allocation_guard):
    weights, config = safetensors_bytes
    (length,) = struct.unpack("<Q", weights[:8])
    header = json.loads(weights[8:8 + length])
    name = "embeddings.word_embeddings.weight"
    header[name]["shape"] = [2**31, 2**31]
    encoded = json.dumps(header).encode()
    directory = _write_dir(tmp_path, config, struct.pack("<Q", len(encoded)) + encoded + weights[8 + length:])
    with pytest.raises(CheckpointError, match="model.safetensors: not a valid safetensors file"):
        BertModel.from_pretrained(directory)


def test_config_that_disagrees_with_a_safetensors_file(tmp_path, safetensors_bytes):
    weights, config = safetensors_bytes
    bigger = json.loads(config)
    bigger["hidden_size"] = 128
    directory = _write_dir(tmp_path, json.dumps(bigger), weights)
    with pytest.raises(CheckpointError, match=r"model.safetensors: cannot load into BertModel: 37 weights have the wrong "
                                              r"shape for the config: .*embeddings.word_embeddings.weight is \(211, 64\) "
                                              r"in the checkpoint, the model expects \(211, 128\)"):
        BertModel.from_pretrained(directory)



def test_the_fuzz_tool_s_shard_hub_cache_and_zip_kinds_end_clearly():
    """tools/fuzz_checkpoints.py, briefly, on the kinds issue 36 added: shards replaced or
    mutated (safetensors and .bin), hub caches with hostile refs and links, zips mutated in
    their bytes and central directory. Every case loads or names its file; none hangs."""
    import subprocess
    import sys

    from ..paths import ROOT

    kinds = ["shard", "bin-shard", "bin-index", "hub-cache", "zip", "zip-directory"]
    command = [sys.executable, os.path.join(ROOT, "tools", "fuzz_checkpoints.py"), "--count", "120", "--timeout", "30"]
    result = subprocess.run(command + [arg for kind in kinds for arg in ("--kind", kind)],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "120 mutated files" in result.stdout and "0 exceptions naming no file, 0 hangs" in result.stdout, result.stdout
