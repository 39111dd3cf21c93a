"""Read ``flax_model.msgpack`` (transformers' FlaxBert* ``save_pretrained``) without JAX or Flax.

The file is one msgpack map: Flax's nested parameter dict (``{"bert": {"embeddings":
{"word_embeddings": {"embedding": ARRAY}}}}``), each array a msgpack extension of type 1
whose payload is itself msgpack: ``(shape, dtype name, raw C-order bytes)``. Arrays past
1 GiB are split (Flax's ``__msgpack_chunked_array__``: a shape and numbered flat chunks).
The ``msgpack`` package parses; this module checks every value before it becomes a tensor.

Everything read is untrusted: the file's size, every declared length, the nesting depth and
each array's bytes against its shape are bounded or checked, and every failure is one
``CheckpointError`` naming the file (and the parameter).
"""

from __future__ import annotations

import math
import os

import torch

from ..limits import Limits, size_text
from .errors import CheckpointError
from .layout import WEIGHT_DTYPE_NAMES

#: Flax's extension type codes (flax.serialization._MsgpackExtType).
NDARRAY_EXT, COMPLEX_EXT, SCALAR_EXT = 1, 2, 3
#: Parameter dicts nest a few levels (bert/encoder/layer/0/attention/self/query/kernel: 8).
MAX_DEPTH = 32
#: More dimensions than any weight has; a shape past it is not a BERT parameter.
MAX_RANK = 8
#: numpy's dtype names (JAX's and ml_dtypes' bfloat16 among them) -> torch.
DTYPES: dict[str, torch.dtype] = {name: getattr(torch, name) for name in WEIGHT_DTYPE_NAMES}
CHUNKED = "__msgpack_chunked_array__"


def require_msgpack(path: str):
    try:
        import msgpack
    except ImportError:
        raise CheckpointError(f"{path}: reading flax_model.msgpack needs the msgpack package: "
                              f"pip install 'mini_hf_bert[formats]'") from None
    return msgpack


def read_flax_msgpack(path: str, limits: Limits | None = None) -> dict[str, torch.Tensor]:
    """Every array of ``path`` under its "/"-joined parameter path, as a torch tensor."""
    msgpack = require_msgpack(path)
    limits = Limits.given(limits)
    size = os.path.getsize(path)
    if size > limits.model_bytes:
        raise CheckpointError(f"{path}: {size_text(size)} is more than Limits.model_bytes={size_text(limits.model_bytes)} "
                              f"(the largest model accepted); if it is meant, pass limits=Limits(model_bytes={size})")
    with open(path, "rb") as f:
        data = f.read(size + 1)
    if len(data) != size:
        raise CheckpointError(f"{path}: changed size while being read")
    bounds = dict(max_str_len=size, max_bin_len=size, max_array_len=size,
                  max_map_len=size, max_ext_len=size)

    def ext_hook(code: int, payload: bytes):
        return _Extension(code, payload)  # decoded below, where the parameter's name is known

    try:
        tree = msgpack.unpackb(data, ext_hook=ext_hook, raw=False, strict_map_key=False, use_list=True, **bounds)
    except msgpack.exceptions.StackError:
        raise CheckpointError(f"{path}: nested deeper than msgpack's parser allows; not a parameter dict") from None
    except (ValueError, TypeError, msgpack.exceptions.UnpackException, msgpack.exceptions.ExtraData) as e:
        raise CheckpointError(f"{path}: not a valid msgpack file ({type(e).__name__}: {e}); truncated or not "
                              f"flax_model.msgpack?") from None
    except RecursionError:
        raise CheckpointError(f"{path}: nested too deeply to be a parameter dict") from None
    if not isinstance(tree, dict):
        raise CheckpointError(f"{path}: holds a msgpack {type(tree).__name__}, not the map of parameters Flax writes")
    tensors: dict[str, torch.Tensor] = {}
    _flatten(tree, "", 0, path, msgpack, bounds, tensors)
    return tensors


class _Extension:
    __slots__ = ("code", "payload")

    def __init__(self, code: int, payload: bytes) -> None:
        self.code, self.payload = code, payload


