"""Watch the numbers flow: every module's output, in the order the modules ran.

An activation cache in the manner of TransformerLens' ``run_with_cache``, but on the real
module tree, whose paths are the checkpoint's own names::

    with trace(model) as t:
        model(**batch)
    t["encoder.layer.0.attention.self"]      # (B, T, H): the context, heads concatenated
    t.output("encoder.layer.0.attention.self")  # the whole output: (context, probs, cache)
    for record in t.records: ...             # path, class, shape, dtype, mean/std/min/max

``compare_traces`` puts two traces side by side, module by module (mini_hf_bert and
transformers share every path), and ``first_divergence`` names the module that computed
the first output beyond tolerance: the one to read when two implementations disagree.
``python -m mini_hf_bert trace "text" --compare`` and ``... parity`` print these tables.

The attention probabilities are no module's output: softmax is a function. The trace
records them where they enter the attention's ``Dropout`` (its input, before any dropout),
in a row labelled "attention probabilities". transformers 5.x applies that dropout as a
function and never calls the module, so its side of the row is read from what its
``BertSelfAttention`` returns (the weights, second).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

from ..parity.compare import FP32_ATOL, max_abs_diff

#: The Dropout whose input is the attention probabilities (B, N, T, S), and the row's label.
_ATTENTION_DROPOUT = re.compile(r"attention\.self\.dropout$")
ATTENTION_PROBABILITIES = "attention probabilities"


@dataclass
class ModuleRecord:
    """One module call: where it sits, what it returned, and a summary of the numbers."""

    path: str  # e.g. "encoder.layer.0.attention.self"; "" is the traced model itself
    class_name: str
    depth: int  # nesting level, 0 for the model's direct children
    started: int  # order in which calls began (pre-order: a parent before its children)
    finished: int = -1  # order in which calls returned (a child before its parent)
    output: Any = None  # what forward returned, tensors detached
    tensor: torch.Tensor | None = None  # the first tensor of the output: what the tables describe

    @property
    def shape(self) -> tuple[int, ...] | None:
        return None if self.tensor is None else tuple(self.tensor.shape)

    @property
    def dtype(self) -> torch.dtype | None:
        return None if self.tensor is None else self.tensor.dtype

    def stats(self) -> dict[str, float]:
        """mean, std, min, max over every element, computed in float64."""
        if self.tensor is None or not self.tensor.is_floating_point() or self.tensor.numel() == 0:
            return {}
        x = self.tensor.double()
        std = x.std().item() if x.numel() > 1 else 0.0
        return {"mean": x.mean().item(), "std": std, "min": x.min().item(), "max": x.max().item()}


@dataclass
class Trace(Mapping):
    """Module path -> its output tensor, for every module that ran; ``records`` in call order.

    A module called more than once (a shared module) gets ``path``, ``path@2``, ``path@3``.
    """

    records: list[ModuleRecord] = field(default_factory=list)

    def _by_path(self) -> dict[str, ModuleRecord]:
        return {r.path: r for r in self.records}

    def __getitem__(self, path: str) -> torch.Tensor:
        record = self._by_path().get(path)
        if record is None:
            raise KeyError(f"{path!r}: no module of that path ran; the traced paths start "
                           f"{', '.join(repr(r.path) for r in self.records[:4])}, ...")
        return record.tensor

    def __iter__(self) -> Iterator[str]:
        return (r.path for r in self.records)

    def __len__(self) -> int:
        return len(self.records)

    def record(self, path: str) -> ModuleRecord:
        self[path]  # the KeyError with its message
        return self._by_path()[path]

    def output(self, path: str) -> Any:
        """The module's whole output (a tuple or a ModelOutput for many), tensors detached."""
        return self.record(path).output


def _detach(output: Any) -> Any:
    if isinstance(output, torch.Tensor):
        return output.detach()
    if isinstance(output, tuple) and not hasattr(output, "_fields"):
        return tuple(_detach(o) for o in output)
    if isinstance(output, list):
        return [_detach(o) for o in output]
    if isinstance(output, dict):  # ModelOutput is a dict as well
        return {k: _detach(v) for k, v in output.items()}
    return output


