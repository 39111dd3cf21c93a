"""CRC-32C (Castagnoli), the checksum TensorFlow stores for every tensor and table block.

Pure Python is far too slow for a 440 MB checkpoint (one table lookup per byte), so
the bulk of the work runs on torch tensors, which mini_hf_bert depends on anyway:

1. The buffer is cut into M lanes of L bytes. All lanes advance one byte per step,
   vectorised: L steps instead of M * L.
2. CRC arithmetic is linear over GF(2): for the raw register update R,
   R(s, A || B) = Z_|B|(R(s, A)) xor R(0, B), where Z_k ("feed k zero bytes") is a
   32x32 bit matrix. Lanes are folded pairwise, log2(M) vectorised rounds, squaring
   the matrix each round as the blocks double in length.

``crc32c(data)`` equals the standard CRC-32C (check value ``crc32c(b"123456789") ==
0xE3069283``); ``mask`` / ``unmask`` are LevelDB's and TensorFlow's storage transform.
"""

from __future__ import annotations

import torch

_POLY = 0x82F63B78  # Castagnoli polynomial, bit-reversed (the CRC is computed LSB-first)
_MASK_DELTA = 0xA282EAD8  # LevelDB / TensorFlow "masked CRC" constant


def _make_table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ (_POLY if crc & 1 else 0)
        table.append(crc)
    return table


_TABLE = _make_table()
_TABLE_T = torch.tensor(_TABLE, dtype=torch.int64)


def _update_bytes(state: int, data: bytes | memoryview) -> int:
    """Raw register update, one byte at a time (small inputs and the tail)."""
    table = _TABLE
    for byte in bytes(data):
        state = table[(state ^ byte) & 0xFF] ^ (state >> 8)
    return state


def _matrix_apply(columns: list[int], x: int) -> int:
    out = 0
    i = 0
    while x:
        if x & 1:
            out ^= columns[i]
        x >>= 1
        i += 1
    return out


def _matrix_square(columns: list[int]) -> list[int]:
    return [_matrix_apply(columns, c) for c in columns]


def _matrix_power_of_zeros(length: int) -> list[int]:
    """Z_length by binary exponentiation of Z_1."""
    result = [1 << i for i in range(32)]  # identity
    power = [_update_bytes(1 << i, b"\0") for i in range(32)]  # Z_1
    while length:
        if length & 1:
            result = [_matrix_apply(power, c) for c in result]
        power = _matrix_square(power)
        length >>= 1
    return result


def _apply_matrix_vectorised(columns: list[int], values: torch.Tensor) -> torch.Tensor:
    """Apply one 32x32 GF(2) matrix to many 32-bit values at once."""
    out = torch.zeros_like(values)
    for i, column in enumerate(columns):
        out ^= ((values >> i) & 1) * column
    return out


def _crc_raw_parallel(state: int, data: torch.Tensor, lanes: int) -> tuple[int, int]:
    """Advance ``state`` over the first lanes * (len(data) // lanes) bytes; return (state, bytes used).

    ``lanes`` is a power of two, so every fold round pairs all blocks.
    """
    lane_length = data.numel() // lanes
    used = lane_length * lanes
    # Lane j holds bytes [jL, (j+1)L); step i reads byte i of every lane, so transpose once
    # (a uint8 copy of the data) to make each step's read contiguous.
    steps = data[:used].view(lanes, lane_length).t().contiguous()  # (L, M)
    states = torch.zeros(lanes, dtype=torch.int64)
    states[0] = state  # the first lane continues the running state; the others start from 0
    table = _TABLE_T
    for row in steps:
        states = table[(states ^ row) & 0xFF] ^ (states >> 8)  # (M,)
    # Fold: block 2k is followed by block 2k+1 of the same length n, so
    # R(s, A || B) = Z_n(R(s, A)) xor R(0, B); then the blocks are twice as long.
    zeros = _matrix_power_of_zeros(lane_length)  # Z_n
    while states.numel() > 1:
        states = _apply_matrix_vectorised(zeros, states[0::2]) ^ states[1::2]  # (M/2,)
        zeros = _matrix_square(zeros)  # Z_2n = Z_n . Z_n
    return int(states[0]), used


#: Bytes per lane the split aims at, the most lanes, and the fewest worth a vectorised
#: step: a step costs a few torch calls (microseconds each) whatever its width, and the
#: byte loop costs about 0.15 us a byte, so a step must cover some hundreds of lanes to
#: win. Measured on 8 KB to 64 MB inputs (an AVX2 EPYC): below 128 KB the byte loop is
#: faster; above, more lanes are faster up to 2**16.
_LANE_BYTES, _MAX_LANES, _MIN_LANES = 256, 1 << 16, 512


def _lanes_for(size: int) -> int:
    """The largest power of two <= size / _LANE_BYTES, at most _MAX_LANES; 1 (the byte
    loop) where that is fewer than _MIN_LANES."""
    lanes = 1
    while lanes * 2 * _LANE_BYTES <= size and lanes < _MAX_LANES:
        lanes *= 2
    return lanes if lanes >= _MIN_LANES else 1


def crc32c(data: bytes | bytearray | memoryview | torch.Tensor, lanes: int | None = None) -> int:
    """The CRC-32C of ``data`` (bytes-like, or any contiguous tensor's bytes)."""
    if isinstance(data, torch.Tensor):
        tensor = data.contiguous().reshape(-1).view(torch.uint8)
    else:
        view = memoryview(data).cast("B")
        # frombuffer shares the memory (no copy); the tensor is only read here.
        tensor = torch.frombuffer(bytearray(view) if view.readonly else view, dtype=torch.uint8) if len(view) \
            else torch.zeros(0, dtype=torch.uint8)
    lanes = lanes or _lanes_for(tensor.numel())
    if lanes & (lanes - 1):
        raise ValueError(f"lanes must be a power of two, got {lanes}")
    state, used = 0xFFFFFFFF, 0  # CRC-32C starts from all ones ...
    if lanes > 1 and tensor.numel() >= 4 * lanes:
        state, used = _crc_raw_parallel(state, tensor, lanes)
    state = _update_bytes(state, tensor[used:].numpy().tobytes())
    return state ^ 0xFFFFFFFF  # ... and inverts the result


def mask(crc: int) -> int:
    """Stored form: rotate right by 15 and add a constant, so a CRC of data that itself
    contains CRCs is not trivially related to them (LevelDB's crc32c::Mask)."""
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + _MASK_DELTA) & 0xFFFFFFFF


def unmask(masked: int) -> int:
    rot = (masked - _MASK_DELTA) & 0xFFFFFFFF
    return ((rot >> 17) | (rot << 15)) & 0xFFFFFFFF
