"""Read HuggingFace-format weight files into a flat ``{name: tensor}`` dict.

A checkpoint is untrusted data. Every failure here ends in one ``CheckpointError``
that names the file and the problem; nothing is returned half-read.

* ``model.safetensors``: read through ``safetensors`` (memory-mapped, no code runs).
* ``pytorch_model.bin``: a pickle; read with ``torch.load(..., weights_only=True)`` only,
  so a pickle that tries to build anything but tensors and plain containers is refused.
* ``*.index.json``: a sharded checkpoint; ``weight_map`` names the shard of every tensor.
"""

from __future__ import annotations

import json
import logging
import os
import pickle
import re
import zipfile

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file as _safetensors_load_file

from .errors import CheckpointError

logger = logging.getLogger(__name__)

SAFE_WEIGHTS_NAME = "model.safetensors"
SAFE_WEIGHTS_INDEX_NAME = "model.safetensors.index.json"
WEIGHTS_NAME = "pytorch_model.bin"
WEIGHTS_INDEX_NAME = "pytorch_model.bin.index.json"
CONFIG_NAME = "config.json"

#: Where ``from_pretrained`` looks, in this order (transformers prefers safetensors too).
WEIGHTS_FILE_NAMES = (SAFE_WEIGHTS_NAME, SAFE_WEIGHTS_INDEX_NAME, WEIGHTS_NAME, WEIGHTS_INDEX_NAME)


def find_weights_file(directory: str) -> str:
    """Return the path of the weights file ``from_pretrained`` should read in ``directory``."""
    for name in WEIGHTS_FILE_NAMES:
        path = os.path.join(directory, name)
        if os.path.isfile(path):
            return path
    raise CheckpointError(
        f"{directory}: no weights file found; expected one of {', '.join(WEIGHTS_FILE_NAMES)}"
    )


def read_state_dict(path: str) -> dict[str, torch.Tensor]:
    """Read every tensor of a weights file (or of all shards an index names)."""
    if path.endswith(".index.json"):
        return read_sharded(path)
    if path.endswith(".safetensors"):
        return read_safetensors(path)
    if path.endswith((".bin", ".pt", ".pth")):
        return read_torch_bin(path)
    raise CheckpointError(f"{path}: unrecognised weights file type (expected .safetensors, .bin or .index.json)")


def read_safetensors(path: str) -> dict[str, torch.Tensor]:
    """Read a safetensors file. Its header is validated by the safetensors library
    (offsets inside the file, sizes matching shapes and dtypes)."""
    try:
        return _safetensors_load_file(path, device="cpu")
    except FileNotFoundError:
        raise CheckpointError(f"{path}: no such file") from None
    except SafetensorError as e:
        raise CheckpointError(f"{path}: not a valid safetensors file ({e}); is it truncated or corrupt?") from None
    except (OSError, ValueError, RuntimeError) as e:
        raise CheckpointError(f"{path}: cannot read safetensors file ({type(e).__name__}: {e})") from None


def read_torch_bin(path: str) -> dict[str, torch.Tensor]:
    """Read a ``torch.save``d state dict, refusing any pickle that holds more than tensors."""
    if not os.path.isfile(path):
        raise CheckpointError(f"{path}: no such file")
    # Zip-format files (torch >= 1.6) can be memory-mapped; the legacy format cannot.
    is_zip = zipfile.is_zipfile(path)
    try:
        obj = torch.load(path, map_location="cpu", weights_only=True, mmap=is_zip)
    except pickle.UnpicklingError as e:
        # torch's message wraps the unpickler's reason in advice to retry with
        # weights_only=False, which is exactly what must not be done with an untrusted file.
        reason = _weights_unpickler_reason(str(e))
        if reason.startswith("Unsupported global"):
            raise CheckpointError(
                f"{path}: refused to load: the pickle holds objects other than plain tensors and containers "
                f"({reason.split(' was not an allowed global')[0]}). mini_hf_bert reads .bin files with "
                f"torch.load(weights_only=True), which never runs code from a checkpoint."
            ) from None
        raise CheckpointError(f"{path}: not a valid PyTorch checkpoint; is it truncated or corrupt? ({reason})") from None
    except Exception as e:  # noqa: BLE001 - untrusted bytes: torch.load can fail with any type
        # (RuntimeError for a broken zip, EOFError, and on some random inputs even a bare
        # IndexError from inside torch's weights-only unpickler). All mean the same thing.
        first = str(e).splitlines()[0] if str(e) else ""
        raise CheckpointError(
            f"{path}: not a valid PyTorch checkpoint; is it truncated or corrupt? ({type(e).__name__}: {first})"
        ) from None
    return _check_flat_state_dict(obj, path)


