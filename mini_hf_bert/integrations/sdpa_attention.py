"""``attn_implementation="sdpa"``: attention through PyTorch's fused kernel.

transformers: ``integrations/sdpa_attention.py``
"""

from __future__ import annotations

import torch
from torch import nn


def sdpa_attention_forward(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    scaling: float,
    dropout: nn.Dropout,
) -> tuple[torch.Tensor, None]:
    """The same function through PyTorch's fused kernel; it never materialises the
    probabilities, so it returns None for them.

    transformers: ``integrations.sdpa_attention.sdpa_attention_forward``
    """
    context = nn.functional.scaled_dot_product_attention(
        query,
        key,
        value,
        attn_mask=attention_mask,  # the same additive float mask, broadcastable to (B, N, T, S)
        dropout_p=dropout.p if dropout.training else 0.0,  # the module's mode, as nn.Dropout reads it
        scale=scaling,
    )  # (B, N, T, D)
    return context, None
