"""Read HuggingFace-format weight files into a flat ``{name: tensor}`` dict.

A checkpoint is untrusted data. Every failure here ends in one ``CheckpointError``
that names the file and the problem; nothing is returned half-read.

* ``model.safetensors``: read through ``safetensors`` (memory-mapped, no code runs).
* ``pytorch_model.bin``: a pickle; read with ``torch.load(..., weights_only=True)`` only,
  so a pickle that tries to build anything but tensors and plain containers is refused.
* ``*.index.json``: a sharded checkpoint; ``weight_map`` names the shard of every tensor.
"""

from __future__ import annotations

import io
import logging
import os
import pickle
import pickletools
import re
import warnings
import zipfile
import zlib

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file as _safetensors_load_file

from ..file_utils import not_a_regular_file, read_json
from ..limits import PICKLE_SCAN_BYTES
from .errors import CheckpointError, CheckpointNotFoundError
from .layout import (  # noqa: F401  (the layout's names: importable from here too)
    CONFIG_NAME, SAFE_WEIGHTS_INDEX_NAME, SAFE_WEIGHTS_NAME, WEIGHTS_FILE_NAMES, WEIGHTS_INDEX_NAME, WEIGHTS_NAME)

logger = logging.getLogger(__name__)


def is_zip(path: str) -> bool:
    """``zipfile.is_zipfile``, which on some damaged files raises BadZipFile instead of
    answering: such a file has a zip's end record, so it is taken for a (damaged) zip and
    the reader that opens it next says what is wrong, naming it."""
    try:
        return zipfile.is_zipfile(path)
    except zipfile.BadZipFile:
        return True
    except (OSError, ValueError, EOFError):
        return False


def add_variant(name: str, variant: str | None) -> str:
    """A weights file's name for ``variant`` (``save_pretrained(variant="fp16")``), as
    transformers spells it: the variant goes before the last suffix, so
    ``model.safetensors`` -> ``model.fp16.safetensors`` and ``model.safetensors.index.json``
    -> ``model.safetensors.index.fp16.json``.

    transformers: ``modeling_utils._add_variant``
    """
    if variant is None:
        return name
    stem, _, suffix = name.rpartition(".")
    return f"{stem}.{variant}.{suffix}"


def check_variant(variant: object) -> None:
    """A variant is a plain name: it becomes part of a file name beside config.json."""
    if variant is None:
        return
    if not isinstance(variant, str) or not variant or any(c in variant for c in "/\\:") or variant in (".", ".."):
        raise ValueError(f"variant={variant!r}: expected a name such as 'fp16' or 'v2' (no path separators)")


def find_weights_file(directory: str, use_safetensors: bool | None = None, variant: str | None = None) -> str:
    """Return the path of the weights file ``from_pretrained`` should read in ``directory``:
    safetensors first, as transformers. ``use_safetensors`` (transformers' argument): True
    reads safetensors only, False the torch ``.bin`` files only, None either. ``variant``:
    the files ``save_pretrained(variant=...)`` wrote (``model.v2.safetensors``) instead of
    the plain ones. None found is a ``CheckpointNotFoundError`` (an OSError, as transformers')."""
    names = {None: WEIGHTS_FILE_NAMES, True: (SAFE_WEIGHTS_NAME, SAFE_WEIGHTS_INDEX_NAME),
             False: (WEIGHTS_NAME, WEIGHTS_INDEX_NAME)}[use_safetensors]
    names = tuple(add_variant(name, variant) for name in names)
    for name in names:
        path = os.path.join(directory, name)
        if os.path.isfile(path):
            return path
    arguments = [f"use_safetensors={use_safetensors}"] if use_safetensors is not None else []
    arguments += [f"variant={variant!r}"] if variant is not None else []
    raise CheckpointNotFoundError(
        f"{directory}: no weights file found; expected one of {', '.join(names)}"
        + (f" ({', '.join(arguments)})" if arguments else "")
    )


#: A sharded checkpoint's index, plain or of a variant (``model.safetensors.index.fp16.json``).
_INDEX_FILE = re.compile(r"\.index(\.[^./\\]+)?\.json$")


