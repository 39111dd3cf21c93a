"""Read TensorFlow's V2 checkpoints ("tensor bundles") with neither TensorFlow nor protobuf.

A checkpoint ``PREFIX`` (Google's ``bert_model.ckpt``) is two kinds of file:

* ``PREFIX.index``: a LevelDB-format table mapping each variable name (sorted) to a
  serialized ``BundleEntryProto`` -- dtype, shape, shard id, byte offset and size, and
  the masked CRC-32C of the bytes. The empty key holds a ``BundleHeaderProto``
  (number of shards, endianness, format version).
* ``PREFIX.data-SSSSS-of-NNNNN``: the shards, holding each tensor's raw little-endian bytes.

The table layout (TensorFlow's ``core/lib/io/table`` is LevelDB's format):

    [data block 0][trailer] ... [data block k][trailer] [metaindex block][trailer]
    [index block][trailer] [footer: 48 bytes]

    footer  = metaindex BlockHandle, index BlockHandle (varint64 offset + varint64 size
              each), zero padding to 40 bytes, fixed64 magic 0xdb4775248b80fb57
    trailer = 1 byte compression type (0 = none; TensorFlow writes none) + fixed32 masked
              CRC-32C of the block contents and that type byte
    block   = entries, then fixed32 restart offsets, then fixed32 restart count
    entry   = varint32 shared key bytes, varint32 unshared key bytes, varint32 value
              length, the unshared key bytes, the value (keys are prefix-compressed
              against the previous key; a "restart" entry shares nothing)

The index block's values are the BlockHandles of the data blocks.

Everything read is untrusted: each structural field is bounds-checked before use, and
every failure is one ``CheckpointError`` naming the file (and tensor). Tensors are read
only when asked, from a memory-mapped shard, and their CRC-32C is verified against the
stored (masked) value exactly as TensorFlow's BundleReader does.
"""

from __future__ import annotations

import mmap
import os
import struct
from dataclasses import dataclass

import torch

from ..limits import TF_INDEX_BYTES
from . import crc32c
from .errors import CheckpointError

TABLE_MAGIC = 0xDB4775248B80FB57
FOOTER_SIZE = 48
BLOCK_TRAILER_SIZE = 5
#: The .index of bert-large is ~60 KB; anything past this is not an index we should parse.
MAX_INDEX_BYTES = TF_INDEX_BYTES
#: torch computes a tensor's extent (the product of its dimensions, a zero one counted as
#: 1) in 64-bit signed arithmetic: a shape past this cannot be built even with no elements.
_MAX_TENSOR_BYTES = 2**63

#: TensorFlow DataType enum (types.proto) -> torch dtype, for the types checkpoints hold.
TF_DTYPES: dict[int, torch.dtype] = {
    1: torch.float32,  # DT_FLOAT
    2: torch.float64,  # DT_DOUBLE
    3: torch.int32,  # DT_INT32
    4: torch.uint8,  # DT_UINT8
    5: torch.int16,  # DT_INT16
    6: torch.int8,  # DT_INT8
    9: torch.int64,  # DT_INT64
    10: torch.bool,  # DT_BOOL
    14: torch.bfloat16,  # DT_BFLOAT16
    19: torch.float16,  # DT_HALF
}
DT_STRING = 7
#: Where a TF2 checkpoint keeps its object graph (a serialized TrackableObjectGraph).
OBJECT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"
TF_DTYPE_NAMES = {1: "float32", 2: "float64", 3: "int32", 4: "uint8", 5: "int16", 6: "int8", 7: "string",
                  9: "int64", 10: "bool", 14: "bfloat16", 19: "float16", 21: "variant"}


@dataclass(frozen=True)
class BundleEntry:
    """One tensor's record in the index (a decoded BundleEntryProto)."""

    name: str
    dtype: int  # TensorFlow DataType enum value
    shape: tuple[int, ...]
    shard_id: int
    offset: int
    size: int
    crc32c: int  # masked, as stored
    sliced: bool  # a partitioned variable, stored as slices (not supported)

    @property
    def torch_dtype(self) -> torch.dtype | None:
        return TF_DTYPES.get(self.dtype)

    @property
    def dtype_name(self) -> str:
        return TF_DTYPE_NAMES.get(self.dtype, f"DataType {self.dtype}")


# --------------------------------------------------------------------------------------
# Wire-format decoding: varints and protobuf messages
# --------------------------------------------------------------------------------------


class _Malformed(Exception):
    """Internal: a structural field does not parse; turned into a CheckpointError with context."""


