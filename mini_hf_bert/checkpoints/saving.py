"""Writing a model's HuggingFace directory: weights split into shards, each file written
whole under a temporary name (``file_utils``), then renamed into place, config.json last.

``PreTrainedModel.save_pretrained`` (``modeling_utils.py``) decides where the files are
staged and calls these.
"""

from __future__ import annotations

import logging
import os
import re

import torch

from ..file_utils import move_files_in, staged_file, write_json
from .hf_format import (
    CONFIG_NAME,
    SAFE_WEIGHTS_INDEX_NAME,
    SAFE_WEIGHTS_NAME,
    WEIGHTS_FILE_NAMES,
    WEIGHTS_INDEX_NAME,
    WEIGHTS_NAME,
    add_variant,
)

logger = logging.getLogger(__name__)


def _family(safe_serialization: bool, variant: str | None) -> re.Pattern:
    """The weight files one format (and variant) of save_pretrained writes: the single
    file, the shards (``model-00001-of-00003.safetensors``, ``model.v2-00001-of-00003...``)
    and the index."""
    single, index = (SAFE_WEIGHTS_NAME, SAFE_WEIGHTS_INDEX_NAME) if safe_serialization else (WEIGHTS_NAME, WEIGHTS_INDEX_NAME)
    stem, _, suffix = add_variant(single, variant).rpartition(".")
    return re.compile(rf"^({re.escape(stem)}(-\d{{5}}-of-\d{{5}})?\.{suffix}|{re.escape(add_variant(index, variant))})$")
#: Size units of max_shard_size, as transformers spells them: binary (KiB..), decimal (KB..),
#: and decimal bits (Kb.., an eighth).
_SIZE = re.compile(r"^\s*(\d+)\s*(GiB|MiB|KiB|GB|MB|KB|Gb|Mb|Kb|B)?\s*$", re.IGNORECASE)


def parse_size(value: int | str, argument: str) -> int:
    """``5 * 10**9`` / ``"5GB"`` / ``"2GiB"`` / ``"500MB"`` -> a positive number of bytes.

    transformers: ``utils.hub.convert_file_size_to_int``
    """
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    match = _SIZE.match(value) if isinstance(value, str) else None
    if not match or int(match.group(1)) <= 0:
        raise ValueError(f"{argument}={value!r} is not a size: a positive number of bytes, or e.g. '5GB', '500MB', '2GiB'")
    number, unit = int(match.group(1)), match.group(2) or "B"
    scale = {"gib": 2**30, "mib": 2**20, "kib": 2**10, "gb": 10**9, "mb": 10**6, "kb": 10**3, "b": 1}[unit.lower()]
    bits = unit.lower() in ("gb", "mb", "kb") and unit.endswith("b")  # transformers: a lower-case b is bits
    return number * scale // (8 if bits else 1)


def write_weights(directory: str, config, shards: list[dict[str, torch.Tensor]], state_dict: dict[str, torch.Tensor],
                  safe_serialization: bool, variant: str | None = None, generation_config=None) -> list[str]:
    """Write config.json, the weight file(s) and, for several shards, the index, each
    atomically, and a generative model's ``generation_config`` (its ``save_pretrained``);
    return the names written besides config.json. ``variant`` names the files as
    transformers does (``model.v2.safetensors``, ``model.v2-00001-of-00005.safetensors``,
    ``model.safetensors.index.v2.json``).

    transformers: none (``save_pretrained`` writes inline)
    """
    from safetensors.torch import save_file

    config.save_pretrained(directory)
    single = add_variant(SAFE_WEIGHTS_NAME if safe_serialization else WEIGHTS_NAME, variant)
    stem, _, suffix = single.rpartition(".")
    names = [single] if len(shards) == 1 else [f"{stem}-{i + 1:05d}-of-{len(shards):05d}.{suffix}" for i in range(len(shards))]
    for name, shard in zip(names, shards):
        with staged_file(os.path.join(directory, name)) as staged:
            if safe_serialization:
                save_file(shard, staged, metadata={"format": "pt"})
            else:
                torch.save(shard, staged)
    if len(shards) > 1:
        index_name = add_variant(SAFE_WEIGHTS_INDEX_NAME if safe_serialization else WEIGHTS_INDEX_NAME, variant)
        index = {
            "metadata": {"total_size": sum(t.numel() * t.element_size() for t in state_dict.values())},
            "weight_map": {key: name for name, shard in zip(names, shards) for key in shard},
        }
        write_json(os.path.join(directory, index_name), index, sort_keys=True)
        names.append(index_name)
    if generation_config is not None:
        names.append(os.path.basename(generation_config.save_pretrained(directory)))
    return names


def move_weights_in(staging: str, directory: str, names: list[str], safe_serialization: bool,
                    variant: str | None = None) -> None:
    """Rename a save's finished files from ``staging`` into ``directory`` (weights, then
    config.json), then clear out this format's earlier files (``keep_or_remove_other_weights``).

    Whole or not at all (``file_utils.move_files_in``): Ctrl-C waits for the end of this
    step, and a save killed half-way is refused by loaders (``resolve.check_not_moving_in``)
    rather than read as one save's config with the other's weights.

    transformers: none
    """
    move_files_in(staging, directory, [*names, CONFIG_NAME],
                  finish=lambda: keep_or_remove_other_weights(directory, names, safe_serialization, variant))


def keep_or_remove_other_weights(directory: str, written: list[str], safe_serialization: bool,
                                 variant: str | None = None) -> None:
    """After a save: remove the earlier single file, shards and index of the format (and
    variant) just written that this save did not rewrite (a loader would read them first,
    or read stale shards); keep every other weights file (other variants silently, as
    transformers), and say which one a loader will read.

    transformers: none (``save_pretrained`` removes its own earlier shards inline)
    """
    own = _family(safe_serialization, variant)
    for name in sorted(os.listdir(directory)):
        path = os.path.join(directory, name)
        if name in written or not os.path.isfile(path) or os.path.islink(path):
            continue
        if own.match(name):
            os.remove(path)  # this format's earlier save: superseded by the files just written
        elif variant is None and _family(not safe_serialization, None).match(name):
            first = next((n for n in WEIGHTS_FILE_NAMES if os.path.isfile(os.path.join(directory, n))), None)
            read = "" if first in written else f"; from_pretrained reads {first} first, not the weights just written"
            logger.warning("%s: kept %s, a weights file this save did not write%s", directory, name, read)


def split_into_shards(state_dict: dict[str, torch.Tensor], limit: int) -> list[dict[str, torch.Tensor]]:
    """Consecutive groups of tensors, each at most ``limit`` bytes (a larger tensor alone).

    transformers: none (huggingface_hub's ``split_torch_state_dict_into_shards``)
    """
    shards: list[dict[str, torch.Tensor]] = [{}]
    size = 0
    for key, tensor in state_dict.items():
        nbytes = tensor.numel() * tensor.element_size()
        if shards[-1] and size + nbytes > limit:
            shards.append({})
            size = 0
        shards[-1][key] = tensor
        size += nbytes
    return shards
