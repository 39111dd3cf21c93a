"""From what a user passes to ``from_pretrained`` to a config file and tensors.

Forms understood (each tested):

* an HF directory: ``config.json`` + ``model.safetensors`` / ``pytorch_model.bin`` / a sharded index;
* a Google checkpoint directory: ``bert_config.json`` + ``bert_model.ckpt.index`` + ``.data-*``;
* a checkpoint prefix: ``.../bert_model.ckpt`` (or its ``.index`` file);
* Google's released ``.zip`` (e.g. ``uncased_L-12_H-768_A-12.zip``), extracted to a
  temporary directory with every member name and the total size checked first;
* a hub model id (``bert-base-uncased``, ``google-bert/bert-base-uncased``): found in the
  local HuggingFace cache, or downloaded with huggingface_hub when that is possible
  (``hub.py``).
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import torch

from .errors import CheckpointError, CheckpointNotFoundError
from ..file_utils import read_json, unfinished_move_in
from ..limits import Limits, size_text
from .hf_format import (
    CONFIG_NAME,
    WEIGHTS_FILE_NAMES,
    add_variant,
    check_regular_file,
    find_weights_file,
    is_zip,
    read_index_file,
    read_state_dict,
)
from .hub import looks_like_hub_id, resolve_hub_id
from .tf_bundle import TFCheckpoint
from .weight_map import convert_tf_checkpoint

logger = logging.getLogger(__name__)

GOOGLE_CONFIG_NAME = "bert_config.json"
GOOGLE_CHECKPOINT_PREFIX = "bert_model.ckpt"


@dataclass
class ResolvedCheckpoint:
    """Where the config and the weights of one checkpoint are."""

    source: str  # what was asked for
    kind: str  # "hf" or "tf"
    config_path: str | None  # None: no config beside the weights (the caller must supply one)
    weights_path: str | None = None  # kind "hf"
    tf_prefix: str | None = None  # kind "tf"
    _tempdir: tempfile.TemporaryDirectory | None = field(default=None, repr=False)

    def cleanup(self) -> None:
        if self._tempdir is not None:
            self._tempdir.cleanup()
            self._tempdir = None


@dataclass
class CheckpointTensors:
    """A checkpoint's tensors under transformers' names, plus what the file called them."""

    tensors: dict[str, torch.Tensor]
    path: str  # the file the tensors came from (for messages)
    file_names: dict[str, str] = field(default_factory=dict)  # transformers name -> name in the file
    skipped: list[str] = field(default_factory=list)  # training state, never loaded
    unmapped: list[str] = field(default_factory=list)  # variables no table row maps


def resolve_checkpoint(
    path: str | os.PathLike,
    revision: str = "main",
    cache_dir: str | os.PathLike | None = None,
    local_files_only: bool = False,
    use_safetensors: bool | None = None,
    variant: str | None = None,
    subfolder: str = "",
    limits: Limits | None = None,
) -> ResolvedCheckpoint:
    """Find the config and weights of ``path``: a local form first, then a hub id.

    ``revision``, ``cache_dir`` and ``local_files_only`` apply to hub ids only, with
    transformers' meanings; ``use_safetensors`` and ``variant`` to HuggingFace directories
    (``hf_format.find_weights_file``); ``subfolder`` names the folder of a directory that
    holds the checkpoint (transformers' argument); ``limits`` bounds what a zip may unpack to.
    """
    if not isinstance(path, (str, os.PathLike)) or not isinstance(source := os.fspath(path), str):
        raise TypeError(f"pretrained_model_name_or_path must be a str or os.PathLike, got {type(path).__name__}")
    if subfolder or variant is not None:
        if not os.path.isdir(source):
            given = ", ".join(f"{k}={v!r}" for k, v in (("subfolder", subfolder), ("variant", variant)) if v)
            raise CheckpointNotFoundError(
                f"{source}: {given} applies to a local directory, and there is no such directory "
                f"(for a hub repo, download it and pass its directory)"
            )
        source = os.path.join(source, subfolder) if subfolder else source
        if not os.path.isdir(source):
            raise CheckpointNotFoundError(f"{source}: no such subfolder (subfolder={subfolder!r})")
        return _resolve_directory(source, source, use_safetensors, variant)
    if os.path.isdir(source):
        return _resolve_directory(source, source, use_safetensors)
    if os.path.isfile(source + ".index"):
        return _resolve_prefix(source, source)
    if source.endswith(".index") and os.path.isfile(source):
        return _resolve_prefix(source[: -len(".index")], source)
    if os.path.isfile(source) and is_zip(source):
        return _resolve_zip(source, Limits.given(limits))
    if os.path.isfile(source):
        raise CheckpointError(
            f"{source}: is a file that is neither a checkpoint directory, a TensorFlow checkpoint "
            f"(PREFIX.index) nor a .zip; pass the directory that holds config.json and the weights"
        )
    if looks_like_hub_id(source):
        try:
            directory = resolve_hub_id(source, revision, cache_dir, local_files_only, read_index=read_index_file)
        except CheckpointError as e:
            raise CheckpointNotFoundError(f"{source}: no such local directory or file, and as a hub id: {e}") from None
        return _resolve_directory(directory, source, use_safetensors)
    raise FileNotFoundError(
        f"{source}: no such directory, TensorFlow checkpoint prefix or .zip (and not a hub model id)"
    )


@contextmanager
def resolve_config(
    path: str, revision: str = "main", cache_dir: str | os.PathLike | None = None, local_files_only: bool = False
) -> Iterator[str]:
    """The config file of ``path`` (``BertConfig.from_pretrained``): the file itself, the
    one in a directory (a directory with a config and no weights is fine here), the one
    beside a checkpoint prefix or inside a ``.zip`` (valid until the context ends), or a
    hub id's (only the config is fetched when it is not cached)."""
    if os.path.isfile(path) and path.endswith(".json"):
        yield path
        return
    if os.path.isdir(path):
        config = _find_config(path)
        if config is None:
            raise CheckpointNotFoundError(f"{path}: no config.json (or Google's bert_config.json) in this directory")
        yield config
        return
    if not os.path.exists(path) and not os.path.isfile(path + ".index") and looks_like_hub_id(path):
        try:
            directory = resolve_hub_id(path, revision, cache_dir, local_files_only, required=(CONFIG_NAME,))
        except CheckpointError as e:
            raise CheckpointNotFoundError(f"{path}: no such local directory or file, and as a hub id: {e}") from None
        yield os.path.join(directory, CONFIG_NAME)
        return
    resolved = resolve_checkpoint(path, revision, cache_dir, local_files_only)
    try:
        if resolved.config_path is None:
            raise CheckpointNotFoundError(f"{path}: no config.json or bert_config.json beside this checkpoint")
        yield resolved.config_path
    finally:
        resolved.cleanup()


def check_not_moving_in(directory: str) -> None:
    """Refuse a model directory that a killed save left half moved in: it may hold one
    save's config.json beside another's weights (``file_utils.move_files_in``).

    transformers: none (it loads whatever files are there)

    Raises:
        CheckpointError: naming the directory, the unfinished save's files, and the remedy.
    """
    problem = unfinished_move_in(directory)
    if problem:
        raise CheckpointError(f"{directory}: {problem}; nothing was loaded")


def _find_config(directory: str) -> str | None:
    for name in (CONFIG_NAME, GOOGLE_CONFIG_NAME):
        if os.path.isfile(os.path.join(directory, name)):
            return os.path.join(directory, name)
    return None


def _resolve_directory(directory: str, source: str, use_safetensors: bool | None = None,
                       variant: str | None = None) -> ResolvedCheckpoint:
    check_not_moving_in(directory)
    names = [add_variant(name, variant) for name in WEIGHTS_FILE_NAMES]
    for name in (*names, CONFIG_NAME, GOOGLE_CONFIG_NAME):
        path = os.path.join(directory, name)
        if os.path.islink(path) and not os.path.exists(path):
            raise CheckpointError(f"{path}: a symbolic link that leads nowhere (a loop, or its target is missing)")
    config = _find_config(directory)
    explicit = _explicit_weights(directory, config)
    if explicit is not None:
        return ResolvedCheckpoint(source, "hf", config, weights_path=explicit)
    try:
        weights = find_weights_file(directory, use_safetensors, variant)
    except CheckpointError:
        if variant is not None or (use_safetensors is not None and
                                   any(os.path.isfile(os.path.join(directory, n)) for n in WEIGHTS_FILE_NAMES)):
            raise  # the other format (or the plain files) is there: say what ruled it out
        weights = None
    if weights is not None:  # without a config, from_pretrained needs config= (it says so)
        return ResolvedCheckpoint(source, "hf", config, weights_path=weights)
    indexes = sorted(f[: -len(".index")] for f in os.listdir(directory) if f.endswith(".index") and not f.endswith(".json"))
    if indexes:
        prefix = GOOGLE_CHECKPOINT_PREFIX if GOOGLE_CHECKPOINT_PREFIX in indexes else indexes[-1]
        if len(indexes) > 1 and prefix != GOOGLE_CHECKPOINT_PREFIX:
            logger.warning("%s: several TensorFlow checkpoints (%s); reading %s", directory, ", ".join(indexes), prefix)
        return _resolve_prefix(os.path.join(directory, prefix), source)
    raise CheckpointNotFoundError(
        f"{directory}: no weights found: expected config.json with model.safetensors, "
        f"model.safetensors.index.json, pytorch_model.bin or pytorch_model.bin.index.json, or "
        f"Google's bert_config.json with bert_model.ckpt.index"
    )


#: What a config.json's ``transformers_weights`` may name: a safetensors file or index.
_EXPLICIT_SUFFIXES = (".safetensors", ".safetensors.index.json")


def _explicit_weights(directory: str, config_path: str | None) -> str | None:
    """The weights file a HuggingFace config.json names in ``transformers_weights`` (a file
    of the directory, safetensors or its index, as transformers allows), or None.

    transformers: ``modeling_utils._get_resolved_checkpoint_files`` (``transformers_explicit_filename``)
    """
    if config_path is None or os.path.basename(config_path) != CONFIG_NAME:
        return None
    values = read_json(config_path, CheckpointError, "config file")
    name = values.get("transformers_weights") if isinstance(values, dict) else None
    if name is None:
        return None
    if not isinstance(name, str) or not name.endswith(_EXPLICIT_SUFFIXES):
        raise CheckpointError(f"{config_path}: transformers_weights={name!r} must name a .safetensors file or a "
                              f".safetensors.index.json index")
    # The name must stay inside the directory (no "..", no absolute path); the entry it names
    # may be a link, as every file of a hub-cache snapshot is (a link into its blobs/).
    root = os.path.normpath(os.path.abspath(directory))
    path = os.path.normpath(os.path.join(root, name))
    if os.path.isabs(name) or not path.startswith(root + os.sep):
        raise CheckpointError(f"{config_path}: transformers_weights={name!r} must name a file inside {directory}")
    if not os.path.lexists(path):
        raise CheckpointNotFoundError(f"{config_path}: transformers_weights names {name!r}, which {directory} does not hold")
    check_regular_file(path)  # a named pipe or a directory is refused by name, unread
    return os.path.join(directory, name)


def _resolve_prefix(prefix: str, source: str) -> ResolvedCheckpoint:
    # The config usually sits beside the checkpoint; a caller may also pass one (config=).
    return ResolvedCheckpoint(source, "tf", _find_config(os.path.dirname(prefix) or "."), tf_prefix=prefix)


def _resolve_zip(path: str, limits: Limits) -> ResolvedCheckpoint:
    """Extract a released zip (after checking every member) and resolve what it holds."""
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
            total = sum(m.file_size for m in members)
            if total > limits.archive_bytes:
                raise CheckpointError(f"{path}: unpacks to {size_text(total)}, more than any BERT release "
                                      f"(Limits.archive_bytes={size_text(limits.archive_bytes)}); refusing")
            _check_zip_members(path, members, total, limits.archive_ratio)
            for member in members:
                name = member.filename
                if name.startswith(("/", "\\")) or ".." in name.replace("\\", "/").split("/") or ":" in name:
                    raise CheckpointError(f"{path}: member {name!r} would be written outside the extraction directory")
            tempdir = tempfile.TemporaryDirectory(prefix="mini_hf_bert_zip_")
            free = shutil.disk_usage(tempdir.name).free
            if total > free:
                tempdir.cleanup()
                raise CheckpointError(f"{path}: unpacks to {total} bytes, more than the {free} bytes free in "
                                      f"{os.path.dirname(tempdir.name)}; extract it where there is room, or free some")
            try:
                archive.extractall(tempdir.name)
            except Exception:
                tempdir.cleanup()
                raise
    except zipfile.BadZipFile as e:
        raise CheckpointError(f"{path}: not a valid zip file ({e})") from None
    except (OSError, EOFError, zlib.error) as e:
        raise CheckpointError(f"{path}: cannot extract ({type(e).__name__}: {e}); is it truncated or corrupt?") from None
    # Google's zips hold one directory (uncased_L-12_H-768_A-12/); accept files at the top too.
    root = tempdir.name
    entries = [e for e in os.listdir(root) if not e.startswith("__MACOSX")]
    if len(entries) == 1 and os.path.isdir(os.path.join(root, entries[0])):
        root = os.path.join(root, entries[0])
    try:
        resolved = _resolve_directory(root, path)
    except CheckpointError as e:
        tempdir.cleanup()
        raise CheckpointError(f"{path}: the zip holds no checkpoint ({str(e).split(': ', 1)[-1]})") from None
    resolved._tempdir = tempdir
    return resolved


def _check_zip_members(path: str, members: list[zipfile.ZipInfo], total: int, most_ratio: int) -> None:
    """Refuse a zip whose members overlap (entries sharing compressed bytes: a bomb that
    zipfile itself does not notice) or that expands past ``most_ratio`` (``Limits.archive_ratio``),
    before any byte is extracted."""
    by_offset = sorted(members, key=lambda m: m.header_offset)
    for member, following in zip(by_offset, by_offset[1:]):
        if following.header_offset < member.header_offset + member.compress_size:
            raise CheckpointError(f"{path}: members {member.filename!r} and {following.filename!r} overlap (they share "
                                  f"compressed bytes, as zip bombs do); refusing to extract it")
    packed = sum(m.compress_size for m in members)
    if total > most_ratio * max(packed, 1):
        raise CheckpointError(f"{path}: its {packed} compressed bytes unpack to {total}, {total // max(packed, 1)}x; "
                              f"no checkpoint compresses past {most_ratio}x (weights barely compress), so it is "
                              f"refused as a zip bomb (Limits.archive_ratio raises the bound)")


def load_checkpoint_tensors(resolved: ResolvedCheckpoint, progress: bool = False) -> CheckpointTensors:
    """Every model tensor of a resolved checkpoint, under transformers' names."""
    if resolved.kind == "hf":
        tensors = read_state_dict(resolved.weights_path)
        return CheckpointTensors(tensors, resolved.weights_path)
    checkpoint = TFCheckpoint(resolved.tf_prefix)
    conversion = convert_tf_checkpoint(checkpoint, progress=progress)
    if conversion.skipped:
        logger.info("%s: skipped %d training-state variables (optimizer slots, global_step)",
                    checkpoint.index_path, len(conversion.skipped))
    return CheckpointTensors(
        conversion.tensors,
        checkpoint.index_path,
        file_names={hf: tf for tf, hf in conversion.renamed},
        skipped=conversion.skipped,
        unmapped=conversion.unmapped,
    )
