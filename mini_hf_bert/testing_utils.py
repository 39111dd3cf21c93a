"""Checkpoints written the way the HuggingFace hub publishes them, for tests and benchmarks.

The machine this project is tested on cannot reach the hub, so bert-base-sized
checkpoints are written at test time by transformers itself (a dev dependency, imported
only inside these functions), in the exact layout of the hub's 2019 bert-base-uncased
``pytorch_model.bin``: LayerNorm ``gamma``/``beta``, the ``bert.`` prefix, the tied
``cls.predictions.decoder.bias`` absent, the decoder weight stored once (it shares the
word embeddings' storage), and the ``position_ids`` buffer present.
"""

from __future__ import annotations

import os

import torch


def to_hub_legacy_layout(state_dict: dict[str, torch.Tensor], max_position_embeddings: int = 512) -> dict[str, torch.Tensor]:
    """Rewrite a transformers 5.x ``BertForPreTraining`` state dict in the hub's legacy names.

    Tensors are not copied, so tied ones still share storage and ``torch.save`` writes
    them once, as the hub file does (440,473,133 bytes for bert-base-uncased).
    """
    legacy = {}
    for key, tensor in state_dict.items():
        if key == "cls.predictions.decoder.bias":
            continue  # tied to cls.predictions.bias; the 2019 file does not hold it
        if key.endswith("LayerNorm.weight"):
            key = key[: -len("weight")] + "gamma"
        elif key.endswith("LayerNorm.bias"):
            key = key[: -len("bias")] + "beta"
        legacy[key] = tensor
    legacy["bert.embeddings.position_ids"] = torch.arange(max_position_embeddings).expand((1, -1))
    return legacy


def write_hub_legacy_checkpoint(directory: str | os.PathLike, seed: int = 1234, **config_kwargs) -> str:
    """Write ``config.json`` + ``pytorch_model.bin`` of a seeded random transformers
    ``BertForPreTraining`` (bert-base-uncased's shape unless ``config_kwargs`` say
    otherwise) in the hub's legacy layout; return the directory."""
    import transformers

    directory = os.fspath(directory)
    os.makedirs(directory, exist_ok=True)
    torch.manual_seed(seed)
    config = transformers.BertConfig(**config_kwargs)  # the defaults are bert-base-uncased's
    model = transformers.BertForPreTraining(config)
    config.architectures = ["BertForPreTraining"]
    config.save_pretrained(directory)
    state = to_hub_legacy_layout(model.state_dict(), config.max_position_embeddings)
    torch.save(state, os.path.join(directory, "pytorch_model.bin"))
    return directory


def write_transformers_safetensors_checkpoint(directory: str | os.PathLike, seed: int = 1234, **config_kwargs) -> str:
    """Write the same seeded model with transformers 5.x's own ``save_pretrained``
    (``model.safetensors``, current names); return the directory."""
    import transformers

    directory = os.fspath(directory)
    torch.manual_seed(seed)
    model = transformers.BertForPreTraining(transformers.BertConfig(**config_kwargs))
    model.save_pretrained(directory)
    return directory
