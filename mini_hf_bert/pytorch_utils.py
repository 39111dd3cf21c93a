"""Tensor helpers the model file uses, as transformers' ``pytorch_utils.py``: the
feed-forward run in chunks, a layer run under activation checkpointing, the Linear layer
cut down when heads are pruned, and the shape check whose message names the dimensions."""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable, Sequence
from typing import Any, Unpack

import torch
import torch.utils.checkpoint
from torch import nn


def apply_chunking_to_forward(
    forward_fn: Callable[..., torch.Tensor],
    chunk_size: int,
    chunk_dim: int,
    *input_tensors: torch.Tensor,
) -> torch.Tensor:
    """Run ``forward_fn`` on slices of ``input_tensors`` along ``chunk_dim`` and concatenate.

    The feed-forward acts on each position independently, so cutting the sequence into
    chunks gives the same result with a (B, chunk, I) intermediate activation instead of
    (B, T, I): memory for time (Kitaev et al., 2020, "Reformer"). ``chunk_size=0`` runs
    the whole tensor at once.

    transformers: ``pytorch_utils.apply_chunking_to_forward``
    """
    if chunk_size == 0:
        return forward_fn(*input_tensors)
    lengths = {t.shape[chunk_dim] for t in input_tensors}
    if len(lengths) != 1:
        raise ValueError(f"all input tensors must have the same size along dim {chunk_dim}, got {sorted(lengths)}")
    chunks = zip(*(t.split(chunk_size, dim=chunk_dim) for t in input_tensors))
    return torch.cat([forward_fn(*chunk) for chunk in chunks], dim=chunk_dim)


def checkpointed_call(module: nn.Module, *args: object, offload: bool = False, **checkpoint_kwargs: object) -> object:
    """``module(*args)`` through ``torch.utils.checkpoint.checkpoint``: its activations are
    recomputed in the backward pass instead of kept (Chen et al., 2016). With ``offload``,
    what the recomputation needs waits in host memory (``save_on_cpu``, pinned when an
    accelerator is there to copy back to).

    transformers: ``modeling_utils.PreTrainedModel._activation_checkpointing_enable`` (the function it installs)
    """
    if not offload:
        return torch.utils.checkpoint.checkpoint(module, *args, **checkpoint_kwargs)
    with torch.autograd.graph.save_on_cpu(pin_memory=torch.accelerator.is_available()):
        return torch.utils.checkpoint.checkpoint(module, *args, **checkpoint_kwargs)


class GradientCheckpointingLayer(nn.Module):
    """A block that activation checkpointing can wrap: ``gradient_checkpointing`` and the
    function that checkpoints it, ``_gradient_checkpointing_func`` (``checkpointed_call``
    with the model's arguments), both set by ``PreTrainedModel.activation_checkpointing_enable``.
    The encoder's loop reads them and calls ``checkpointed_module_call``.

    transformers: ``modeling_layers.GradientCheckpointingLayer`` (which wraps ``forward`` itself)
    """

    gradient_checkpointing = False
    _gradient_checkpointing_func: Callable[..., object] = staticmethod(checkpointed_call)


def checkpointed_module_call(module: GradientCheckpointingLayer, *args: object) -> object:
    """``module(*args)`` with its forward run through ``module._gradient_checkpointing_func``.

    The module's hooks run once, around the call, and not again when the backward pass
    recomputes the forward (transformers 5.x keeps them outside the checkpoint alike, for
    FSDP's hooks). Pass the tensors that need gradients positionally: re-entrant
    checkpointing tracks only positional arguments. The forward is set on the instance for
    the one call, and whatever forward the instance had before (accelerate's) comes back.

    transformers: ``GradientCheckpointingLayer``'s wrapped ``forward``
    """
    own = module.__dict__.get("forward")
    module.forward = functools.partial(module._gradient_checkpointing_func, module.forward)
    try:
        return module(*args)
    finally:
        if own is None:
            del module.forward
        else:
            module.forward = own


def prune_linear_layer(layer: nn.Linear, index: torch.Tensor, dim: int = 0) -> nn.Linear:
    """A new Linear keeping only ``index`` along ``dim`` of the weight (0: outputs, 1: inputs).

    Pruning heads keeps the rows of Q, K, V for the surviving heads (dim 0) and the
    matching input columns of the output projection (dim 1).

    transformers: ``pytorch_utils.prune_linear_layer``
    """
    weight = layer.weight.index_select(dim, index).detach().clone()
    bias = layer.bias.detach().clone() if dim == 1 else layer.bias[index].detach().clone()
    out_features, in_features = weight.shape
    new = nn.Linear(in_features, out_features, device=weight.device, dtype=weight.dtype)
    with torch.no_grad():
        new.weight.copy_(weight)
        new.bias.copy_(bias)
    return new


def check_shape(name: str, tensor: torch.Tensor, expected: Sequence[int | None], meaning: str) -> None:
    """Raise ValueError unless ``tensor.shape`` matches ``expected`` (None = any size).

    ``meaning`` names the dimensions, e.g. ``"(batch, seq)"``, so the message reads
    "attention_mask must be (batch, seq) = (2, 8), got (2, 7)".

    transformers: none
    """
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(tensor).__name__}")
    shape = tuple(tensor.shape)
    ok = len(shape) == len(expected) and all(e is None or s == e for s, e in zip(shape, expected))
    if not ok:
        want = "(" + ", ".join("*" if e is None else str(e) for e in expected) + ")"
        raise ValueError(f"{name} must be {meaning} = {want}, got shape {shape}")


def token_cross_entropy(logits: torch.Tensor, labels: torch.Tensor,
                        num_items_in_batch: int | torch.Tensor | None = None) -> torch.Tensor:
    """Cross-entropy of (N, C) logits against (N,) labels, ignoring label -100: the mean over
    the labelled tokens; or, given ``num_items_in_batch`` (the labelled tokens of every
    micro-batch that one optimizer step accumulates, as transformers' Trainer counts them),
    their sum divided by it, so that the accumulated micro-batches' losses add up to the
    whole batch's mean, however the labelled tokens fall among them.

    transformers: ``loss.loss_utils.fixed_cross_entropy``
    """
    if num_items_in_batch is None:
        return nn.functional.cross_entropy(logits, labels)
    if torch.is_tensor(num_items_in_batch):
        num_items_in_batch = num_items_in_batch.to(logits.device)
    return nn.functional.cross_entropy(logits, labels, reduction="sum") / num_items_in_batch


def keyword_names(function: Callable[..., Any]) -> set[str]:
    """Every keyword ``function`` takes: its named parameters, and the keys of the TypedDict
    its ``**kwargs: Unpack[...]`` names.

    transformers: none
    """
    names = set()
    for parameter in inspect.signature(function, eval_str=True).parameters.values():
        if parameter.kind is parameter.VAR_KEYWORD and typing.get_origin(parameter.annotation) is Unpack:
            group = typing.get_args(parameter.annotation)[0]
            names |= group.__required_keys__ | group.__optional_keys__
        elif parameter.kind is not parameter.VAR_KEYWORD:
            names.add(parameter.name)
    return names
