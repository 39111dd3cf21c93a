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
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field

import torch
import torch.distributed as dist
from torch import nn

from .optimization import (
    MAX_GRAD_NORM,
    AdamWeightDecay,
    get_google_schedule,
    get_linear_schedule_with_warmup,
    parameter_groups,
)

#: What a checkpoint directory is called: checkpoint-<optimiser step>.
CHECKPOINT_PREFIX = "checkpoint-"
TRAINER_STATE = "trainer_state.pt"
LOG_FILE = "log.jsonl"
PLOT_FILE = "training_curves.png"
OPTIMIZERS = ("adamw", "google")


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


@dataclass
class TrainingTask:
    """What the loop needs to know about a task.

    ``collate(examples, step, chunk)``: a batch of tensors from a list of examples (``step``
    and ``chunk`` seed any random masking). ``loss_terms(model, batch)``: the summed losses,
    e.g. [MLM loss summed over masked tokens, NSP loss summed over pairs]; ``counts(batch)``:
    how many items each sums over. The loop divides each sum by its count over the whole
    global batch. ``evaluate(model)``: held-out metrics (rank 0 only).

    transformers: none
    """

    examples: Sequence
    collate: Callable[[list, int, int], dict[str, torch.Tensor]]
    loss_terms: Callable[[nn.Module, dict[str, torch.Tensor]], list[torch.Tensor]]
    counts: Callable[[dict[str, torch.Tensor]], list[int]]
    evaluate: Callable[[nn.Module], dict[str, float]] | None = None
    save_extra: Callable[[str], None] | None = None  # writes the tokenizer beside a checkpoint
    names: tuple[str, ...] = ("loss",)


@dataclass
class History:
    """Per-step training loss and learning rate, and the evaluations.

    transformers: none (its ``TrainerState.log_history``)
    """

    steps: list[dict] = field(default_factory=list)
    evaluations: list[dict] = field(default_factory=list)


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


def global_batch(examples: Sequence, step: int, batch_size: int, seed: int) -> list:
    """The examples of optimiser step ``step`` (0-based): consecutive slices of each
    epoch's permutation, drawn from (seed, epoch).

    transformers: none
    """
    count = len(examples)
    chosen, permutations = [], {}
    for position in range(step * batch_size, (step + 1) * batch_size):
        epoch, index = divmod(position, count)
        if epoch not in permutations:
            generator = torch.Generator().manual_seed(seed * 1_000_003 + epoch)
            permutations[epoch] = torch.randperm(count, generator=generator).tolist()
        chosen.append(examples[permutations[epoch][index]])
    return chosen


class Trainer:
    """Runs ``TrainingConfig`` on a model and a ``TrainingTask``.

    transformers: ``trainer.Trainer`` (a small one: what pre-training and fine-tuning BERT need)
    """

    def __init__(self, model: nn.Module, task: TrainingTask, config: TrainingConfig) -> None:
        self.rank, self.world_size, self.device = distributed_context()
        config.check(self.world_size)
        if not task.examples:
            raise ValueError("there are no training examples")
        self.config, self.task = config, task
        self.model = model.to(self.device)
        self.wrapped = (nn.parallel.DistributedDataParallel(self.model) if self.world_size > 1 else self.model)
        if config.optimizer == "google":
            self.optimizer = AdamWeightDecay(parameter_groups(self.model, config.weight_decay), lr=config.learning_rate)
            schedule = get_google_schedule
        else:
            self.optimizer = torch.optim.AdamW(parameter_groups(self.model, config.weight_decay), lr=config.learning_rate)
            schedule = get_linear_schedule_with_warmup
        self.scheduler = schedule(self.optimizer, config.warmup_steps, config.max_steps)
        self.step = 0
        self.last_tokens = 0  # tokens (not padding) in the last step's global batch
        self.history = History()

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
        config = self.config
        bar = _progress(config, self.rank, self.step)
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
            if self.step % config.eval_every == 0 or self.step == config.max_steps:
                self._evaluate()
            if self.step % config.save_every == 0 or self.step == config.max_steps:
                self.save(os.path.join(config.output_dir, f"{CHECKPOINT_PREFIX}{self.step}"))
        if bar is not None:
            bar.close()
        if self.world_size > 1:  # DDP keeps the copies equal: check it, and log by how much they differ
            flat = torch.cat([p.detach().flatten().double().cpu() for p in self.model.parameters()])
            copies = [torch.zeros_like(flat) for _ in range(self.world_size)]
            dist.all_gather(copies, flat)
            spread = max(float((c - copies[0]).abs().max()) for c in copies)
            if self.rank == 0:
                _log(config.output_dir, {"ranks": self.world_size, "rank_parameter_max_diff": spread})
        self.save(config.output_dir, trainer_state=False)
        _barrier(self.world_size)
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
            _log(self.config.output_dir, {"eval": metrics})
        _barrier(self.world_size)

    # ------------------------------------------------------------------ checkpoints
    def save(self, directory: str, trainer_state: bool = True) -> None:
        """The model (transformers' format), the task's files, and with ``trainer_state``
        what resuming needs. Rank 0 writes; the others wait."""
        if self.rank == 0:
            os.makedirs(directory, exist_ok=True)
            self.model.save_pretrained(directory)
            if self.task.save_extra is not None:
                self.task.save_extra(directory)
            if trainer_state:
                state = {"step": self.step, "optimizer": self.optimizer.state_dict(),
                         "scheduler": self.scheduler.state_dict(), "config": asdict(self.config),
                         "history": {"steps": self.history.steps, "evaluations": self.history.evaluations}}
                torch.save(state, os.path.join(directory, TRAINER_STATE))
            with open(os.path.join(directory, "training_history.json"), "w", encoding="utf-8") as f:
                json.dump({"steps": self.history.steps, "evaluations": self.history.evaluations}, f)
            plot_history(self.history, os.path.join(self.config.output_dir, PLOT_FILE))
        _barrier(self.world_size)

    def resume(self, directory: str) -> None:
        """Continue from ``directory`` (a checkpoint this trainer wrote): weights, optimiser,
        schedule and step; the data order and dropout follow from the step."""
        from safetensors.torch import load_file

        path = os.path.join(directory, TRAINER_STATE)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"{directory}: no {TRAINER_STATE} here; not a checkpoint this trainer wrote")
        try:
            state = torch.load(path, map_location="cpu", weights_only=True)
        except Exception as e:  # noqa: BLE001 - a corrupt or hostile file: say which, never run it
            raise ValueError(f"{path}: not a trainer state this trainer can read ({type(e).__name__}: {e})") from None
        weights = load_file(os.path.join(directory, "model.safetensors"))
        missing, unexpected = self.model.load_state_dict(weights, strict=False)
        missing = [k for k in missing if k not in getattr(self.model, "_tied_weights_keys", {})]
        if missing or unexpected:
            raise ValueError(f"{directory}: the checkpoint does not fit this model (missing {missing[:3]}, "
                             f"unexpected {unexpected[:3]})")
        self.model.tie_weights()
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        self.step = int(state["step"])
        self.history = History(state["history"]["steps"], state["history"]["evaluations"])


