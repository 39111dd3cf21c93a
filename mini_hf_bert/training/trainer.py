"""The training loop ``pretrain`` and ``finetune`` share: one process or many (torchrun).

One optimiser step:

1. The step's *global batch* (``batch_size`` examples) is a fixed function of the seed and
   the step number: epoch e's order is a permutation drawn from (seed, e). So a resumed run
   sees exactly the batches the uninterrupted run would have seen.
2. It is cut into ``world_size × gradient_accumulation_steps`` micro-batches; each process
   (rank) runs its own, one after the other, adding up gradients.
3. The loss is the mean over the *whole global batch* (every masked token, every
   sentence), however it is cut: each micro-batch's summed loss is divided by the global
   count, which the ranks add up first (one all-reduce). So two processes compute the very
   gradient one process computes on the same global batch (the 2-process test checks it).
4. Gradients are clipped to a global norm of 1.0, then the optimiser and the schedule step.

Dropout draws from a generator re-seeded from (seed, step, rank, micro-batch) before each
micro-batch, so that resuming needs no random state but the step number.

Checkpoints (``checkpoint-STEP/``) hold the model in transformers' format (``from_pretrained``
in transformers loads it), the vocabulary, and ``trainer_state.pt``: the optimiser and
schedule state, read back with ``torch.load(weights_only=True)`` (tensors and numbers only:
loading it cannot run code). Only rank 0 writes.

What a kill cannot break (docs/reliability.md): a checkpoint is built in a staging
directory, ``checkpoint_complete.json`` is written into it last, and only then is it renamed
to ``checkpoint-STEP``; ``--resume`` takes the newest checkpoint whose marker, files and
state check out, and says which it skipped and why. The output directory is held by a
``RunLock`` for the whole run, and every file in it is written whole (``file_utils``).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import os
import re
import shutil
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any

import torch
import torch.distributed as dist
from torch import nn

from .. import cpu_capability
from ..checkpoints.errors import CheckpointError
from ..checkpoints.hf_format import SAFE_WEIGHTS_NAME, read_safetensors
from ..file_utils import (
    MAX_METADATA_BYTES,
    RUN_LOCK_NAME,
    SAVING_NAME,
    TEMPORARY_NAME,
    RunLock,
    make_sibling_directory,
    read_file,
    staged_directory,
    staged_file,
    write_json,
    write_text,
)
from .curves import plot_history
from .optimization import (
    MAX_GRAD_NORM,
    AdamWeightDecay,
    get_google_schedule,
    get_linear_schedule_with_warmup,
    parameter_groups,
)

#: What a checkpoint directory is called: checkpoint-<optimiser step>.
CHECKPOINT_PREFIX = "checkpoint-"
_CHECKPOINT_NAME = re.compile(re.escape(CHECKPOINT_PREFIX) + r"(\d+)")
#: A checkpoint being written: a hidden directory beside its final name, until it is complete.
_STAGING_NAME = re.compile(r"\." + re.escape(CHECKPOINT_PREFIX) + r"\d+\.partial-[0-9a-f]{8}|" + SAVING_NAME.pattern)
TRAINER_STATE = "trainer_state.pt"
#: Written last into a checkpoint: its step, its files' sizes and the run's arguments.
COMPLETE_MARKER = "checkpoint_complete.json"
HISTORY_FILE = "training_history.json"
LOG_FILE = "log.jsonl"
PLOT_FILE = "training_curves.png"
OPTIMIZERS = ("adamw", "google")
#: What computes the encoder while pre-training and fine-tuning: modeling_bert_fast's
#: training path (one QKV product, packed rows, cheaper dropout bits), equal to eager in
#: loss and gradients (tests/core/test_fast_path.py) and the fastest per step
#: (docs/training_speed.md). It is not saved with the model.
TRAINING_ATTN_IMPLEMENTATION = "fast"
logger = logging.getLogger(__name__)
#: Arguments that may change on --resume: they decide what is shown and when, not what is computed.
RESUMABLE_CHANGES = frozenset({"progress", "eval_every", "save_every"})


class ResumeError(CheckpointError):
    """A checkpoint that cannot be resumed from.

    transformers: none (its ``Trainer`` raises a ValueError: "No valid checkpoint found")
    """


class ArgumentsChangedError(ResumeError):
    """``--resume`` asked for other arguments than the run that wrote the checkpoint.

    transformers: none
    """


@dataclass
class TrainingConfig:
    """How to train: steps, batch, optimiser, schedule, evaluation and checkpoints.

    transformers: none (its ``TrainingArguments`` plays this part for ``Trainer``)
    """

    output_dir: str
    max_steps: int
    batch_size: int = 32  # examples per optimiser step, over all processes and accumulation
    gradient_accumulation_steps: int = 1
    learning_rate: float = 1e-4
    warmup_steps: int = 0
    weight_decay: float = 0.01
    optimizer: str = "adamw"  # "adamw": torch AdamW + transformers' schedule; "google": AdamWeightDecay + Google's
    max_grad_norm: float = MAX_GRAD_NORM
    eval_every: int = 100
    save_every: int = 100
    seed: int = 12345
    progress: bool = True
    bf16: bool = False  # compute in bfloat16 (torch.autocast), keep fp32 weights and optimiser state
    # transformers' names: the output directory gets the weights of the best evaluation by
    # this metric (its checkpoint always saved), not the last step's.
    load_best_model_at_end: bool = False
    metric_for_best_model: str | None = None
    greater_is_better: bool = True

    def check(self, world_size: int) -> None:
        for name in ("max_steps", "batch_size", "gradient_accumulation_steps", "eval_every", "save_every"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        if not 0 <= self.warmup_steps <= self.max_steps:
            raise ValueError(f"warmup_steps must be from 0 to max_steps ({self.max_steps}), got {self.warmup_steps}")
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"optimizer={self.optimizer!r}: expected one of {OPTIMIZERS}")
        chunks = world_size * self.gradient_accumulation_steps
        if self.batch_size % chunks:
            raise ValueError(f"batch_size={self.batch_size} must divide into {world_size} process(es) x "
                             f"{self.gradient_accumulation_steps} accumulation step(s) = {chunks} equal micro-batches")
        if self.learning_rate <= 0:
            raise ValueError(f"learning_rate must be positive, got {self.learning_rate}")
        if self.load_best_model_at_end and not self.metric_for_best_model:
            raise ValueError("load_best_model_at_end needs metric_for_best_model: the evaluation's metric that ranks them")


@dataclass
class TrainingTask:
    """What the loop needs to know about a task.

    ``collate(examples, step, chunk)``: a batch of tensors from a list of examples (``step``
    and ``chunk`` seed any random masking). ``loss_terms(model, batch)``: the summed losses,
    e.g. [MLM loss summed over masked tokens, NSP loss summed over pairs]; ``counts(batch)``:
    how many items each sums over. The loop divides each sum by its count over the whole
    global batch. ``evaluate(model)``: held-out metrics (rank 0 only). ``training_module(model)``:
    what ``loss_terms`` calls, when not the model's own forward (a module holding the model,
    so that DistributedDataParallel wraps the forward the loss really runs).

    transformers: none
    """

    examples: Sequence
    collate: Callable[[list, int, int], dict[str, torch.Tensor]]
    loss_terms: Callable[[nn.Module, dict[str, torch.Tensor]], list[torch.Tensor]]
    counts: Callable[[dict[str, torch.Tensor]], list[int]]
    evaluate: Callable[[nn.Module], dict[str, float]] | None = None
    save_extra: Callable[[str], None] | None = None  # writes the tokenizer beside a checkpoint
    names: tuple[str, ...] = ("loss",)
    training_module: Callable[[nn.Module], nn.Module] | None = None
    language: str = "en"  # of the text: the curves' labels are in it ("en" or "zh")


@dataclass
class History:
    """Per-step training loss and learning rate, and the evaluations.

    transformers: none (its ``TrainerState.log_history``)
    """

    steps: list[dict] = field(default_factory=list)
    evaluations: list[dict] = field(default_factory=list)
    best: dict | None = None  # the evaluation whose weights the output directory holds (load_best_model_at_end)

    def best_evaluation(self, metric: str, greater_is_better: bool = True) -> dict | None:
        """The first evaluation with the best ``metric``: a later one replaces it only by being better."""
        best = None
        for evaluation in self.evaluations:
            if metric not in evaluation:
                raise ValueError(f"metric_for_best_model={metric!r}: the evaluations measure "
                                 f"{', '.join(k for k in evaluation if k != 'step')}")
            value = evaluation[metric]
            if best is None or (value > best[metric] if greater_is_better else value < best[metric]):
                best = evaluation
        return best


def distributed_context() -> tuple[int, int, torch.device]:
    """(rank, world size, device) from torchrun's environment; starts the process group
    (nccl on GPU, gloo on CPU) when there is more than one process.

    transformers: none
    """
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    if world > 1 and not dist.is_initialized():
        backend = "nccl" if torch.cuda.is_available() else "gloo"
        dist.init_process_group(backend)
    if torch.cuda.is_available():
        local = int(os.environ.get("LOCAL_RANK", "0"))
        torch.cuda.set_device(local)
        return rank, world, torch.device("cuda", local)
    return rank, world, torch.device("cpu")


def bf16_is_native(device: torch.device | None = None) -> bool:
    """Whether ``device`` (default: the one ``Trainer`` trains on, a GPU where there is one)
    computes bfloat16 products in hardware: a GPU that supports them, or a CPU with
    AVX512-BF16 or AMX. Elsewhere bf16 products are emulated and slower than fp32, so the
    training commands leave autocast off there.

    transformers: none (its ``TrainingArguments.bf16`` defaults to off everywhere)
    """
    if device is None:
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device.type == "cuda":
        return torch.cuda.is_bf16_supported()
    return cpu_capability.bf16_is_native()


def global_batch(examples: Sequence, step: int, batch_size: int, seed: int) -> list:
    """The examples of optimiser step ``step`` (0-based): consecutive slices of each
    epoch's permutation, drawn from (seed, epoch).

    transformers: none
    """
    count = len(examples)
    chosen = []
    for position in range(step * batch_size, (step + 1) * batch_size):
        epoch, index = divmod(position, count)
        chosen.append(examples[epoch_order(count, seed, epoch)[index]])
    return chosen


@functools.lru_cache(maxsize=2)  # a step spans at most two epochs; drawing one per step cost O(examples)
def epoch_order(count: int, seed: int, epoch: int) -> tuple[int, ...]:
    """Epoch ``epoch``'s order of ``count`` examples: a permutation drawn from (seed, epoch).

    transformers: none
    """
    generator = torch.Generator().manual_seed(seed * 1_000_003 + epoch)
    return tuple(torch.randperm(count, generator=generator).tolist())


class Trainer:
    """Runs ``TrainingConfig`` on a model and a ``TrainingTask``.

    transformers: ``trainer.Trainer`` (a small one: what pre-training and fine-tuning BERT need)
    """

    def __init__(self, model: nn.Module, task: TrainingTask, config: TrainingConfig,
                 arguments: dict[str, Any] | None = None) -> None:
        """``arguments``: what the run was asked for (JSON values), kept in every
        checkpoint; ``resume`` refuses a checkpoint whose run was asked for something else."""
        self.rank, self.world_size, self.device = distributed_context()
        config.check(self.world_size)
        if not task.examples:
            raise ValueError("there are no training examples")
        self.config, self.task = config, task
        self.model = model.to(self.device)
        if config.bf16 and self.device.type == "cpu":
            cpu_capability.warn_if_bf16_is_slow("training with bf16 (--bf16)")
        forward = task.training_module(self.model) if task.training_module else self.model
        self.wrapped = nn.parallel.DistributedDataParallel(forward) if self.world_size > 1 else forward
        if config.optimizer == "google":
            self.optimizer = AdamWeightDecay(parameter_groups(self.model, config.weight_decay), lr=config.learning_rate)
            schedule = get_google_schedule
        else:
            self.optimizer = torch.optim.AdamW(parameter_groups(self.model, config.weight_decay), lr=config.learning_rate)
            schedule = get_linear_schedule_with_warmup
        self.scheduler = schedule(self.optimizer, config.warmup_steps, config.max_steps)
        self.arguments = run_arguments(config, arguments)
        self.step = 0
        self.last_tokens = 0  # tokens (not padding) in the last step's global batch
        self.history = History()
        self.log_records: list[dict] = []  # log.jsonl, rewritten whole at each evaluation

    # ------------------------------------------------------------------ one step
    def _micro_batches(self, step: int) -> list[dict[str, torch.Tensor]]:
        examples = global_batch(self.task.examples, step, self.config.batch_size, self.config.seed)
        chunks = self.world_size * self.config.gradient_accumulation_steps
        size = len(examples) // chunks
        mine = [c for c in range(chunks) if c % self.world_size == self.rank]  # this rank's chunks
        return [{k: v.to(self.device) for k, v in self.task.collate(examples[c * size:(c + 1) * size], step, c).items()}
                for c in mine]

    def train_step(self) -> float:
        """One optimiser step; returns the global batch's mean loss."""
        batches = self._micro_batches(self.step)
        counts = torch.tensor([sum(n) for n in zip(*(self.task.counts(b) for b in batches))]
                              + [sum(int(b["attention_mask"].sum()) for b in batches)], dtype=torch.float64)
        if self.world_size > 1:
            dist.all_reduce(counts)  # the global counts: every rank divides by the same numbers
        counts, self.last_tokens = counts[:-1], int(counts[-1])
        self.wrapped.train()
        total = torch.zeros((), dtype=torch.float64)
        for index, batch in enumerate(batches):
            chunk = index * self.world_size + self.rank
            torch.manual_seed(_mix(self.config.seed, self.step, chunk))  # dropout, reproducible on resume
            last = index == len(batches) - 1
            sync = (self.wrapped.no_sync() if self.world_size > 1 and not last else contextlib.nullcontext())
            with sync, torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self.config.bf16):
                terms = [t.float() for t in self.task.loss_terms(self.wrapped, batch)]
                loss = sum(s / max(float(c), 1.0) for s, c in zip(terms, counts))
                (loss * self.world_size).backward()  # DDP averages over ranks: undo it, sums were global
            total += loss.detach().double().cpu()
        if self.world_size > 1:
            dist.all_reduce(total)
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.config.max_grad_norm)
        self.optimizer.step()
        self.scheduler.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.step += 1
        return float(total)

    # ------------------------------------------------------------------ the loop
    def train(self) -> History:
        bar = _progress(self.config, self.rank, self.step)
        if bar is None:
            return self._train(None)
        from tqdm.contrib.logging import logging_redirect_tqdm

        with logging_redirect_tqdm():  # a warning on a line of its own, above the bar, never glued to it
            try:
                return self._train(bar)
            finally:
                bar.close()  # also when Ctrl-C or SIGTERM unwinds: what is said next starts a line of its own

    def _train(self, bar: Any) -> History:
        config = self.config
        started, seen_tokens = time.perf_counter(), 0
        while self.step < config.max_steps:
            loss = self.train_step()
            seen_tokens += self.last_tokens
            rate = seen_tokens / max(time.perf_counter() - started, 1e-9)
            record = {"step": self.step, "loss": loss, "learning_rate": self.scheduler.get_last_lr()[0],
                      "tokens_per_second": rate}
            self.history.steps.append(record)
            if bar is not None:
                bar.update(1)
                bar.set_postfix(loss=f"{loss:.3f}", tok_s=f"{rate:,.0f}")
            evaluated = self.step % config.eval_every == 0 or self.step == config.max_steps
            if evaluated:
                self._evaluate()
            if self.step % config.save_every == 0 or self.step == config.max_steps or (evaluated and self._new_best()):
                self.save_checkpoint()  # a new best is always saved: the end loads it from there
        if bar is not None:
            bar.close()
        if self.world_size > 1:  # DDP keeps the copies equal: check it, and log by how much they differ
            flat = torch.cat([p.detach().flatten().double().cpu() for p in self.model.parameters()])
            copies = [torch.zeros_like(flat) for _ in range(self.world_size)]
            dist.all_gather(copies, flat)
            spread = max(float((c - copies[0]).abs().max()) for c in copies)
            if self.rank == 0:
                self._log({"ranks": self.world_size, "rank_parameter_max_diff": spread})
        self.save_final()
        return self.history

    def _evaluate(self) -> None:
        if self.task.evaluate is None:
            return
        if self.rank == 0:
            self.model.eval()
            with torch.no_grad():
                metrics = {"step": self.step, **self.task.evaluate(self.model)}
            self.model.train()
            self.history.evaluations.append(metrics)
            self._log({"eval": metrics})
        _barrier(self.world_size)

    def _new_best(self) -> bool:
        """Whether the evaluation just made is the best so far (``load_best_model_at_end``);
        rank 0 evaluates, and every rank learns its answer."""
        if not self.config.load_best_model_at_end:
            return False
        return self._from_rank_0(self.rank == 0 and self._best_step() == self.step)

    def _best_step(self) -> int | None:
        best = self.history.best_evaluation(self.config.metric_for_best_model, self.config.greater_is_better)
        return None if best is None else best["step"]

    def _from_rank_0(self, value: int) -> int:
        if self.world_size == 1:
            return value
        shared = torch.tensor([int(value)], device=self.device)
        dist.broadcast(shared, 0)
        return int(shared.item())

    def _log(self, record: dict) -> None:
        self.log_records.append(record)
        self._write_log()

    def _write_log(self) -> None:
        """log.jsonl, whole: after a resume it holds the checkpoint's evaluations, never
        those a killed run made after it."""
        write_text(os.path.join(self.config.output_dir, LOG_FILE), "".join(json.dumps(r) + "\n" for r in self.log_records))

    # ------------------------------------------------------------------ checkpoints
    def save_checkpoint(self) -> str:
        """``OUTPUT_DIR/checkpoint-STEP``: the model, the task's files, ``trainer_state.pt``,
        the history, and last the marker; built in a staging directory and renamed into
        place whole. Rank 0 writes; the others wait. Returns the checkpoint's path."""
        name = f"{CHECKPOINT_PREFIX}{self.step}"
        target = os.path.join(self.config.output_dir, name)
        if self.rank == 0:
            if os.path.lexists(target):  # never ours to delete or write through: moved aside
                aside = make_sibling_directory(target, f"{name}.replaced-")
                os.rmdir(aside)
                os.rename(target, aside)
                logger.warning("%s was already there; moved it aside to %s", target, aside)
            with staged_directory(target, f".{name}.partial-", overwrite=False) as staging:
                self.model.save_pretrained(staging)
                if self.task.save_extra is not None:
                    self.task.save_extra(staging)
                self._write_history(staging)
                state = {"step": self.step, "optimizer": self.optimizer.state_dict(),
                         "scheduler": self.scheduler.state_dict(), "config": asdict(self.config),
                         "history": {"steps": self.history.steps, "evaluations": self.history.evaluations}}
                with staged_file(os.path.join(staging, TRAINER_STATE)) as staged:
                    torch.save(state, staged)
                files = {f: os.path.getsize(os.path.join(staging, f)) for f in sorted(os.listdir(staging))}
                write_json(os.path.join(staging, COMPLETE_MARKER),
                           {"step": self.step, "files": files, "arguments": self.arguments})
            self._write_output_files()
        _barrier(self.world_size)
        return target

    def save_final(self) -> None:
        """The trained model in the output directory itself (transformers' format), beside
        the history, log and curves: with ``load_best_model_at_end``, the best evaluation's
        weights, read back from its checkpoint. Rank 0 writes; the others wait."""
        if self.config.load_best_model_at_end:
            self._load_best()
        if self.rank == 0:
            self.model.save_pretrained(self.config.output_dir)
            self._write_output_files()
        _barrier(self.world_size)

    def _load_best(self) -> None:
        """The best evaluation's weights into the model (every rank), and ``history.best``."""
        step = self._from_rank_0(-1 if self._best_step() is None else self._best_step())
        if step < 0:
            return  # nothing was evaluated: the last weights stay
        if step != self.step:
            path = os.path.join(self.config.output_dir, f"{CHECKPOINT_PREFIX}{step}", SAFE_WEIGHTS_NAME)
            try:
                weights = read_safetensors(path)
            except (CheckpointError, OSError) as e:
                raise CheckpointError(f"{path}: the best evaluation's weights (step {step}) cannot be read back: {e}"
                                      ) from None
            self.model.load_state_dict(weights, strict=False)
            self.model.tie_weights()
        if self.rank == 0:
            best = next(e for e in self.history.evaluations if e["step"] == step)
            self.history.best = {"step": step, self.config.metric_for_best_model: best[self.config.metric_for_best_model]}
            self._log({"best": self.history.best})

    def _write_history(self, directory: str) -> None:
        record = {"steps": self.history.steps, "evaluations": self.history.evaluations}
        if self.history.best is not None:
            record["best"] = self.history.best
        write_json(os.path.join(directory, HISTORY_FILE), record, indent=None)

    def _write_output_files(self) -> None:
        """The output directory's own files: the tokenizer once (a fresh run's first save;
        ``resume`` has checked any that is there against the run's), the history and the
        curves."""
        out = self.config.output_dir
        if self.task.save_extra is not None and not os.path.lexists(os.path.join(out, "vocab.txt")):
            self.task.save_extra(out)
        self._write_history(out)
        if self.log_records:
            self._write_log()
        plot_history(self.history, os.path.join(out, PLOT_FILE), self.task.language)

    # ------------------------------------------------------------------ resuming
    def resume(self, directory: str) -> None:
        """Continue from ``directory`` (a complete checkpoint this trainer wrote): weights,
        optimiser, schedule and step; the data order and dropout follow from the step.
        Everything is read and checked before anything is set.

        Raises:
            ResumeError: naming the file and what is wrong with it.
        """
        step = _checkpoint_step(directory)
        marker = read_marker(directory)
        if marker["step"] != step:
            raise ResumeError(f"{os.path.join(directory, COMPLETE_MARKER)}: says step {marker['step']}, "
                              f"but the directory is {os.path.basename(directory)}")
        check_same_arguments(directory, marker, self.arguments)
        state = read_trainer_state(os.path.join(directory, TRAINER_STATE), step, self.config.max_steps)
        weights_path = os.path.join(directory, SAFE_WEIGHTS_NAME)
        try:
            weights = read_safetensors(weights_path)
        except CheckpointError as e:
            raise ResumeError(str(e)) from None
        tied = self.model.tied_weights() if hasattr(self.model, "tied_weights") else {}  # saved once, under the source
        expected = {k: v for k, v in self.model.state_dict().items() if k not in tied}
        missing = [k for k in expected if k not in weights]
        unexpected = [k for k in weights if k not in expected]
        wrong = [f"{k} {tuple(weights[k].shape)} (the model's is {tuple(v.shape)})"
                 for k, v in expected.items() if k in weights and weights[k].shape != v.shape]
        if missing or unexpected or wrong:
            raise ResumeError(f"{weights_path}: does not fit this model (missing {missing[:3]}, unexpected "
                              f"{unexpected[:3]}, other shapes {wrong[:3]})")
        before = self.optimizer.state_dict()
        try:
            self.optimizer.load_state_dict(state["optimizer"])
            self.scheduler.load_state_dict(state["scheduler"])
        except (ValueError, KeyError, TypeError, RuntimeError, IndexError) as e:
            self.optimizer.load_state_dict(before)
            raise ResumeError(f"{os.path.join(directory, TRAINER_STATE)}: its optimiser state does not fit this "
                              f"model and optimiser ({type(e).__name__}: {e})") from None
        self.model.load_state_dict(weights, strict=False)
        self.model.tie_weights()
        self.step = step
        self.history = History(state["history"]["steps"], state["history"]["evaluations"])
        self.log_records = [{"eval": e} for e in self.history.evaluations]

    def resume_latest(self) -> str:
        """Resume from the newest checkpoint of the output directory that checks out,
        skipping (with a warning naming each) those that do not. Returns its path.

        Raises:
            ResumeError: no checkpoint to resume from; the message lists why each was skipped.
        """
        skipped = []
        for directory in complete_checkpoints(self.config.output_dir, skipped):
            try:
                self.resume(directory)
            except ArgumentsChangedError:
                raise
            except ResumeError as e:
                skipped.append(str(e))
                logger.warning("skipping %s: %s", directory, e)
                continue
            logger.info("resuming from %s (step %d)", directory, self.step)
            return directory
        why = f" ({'; '.join(skipped)})" if skipped else ""
        raise ResumeError(f"{self.config.output_dir}: --resume, but there is no complete checkpoint-STEP directory "
                          f"to resume from{why}")