def read_state_dict(path: str) -> dict[str, torch.Tensor]:
    """Read every tensor of a weights file (or of all shards an index names)."""
    if _INDEX_FILE.search(os.path.basename(path)):
        return read_sharded(path)
    if path.endswith(".safetensors"):
        return read_safetensors(path)
    if path.endswith((".bin", ".pt", ".pth")):
        return read_torch_bin(path)
    raise CheckpointError(f"{path}: unrecognised weights file type (expected .safetensors, .bin or .index.json)")


def check_regular_file(path: str) -> None:
    """Refuse, naming ``path``, anything but a regular file: a missing one, and a named
    pipe, device or directory, which a reader would block on forever or misread."""
    problem = not_a_regular_file(path)
    if problem:
        raise CheckpointError(f"{path}: {problem}")


def read_safetensors(path: str) -> dict[str, torch.Tensor]:
    """Read a safetensors file. Its header is validated by the safetensors library
    (offsets inside the file, sizes matching shapes and dtypes)."""
    check_regular_file(path)
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
    check_regular_file(path)
    # Zip-format files (torch >= 1.6) can be memory-mapped; the legacy format cannot.
    is_zip_file = is_zip(path)
    try:
        with warnings.catch_warnings():  # torch's advice about pickle protocols and storages: our errors say it
            warnings.simplefilter("ignore", UserWarning)
            obj = torch.load(path, map_location="cpu", weights_only=True, mmap=is_zip_file)
    except Exception as e:  # noqa: BLE001 - untrusted bytes: torch.load can fail with any type
        # (UnpicklingError when the unpickler refuses something, RuntimeError for a broken
        # zip, EOFError, and on some random inputs even a bare IndexError from inside it).
        # torch wraps a refusal in advice to retry with weights_only=False -- exactly what
        # must not be done with a file that tries to run code -- so its text is never passed on.
        protocol, globals_ = _scan_pickle(path)
        code = [g for g in globals_ if not _STATE_DICT_GLOBAL.match(g)]
        if not code and isinstance(e, pickle.UnpicklingError):
            code = refused_globals(e)
        if code:
            raise CheckpointError(
                f"{path}: refused: this is not a plain weights file; its pickle asks for "
                f"{', '.join(dict.fromkeys(code))}, code that would run when it is unpickled. Nothing in it was run. "
                f"mini_hf_bert reads .bin files only with torch.load(weights_only=True), which builds nothing but "
                f"tensors and plain containers."
            ) from None
        if protocol is not None and protocol > MAX_WEIGHTS_ONLY_PROTOCOL and globals_:
            raise CheckpointError(
                f"{path}: written with pickle protocol {protocol}, which torch's weights-only reader does not read "
                f"(torch.save's default is {MAX_WEIGHTS_ONLY_PROTOCOL}); re-save it with the default, or as safetensors"
            ) from None
        raise CheckpointError(
            f"{path}: not a valid PyTorch checkpoint; is it truncated or corrupt? ({_unpickler_reason(e)})"
        ) from None
    return _check_flat_state_dict(obj, path)


#: Globals a ``torch.save``d state dict names: torch's tensor and storage rebuilders, and
#: the OrderedDict a state_dict is. Anything else in a weights file is a request for code.
_STATE_DICT_GLOBAL = re.compile(r"^(torch(\.|$)|collections\.OrderedDict$|_codecs\.encode$)")
#: How torch's weights-only unpickler words a refused global or call (torch 2.0 - 2.13);
#: used when the opcodes themselves name none.
_REFUSAL_PATTERNS = (
    re.compile(r"GLOBAL (\S+) whose module \S+ is blocked"),
    re.compile(r"GLOBAL (\S+) was not an allowed global"),
    re.compile(r"call reduce for unrecognized function (.+?)(?: which belongs to .*)?$", re.M),
    re.compile(r"create new object for .* but got (.+)$", re.M),
)


def refused_globals(error: pickle.UnpicklingError) -> list[str]:
    """What torch's weights-only unpickler refused (``posix.system``, a class), read from its
    message, which then advises loading with ``weights_only=False``: that advice is never
    passed on, only these names.

    transformers: none
    """
    return list(dict.fromkeys(m.group(1).strip() for pattern in _REFUSAL_PATTERNS for m in pattern.finditer(str(error))))


