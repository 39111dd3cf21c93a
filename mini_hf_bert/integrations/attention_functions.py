"""Attention implementations by name: ``ALL_ATTENTION_FUNCTIONS``, which ``modeling_utils``
offers as transformers' does, and the lookup every attention module makes.

transformers: ``modeling_utils.AttentionInterface`` and ``ALL_ATTENTION_FUNCTIONS``
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from .model_forwards import ALL_MODEL_FORWARDS
from .sdpa_attention import sdpa_attention_forward


class AttentionInterface(dict):
    """``attn_implementation`` name -> attention function, for every model.

    A model writes its own ``"eager"`` function (``modeling_bert.eager_attention_forward``)
    and looks any other name up here; an implementation registers itself by name
    (``integrations/``), so the model file never lists them. Every function takes
    ``(query, key, value, attention_mask, scaling, dropout)`` and returns the
    context (B, N, T, D) and the probabilities (B, N, T, S) or None.

    transformers: ``modeling_utils.AttentionInterface``
    """

    def register(self, name: str, function: Callable[..., tuple[torch.Tensor, torch.Tensor | None]]) -> None:
        self[name] = function


ALL_ATTENTION_FUNCTIONS = AttentionInterface(sdpa=sdpa_attention_forward)


def attention_function(name: str, eager: Callable[..., tuple[torch.Tensor, torch.Tensor]],
                       ) -> Callable[..., tuple[torch.Tensor, torch.Tensor | None]]:
    """The attention function of ``attn_implementation=name``: ``eager`` (the model's own) for
    ``"eager"``, a registered one, or the one a whole-model forward's layers attend with
    (``ALL_MODEL_FORWARDS.layer_attention``: "fast" -> "sdpa").

    transformers: none (``ALL_ATTENTION_FUNCTIONS[name]`` inline)
    """
    if name == "eager":
        return eager
    return ALL_ATTENTION_FUNCTIONS[ALL_MODEL_FORWARDS.layer_attention.get(name, name)]