def _first_tensor(output: Any) -> torch.Tensor | None:
    """The tensor a module's output is about: itself, the first of a tuple, or a model
    output's ``last_hidden_state`` (else its first field)."""
    if isinstance(output, torch.Tensor):
        return output
    if isinstance(output, dict):
        if "last_hidden_state" in output:
            return output["last_hidden_state"]
        output = list(output.values())
    if isinstance(output, (tuple, list)):
        for item in output:
            found = _first_tensor(item)
            if found is not None:
                return found
    return None


@contextmanager
def trace(model: nn.Module, include_root: bool = False) -> Iterator[Trace]:
    """Record the output of every submodule of ``model`` while the block runs.

    Args:
        model: any nn.Module; paths are its ``named_modules()`` names.
        include_root: also record ``model`` itself, under the path "".

    Yields:
        A Trace, filled as the model runs and complete when the block ends. The hooks are
        removed on the way out, also when the block raises.
    """
    result = Trace()
    handles = []
    open_calls: dict[int, list[ModuleRecord]] = {}
    counter = {"started": 0, "finished": 0}
    seen: dict[str, int] = {}

    def pre_hook(path: str, depth: int) -> Callable:
        def hook(module: nn.Module, args: Any) -> None:
            seen[path] = seen.get(path, 0) + 1
            name = path if seen[path] == 1 else f"{path}@{seen[path]}"
            record = ModuleRecord(name, type(module).__name__, depth, counter["started"])
            counter["started"] += 1
            result.records.append(record)
            open_calls.setdefault(id(module), []).append(record)

        return hook

    def post_hook(module: nn.Module, args: Any, output: Any) -> None:
        record = open_calls[id(module)].pop()
        record.finished = counter["finished"]
        counter["finished"] += 1
        if _ATTENTION_DROPOUT.search(record.path) and args and isinstance(args[0], torch.Tensor):
            output = args[0]  # the probabilities as softmax left them, before dropout
            record.class_name = ATTENTION_PROBABILITIES
        record.output = _detach(output)
        record.tensor = _first_tensor(record.output)

    for path, module in model.named_modules():
        if not path and not include_root:
            continue
        depth = path.count(".") if path else -1
        handles.append(module.register_forward_pre_hook(pre_hook(path, depth)))
        handles.append(module.register_forward_hook(post_hook))
    try:
        yield result
    finally:
        for handle in handles:
            handle.remove()


def run_with_cache(model: nn.Module, **inputs: torch.Tensor) -> tuple[Any, Trace]:
    """``model(**inputs)`` without gradients, and the Trace of that call (TransformerLens' name)."""
    with torch.no_grad(), trace(model) as cache:
        output = model(**inputs)
    return output, cache


# --------------------------------------------------------------------------------------
# Two traces side by side
# --------------------------------------------------------------------------------------


@dataclass
class ModuleDiff:
    """One module of our trace against the same path in the other: max |diff| or why not compared."""

    record: ModuleRecord
    max_abs_diff: float | None  # None: the other side has no such module output
    atol: float = FP32_ATOL

    @property
    def compared(self) -> bool:
        return self.max_abs_diff is not None

    @property
    def ok(self) -> bool:
        return not self.compared or (math.isfinite(self.max_abs_diff) and self.max_abs_diff <= self.atol)


def compare_traces(ours: Trace, theirs: Trace, atol: float = FP32_ATOL) -> list[ModuleDiff]:
    """Every module of ``ours``, in our call order, with max |diff| against ``theirs``'s
    module of the same path (inf if the shapes differ or a side has NaN)."""
    other = theirs._by_path()
    diffs = []
    for record in ours.records:
        match = other.get(record.path)
        their_tensor = None if match is None else match.tensor
        if their_tensor is None and record.class_name == ATTENTION_PROBABILITIES:
            their_tensor = _returned_probabilities(other.get(record.path.rsplit(".", 1)[0]))
        if record.tensor is None or their_tensor is None:
            diffs.append(ModuleDiff(record, None, atol))
        else:
            diffs.append(ModuleDiff(record, max_abs_diff(record.tensor, their_tensor), atol))
    return diffs


