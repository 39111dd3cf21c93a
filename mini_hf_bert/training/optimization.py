"""Optimisers and learning-rate schedules for training BERT.

Two recipes, side by side:

* **transformers'**: ``torch.optim.AdamW`` (bias-corrected Adam, decoupled weight decay)
  with ``get_linear_schedule_with_warmup``: the learning rate climbs linearly from 0 to its
  peak over the warm-up steps, then falls linearly to 0 at the last step.
* **Google's** (google-research/bert ``optimization.py``): ``AdamWeightDecay``, Adam
  *without* bias correction, ε = 1e-6, weight decay added to the update (not to the loss)
  and skipped for LayerNorm weights and biases; with ``get_google_schedule``: linear
  warm-up, and a linear decay that runs from the first step (lr · (1 − step / total)), not
  from the end of the warm-up.

Both clip the gradients to a global norm of 1.0 before the update
(``torch.nn.utils.clip_grad_norm_``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import torch
from torch import nn
from torch.optim.lr_scheduler import LambdaLR

#: Google's names for the parameters weight decay skips (its ``exclude_from_weight_decay``).
NO_DECAY_PATTERNS = ("LayerNorm", "layer_norm", "bias")
#: Google's Adam hyper-parameters (``create_optimizer``).
GOOGLE_BETAS = (0.9, 0.999)
GOOGLE_EPS = 1e-6
GOOGLE_WEIGHT_DECAY = 0.01
#: The global gradient norm both recipes clip to.
MAX_GRAD_NORM = 1.0


def parameter_groups(model: nn.Module, weight_decay: float = GOOGLE_WEIGHT_DECAY) -> list[dict]:
    """The model's trainable parameters in two groups: with ``weight_decay``, and without it
    for LayerNorm weights and biases (matched by name, as Google does).

    transformers: none (its ``Trainer.get_decay_parameter_names`` does the same by module type)
    """
    decay, no_decay = [], []
    for name, parameter in model.named_parameters():
        if not parameter.requires_grad:
            continue
        (no_decay if any(re.search(p, name) for p in NO_DECAY_PATTERNS) else decay).append(parameter)
    return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]


class AdamWeightDecay(torch.optim.Optimizer):
    """Google's BERT optimiser: Adam without bias correction, decoupled weight decay.

    m ← β₁·m + (1 − β₁)·g,   v ← β₂·v + (1 − β₂)·g²,   θ ← θ − lr·(m / (√v + ε) + λ·θ)

    transformers: none (google-research/bert: ``optimization.AdamWeightDecayOptimizer``)

    Args:
        params: parameters or groups (``parameter_groups(model)`` skips decay where Google does).
        lr: the learning rate (a scheduler may change it per step).
        betas, eps: Adam's; Google's defaults.
        weight_decay: λ, for groups that do not set their own.
    """

    def __init__(self, params: Iterable, lr: float = 1e-4, betas: tuple[float, float] = GOOGLE_BETAS,
                 eps: float = GOOGLE_EPS, weight_decay: float = GOOGLE_WEIGHT_DECAY) -> None:
        if lr < 0 or eps < 0 or weight_decay < 0 or not all(0 <= b < 1 for b in betas):
            raise ValueError(f"AdamWeightDecay: lr={lr}, betas={betas}, eps={eps}, weight_decay={weight_decay} "
                             f"must be >= 0, with betas in [0, 1)")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for parameter in group["params"]:
                if parameter.grad is None:
                    continue
                state = self.state[parameter]
                if not state:
                    state["exp_avg"] = torch.zeros_like(parameter)
                    state["exp_avg_sq"] = torch.zeros_like(parameter)
                m, v = state["exp_avg"], state["exp_avg_sq"]
                m.mul_(beta1).add_(parameter.grad, alpha=1 - beta1)  # m ← β₁m + (1 − β₁)g
                v.mul_(beta2).addcmul_(parameter.grad, parameter.grad, value=1 - beta2)  # v ← β₂v + (1 − β₂)g²
                update = m / (v.sqrt() + group["eps"])  # no bias correction: Google's choice
                if group["weight_decay"]:
                    update = update + group["weight_decay"] * parameter  # decay on θ, not through the loss
                parameter.sub_(group["lr"] * update)
        return loss


def get_linear_schedule_with_warmup(optimizer: torch.optim.Optimizer, num_warmup_steps: int, num_training_steps: int,
                                    last_epoch: int = -1) -> LambdaLR:
    """lr · step / warm-up during the warm-up, then lr · (total − step) / (total − warm-up).

    transformers: ``optimization.get_linear_schedule_with_warmup``
    """
    _check_steps(num_warmup_steps, num_training_steps)

    def factor(step: int) -> float:
        if step < num_warmup_steps:
            return step / max(1, num_warmup_steps)
        return max(0.0, (num_training_steps - step) / max(1, num_training_steps - num_warmup_steps))

    return LambdaLR(optimizer, factor, last_epoch)


def get_google_schedule(optimizer: torch.optim.Optimizer, num_warmup_steps: int, num_training_steps: int,
                        last_epoch: int = -1) -> LambdaLR:
    """Google's: lr · step / warm-up during the warm-up, else lr · (1 − step / total).

    transformers: none (google-research/bert: ``optimization.create_optimizer``'s
    ``polynomial_decay`` with power 1 and its warm-up)
    """
    _check_steps(num_warmup_steps, num_training_steps)

    def factor(step: int) -> float:
        if step < num_warmup_steps:
            return step / num_warmup_steps
        return max(0.0, 1.0 - min(step, num_training_steps) / num_training_steps)

    return LambdaLR(optimizer, factor, last_epoch)


def _check_steps(num_warmup_steps: int, num_training_steps: int) -> None:
    if not isinstance(num_training_steps, int) or num_training_steps < 1:
        raise ValueError(f"num_training_steps must be a positive int, got {num_training_steps!r}")
    if not isinstance(num_warmup_steps, int) or not 0 <= num_warmup_steps <= num_training_steps:
        raise ValueError(f"num_warmup_steps must be an int from 0 to num_training_steps ({num_training_steps}), "
                         f"got {num_warmup_steps!r}")
