"""From what a user passes to ``from_pretrained`` to a config file and tensors.

Forms understood (each tested):

* an HF directory: ``config.json`` + ``model.safetensors`` / ``pytorch_model.bin`` / a sharded index;
* a Google checkpoint directory: ``bert_config.json`` + ``bert_model.ckpt.index`` + ``.data-*``;
* a checkpoint prefix: ``.../bert_model.ckpt`` (or its ``.index`` file);
* Google's released ``.zip`` (e.g. ``uncased_L-12_H-768_A-12.zip``), extracted to a
  temporary directory with every member name and the total size checked first;
* a hub model id (``bert-base-uncased``, ``google-bert/bert-base-uncased``): found in the
  local HuggingFace cache, or downloaded with huggingface_hub when that is possible
  (``hub.py``);
* the other published forms (``FORMS``, the second half of this module): the hub's
  ``tf_model.h5`` and ``flax_model.msgpack``, Google's TF2 checkpoints, TF Hub SavedModels
  and KerasHub presets, each a directory or its file.
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
import shutil
import tempfile
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import torch

from .errors import CheckpointError, CheckpointNotFoundError
from ..file_utils import read_file, read_json, unfinished_move_in
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
from .flax_msgpack import read_flax_msgpack
from .hdf5_weights import HDF5Weights
from .hub import find_cached_snapshot, looks_like_hub_id, resolve_hub_id
from .layout import FLAX_WEIGHTS_NAME, KERAS_HUB_TASK_WEIGHTS_NAME, KERAS_HUB_WEIGHTS_NAME, TF_WEIGHTS_NAME
from .tf_bundle import OBJECT_GRAPH_KEY, TFCheckpoint
from .weight_map import FORM_WEIGHT_MAPS, convert_tf_checkpoint, form_to_hf_name, transformed, transformed_shape

logger = logging.getLogger(__name__)

GOOGLE_CONFIG_NAME = "bert_config.json"
GOOGLE_CHECKPOINT_PREFIX = "bert_model.ckpt"
#: A ``checkpoint`` state file lists a few paths; past this it is not one.
_MAX_STATE_BYTES = 1024 * 1024


@dataclass
class ResolvedCheckpoint:
    """Where the config and the weights of one checkpoint are."""

    source: str  # what was asked for
    kind: str  # "hf", "tf" (Google's TF1) or "form" (one of forms.FORMS)
    config_path: str | None  # None: no config beside the weights (the caller must supply one)
    weights_path: str | None = None  # kind "hf"; kind "form": what its reader opens
    tf_prefix: str | None = None  # kind "tf"
    form: str | None = None  # kind "form": its name in forms.FORMS
    derived_config: dict | None = None  # a form without a BERT config: the fields it implies
    config_note: str = ""  # where derived_config came from, in words
    vocab_file: str | None = None  # a form's vocabulary where it is not vocab.txt beside the config
    do_lower_case: bool | None = None  # the casing a form records, where it records one
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
    form: str | None = None  # one of FORMS: its weights are all there is, so a gap is never filled at random


def resolve_checkpoint(
    path: str | os.PathLike,
    revision: str = "main",
    cache_dir: str | os.PathLike | None = None,
    local_files_only: bool = False,
    use_safetensors: bool | None = None,
    variant: str | None = None,
    subfolder: str = "",
    limits: Limits | None = None,
    framework: str | None = None,
    token: str | bool | None = None,
    force_download: bool = False,
) -> ResolvedCheckpoint:
    """Find the config and weights of ``path``: a local form first, then a hub id.

    ``revision``, ``cache_dir``, ``local_files_only``, ``token`` and ``force_download`` apply to hub ids only, with
    transformers' meanings; ``use_safetensors`` and ``variant`` to HuggingFace directories
    (``hf_format.find_weights_file``); ``subfolder`` names the folder of a directory that
    holds the checkpoint (transformers' argument); ``limits`` bounds what a zip may unpack to;
    ``framework`` ("tf" or "flax": transformers 4.x's ``from_tf`` / ``from_flax``) asks for a
    directory's weights of that framework, wherever PyTorch weights sit beside them.
    """
    if framework is not None:
        resolved = resolve_checkpoint(path, revision, cache_dir, local_files_only, use_safetensors, variant,
                                      subfolder, limits, token=token, force_download=force_download)
        if _framework_of(resolved) == framework:
            return resolved
        where = resolved.weights_path or resolved.tf_prefix or ""
        directory = where if os.path.isdir(where) else os.path.dirname(where)
        chosen = _framework_weights(directory, framework) if resolved._tempdir is None and directory else None
        resolved.cleanup()
        if chosen is None:
            wanted = "tf_model.h5 or a TF checkpoint (.index)" if framework == "tf" else FLAX_WEIGHTS_NAME
            raise CheckpointNotFoundError(f"{os.fspath(path)}: from_{framework}=True, but it holds no {wanted}")
        return chosen
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
    if os.path.isfile(source) and (detected := detect_file(source)) is not None:
        return _resolve_form(*detected, source)
    if os.path.exists(source) and not os.path.isdir(source) and not os.path.isfile(source):
        check_regular_file(source)  # a named pipe or a device: refused by what it is, unread
    if os.path.isfile(source):
        raise CheckpointError(
            f"{source}: is a file that is neither a checkpoint directory, a TensorFlow checkpoint "
            f"(PREFIX.index) nor a .zip; pass the directory that holds config.json and the weights"
        )
    if looks_like_hub_id(source):
        try:
            directory = resolve_hub_id(source, revision, cache_dir, local_files_only, read_index=read_index_file,
                                       token=token, force_download=force_download)
        except CheckpointError as e:
            raise CheckpointNotFoundError(f"{source}: no such local directory or file, and as a hub id: {e}") from None
        return _resolve_directory(directory, source, use_safetensors)
    raise FileNotFoundError(
        f"{source}: no such directory, TensorFlow checkpoint prefix or .zip (and not a hub model id)"
    )


@contextmanager
def resolve_config(
    path: str, revision: str = "main", cache_dir: str | os.PathLike | None = None, local_files_only: bool = False,
    token: str | bool | None = None, force_download: bool = False,
) -> Iterator[str]:
    """The config file of ``path`` (``BertConfig.from_pretrained``): the file itself, the
    one in a directory (a directory with a config and no weights is fine here), the one
    beside a checkpoint prefix or inside a ``.zip`` (valid until the context ends), or a
    hub id's (only the config is fetched when it is not cached)."""
    if os.path.isfile(path) and path.endswith(".json"):
        yield path
        return
    detected = detect_form(path) if os.path.isdir(path) else None
    if os.path.isdir(path) and (detected is None or detected[0] in HUB_FORMS):
        config = _find_config(path)
        if config is not None:
            yield config
            return
        if not _has_tf_index(path):  # a TF2 checkpoint implies its config
            raise CheckpointNotFoundError(f"{path}: no config.json (or Google's bert_config.json) in this directory")
    if not os.path.exists(path) and not os.path.isfile(path + ".index") and looks_like_hub_id(path):
        try:
            directory = resolve_hub_id(path, revision, cache_dir, local_files_only, required=(CONFIG_NAME,), token=token,
                                       force_download=force_download)
        except CheckpointError as e:
            snapshot = find_cached_snapshot(path, revision, cache_dir)  # a form that implies its config?
            if snapshot is None or detect_form(snapshot) is None and not _has_tf_index(snapshot):
                raise CheckpointNotFoundError(f"{path}: no such local directory or file, and as a hub id: {e}") from None
            directory = None
        if directory is not None and not is_keras_hub_config(os.path.join(directory, CONFIG_NAME)):
            yield os.path.join(directory, CONFIG_NAME)
            return
    resolved = resolve_checkpoint(path, revision, cache_dir, local_files_only, token=token, force_download=force_download)
    try:
        if resolved.derived_config is not None:  # a form that keeps no BERT config: the one it implies
            logger.info("%s", resolved.config_note)
            with tempfile.TemporaryDirectory(prefix="mini_hf_bert_config_") as tmp:
                derived = os.path.join(tmp, CONFIG_NAME)
                with open(derived, "w", encoding="utf-8") as f:
                    json.dump({"model_type": "bert", **resolved.derived_config}, f)
                yield derived
            return
        if resolved.config_path is None:
            raise CheckpointNotFoundError(f"{path}: no config.json or bert_config.json beside this checkpoint")
        yield resolved.config_path
    finally:
        resolved.cleanup()


def _framework_of(resolved: ResolvedCheckpoint) -> str:
    """The framework whose code wrote ``resolved``: "pt", "tf" or "flax"."""
    if resolved.kind == "tf" or resolved.form in ("tf_model_h5", "tf2", "saved_model", "keras_hub"):
        return "tf"
    return "flax" if resolved.form == "flax_msgpack" else "pt"


def _framework_weights(directory: str, framework: str) -> ResolvedCheckpoint | None:
    """A directory's TensorFlow or Flax weights, where its PyTorch weights would come first."""
    if framework == "flax":
        path = os.path.join(directory, FLAX_WEIGHTS_NAME)
        return _resolve_form("flax_msgpack", path, directory) if os.path.isfile(path) else None
    if os.path.isfile(os.path.join(directory, TF_WEIGHTS_NAME)):
        return _resolve_form("tf_model_h5", os.path.join(directory, TF_WEIGHTS_NAME), directory)
    indexes = sorted(f[: -len(".index")] for f in os.listdir(directory) if f.endswith(".index"))
    return _resolve_prefix(os.path.join(directory, _latest_checkpoint(directory, indexes)), directory) if indexes else None


def _has_tf_index(directory: str) -> bool:
    return any(f.endswith(".index") for f in os.listdir(directory))


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
    detected = detect_form(directory)
    if detected is not None:
        return _resolve_form(*detected, source)
    indexes = sorted(f[: -len(".index")] for f in os.listdir(directory) if f.endswith(".index") and not f.endswith(".json"))
    if indexes:
        prefix = GOOGLE_CHECKPOINT_PREFIX if GOOGLE_CHECKPOINT_PREFIX in indexes else _latest_checkpoint(directory, indexes)
        if len(indexes) > 1 and prefix != GOOGLE_CHECKPOINT_PREFIX and prefix == indexes[-1]:
            logger.warning("%s: several TensorFlow checkpoints (%s); reading %s", directory, ", ".join(indexes), prefix)
        return _resolve_prefix(os.path.join(directory, prefix), source)
    raise CheckpointNotFoundError(
        f"{directory}: no weights found: expected config.json with model.safetensors, "
        f"model.safetensors.index.json, pytorch_model.bin or pytorch_model.bin.index.json, "
        f"tf_model.h5 or flax_model.msgpack; Google's bert_config.json with bert_model.ckpt.index; "
        f"a TF2 checkpoint (PREFIX.index); a SavedModel (saved_model.pb, variables/); or a KerasHub "
        f"preset (config.json, model.weights.h5)"
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


#: TensorFlow's record of a directory's latest checkpoint (tf.train.CheckpointManager writes it).
CHECKPOINT_STATE_NAME = "checkpoint"
_LATEST = re.compile(r'^model_checkpoint_path: "([^"/\\]+)"$', re.MULTILINE)


def _latest_checkpoint(directory: str, indexes: list[str]) -> str:
    """The prefix TensorFlow's ``checkpoint`` file names as the latest (a TF2 training
    directory keeps several: ckpt-9 after ckpt-10 in name order), else the last by name."""
    state = os.path.join(directory, CHECKPOINT_STATE_NAME)
    if os.path.isfile(state):
        try:
            match = _LATEST.search(read_file(state, _MAX_STATE_BYTES).decode("utf-8", "replace"))
        except OSError as e:
            raise CheckpointError(f"{state}: cannot be read ({e.strerror or e})") from None
        if match and match.group(1) in indexes:
            return match.group(1)
    return indexes[-1]


def _resolve_prefix(prefix: str, source: str) -> ResolvedCheckpoint:
    checkpoint = TFCheckpoint(prefix)  # the index only: is it TF1 (names) or TF2 (an object graph)?
    tf2 = is_tf2_checkpoint(checkpoint)
    checkpoint.close()
    if tf2:
        return _resolve_form("tf2", prefix, source)
    # The config usually sits beside the checkpoint; a caller may also pass one (config=).
    return ResolvedCheckpoint(source, "tf", _find_config(os.path.dirname(prefix) or "."), tf_prefix=prefix)


def _resolve_form(form: str, path: str, source: str) -> ResolvedCheckpoint:
    """A checkpoint of one of ``forms.FORMS``: its config beside it (the hub's forms) or
    derived from what it holds (the others), and its vocabulary."""
    directory = path if os.path.isdir(path) else os.path.dirname(path) or "."
    if form in HUB_FORMS:
        config = os.path.join(directory, CONFIG_NAME)
        return ResolvedCheckpoint(source, "form", config if os.path.isfile(config) else None, weights_path=path,
                                  form=form)
    with FormReader(form, path) as reader:
        derived, note = derived_config(reader)
    resolved = ResolvedCheckpoint(source, "form", None, weights_path=path, form=form, derived_config=derived,
                                  config_note=note)
    vocabulary = form_vocabulary(form, path)
    if vocabulary is not None:
        resolved.vocab_file, resolved.do_lower_case = vocabulary
    return resolved


def form_vocabulary(form: str, path: str) -> tuple[str, bool | None] | None:
    """Where a form keeps its vocabulary, and the casing it records (None: it records none):
    export_tfhub puts it among a SavedModel's assets with the casing as a variable, KerasHub
    under assets/tokenizer/ with the casing in its tokenizer.json; TF2 checkpoints have a
    vocab.txt beside them, if any. ``path`` is what the form's reader opens."""
    if form == "saved_model":
        vocab = _existing(os.path.join(os.path.dirname(os.path.dirname(path)), "assets", "vocab.txt"))
        return (vocab, _saved_model_casing(path)) if vocab else None
    if form == "keras_hub":
        vocab = _existing(os.path.join(path, "assets", "tokenizer", "vocabulary.txt"))
        return (vocab, _keras_hub_casing(os.path.join(path, "tokenizer.json"))) if vocab else None
    vocab = _existing(os.path.join(os.path.dirname(path) or ".", "vocab.txt"))
    return (vocab, None) if vocab else None


def directory_vocabulary(directory: str) -> tuple[str, bool | None] | None:
    """``form_vocabulary`` of a SavedModel or KerasHub directory, whose vocabulary is not a
    vocab.txt at its top (the tokenizer's loader asks); None for any other directory."""
    detected = detect_form(directory)
    if detected is None or detected[0] not in ("saved_model", "keras_hub"):
        return None
    return form_vocabulary(*detected)


def warn_about_activation(config, resolved: ResolvedCheckpoint) -> None:
    """A config passed for a form whose code computes another activation than it names:
    said, never silently changed (the caller's config is used as given)."""
    expected = resolved.derived_config.get("hidden_act") if resolved.derived_config else None
    if expected is not None and getattr(config, "hidden_act", expected) != expected:
        logger.warning("%s: the config passed says hidden_act=%r, but %s computes %r; the outputs will differ from "
                       "the writer's (pass hidden_act=%r to match them)", resolved.source, config.hidden_act,
                       resolved.form, expected, expected)


#: The forms transformers wrote: config.json and the tokenizer files sit beside them.
HUB_FORMS = ("tf_model_h5", "flax_msgpack")


def _existing(path: str) -> str | None:
    return path if os.path.isfile(path) else None


def _saved_model_casing(prefix: str) -> bool | None:
    checkpoint = TFCheckpoint(prefix)
    try:
        key = "do_lower_case/.ATTRIBUTES/VARIABLE_VALUE"
        if key not in checkpoint.entries:
            return None
        value = checkpoint.read(key)
        return bool(value.item()) if value.numel() == 1 and value.dtype == torch.bool else None
    finally:
        checkpoint.close()


def _keras_hub_casing(path: str) -> bool | None:
    """KerasHub's tokenizer.json (a Keras object, not the tokenizers library's file): its
    ``config.lowercase``."""
    if not os.path.isfile(path):
        return None
    values = read_json(path, CheckpointError, "tokenizer config")
    settings = values.get("config") if isinstance(values, dict) else None
    lowercase = settings.get("lowercase") if isinstance(settings, dict) else None
    return lowercase if isinstance(lowercase, bool) else None


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


def load_checkpoint_tensors(resolved: ResolvedCheckpoint, progress: bool = False,
                            limits: Limits | None = None) -> CheckpointTensors:
    """Every model tensor of a resolved checkpoint, under transformers' names."""
    if resolved.kind == "hf":
        tensors = read_state_dict(resolved.weights_path)
        return CheckpointTensors(tensors, resolved.weights_path)
    if resolved.kind == "form":
        with FormReader(resolved.form, resolved.weights_path, limits) as reader:
            read = reader.tensors(progress=progress)
            where = reader.where
        if read.skipped:
            logger.info("%s: skipped %d training-state tensors (%s)", where, len(read.skipped), ", ".join(read.skipped[:4]))
        return CheckpointTensors(read.tensors, f"{where} ({FORMS[resolved.form].title})", file_names=read.file_names,
                                 skipped=read.skipped, unmapped=read.unmapped, form=resolved.form)
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


# --------------------------------------------------------------------------------------
# The other published forms: the hub's TF and Flax files, Google's TF2, TF Hub, KerasHub
# --------------------------------------------------------------------------------------
#
# Read without TensorFlow, Keras or JAX: the files by hdf5_weights.py (h5py),
# flax_msgpack.py (msgpack) and tf_bundle.py (TF2 checkpoints and SavedModels are tensor
# bundles whose object graph names each variable); their names by weight_map.py's tables.
# transformers: 4.x's modeling_tf_pytorch_utils and modeling_flax_pytorch_utils read the
# first two (with TensorFlow and JAX installed); 5.x reads none of these forms.

SAVED_MODEL_NAME = "saved_model.pb"
SAVED_MODEL_VARIABLES = os.path.join("variables", "variables")


@dataclass(frozen=True)
class Form:
    """One published form: what it holds, who writes it, where its config comes from."""

    name: str
    title: str
    holds: str
    written_by: str
    config: str


FORMS: dict[str, Form] = {form.name: form for form in (
    Form("tf_model_h5", "the hub's TensorFlow weights", "config.json, tf_model.h5",
         "transformers 4.x TFBert* save_pretrained", "config.json beside it"),
    Form("flax_msgpack", "the hub's Flax weights", "config.json, flax_model.msgpack",
         "transformers 4.x FlaxBert* save_pretrained", "config.json beside it"),
    Form("tf2", "Google's TF2 checkpoint (Model Garden)", "PREFIX.index, PREFIX.data-*, no bert_config.json needed",
         "tf-models-official (BertEncoder, BertPretrainerV2; its TF1 converter)",
         "derived from the weights; hidden_act='gelu_new' (the tanh GELU its code computes)"),
    Form("saved_model", "a TF Hub SavedModel", "saved_model.pb, variables/variables.*",
         "tf-models-official export_tfhub", "derived from the weights; hidden_act='gelu_new'"),
    Form("keras_hub", "a KerasHub preset", "config.json (KerasHub's), model.weights.h5, task.weights.h5",
         "keras-hub save_to_preset", "KerasHub's config.json; hidden_act='gelu_new'"),
)}

#: The activation each form's own code computes where it keeps no BERT config: Model
#: Garden's "gelu" and KerasHub's gelu_approximate are both the tanh form.
WRITERS_ACTIVATION = {"tf2": "gelu_new", "saved_model": "gelu_new", "keras_hub": "gelu_new"}

#: KerasHub's backbone config.json keys -> BertConfig fields.
KERAS_HUB_CONFIG_FIELDS = {
    "vocabulary_size": "vocab_size", "num_layers": "num_hidden_layers", "num_heads": "num_attention_heads",
    "hidden_dim": "hidden_size", "intermediate_dim": "intermediate_size",
    "max_sequence_length": "max_position_embeddings", "num_segments": "type_vocab_size",
}
KERAS_HUB_DTYPES = {"float32": "float32", "float16": "float16", "bfloat16": "bfloat16",
                    "mixed_float16": "float32", "mixed_bfloat16": "float32"}  # mixed: variables stay float32


# ------------------------------------------------------------------------------ recognising


def detect_form(directory: str) -> tuple[str, str] | None:
    """(form, the path its reader opens) for a directory holding one of these forms, or None.
    A KerasHub preset is told from a transformers directory by its config.json."""
    def has(name: str) -> bool:
        return os.path.isfile(os.path.join(directory, name))

    if has(KERAS_HUB_WEIGHTS_NAME) and is_keras_hub_config(os.path.join(directory, "config.json")):
        return "keras_hub", directory
    if has(TF_WEIGHTS_NAME):
        return "tf_model_h5", os.path.join(directory, TF_WEIGHTS_NAME)
    if has(FLAX_WEIGHTS_NAME):
        return "flax_msgpack", os.path.join(directory, FLAX_WEIGHTS_NAME)
    if has(SAVED_MODEL_NAME) and os.path.isfile(os.path.join(directory, SAVED_MODEL_VARIABLES + ".index")):
        return "saved_model", os.path.join(directory, SAVED_MODEL_VARIABLES)
    return None


def detect_file(path: str) -> tuple[str, str] | None:
    """(form, the path its reader opens) for a file of one of these forms, or None."""
    name = os.path.basename(path)
    if name == SAVED_MODEL_NAME:
        return detect_form(os.path.dirname(path) or ".")
    if name in (KERAS_HUB_WEIGHTS_NAME, KERAS_HUB_TASK_WEIGHTS_NAME):
        return ("keras_hub", os.path.dirname(path) or ".") if detect_form(os.path.dirname(path) or ".") else None
    if name.endswith(".h5"):
        return "tf_model_h5", path
    if name.endswith(".msgpack"):
        return "flax_msgpack", path
    return None


def is_keras_hub_config(path: str) -> bool:
    """Whether ``path`` is KerasHub's config.json (a Keras object: module, class_name, config)."""
    if not os.path.isfile(path):
        return False
    values = read_json(path, CheckpointError, "config file")
    return isinstance(values, dict) and str(values.get("registered_name", "")).startswith("keras_hub>") or \
        isinstance(values, dict) and str(values.get("module", "")).startswith("keras_hub.")


def is_tf2_checkpoint(checkpoint: TFCheckpoint) -> bool:
    """A TF2 (object-based) checkpoint stores its object graph; a TF1 one does not."""
    return OBJECT_GRAPH_KEY in checkpoint.entries


# -------------------------------------------------------------------------------- reading


@dataclass
class FormEntry:
    """One tensor of a form's files, and where it goes (known before any data is read)."""

    name: str  # the weight's name in the form, as the tables spell it
    key: str  # where the file keeps it: a dataset path or checkpoint key ("" when the name is that)
    shape: tuple[int, ...]
    dtype: str
    maps_to: str | None = None  # transformers' name
    transform: str | None = None
    training_state: bool = False


@dataclass
class FormTensors:
    """A form's tensors under transformers' names, and what was left out."""

    tensors: dict[str, torch.Tensor]
    file_names: dict[str, str] = field(default_factory=dict)  # transformers name -> name in the form
    skipped: list[str] = field(default_factory=list)
    unmapped: list[str] = field(default_factory=list)


class FormReader:
    """The tensors of one form at ``path``; ``entries`` lists them before any is read."""

    def __init__(self, form: str, path: str, limits: Limits | None = None) -> None:
        if form not in FORMS:
            raise ValueError(f"unknown form {form!r}; the forms are {', '.join(FORMS)}")
        self.form, self.path, self.limits = form, path, Limits.given(limits)
        self.entries: list[FormEntry] = []
        self._readers: dict[str, object] = {}  # what each entry is read from
        self._flax: dict[str, torch.Tensor] = {}
        self.where = path
        opening = {"tf_model_h5": self._open_tf_model_h5, "flax_msgpack": self._open_flax_msgpack,
                   "tf2": self._open_tf2, "saved_model": self._open_tf2, "keras_hub": self._open_keras_hub}
        try:
            opening[form]()
        except BaseException:
            self.close()
            raise
        for entry in self.entries:
            if not entry.training_state:
                mapped = form_to_hf_name(form, entry.name)
                if mapped is not None:
                    entry.maps_to, entry.transform = mapped

    # Each form lists its entries.

    def _open_tf_model_h5(self) -> None:
        check_regular_file(self.path)  # a named pipe would block the HDF5 library forever
        weights = HDF5Weights(self.path, _keras2_weight_name)
        self._readers[""] = weights
        self.entries = [FormEntry(name, e.dataset, e.shape, e.dtype_name) for name, e in weights.entries.items()]

    def _open_keras_hub(self) -> None:
        self.where = os.path.join(self.path, KERAS_HUB_WEIGHTS_NAME)
        for file_name in (KERAS_HUB_WEIGHTS_NAME, KERAS_HUB_TASK_WEIGHTS_NAME):
            file_path = os.path.join(self.path, file_name)
            if file_name == KERAS_HUB_TASK_WEIGHTS_NAME and not os.path.lexists(file_path):
                continue  # a backbone preset has no task
            check_regular_file(file_path)
            weights = HDF5Weights(file_path, lambda dataset, f=file_name: _keras3_weight_name(f, dataset))
            self._readers[file_name] = weights
            for name, e in weights.entries.items():
                self.entries.append(FormEntry(name, e.dataset, e.shape, e.dtype_name,
                                              training_state=e.dataset.startswith("optimizer/")))

    def _open_flax_msgpack(self) -> None:
        check_regular_file(self.path)
        tensors = read_flax_msgpack(self.path, self.limits)
        if tensors and all(name.split("/", 1)[0] in ("embeddings", "encoder", "pooler") for name in tensors):
            tensors = {f"bert/{name}": t for name, t in tensors.items()}  # FlaxBertModel: the encoder at the top
        self._flax = tensors
        self.entries = [FormEntry(name, "", tuple(t.shape), str(t.dtype).removeprefix("torch."))
                        for name, t in tensors.items()]

    def _open_tf2(self) -> None:
        checkpoint = TFCheckpoint(self.path)
        self._readers[""] = checkpoint
        self.where = checkpoint.index_path
        names = checkpoint.variable_names()
        if not names:
            raise CheckpointError(f"{checkpoint.index_path}: a TF1 checkpoint (no object graph), not a TF2 one")
        for key, entry in checkpoint.entries.items():
            if key == OBJECT_GRAPH_KEY:
                continue
            state = key.startswith(_TF2_STATE_KEYS) or "/.OPTIMIZER_SLOT/" in key
            self.entries.append(FormEntry(names.get(key, key), key, entry.shape, entry.dtype_name, training_state=state))

    # Reading.

    def read(self, entry: FormEntry) -> torch.Tensor:
        """``entry``'s tensor in transformers' layout (transposed, its heads merged)."""
        if self.form == "flax_msgpack":
            tensor = self._flax[entry.name]
        elif self.form == "keras_hub":
            tensor = self._readers[entry.name.split("/", 1)[0]].read(entry.name)
        elif self.form in ("tf2", "saved_model"):
            tensor = self._readers[""].read(entry.key)
        else:
            tensor = self._readers[""].read(entry.name)
        return transformed(tensor, entry.transform or "as is", f"{self.where}: {entry.name!r}")

    def tensors(self, progress: bool = False) -> FormTensors:
        """Every mapped tensor, after checking what they would add up to."""
        mapped = [e for e in self.entries if e.maps_to is not None]
        self.check_sizes(mapped)
        out = FormTensors(tensors={})
        seen: dict[str, str] = {}
        for entry in mapped:
            if entry.maps_to in seen:
                raise CheckpointError(f"{self.where}: {seen[entry.maps_to]!r} and {entry.name!r} both map to "
                                      f"{entry.maps_to}; which one is the weight is unclear, so neither is used")
            seen[entry.maps_to] = entry.name
        bar = _progress_bar(len(mapped), f"reading {self.path}") if progress else None
        for entry in mapped:
            out.tensors[entry.maps_to] = self.read(entry)
            out.file_names[entry.maps_to] = entry.name
            if bar is not None:
                bar.update(1)
        if bar is not None:
            bar.close()
        out.skipped = [e.name for e in self.entries if e.training_state]
        out.unmapped = [e.name for e in self.entries if e.maps_to is None and not e.training_state]
        return out

    def check_sizes(self, entries: list[FormEntry]) -> None:
        """Refuse, before reading, tensors that add up past ``Limits.model_bytes``, or (HDF5,
        whose datasets may be compressed or left unwritten) past ``Limits.archive_ratio``
        times the files' size: weights barely compress, so more is a bomb."""
        sizes = {e.name: math.prod(e.shape) * _itemsize(e.dtype) for e in entries}
        total = sum(sizes.values())
        largest = max(sizes, key=sizes.get, default="")
        if total > self.limits.model_bytes:
            raise CheckpointError(f"{self.where}: its weights add up to {size_text(total)}, more than Limits.model_bytes="
                                  f"{size_text(self.limits.model_bytes)}; the largest is {largest!r}, shape "
                                  f"{list(next(e.shape for e in entries if e.name == largest))}")
        if self.form in ("tf_model_h5", "keras_hub"):
            files = [os.path.join(self.path, f) for f in self._readers] if self.form == "keras_hub" else [self.path]
            on_disk = sum(os.path.getsize(f) for f in files)
            if total > self.limits.archive_ratio * max(on_disk, 1):
                raise CheckpointError(
                    f"{self.where}: its datasets declare {size_text(total)} in {size_text(on_disk)} of file, "
                    f"{total // max(on_disk, 1)}x; weights barely compress, so this is refused as a bomb "
                    f"(Limits.archive_ratio={self.limits.archive_ratio} raises the bound); the largest is {largest!r}")

    def close(self) -> None:
        """Close the HDF5 files (their tensors are copies). A tensor bundle stays mapped while
        the tensors read from it, which view its shards, are alive: it is left to them."""
        for reader in self._readers.values():
            if isinstance(reader, HDF5Weights):
                reader.close()
        self._readers.clear()

    def __enter__(self) -> FormReader:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


#: TF2 checkpoint keys of training state and bookkeeping, never weights.
_TF2_STATE_KEYS = ("save_counter/", "optimizer/", "do_lower_case/", "global_step/")


def _keras2_weight_name(dataset: str) -> str | None:
    """``LAYER/MODEL_SCOPE/bert/embeddings/.../weight:0`` -> ``bert/embeddings/.../weight``."""
    parts = dataset.split("/")
    if len(parts) < 3:
        return None
    name = "/".join(parts[2:])
    head, colon, index = name.rpartition(":")
    return head if colon and index.isdigit() else name


def _keras3_weight_name(file_name: str, dataset: str) -> str:
    """``layers/transformer_encoder/...`` in model.weights.h5 -> ``model.weights.h5/layers/
    transformer_encoder_0/...``: Keras leaves a class's first instance unnumbered."""
    parts = dataset.split("/")
    if len(parts) > 1 and parts[0] == "layers" and parts[1] == "transformer_encoder":
        parts[1] = "transformer_encoder_0"
    return f"{file_name}/{'/'.join(parts)}"


def _itemsize(dtype: str) -> int:
    resolved = getattr(torch, dtype, None)
    return torch.empty((), dtype=resolved).element_size() if isinstance(resolved, torch.dtype) else 1


def _progress_bar(total: int, description: str):
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm(total=total, unit="tensor", desc=description)


# --------------------------------------------------------------------------------- config


def derived_config(reader: FormReader) -> tuple[dict, str]:
    """The BertConfig fields of a form without a BERT config, and a sentence saying where
    they came from. Sizes come from the weights' shapes (KerasHub: from its config.json,
    which the shapes must then fit); the activation is the one the writer's code computes."""
    shapes = {e.maps_to: transformed_shape(e.shape, e.transform or "as is") for e in reader.entries if e.maps_to}
    raw = {e.maps_to: e.shape for e in reader.entries if e.maps_to}
    activation = WRITERS_ACTIVATION[reader.form]
    if reader.form == "keras_hub":
        return _keras_hub_config(reader.path, activation)

    def dim(name: str, axis: int) -> int:
        shape = shapes.get(name)
        if not shape or len(shape) <= axis:
            raise CheckpointError(f"{reader.where}: {reader.form} checkpoint without {name} (the weight "
                                  f"{_file_name(reader, name)!r}); its config cannot be derived, and it is not a "
                                  f"whole BERT encoder")
        return shape[axis]

    layers = sorted({int(n.split(".")[3]) for n in shapes if n.startswith("bert.encoder.layer.")})
    if not layers or layers != list(range(len(layers))):
        raise CheckpointError(f"{reader.where}: the encoder's layers found are {layers or 'none'}, not 0..N-1; "
                              f"not a whole BERT encoder")
    query = raw.get("bert.encoder.layer.0.attention.self.query.weight")
    if not query or len(query) != 3:
        raise CheckpointError(f"{reader.where}: layer 0's query kernel is {list(query or ())}, not "
                              f"[hidden, heads, head_dim]; the number of heads cannot be derived")
    config = {
        "vocab_size": dim("bert.embeddings.word_embeddings.weight", 0),
        "hidden_size": dim("bert.embeddings.word_embeddings.weight", 1),
        "max_position_embeddings": dim("bert.embeddings.position_embeddings.weight", 0),
        "type_vocab_size": dim("bert.embeddings.token_type_embeddings.weight", 0),
        "intermediate_size": dim("bert.encoder.layer.0.intermediate.dense.weight", 0),
        "num_hidden_layers": len(layers),
        "num_attention_heads": query[1],
        "hidden_act": activation,
        "layer_norm_eps": 1e-12,
    }
    return config, (f"config derived from the weights of {reader.where} ({FORMS[reader.form].title} keeps no BERT "
                    f"config): hidden_act={activation!r}, the tanh GELU its writer computes")


def _file_name(reader: FormReader, hf_name: str) -> str:
    return next((theirs.replace("{}", "0") for ours, theirs, _ in FORM_WEIGHT_MAPS[reader.form]
                 if ours.replace("{}", "0") == hf_name), hf_name)


def _keras_hub_config(directory: str, activation: str) -> tuple[dict, str]:
    path = os.path.join(directory, "config.json")
    values = read_json(path, CheckpointError, "config file")
    if not isinstance(values, dict) or not isinstance(values.get("config"), dict):
        raise CheckpointError(f"{path}: not KerasHub's config (a JSON object with 'class_name' and 'config')")
    if values.get("class_name") != "BertBackbone":
        raise CheckpointError(f"{path}: a KerasHub {values.get('class_name')!r}, not a BertBackbone; mini_hf_bert "
                              f"reads BERT presets only")
    settings = values["config"]
    missing = [key for key in KERAS_HUB_CONFIG_FIELDS if key not in settings]
    if missing:
        raise CheckpointError(f"{path}: BertBackbone config without {', '.join(missing)}")
    config = {}
    for key, ours in KERAS_HUB_CONFIG_FIELDS.items():
        value = settings[key]
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise CheckpointError(f"{path}: {key}={value!r} must be a positive int")
        config[ours] = value
    config.update(hidden_act=activation, layer_norm_eps=1e-12)
    policy = settings.get("dtype")
    name = policy.get("config", {}).get("name") if isinstance(policy, dict) else policy
    if isinstance(name, str) and name in KERAS_HUB_DTYPES:
        config["dtype"] = KERAS_HUB_DTYPES[name]
    return config, (f"config from KerasHub's {path} (BertBackbone): hidden_act={activation!r}, the tanh GELU "
                    f"(gelu_approximate) its backbone computes")