def _weights_unpickler_reason(message: str) -> str:
    """The unpickler's own reason inside torch's weights_only error message."""
    match = re.search(r"WeightsUnpickler error:\s*(\S[^\n]*)", message)
    return match.group(1).strip() if match else message.splitlines()[0]


def _check_flat_state_dict(obj: object, path: str) -> dict[str, torch.Tensor]:
    if not isinstance(obj, dict):
        raise CheckpointError(f"{path}: expected a dict of tensors (a state_dict), found a {type(obj).__name__}")
    bad = [k for k, v in obj.items() if not isinstance(k, str) or not isinstance(v, torch.Tensor)]
    if bad:
        nested = [k for k in bad if isinstance(obj.get(k), dict)]
        hint = f" (nested dicts under {nested[:3]}: a training checkpoint? save model.state_dict() instead)" if nested else ""
        raise CheckpointError(
            f"{path}: expected a flat dict of name -> tensor, but {len(bad)} entries are not tensors, "
            f"e.g. {bad[0]!r}{hint}"
        )
    return obj


def read_index_file(index_path: str) -> dict[str, str]:
    """The ``weight_map`` of a sharded checkpoint's ``*.index.json``: tensor name -> shard file.

    The one reader of index files (loading, ``inspect``, ``convert``, hub downloads), so
    each refuses a bad one with the same message: not JSON, not an object, no
    ``weight_map`` object, or a shard that is not a plain file name beside the index
    (no paths, no ``..``: an index must not point the reader elsewhere).
    """
    try:
        with open(index_path, encoding="utf-8") as f:
            index = json.load(f)
    except FileNotFoundError:
        raise CheckpointError(f"{index_path}: no such file") from None
    except IsADirectoryError:
        raise CheckpointError(f"{index_path}: is a directory, not an index file") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise CheckpointError(f"{index_path}: not valid JSON ({e})") from None
    except RecursionError:
        raise CheckpointError(f"{index_path}: JSON nested too deeply to be an index") from None
    if not isinstance(index, dict):
        raise CheckpointError(f"{index_path}: expected a JSON object with a 'weight_map', found a {_json_type(index)}")
    weight_map = index.get("weight_map")
    if not isinstance(weight_map, dict) or not weight_map:
        raise CheckpointError(f"{index_path}: no 'weight_map' object naming the shard of each tensor")
    for key, shard in weight_map.items():
        if not isinstance(shard, str) or os.path.basename(shard) != shard or shard in ("", ".", ".."):
            raise CheckpointError(f"{index_path}: weight_map[{key!r}] = {shard!r} is not a file name in this directory")
    return weight_map


def _json_type(value: object) -> str:
    return {list: "list", str: "string", int: "number", float: "number", bool: "boolean"}.get(type(value), "null")


def read_sharded(index_path: str) -> dict[str, torch.Tensor]:
    """Read every shard a ``*.index.json`` names and check each tensor is where the index says."""
    weight_map = read_index_file(index_path)
    directory = os.path.dirname(index_path)
    shards: dict[str, list[str]] = {}
    for key, shard in weight_map.items():
        shards.setdefault(shard, []).append(key)
    state_dict: dict[str, torch.Tensor] = {}
    for shard, keys in shards.items():
        shard_path = os.path.join(directory, shard)
        logger.info("reading shard %s (%d tensors)", shard_path, len(keys))
        if shard.endswith(".safetensors"):
            tensors = read_safetensors(shard_path)
        elif shard.endswith(".bin"):
            tensors = read_torch_bin(shard_path)
        else:  # an index naming another index (or itself) would recurse
            raise CheckpointError(f"{index_path}: shard {shard!r} is neither a .safetensors nor a .bin file")
        absent = [k for k in keys if k not in tensors]
        if absent:
            raise CheckpointError(
                f"{shard_path}: the index {os.path.basename(index_path)} places {len(absent)} tensors in this shard "
                f"that it does not hold, e.g. {absent[0]!r}"
            )
        state_dict.update(tensors)
    return state_dict
