"""A minimal tensor-bundle *writer*, for tests only: it lets the fuzz tests craft indexes
whose structure and CRCs are valid, so mutations reach the entry decoding and the
tensor reads instead of stopping at a block checksum.

The format is the one ``mini_hf_bert/checkpoints/tf_bundle.py`` documents (LevelDB table
+ BundleEntryProto). ``test_writer_round_trips_the_tensorflow_fixture`` checks this
writer against the TensorFlow-written fixture, so it is not checked only against the
reader it is used to test.
"""

from __future__ import annotations

import struct

import torch

from mini_hf_bert.checkpoints import crc32c
from mini_hf_bert.checkpoints.tf_bundle import TABLE_MAGIC, data_filename

DTYPE_ENUM = {torch.float32: 1, torch.float64: 2, torch.int32: 3, torch.int64: 9, torch.bfloat16: 14, torch.float16: 19}


def varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # negative int64s are written as 10-byte two's complement
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def field_varint(number: int, value: int) -> bytes:
    return varint(number << 3) + varint(value)


def field_bytes(number: int, value: bytes) -> bytes:
    return varint(number << 3 | 2) + varint(len(value)) + value


def field_fixed32(number: int, value: int) -> bytes:
    return varint(number << 3 | 5) + struct.pack("<I", value & 0xFFFFFFFF)


def header_proto(num_shards: int, endianness: int = 0) -> bytes:
    version = field_varint(1, 1)  # VersionDef.producer
    return field_varint(1, num_shards) + field_varint(2, endianness) + field_bytes(3, version)


def entry_proto(dtype: int, shape, shard_id: int, offset: int, size: int, crc: int) -> bytes:
    shape_proto = b"".join(field_bytes(2, field_varint(1, dim)) for dim in shape)
    return (field_varint(1, dtype) + field_bytes(2, shape_proto) + field_varint(3, shard_id)
            + field_varint(4, offset) + field_varint(5, size) + field_fixed32(6, crc))


def _block(items: list[tuple[bytes, bytes]], restart_interval: int) -> bytes:
    out, restarts, previous = bytearray(), [], b""
    for i, (key, value) in enumerate(items):
        shared = 0
        if i % restart_interval == 0:
            restarts.append(len(out))
        else:
            while shared < min(len(key), len(previous)) and key[shared] == previous[shared]:
                shared += 1
        out += varint(shared) + varint(len(key) - shared) + varint(len(value)) + key[shared:] + value
        previous = key
    for restart in restarts or [0]:
        out += struct.pack("<I", restart)
    out += struct.pack("<I", len(restarts) or 1)
    return bytes(out)


def seal(block: bytes) -> bytes:
    """A block with its trailer: type 0 (uncompressed) and the masked CRC-32C."""
    return block + b"\0" + struct.pack("<I", crc32c.mask(crc32c.crc32c(block + b"\0")))


def write_table(path: str, items: list[tuple[bytes, bytes]], block_items: int = 8, restart_interval: int = 4) -> None:
    """A LevelDB-format table of ``items`` (written in the order given)."""
    out, index_items = bytearray(), []
    for start in range(0, len(items), block_items):
        chunk = items[start:start + block_items]
        block = _block(chunk, restart_interval)
        index_items.append((chunk[-1][0], varint(len(out)) + varint(len(block))))
        out += seal(block)
    metaindex = _block([], 1)
    meta_handle = varint(len(out)) + varint(len(metaindex))
    out += seal(metaindex)
    index = _block(index_items, 1)
    index_handle = varint(len(out)) + varint(len(index))
    out += seal(index)
    footer = (meta_handle + index_handle).ljust(40, b"\0") + struct.pack("<Q", TABLE_MAGIC)
    with open(path, "wb") as f:
        f.write(bytes(out) + footer)


def write_bundle(prefix: str, tensors: dict[str, torch.Tensor], num_shards: int = 1) -> None:
    """A complete checkpoint: shard files and an index with correct offsets and CRCs."""
    shards = [bytearray() for _ in range(num_shards)]
    items = [(b"", header_proto(num_shards))]
    for i, name in enumerate(sorted(tensors)):
        tensor = tensors[name].contiguous()
        raw = tensor.view(torch.uint8).numpy().tobytes() if tensor.numel() else b""
        shard = i % num_shards
        offset = len(shards[shard])
        shards[shard] += raw
        crc = crc32c.mask(crc32c.crc32c(raw))
        items.append((name.encode(), entry_proto(DTYPE_ENUM[tensor.dtype], tensor.shape, shard, offset, len(raw), crc)))
    for shard, data in enumerate(shards):
        with open(data_filename(prefix, shard, num_shards), "wb") as f:
            f.write(bytes(data))
    write_table(prefix + ".index", items)
