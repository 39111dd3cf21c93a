"""``attn_implementation="sdpa"``: attention through PyTorch's fused kernel.

transformers: ``integrations/sdpa_attention.py``
"""

from __future__ import annotations

import torch
from torch import nn


def sdpa_attention_forward(
    module: nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    scaling: float,
    dropout: nn.Dropout,
    head_mask: torch.Tensor | None = None,
    position_bias: torch.Tensor | None = None,
) -> tuple[torch.Tensor, None]:
    """The same function through PyTorch's fused kernel; it never materialises the
    probabilities, so it returns None for them and cannot apply a head mask; relative
    position scores are left to eager too (callers fall back).

    transformers: ``integrations.sdpa_attention.sdpa_attention_forward``
    """
    if head_mask is not None or position_bias is not None:
        raise ValueError("sdpa attention applies neither a head_mask nor relative positions; use eager")
    context = nn.functional.scaled_dot_product_attention(
        query,
        key,
        value,
        attn_mask=attention_mask,  # the same additive float mask, broadcastable to (B, N, T, S)
        dropout_p=dropout.p if module.training else 0.0,
        scale=scaling,
    )  # (B, N, T, D)
    return context, None