def _varint(buf: bytes, pos: int, limit: int) -> tuple[int, int]:
    """Decode a base-128 varint at ``pos`` (not past ``limit``); return (value, new position)."""
    result = shift = 0
    while True:
        if pos >= limit:
            raise _Malformed("varint runs past the end of its field")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise _Malformed("varint longer than 10 bytes")


def _proto_fields(buf: bytes) -> dict[int, list]:
    """Decode one protobuf message into {field number: [values]} (ints or bytes)."""
    fields: dict[int, list] = {}
    pos, end = 0, len(buf)
    while pos < end:
        tag, pos = _varint(buf, pos, end)
        number, wire_type = tag >> 3, tag & 7
        if wire_type == 0:  # varint
            value, pos = _varint(buf, pos, end)
        elif wire_type == 1:  # fixed64
            if pos + 8 > end:
                raise _Malformed("truncated fixed64 field")
            value = struct.unpack_from("<Q", buf, pos)[0]
            pos += 8
        elif wire_type == 2:  # length-delimited: bytes, strings, sub-messages
            length, pos = _varint(buf, pos, end)
            if pos + length > end:
                raise _Malformed("length-delimited field runs past the end of its message")
            value = bytes(buf[pos : pos + length])
            pos += length
        elif wire_type == 5:  # fixed32
            if pos + 4 > end:
                raise _Malformed("truncated fixed32 field")
            value = struct.unpack_from("<I", buf, pos)[0]
            pos += 4
        else:
            raise _Malformed(f"unsupported protobuf wire type {wire_type}")
        fields.setdefault(number, []).append(value)
    return fields


def _int64(value: int) -> int:
    """A varint read as int64 (negative numbers are encoded as 10-byte two's complement)."""
    return value - (1 << 64) if value >= 1 << 63 else value


def _number(fields: dict[int, list], number: int, what: str) -> int:
    """The last value of an integer field (protobuf's "last one wins"), 0 when absent."""
    value = fields.get(number, [0])[-1]
    if not isinstance(value, int):
        raise _Malformed(f"{what} (field {number}) holds bytes where a number belongs")
    return value


def _message(fields: dict[int, list], number: int, what: str) -> dict[int, list]:
    """The last value of a sub-message field, decoded; empty when absent."""
    value = fields.get(number, [b""])[-1]
    if not isinstance(value, bytes):
        raise _Malformed(f"{what} (field {number}) holds a number where a message belongs")
    return _proto_fields(value)


def _decode_entry(name: str, value: bytes) -> BundleEntry:
    """BundleEntryProto: dtype=1, shape=2 (TensorShapeProto), shard_id=3, offset=4, size=5,
    crc32c=6 (fixed32), slices=7."""
    f = _proto_fields(value)
    shape_fields = _message(f, 2, "shape")
    if _number(shape_fields, 3, "shape.unknown_rank"):
        raise _Malformed("shape has unknown rank")
    dims = []
    for i in range(len(shape_fields.get(2, []))):  # TensorShapeProto.dim: size=1, name=2
        dim = {2: [shape_fields[2][i]]}
        size = _int64(_number(_message(dim, 2, "shape.dim"), 1, "shape.dim.size"))
        if size < 0:
            raise _Malformed(f"shape has a negative dimension {size}")
        dims.append(size)
    return BundleEntry(
        name=name,
        dtype=_number(f, 1, "dtype"),
        shape=tuple(dims),
        shard_id=_int64(_number(f, 3, "shard_id")),
        offset=_int64(_number(f, 4, "offset")),
        size=_int64(_number(f, 5, "size")),
        crc32c=_number(f, 6, "crc32c"),
        sliced=bool(f.get(7)),
    )


# --------------------------------------------------------------------------------------
# The LevelDB table
# --------------------------------------------------------------------------------------


def _block_handle(buf: bytes, pos: int, limit: int) -> tuple[int, int, int]:
    offset, pos = _varint(buf, pos, limit)
    size, pos = _varint(buf, pos, limit)
    return offset, size, pos


def _read_block(data: bytes, offset: int, size: int, what: str) -> bytes:
    """A block's contents, after checking its bounds, compression type and CRC."""
    if offset + size + BLOCK_TRAILER_SIZE > len(data) - FOOTER_SIZE:
        raise _Malformed(f"{what} at offset {offset} with size {size} runs past the end of the file")
    contents = data[offset : offset + size]
    compression = data[offset + size]
    stored = struct.unpack_from("<I", data, offset + size + 1)[0]
    if crc32c.unmask(stored) != crc32c.crc32c(data[offset : offset + size + 1]):
        raise _Malformed(f"{what} at offset {offset} fails its CRC-32C check (the file is corrupt)")
    if compression != 0:
        raise _Malformed(f"{what} is compressed (type {compression}); TensorFlow writes bundle indexes uncompressed")
    return contents