def check_output_dir(output_dir: str, sources: list[str], resume: bool) -> None:
    """Refuse an output directory a run could destroy something in: one that is, holds or
    lies inside what the run reads (the corpus, the vocabulary, the starting checkpoint), or
    one that already holds files, unless the run resumes there.

    transformers: none (its ``TrainingArguments.overwrite_output_dir`` guards the same way)
    """
    from .convert import check_destination

    check_destination(output_dir, [os.fspath(s) for s in sources if s is not None])
    if os.path.exists(output_dir) and not os.path.isdir(output_dir):
        raise FileExistsError(f"{output_dir}: is a file; the output must be a directory")
    if not resume and os.path.isdir(output_dir) and os.listdir(output_dir):
        raise FileExistsError(f"{output_dir}: exists and is not empty; pass --resume to continue the run there, "
                              f"or choose a new directory")


def latest_checkpoint(output_dir: str) -> str | None:
    """The checkpoint-STEP directory of ``output_dir`` with the highest step, or None.

    transformers: ``trainer_utils.get_last_checkpoint``
    """
    if not os.path.isdir(output_dir):
        return None
    steps = [int(m.group(1)) for name in os.listdir(output_dir)
             if (m := re.fullmatch(re.escape(CHECKPOINT_PREFIX) + r"(\d+)", name))
             and os.path.isfile(os.path.join(output_dir, name, TRAINER_STATE))]
    return os.path.join(output_dir, f"{CHECKPOINT_PREFIX}{max(steps)}") if steps else None


def plot_history(history: History, path: str) -> str | None:
    """Loss (and every evaluation metric) against the step, as a PNG; None without matplotlib.

    transformers: none
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    if not history.steps:
        return None
    metrics = sorted({k for e in history.evaluations for k in e if k != "step"})
    figure, axes = plt.subplots(1, 1 + bool(metrics), figsize=(10 if metrics else 5, 3.6), squeeze=False)
    axes[0][0].plot([s["step"] for s in history.steps], [s["loss"] for s in history.steps], lw=1)
    axes[0][0].set(xlabel="step", ylabel="training loss", title="loss")
    if metrics:
        for name in metrics:
            points = [(e["step"], e[name]) for e in history.evaluations if name in e]
            axes[0][1].plot(*zip(*points), marker="o", label=name)
        axes[0][1].set(xlabel="step", title="held-out evaluation")
        axes[0][1].legend()
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path


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


def _log(output_dir: str, record: dict) -> None:
    os.makedirs(output_dir, exist_ok=True)
    with open(os.path.join(output_dir, LOG_FILE), "a", encoding="utf-8") as f:
        f.write(json.dumps(record) + "\n")