def _flatten(node: dict, prefix: str, depth: int, path: str, msgpack, bounds: dict,
             out: dict[str, torch.Tensor]) -> None:
    if depth > MAX_DEPTH:
        raise CheckpointError(f"{path}: parameters nested deeper than {MAX_DEPTH} levels at {prefix!r}; not a Flax model")
    for key, value in node.items():
        if not isinstance(key, (str, int)) or isinstance(key, bool):
            raise CheckpointError(f"{path}: a key of {prefix or 'the top level'!r} is a {type(key).__name__}, "
                                  f"not a parameter name")
        name = f"{prefix}/{key}" if prefix else str(key)
        if "/" in str(key):
            raise CheckpointError(f"{path}: the key {key!r} under {prefix or 'the top level'!r} holds a '/', "
                                  f"which would make two parameters' names collide")
        if isinstance(value, dict) and value.get(CHUNKED) is True:
            out[name] = _unchunk(value, name, path, msgpack, bounds)
        elif isinstance(value, dict):
            _flatten(value, name, depth + 1, path, msgpack, bounds, out)
        elif isinstance(value, _Extension):
            out[name] = _array(value, name, path, msgpack, bounds)
        else:
            raise CheckpointError(f"{path}: {name!r} is a {type(value).__name__}, not an array")


def _array(ext: _Extension, name: str, path: str, msgpack, bounds: dict) -> torch.Tensor:
    where = f"{path}: parameter {name!r}"
    if ext.code not in (NDARRAY_EXT, SCALAR_EXT):
        raise CheckpointError(f"{where} is msgpack extension type {ext.code}, not an array (type {NDARRAY_EXT})")
    try:
        decoded = msgpack.unpackb(ext.payload, raw=False, use_list=True, **bounds)
    except (ValueError, TypeError, msgpack.exceptions.UnpackException, msgpack.exceptions.ExtraData) as e:
        raise CheckpointError(f"{where}: its array record does not parse ({type(e).__name__}: {e})") from None
    if not (isinstance(decoded, list) and len(decoded) == 3 and isinstance(decoded[2], bytes)):
        raise CheckpointError(f"{where}: its array record is not (shape, dtype, bytes)")
    shape, dtype_name, buffer = decoded
    if not isinstance(shape, list) or len(shape) > MAX_RANK or \
            not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
        raise CheckpointError(f"{where}: shape {shape!r} is not a list of at most {MAX_RANK} non-negative ints")
    dtype = DTYPES.get(dtype_name) if isinstance(dtype_name, str) else None
    if dtype is None:
        raise CheckpointError(f"{where}: dtype {dtype_name!r} is not one mini_hf_bert reads ({', '.join(DTYPES)})")
    itemsize = torch.empty((), dtype=dtype).element_size()
    expected = math.prod(shape) * itemsize
    if expected != len(buffer):
        raise CheckpointError(f"{where}: shape {shape} of {dtype_name} needs {expected} bytes, the file holds "
                              f"{len(buffer)}")
    if not buffer:
        return torch.zeros(shape, dtype=dtype)
    return torch.frombuffer(bytearray(buffer), dtype=dtype).view(shape)


def _unchunk(value: dict, name: str, path: str, msgpack, bounds: dict) -> torch.Tensor:
    """Flax's split form of an array past 1 GiB: {"shape": {"0": d0, ...}, "chunks": {"0": flat, ...}}."""
    where = f"{path}: parameter {name!r} (chunked)"
    shape_map, chunk_map = value.get("shape"), value.get("chunks")
    if not isinstance(shape_map, dict) or not isinstance(chunk_map, dict) or set(value) != {CHUNKED, "shape", "chunks"}:
        raise CheckpointError(f"{where}: expected exactly the keys {CHUNKED!r}, 'shape' and 'chunks'")
    try:
        shape = [shape_map[str(i)] for i in range(len(shape_map))]
        chunks = [chunk_map[str(i)] for i in range(len(chunk_map))]
    except KeyError as e:
        raise CheckpointError(f"{where}: its numbered entries skip {e}") from None
    if not all(isinstance(c, _Extension) for c in chunks) or not chunks:
        raise CheckpointError(f"{where}: its chunks are not arrays")
    if len(shape) > MAX_RANK or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
        raise CheckpointError(f"{where}: shape {shape!r} is not a list of at most {MAX_RANK} non-negative ints")
    parts = [_array(c, f"{name}/chunks/{i}", path, msgpack, bounds) for i, c in enumerate(chunks)]
    if any(p.dim() != 1 or p.dtype != parts[0].dtype for p in parts):
        raise CheckpointError(f"{where}: its chunks are not flat arrays of one dtype")
    total = sum(p.numel() for p in parts)
    if total != math.prod(shape):
        raise CheckpointError(f"{where}: its chunks hold {total} values, shape {shape} needs {math.prod(shape)}")
    return torch.cat(parts).view(shape)