def _block_entries(block: bytes, what: str) -> list[tuple[bytes, bytes]]:
    """The (key, value) pairs of one block, keys restored from their shared prefixes."""
    if len(block) < 4:
        raise _Malformed(f"{what} is too short to hold its restart count")
    num_restarts = struct.unpack_from("<I", block, len(block) - 4)[0]
    entries_end = len(block) - 4 * (num_restarts + 1)
    if num_restarts == 0 or entries_end < 0:
        raise _Malformed(f"{what} declares {num_restarts} restart points, which do not fit in {len(block)} bytes")
    entries, key, pos = [], b"", 0
    while pos < entries_end:
        shared, pos = _varint(block, pos, entries_end)
        unshared, pos = _varint(block, pos, entries_end)
        value_length, pos = _varint(block, pos, entries_end)
        if shared > len(key) or pos + unshared + value_length > entries_end:
            raise _Malformed(f"{what} has an entry whose key or value runs past the block")
        key = key[:shared] + block[pos : pos + unshared]
        pos += unshared
        entries.append((key, block[pos : pos + value_length]))
        pos += value_length
    return entries


def read_table(path: str) -> list[tuple[bytes, bytes]]:
    """Every (key, value) of a LevelDB-format table file, in key order."""
    try:
        size = os.path.getsize(path)
    except OSError as e:
        raise CheckpointError(f"{path}: cannot read ({e.strerror or e})") from None
    if size > MAX_INDEX_BYTES:
        raise CheckpointError(f"{path}: {size} bytes is far larger than any checkpoint index; refusing to parse it")
    with open(path, "rb") as f:
        data = f.read()
    try:
        if len(data) < FOOTER_SIZE:
            raise _Malformed(f"{len(data)} bytes is shorter than the {FOOTER_SIZE}-byte table footer (truncated?)")
        footer = data[-FOOTER_SIZE:]
        magic = struct.unpack_from("<Q", footer, FOOTER_SIZE - 8)[0]
        if magic != TABLE_MAGIC:
            raise _Malformed(f"bad magic number {magic:#018x} (expected {TABLE_MAGIC:#018x}): not a TensorFlow checkpoint index, or truncated")
        _, _, pos = _block_handle(footer, 0, 40)  # metaindex: no filters in bundle indexes
        index_offset, index_size, _ = _block_handle(footer, pos, 40)
        index = _read_block(data, index_offset, index_size, "index block")
        table = []
        for _, handle in _block_entries(index, "index block"):
            offset, block_size, _ = _block_handle(handle, 0, len(handle))
            table.extend(_block_entries(_read_block(data, offset, block_size, "data block"), "data block"))
        keys = [k for k, _ in table]
        if any(a >= b for a, b in zip(keys, keys[1:])):
            raise _Malformed("keys are not strictly increasing (corrupt table)")
        return table
    except _Malformed as e:
        raise CheckpointError(f"{path}: {e}") from None


# --------------------------------------------------------------------------------------
# The checkpoint
# --------------------------------------------------------------------------------------


def object_graph_names(graph: bytes, where: str) -> dict[str, str]:
    """A serialized TrackableObjectGraph -> {checkpoint key: the variable's own name}:
    ``nodes`` (1), each a TrackableObject whose ``attributes`` (2) are SerializedTensors of
    name (1), full_name (2) and checkpoint_key (3). Refused naming ``where`` when it does not parse."""
    names = {}
    try:
        for node in _proto_fields(graph).get(1, []):
            if not isinstance(node, bytes):
                raise _Malformed("an object is a number where a message belongs")
            for attribute in _proto_fields(node).get(2, []):
                if not isinstance(attribute, bytes):
                    raise _Malformed("an attribute is a number where a message belongs")
                fields = _proto_fields(attribute)
                full_name, key = fields.get(2, [b""])[-1], fields.get(3, [b""])[-1]
                if not isinstance(full_name, bytes) or not isinstance(key, bytes):
                    raise _Malformed("an attribute's name is a number where a string belongs")
                names[key.decode("utf-8")] = full_name.decode("utf-8")
    except (_Malformed, UnicodeDecodeError) as e:
        raise CheckpointError(f"{where} is corrupt ({e})") from None
    return names


def data_filename(prefix: str, shard: int, num_shards: int) -> str:
    return f"{prefix}.data-{shard:05d}-of-{num_shards:05d}"


