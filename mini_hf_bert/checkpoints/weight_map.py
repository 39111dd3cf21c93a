"""Fit a checkpoint's tensor names to a model's parameter names, from tables.

mini_hf_bert's parameter names *are* transformers' names (``encoder.layer.0.attention.
self.query.weight``), so a current HF state dict needs no renaming at all. What
real checkpoints on the hub still carry, and how each is handled:

==========================================  ===========================================
in the checkpoint                           what happens
==========================================  ===========================================
``...LayerNorm.gamma`` / ``.beta``           renamed to ``.weight`` / ``.bias`` (names from
                                            Google's TF scopes, kept by the first PyTorch
                                            port; bert-base-uncased's ``pytorch_model.bin``)
``bert.`` prefix, target is ``BertModel``    stripped (checkpoint saved from a head model)
no prefix, target has a ``.bert`` module     added (checkpoint saved from ``BertModel``)
``embeddings.position_ids``                  dropped: a buffer computed at init, persistent
                                            in transformers < 4.31
==========================================  ===========================================

The tables below are the single place these rules live; ``fit_checkpoint_keys``
only applies them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import torch

#: Legacy name endings -> current ones. Applied to the end of a key only.
LEGACY_SUFFIX_RENAMES: dict[str, str] = {
    "LayerNorm.gamma": "LayerNorm.weight",
    "LayerNorm.beta": "LayerNorm.bias",
}

#: Key endings that are buffers derived from the config, not learned weights:
#: dropped on load, reported at debug level (they are expected in old checkpoints).
DERIVED_BUFFER_SUFFIXES: tuple[str, ...] = (
    "embeddings.position_ids",
)


@dataclass
class FittedCheckpoint:
    """A checkpoint's tensors under the model's names, with a record of what changed."""

    tensors: dict[str, torch.Tensor]
    renamed: list[tuple[str, str]] = field(default_factory=list)  # (name in file, name in model)
    dropped_buffers: list[str] = field(default_factory=list)

    def name_in_file(self, key: str) -> str:
        """The checkpoint's own name for ``key`` (what a user will find in the file)."""
        return dict((new, old) for old, new in self.renamed).get(key, key)


def fit_checkpoint_keys(
    checkpoint: dict[str, torch.Tensor],
    model_keys: Iterable[str],
    base_model_prefix: str,
) -> FittedCheckpoint:
    """Rename ``checkpoint``'s keys to the names ``model_keys`` uses.

    Args:
        checkpoint: name -> tensor as read from the file.
        model_keys: the target model's ``state_dict()`` keys.
        base_model_prefix: the attribute holding the encoder in head models (``"bert"``).

    Returns:
        The tensors under their new names. Keys that fit nothing keep their name, so the
        caller can report them as unexpected.
    """
    model_keys = set(model_keys)
    prefix = base_model_prefix + "."
    model_is_prefixed = any(k.startswith(prefix) for k in model_keys)

    fitted = FittedCheckpoint(tensors={})
    for original, tensor in checkpoint.items():
        key = original
        for old, new in LEGACY_SUFFIX_RENAMES.items():
            if key.endswith(old):
                key = key[: -len(old)] + new
        if key.endswith(DERIVED_BUFFER_SUFFIXES):
            fitted.dropped_buffers.append(original)
            continue
        if model_is_prefixed and not key.startswith(prefix) and prefix + key in model_keys:
            key = prefix + key  # BertModel checkpoint -> head model
        elif not model_is_prefixed and key.startswith(prefix):
            key = key[len(prefix):]  # head-model checkpoint -> BertModel
        if key in fitted.tensors:
            raise ValueError(f"two checkpoint tensors map to the same model name {key!r}")
        if key != original:
            fitted.renamed.append((original, key))
        fitted.tensors[key] = tensor
    return fitted