#: torch.save writes pickle protocol 2; the weights-only unpickler stops at protocol 4's FRAME opcode.
MAX_WEIGHTS_ONLY_PROTOCOL = 2


def _scan_pickle(path: str) -> tuple[int | None, list[str]]:
    """The protocol of a torch file's pickle, and ``module.name`` of every global its
    pickle(s) import (GLOBAL and STACK_GLOBAL), found by walking the opcodes with
    ``pickletools``: nothing is unpickled. Used only to explain a refusal: torch refuses a
    protocol-4 pickle at its first opcode, before its message can name any global. A
    zip-format file keeps its pickle in ``*/data.pkl``; the legacy format is several
    pickles back to back, then raw storage bytes."""
    try:
        if is_zip(path):
            with zipfile.ZipFile(path) as archive:
                member = next((n for n in archive.namelist() if n.endswith("data.pkl")), None)
                data = archive.read(member) if member is not None else b""
        else:
            with open(path, "rb") as f:
                data = f.read(MAX_PICKLE_SCAN_BYTES)
    except (OSError, zipfile.BadZipFile, RuntimeError, ValueError, EOFError, zlib.error):
        return None, []
    found: list[str] = []
    protocol = None
    stream = io.BytesIO(data)
    while stream.tell() < len(data):
        strings: list[str] = []  # string constants in push order: STACK_GLOBAL's operands
        memo: dict[int, str | None] = {}
        last: str | None = None  # the string the previous opcode left on top of the stack, if any
        try:
            for opcode, arg, _ in pickletools.genops(stream):
                top = None
                if opcode.name == "PROTO" and protocol is None:
                    protocol = arg
                elif opcode.name == "GLOBAL":
                    found.append(arg.replace(" ", ".", 1))
                elif opcode.name == "STACK_GLOBAL" and len(strings) >= 2:
                    found.append(f"{strings[-2]}.{strings[-1]}")
                elif opcode.name in _STRING_OPCODES and isinstance(arg, str):
                    top = arg
                elif opcode.name == "MEMOIZE":
                    memo[len(memo)], top = last, last
                elif opcode.name in ("PUT", "BINPUT", "LONG_BINPUT"):
                    memo[arg], top = last, last
                elif opcode.name in ("GET", "BINGET", "LONG_BINGET"):
                    top = memo.get(arg)
                if top is not None and opcode.name not in ("MEMOIZE", "PUT", "BINPUT", "LONG_BINPUT"):
                    strings.append(top)
                last = top
        except Exception:  # noqa: BLE001 - the storage bytes after a legacy file's pickles, or garbage
            break
    return protocol, found


_STRING_OPCODES = ("SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "UNICODE", "SHORT_BINSTRING", "BINSTRING", "STRING")


#: The legacy (non-zip) format keeps its pickles at the start; the rest is raw tensor data.
MAX_PICKLE_SCAN_BYTES = PICKLE_SCAN_BYTES


def _unpickler_reason(error: Exception) -> str:
    """The reason inside an error from torch.load, without torch's advice around it."""
    message = str(error)
    match = re.search(r"WeightsUnpickler error:\s*(\S[^\n]*)", message)
    if match:
        return match.group(1).strip()
    advice = ("weights_only", "Weights only load failed", "documentation of torch.load", "file an issue")
    lines = [line.strip() for line in message.splitlines() if line.strip() and not any(a in line for a in advice)]
    return f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__


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
    (no paths, no ``..``: an index must not point the reader elsewhere; no NUL byte, which
    no file name holds).
    """
    index = read_json(index_path, CheckpointError, "index file")
    if not isinstance(index, dict):
        raise CheckpointError(f"{index_path}: expected a JSON object with a 'weight_map', found a {_json_type(index)}")
    weight_map = index.get("weight_map")
    if not isinstance(weight_map, dict) or not weight_map:
        raise CheckpointError(f"{index_path}: no 'weight_map' object naming the shard of each tensor")
    for key, shard in weight_map.items():
        if not isinstance(shard, str) or os.path.basename(shard) != shard or shard in ("", ".", "..") or "\0" in shard:
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