class TFCheckpoint:
    """A TensorFlow V2 checkpoint, opened by its prefix (``.../bert_model.ckpt``).

    ``entries`` lists every variable (name -> BundleEntry) from the index alone; ``read(name)``
    returns one tensor as a torch.Tensor viewing the memory-mapped shard (no copy), after
    checking its size and CRC-32C.
    """

    def __init__(self, prefix: str) -> None:
        self.prefix = os.fspath(prefix)
        self.index_path = self.prefix + ".index"
        if not os.path.isfile(self.index_path):
            raise CheckpointError(f"{self.index_path}: no such file (a TensorFlow checkpoint prefix names PREFIX.index)")
        table = read_table(self.index_path)
        if not table or table[0][0] != b"":
            raise CheckpointError(f"{self.index_path}: no header entry (the empty key); not a tensor bundle")
        try:
            header = _proto_fields(table[0][1])
            self.num_shards = _int64(_number(header, 1, "header.num_shards"))
            endianness = _number(header, 2, "header.endianness")
        except _Malformed as e:
            raise CheckpointError(f"{self.index_path}: corrupt header entry ({e})") from None
        entries = {}
        for key, value in table[1:]:
            try:
                name = key.decode("utf-8")
            except UnicodeDecodeError:
                raise CheckpointError(f"{self.index_path}: a tensor name is not UTF-8 ({key[:60]!r})") from None
            try:
                entries[name] = _decode_entry(name, value)
            except _Malformed as e:
                raise CheckpointError(f"{self.index_path}: corrupt entry for tensor {name!r} ({e})") from None
        if not 1 <= self.num_shards <= 100_000:
            raise CheckpointError(f"{self.index_path}: header declares {self.num_shards} shards")
        if endianness != 0:
            raise CheckpointError(f"{self.index_path}: a big-endian checkpoint; only little-endian ones are supported")
        self.entries: dict[str, BundleEntry] = entries
        self._maps: dict[int, mmap.mmap] = {}

    def __contains__(self, name: str) -> bool:
        return name in self.entries

    def keys(self) -> list[str]:
        return list(self.entries)

    def shard_path(self, shard: int) -> str:
        return data_filename(self.prefix, shard, self.num_shards)

    def _map(self, shard: int) -> mmap.mmap:
        if shard not in self._maps:
            path = self.shard_path(shard)
            try:
                with open(path, "rb") as f:
                    # Copy-on-write mapping: torch gets a writable view, the file is never modified.
                    self._maps[shard] = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY) if os.path.getsize(path) else None
            except OSError as e:
                raise CheckpointError(f"{path}: cannot open data shard ({e.strerror or e})") from None
        return self._maps[shard]

    def read(self, name: str, verify: bool = True) -> torch.Tensor:
        """One tensor, shaped and typed as stored; raises CheckpointError naming file and tensor."""
        entry = self.entries.get(name)
        if entry is None:
            raise KeyError(f"{self.index_path}: no tensor named {name!r}")
        where = f"{self.index_path}: tensor {name!r}"
        if entry.sliced:
            raise CheckpointError(f"{where} is a partitioned variable stored as slices, which is not supported")
        if entry.torch_dtype is None:
            raise CheckpointError(f"{where} has dtype {entry.dtype_name}, which mini_hf_bert does not read")
        if not 0 <= entry.shard_id < self.num_shards:
            raise CheckpointError(f"{where} names shard {entry.shard_id}, but the checkpoint has {self.num_shards}")
        itemsize = torch.empty((), dtype=entry.torch_dtype).element_size()
        numel = extent = 1
        for dim in entry.shape:
            numel *= dim
            extent *= max(dim, 1)
        if numel * itemsize != entry.size:
            raise CheckpointError(
                f"{where}: shape {list(entry.shape)} of {entry.dtype_name} needs {numel * itemsize} bytes, "
                f"but the index says {entry.size}"
            )
        if extent * itemsize >= _MAX_TENSOR_BYTES:  # torch cannot even describe it, empty or not
            raise CheckpointError(f"{where}: shape {list(entry.shape)} is too large to be a tensor")
        shard_path = self.shard_path(entry.shard_id)
        mapped = self._map(entry.shard_id)
        available = len(mapped) if mapped is not None else 0
        if entry.offset < 0 or entry.offset + entry.size > available:
            raise CheckpointError(
                f"{where}: bytes [{entry.offset}, {entry.offset + entry.size}) lie outside {shard_path} "
                f"({available} bytes; truncated?)"
            )
        if entry.size == 0:
            return torch.zeros(entry.shape, dtype=entry.torch_dtype)
        raw = torch.frombuffer(mapped, dtype=torch.uint8, count=entry.size, offset=entry.offset)  # no copy
        if verify:
            actual = crc32c.crc32c(raw)
            if actual != crc32c.unmask(entry.crc32c):
                raise CheckpointError(
                    f"{where}: CRC-32C mismatch in {shard_path} (stored {crc32c.unmask(entry.crc32c):#010x}, "
                    f"computed {actual:#010x}): the data is corrupt"
                )
        if entry.offset % itemsize:
            raw = raw.clone()  # unaligned for its dtype: view() needs an aligned start
        return raw.view(entry.torch_dtype).view(entry.shape)

    def read_strings(self, name: str, most_bytes: int = MAX_INDEX_BYTES) -> list[bytes]:
        """A string tensor's elements (DT_STRING: the object graph of a TF2 checkpoint), after
        checking its layout and CRC-32C; refused past ``most_bytes``.

        TensorFlow writes each element's length as a varint64, then a masked CRC-32C of the
        lengths, then the strings' bytes; the entry's CRC covers the lengths, that checksum and
        the bytes, each length counted as a little-endian uint32 (a uint64 past 4 GiB).
        """
        entry = self.entries.get(name)
        if entry is None:
            raise KeyError(f"{self.index_path}: no tensor named {name!r}")
        where = f"{self.index_path}: tensor {name!r}"
        if entry.dtype != DT_STRING or entry.sliced:
            raise CheckpointError(f"{where} is {entry.dtype_name}, not a string tensor")
        if not 0 <= entry.shard_id < self.num_shards:
            raise CheckpointError(f"{where} names shard {entry.shard_id}, but the checkpoint has {self.num_shards}")
        if entry.size > most_bytes:
            raise CheckpointError(f"{where}: {entry.size} bytes, more than the {most_bytes} a string tensor may hold here")
        count = 1
        for dim in entry.shape:
            count *= dim
        mapped = self._map(entry.shard_id)
        available = len(mapped) if mapped is not None else 0
        if entry.offset < 0 or entry.offset + entry.size > available:
            raise CheckpointError(f"{where}: bytes [{entry.offset}, {entry.offset + entry.size}) lie outside "
                                  f"{self.shard_path(entry.shard_id)} ({available} bytes; truncated?)")
        data = bytes(mapped[entry.offset : entry.offset + entry.size])
        try:
            lengths, pos = [], 0
            for _ in range(count):
                length, pos = _varint(data, pos, len(data))
                lengths.append(length)
            if pos + 4 + sum(lengths) != len(data):
                raise _Malformed(f"its {count} lengths and their checksum do not add up to its {len(data)} bytes")
        except _Malformed as e:
            raise CheckpointError(f"{where}: corrupt string tensor ({e})") from None
        checked = b"".join(struct.pack("<I" if n < 2**32 else "<Q", n) for n in lengths) + data[pos:]
        if crc32c.crc32c(checked) != crc32c.unmask(entry.crc32c):
            raise CheckpointError(f"{where}: CRC-32C mismatch in {self.shard_path(entry.shard_id)}: the data is corrupt")
        pos += 4
        strings = []
        for length in lengths:
            strings.append(data[pos : pos + length])
            pos += length
        return strings

    def variable_names(self) -> dict[str, str]:
        """A TF2 checkpoint's keys -> its variables' own names, from the object graph it
        stores (``_CHECKPOINTABLE_OBJECT_GRAPH``); {} for a TF1 checkpoint, which has none.

        TF2 keys name the path to a variable through the saved objects
        (``encoder/layer_with_weights-4/_attention_layer/_query_dense/kernel/.ATTRIBUTES/
        VARIABLE_VALUE``; a SavedModel's are positions, ``variables/21/.ATTRIBUTES/...``).
        The graph holds, per object, ``TrackableObject.attributes``: ``SerializedTensor``
        records of name (1), the variable's own name (2, ``transformer/layer_0/
        self_attention/query/kernel``) and the checkpoint key (3).
        """
        if OBJECT_GRAPH_KEY not in self.entries:
            return {}
        names = {}
        for graph in self.read_strings(OBJECT_GRAPH_KEY):
            names.update(object_graph_names(graph, f"{self.index_path}: its object graph ({OBJECT_GRAPH_KEY})"))
        return names

    def close(self) -> None:
        """Unmap the shards; tensors returned by ``read`` must not be used afterwards."""
        for mapped in self._maps.values():
            if mapped is not None:
                try:
                    mapped.close()
                except BufferError:  # a returned tensor still views it: unmapped when that is freed
                    pass
        self._maps.clear()