def run_arguments(config: TrainingConfig, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """What a run was asked for, as ``Trainer`` records it in each checkpoint: the
    ``TrainingConfig`` (its output directory aside) and the caller's ``extra``.

    transformers: none
    """
    arguments = {**asdict(config), **(extra or {})}
    arguments.pop("output_dir")
    return arguments


def vocabulary_digest(tokenizer) -> str:
    """SHA-256 of a tokenizer's tokens in id order and its casing: recorded with a run's
    arguments, so ``--resume`` with another vocabulary is refused.

    transformers: none
    """
    tokens = tokenizer.convert_ids_to_tokens(list(range(len(tokenizer))))
    return hashlib.sha256(json.dumps([tokens, tokenizer.do_lower_case], ensure_ascii=False).encode("utf-8")).hexdigest()


def check_same_arguments(directory: str, marker: dict[str, Any], arguments: dict[str, Any]) -> None:
    """Refuse to resume from ``directory`` (whose marker is ``marker``) with arguments that
    differ from its run's, naming each one (``RESUMABLE_CHANGES`` may differ).

    Raises:
        ArgumentsChangedError: ``--name: X now, Y in the checkpoint`` for each difference.

    transformers: none
    """
    # A TrainingConfig field newer than the checkpoint was, in its run, at its default.
    recorded = {**{f.name: f.default for f in fields(TrainingConfig)}, **marker.get("arguments", {})}
    differences = [_difference(key, arguments[key], recorded.get(key)) for key in sorted(arguments)
                   if key not in RESUMABLE_CHANGES and arguments[key] != recorded.get(key)]
    if differences:
        raise ArgumentsChangedError(
            f"{directory}: --resume with other arguments than the run that wrote it: " + "; ".join(differences)
            + ". Resume with the same arguments, or start a new output directory"
        )


def _difference(key: str, now: Any, then: Any) -> str:
    if key.endswith("_sha256"):  # a digest of what was read, not an argument
        what = key[: -len("_sha256")]
        return f"the {what} is not the one the checkpoint was trained on (sha256 {str(now)[:12]} now, {str(then)[:12]} then)"
    return f"--{key.replace('_', '-')}: {now!r} now, {then!r} in the checkpoint"


@contextlib.contextmanager
def output_directory(output_dir: str, sources: list[str | None], resume: bool,
                     arguments: dict[str, Any] | None = None) -> Iterator[None]:
    """Hold ``output_dir`` for a run, checked before anything is written in it: not an
    input nor holding one, empty unless resuming (``check_output_dir``); then locked
    (``RunLock``: a second run is refused, naming this one's pid), checked again under the
    lock, and with ``resume`` its newest complete checkpoint found and, given
    ``arguments``, its run's arguments compared. Unfinished checkpoints of a killed run
    are removed. Under torchrun only rank 0 checks and holds it.

    transformers: none
    """
    if int(os.environ.get("RANK", "0")) != 0:
        yield
        return
    check_output_dir(output_dir, sources, resume)
    with RunLock(output_dir):
        check_output_dir(output_dir, sources, resume)  # again: nothing can change it now
        if resume:
            skipped: list[str] = []
            complete = complete_checkpoints(output_dir, skipped)
            if not complete:
                why = f" ({'; '.join(skipped)})" if skipped else ""
                way_out = ("nothing complete was saved, so run the same command without --resume to start over in "
                           "this directory" if stopped_before_its_first_checkpoint(output_dir) else
                           "start again without --resume, in a new directory")
                raise ResumeError(f"{output_dir}: --resume, but there is no complete checkpoint-STEP directory "
                                  f"to resume from{why}; {way_out}")
            newest = complete[0]
            if arguments is not None:
                check_same_arguments(newest, read_marker(newest), arguments)
            remove_unfinished_writes(output_dir)
        elif os.path.isdir(output_dir) and stopped_before_its_first_checkpoint(output_dir):
            logger.warning("%s: a run was killed here before its first checkpoint was complete; starting over",
                           output_dir)
            remove_unfinished_writes(output_dir)
        yield


def _checkpoint_step(directory: str) -> int:
    match = _CHECKPOINT_NAME.fullmatch(os.path.basename(os.path.normpath(directory)))
    if match is None:
        raise ResumeError(f"{directory}: not a checkpoint-STEP directory")
    return int(match.group(1))


def read_marker(directory: str) -> dict[str, Any]:
    """A checkpoint's ``checkpoint_complete.json``, checked: its step, and every file it
    lists present with the size it had when the checkpoint was finished.

    Raises:
        ResumeError: the marker is missing or damaged, or a file is missing or of another size.

    transformers: none
    """
    path = os.path.join(directory, COMPLETE_MARKER)
    if os.path.islink(directory) or not os.path.isdir(directory):
        raise ResumeError(f"{directory}: not a directory (a run writes its checkpoints as real directories)")
    if not os.path.isfile(path):
        raise ResumeError(f"{path}: missing: the checkpoint was not finished (a run killed while saving it?)")
    try:
        marker = json.loads(read_file(path, MAX_METADATA_BYTES).decode("utf-8"))
    except (OSError, ValueError, RecursionError) as e:
        raise ResumeError(f"{path}: not a readable marker ({type(e).__name__}: {e})") from None
    step, files = (marker.get("step"), marker.get("files")) if isinstance(marker, dict) else (None, None)
    if isinstance(step, bool) or not isinstance(step, int) or not isinstance(files, dict) \
            or not isinstance(marker.get("arguments", {}), dict):
        raise ResumeError(f"{path}: not a checkpoint marker (expected step, files and arguments)")
    for name, size in files.items():
        full = os.path.join(directory, name)
        if not isinstance(name, str) or os.path.basename(name) != name or not isinstance(size, int):
            raise ResumeError(f"{path}: lists {name!r}, which is not a file name of this checkpoint")
        if os.path.islink(full) or not os.path.isfile(full):
            raise ResumeError(f"{full}: missing (the marker lists it)")
        if os.path.getsize(full) != size:
            raise ResumeError(f"{full}: {os.path.getsize(full)} bytes, but {size} when the checkpoint was finished")
    return marker


#: What a trainer state holds, and the type of each.
_STATE_FIELDS = {"step": int, "optimizer": dict, "scheduler": dict, "config": dict, "history": dict}


def read_trainer_state(path: str, step: int, max_steps: int) -> dict[str, Any]:
    """``trainer_state.pt``, read with ``weights_only=True`` (nothing in it can run) and
    checked: its fields, their types, and its step against its directory's name and the run.

    Raises:
        ResumeError: naming the file and what is wrong.

    transformers: none
    """
    if not os.path.isfile(path):
        raise ResumeError(f"{path}: missing")
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # noqa: BLE001 - a corrupt or hostile file: say which, never run it
        raise ResumeError(f"{path}: not a trainer state this trainer can read ({type(e).__name__}: "
                          f"{str(e).splitlines()[0] if str(e) else ''})") from None
    if not isinstance(state, dict):
        raise ResumeError(f"{path}: expected a dict of trainer state, found a {type(state).__name__}")
    wrong = [f"{k} ({_STATE_FIELDS[k].__name__})" for k in _STATE_FIELDS
             if not isinstance(state.get(k), _STATE_FIELDS[k]) or isinstance(state.get(k), bool)]
    if wrong:
        raise ResumeError(f"{path}: not a trainer state: missing or wrong {', '.join(wrong)}")
    optimizer, history = state["optimizer"], state["history"]
    if not isinstance(optimizer.get("state"), dict) or not isinstance(optimizer.get("param_groups"), list):
        raise ResumeError(f"{path}: its optimizer entry is not an optimiser state_dict (state, param_groups)")
    if not all(isinstance(history.get(k), list) and all(isinstance(r, dict) for r in history[k])
               for k in ("steps", "evaluations")):
        raise ResumeError(f"{path}: its history is not lists of records (steps, evaluations)")
    if state["step"] != step:
        raise ResumeError(f"{path}: holds step {state['step']}, but its directory is {CHECKPOINT_PREFIX}{step}")
    if not 0 < step <= max_steps:
        raise ResumeError(f"{path}: step {step} is outside this run's 1..{max_steps} (max_steps)")
    return state


def check_output_dir(output_dir: str, sources: list[str], resume: bool) -> None:
    """Refuse an output directory a run could destroy something in: one that is, holds or
    lies inside what the run reads (the corpus, the vocabulary, the starting checkpoint), or
    one that already holds files, unless the run resumes there (the run's lock file aside).
    Nothing is written.

    transformers: none (its ``TrainingArguments.overwrite_output_dir`` guards the same way)
    """
    from ..file_utils import check_destination

    check_destination(output_dir, [os.fspath(s) for s in sources if s is not None])
    if os.path.exists(output_dir) and not os.path.isdir(output_dir):
        raise FileExistsError(f"{output_dir}: is a file; the output must be a directory")
    if not resume and os.path.isdir(output_dir) and set(os.listdir(output_dir)) - {RUN_LOCK_NAME}:
        if stopped_before_its_first_checkpoint(output_dir):
            return  # nothing complete to lose: the run starts over here (output_directory clears what is left)
        raise FileExistsError(f"{output_dir}: exists and is not empty; pass --resume to continue the run there, "
                              f"or choose a new directory")


def stopped_before_its_first_checkpoint(output_dir: str) -> bool:
    """Whether ``output_dir`` holds only what a run leaves that was killed, or stopped by
    an error (a full disk), before its first checkpoint was complete: the checkpoint being
    staged, temporary files, its lock, its ``log.jsonl``; no checkpoint. Such a directory
    has nothing to resume, so a run may start over in it.

    transformers: none
    """
    names = set(os.listdir(output_dir)) - {RUN_LOCK_NAME}
    staged = {name for name in names if _STAGING_NAME.fullmatch(name) and os.path.isdir(os.path.join(output_dir, name))
              and not os.path.islink(os.path.join(output_dir, name))}
    temporary = {name for name in names if TEMPORARY_NAME.fullmatch(name)}
    ours = staged | temporary | ({LOG_FILE} if LOG_FILE in names and _is_run_log(os.path.join(output_dir, LOG_FILE)) else set())
    return bool(staged or LOG_FILE in ours) and names == ours


#: The keys of log.jsonl's records (Trainer._log): a file of other records is not a run's log.
_LOG_KEYS = {"eval", "ranks", "rank_parameter_max_diff"}


def _is_run_log(path: str) -> bool:
    """Whether ``path`` reads as the log.jsonl a run writes: JSON records with its keys."""
    try:
        lines = read_file(path, MAX_METADATA_BYTES).decode("utf-8").splitlines()
        records = [json.loads(line) for line in lines if line.strip()]
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    return bool(records) and all(isinstance(r, dict) and r and set(r) <= _LOG_KEYS for r in records)


def complete_checkpoints(output_dir: str, skipped: list[str] | None = None) -> list[str]:
    """The checkpoint-STEP directories of ``output_dir`` whose marker and files check out
    (``read_marker``), newest first; each other one is logged as a warning naming it and
    added to ``skipped``.

    Raises:
        ResumeError: a checkpoint-STEP that is a symbolic link (never written by a run).

    transformers: ``trainer_utils.get_last_checkpoint`` (without the checks)
    """
    if not os.path.isdir(output_dir):
        return []
    found = []
    for name in os.listdir(output_dir):
        match = _CHECKPOINT_NAME.fullmatch(name)
        if match is None:
            continue
        path = os.path.join(output_dir, name)
        if os.path.islink(path):
            raise ResumeError(f"{path}: is a symbolic link; a run writes its checkpoints as real directories. "
                              f"Remove it, or choose another output directory")
        found.append((int(match.group(1)), path))
    complete = []
    for _, path in sorted(found, reverse=True):
        try:
            read_marker(path)
        except ResumeError as e:
            logger.warning("skipping %s: %s", path, e)
            if skipped is not None:
                skipped.append(str(e))
            continue
        complete.append(path)
    return complete


def latest_checkpoint(output_dir: str) -> str | None:
    """The complete checkpoint-STEP directory of ``output_dir`` with the highest step, or None.

    transformers: ``trainer_utils.get_last_checkpoint``
    """
    complete = complete_checkpoints(output_dir)
    return complete[0] if complete else None


def remove_unfinished_writes(output_dir: str) -> list[str]:
    """Remove what a killed run left half-written in ``output_dir``: checkpoints and saves
    being staged (``.checkpoint-STEP.partial-XXXXXXXX/``, ``.saving-XXXXXXXX/``) and temporary
    files (``.NAME.XXXXXXXX.tmp``), never renamed into place. Call it holding the run's lock (no
    other writer is alive). Returns what was removed.

    transformers: none
    """
    removed = []
    for name in sorted(os.listdir(output_dir)) if os.path.isdir(output_dir) else []:
        path = os.path.join(output_dir, name)
        if os.path.islink(path):
            continue
        if _STAGING_NAME.fullmatch(name) and os.path.isdir(path):
            shutil.rmtree(path)
        elif TEMPORARY_NAME.fullmatch(name) and os.path.isfile(path):
            os.remove(path)
        else:
            continue
        removed.append(path)
        logger.warning("removed %s, left unfinished by a killed run", path)
    return removed


def _mix(seed: int, step: int, chunk: int) -> int:
    return (seed * 1_000_003 + step * 10_007 + chunk) % (2**63 - 1)


def _progress(config: TrainingConfig, rank: int, start: int):
    if not config.progress or rank != 0:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm(total=config.max_steps, initial=start, desc="training", unit="step")


def _barrier(world_size: int) -> None:
    if world_size > 1:
        dist.barrier()