def _returned_probabilities(attention: ModuleRecord | None) -> torch.Tensor | None:
    """The probabilities a self-attention module returned second, (B, N, T, S), if it did."""
    output = None if attention is None else attention.output
    if isinstance(output, (tuple, list)) and len(output) > 1 and isinstance(output[1], torch.Tensor):
        return output[1] if output[1].dim() == 4 else None
    return None


def first_divergence(diffs: list[ModuleDiff]) -> ModuleDiff | None:
    """The module that *computed* the first output beyond tolerance: the earliest to
    finish, so a leaf (``...intermediate.dense``) is named rather than the layer or the
    encoder around it, whose outputs diverge only because it did."""
    bad = [d for d in diffs if not d.ok]
    return min(bad, key=lambda d: d.record.finished) if bad else None


# --------------------------------------------------------------------------------------
# Tables
# --------------------------------------------------------------------------------------


def _shape(shape: tuple[int, ...] | None) -> str:
    return "-" if shape is None else "(" + ", ".join(str(s) for s in shape) + ")"


def format_trace(
    ours: Trace, diffs: list[ModuleDiff] | None = None, indent: bool = True, match: str | None = None
) -> str:
    """One line per module call: path, class, shape, dtype, mean/std/min/max, and with
    ``diffs`` the max |diff| against the other trace; the first divergence (of the whole
    run) is marked. ``match``: a regular expression; only paths it finds are shown."""
    rows = diffs if diffs is not None else [ModuleDiff(r, None) for r in ours.records]
    first = first_divergence(rows) if diffs is not None else None
    if match is not None:
        try:
            pattern = re.compile(match)
        except re.error as e:
            raise ValueError(f"--match {match!r}: not a regular expression ({e})") from None
        rows = [r for r in rows if pattern.search(r.record.path)]
        if not rows:
            raise ValueError(f"--match {match!r} matches no module path (e.g. 'encoder.layer.0.attention')")
    names = [("  " * r.record.depth if indent else "") + r.record.path for r in rows]
    width = max([len(n) for n in names] + [len("module")])
    class_width = max([len(r.record.class_name) for r in rows] + [len("class")])
    shapes = [_shape(r.record.shape) for r in rows]
    shape_width = max([len(s) for s in shapes] + [len("shape")])
    header = (f"{'module':<{width}}  {'class':<{class_width}}  {'shape':<{shape_width}}  {'dtype':<8}  "
              f"{'mean':>10}  {'std':>9}  {'min':>10}  {'max':>10}")
    if diffs is not None:
        header += f"  {'max |diff|':>10}"
    lines = [header]
    for row, name, shape in zip(rows, names, shapes):
        record = row.record
        stats = record.stats()
        dtype = str(record.dtype).replace("torch.", "") if record.dtype is not None else "-"
        if stats:
            numbers = f"{stats['mean']:>10.4f}  {stats['std']:>9.4f}  {stats['min']:>10.4f}  {stats['max']:>10.4f}"
        else:
            numbers = f"{'':>10}  {'':>9}  {'':>10}  {'':>10}"
        line = f"{name:<{width}}  {record.class_name:<{class_width}}  {shape:<{shape_width}}  {dtype:<8}  {numbers}"
        if diffs is not None:
            line += f"  {row.max_abs_diff:>10.2e}" if row.compared else f"  {'-':>10}"
            if row is first:
                line += "  <- first beyond tolerance"
            elif not row.ok:
                line += "  over"
        lines.append(line.rstrip())
    return "\n".join(lines)


def format_comparison_summary(diffs: list[ModuleDiff], other: str) -> str:
    compared = [d for d in diffs if d.compared]
    worst = max((d.max_abs_diff for d in compared), default=0.0)
    first = first_divergence(diffs)
    if first is None:
        return (f"{len(compared)} module outputs compared with {other}: all within tolerance "
                f"(atol {FP32_ATOL:.0e}), largest max |diff| {worst:.2e}.")
    over = sum(not d.ok for d in diffs)
    return (f"{len(compared)} module outputs compared with {other}: {over} beyond tolerance (atol {FP32_ATOL:.0e}); "
            f"the first to compute a diverging output is {first.record.path} ({first.record.class_name}, "
            f"max |diff| {first.max_abs_diff:.2e}).")
