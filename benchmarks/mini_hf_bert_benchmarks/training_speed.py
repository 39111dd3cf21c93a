"""How fast a pre-training step runs: the shipped Chinese BERT's two phases, on every path
that computes BertForPreTraining's loss, side by side in one run.

    python -m mini_hf_bert benchmark-training            # both phases, fp32 and bf16 (where the CPU has it)
    python -m mini_hf_bert benchmark-training --quick    # fewer steps and documents

Each contender takes the same optimiser steps (forward, loss, backward, gradient clipping,
AdamW) on the same batches, from the same initial weights, in train mode (dropout on):

* ``mini_hf_bert sdpa``: what ``pretrain`` ran before it chose the fast path ("today's"
  in the issue that asked for speed): the reference layers with SDPA attention, the
  vocabulary scored at the masked positions only (``masked_predictions``);
* ``mini_hf_bert fast``: what ``pretrain`` runs now (``--attn-implementation fast``, its
  default): the same loss, real tokens packed, Q, K and V in one product,
  ``fast_dropout`` (modeling_bert_fast.py);
* ``transformers``: its BertForPreTraining with the same weights, called with ``labels``
  and ``next_sentence_label`` as its documentation shows, which scores the vocabulary at
  every position.

The batches are the recipe's (``PHASES``): instances made as ``pretrain`` makes them
(Google's algorithm, one pass) from documents drawn at random from the training split of
the corpus the model was trained on, so they are padded as the recipe's were. bf16 means
torch.autocast with fp32 weights and optimiser state, as ``pretrain --bf16``; it runs
where the CPU computes bf16 natively (AVX512-BF16 or AMX) or on a GPU
(``trainer.bf16_is_native``, which also turns it on in ``pretrain`` there).

The roofline column: the step's useful multiply-add FLOPs (``step_flops``: the products a
step needs on real tokens, the backward counted as twice the forward) per second, as a
share of the rate this machine reaches on one large product (``LARGE_PRODUCT``) in the
same dtype. What is left to the step beyond that share is not matrix arithmetic.
"""

from __future__ import annotations

import contextlib
import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from mini_hf_bert.configuration_bert import BertConfig
from mini_hf_bert.modeling_bert import BertForPreTraining
from mini_hf_bert.training.optimization import MAX_GRAD_NORM, parameter_groups
from mini_hf_bert.training.pretraining import masked_predictions
from mini_hf_bert.training.pretraining_data import IGNORE_INDEX, collate_pretraining_batch, create_pretraining_instances, fixed_split
from mini_hf_bert.training.trainer import bf16_is_native

#: The shipped recipe's phases (mini_hf_bert/checkpoints/chinese_bert/recipe.json): name ->
#: (batch size, max_seq_length).
PHASES = {"phase 1": (128, 32), "phase 2": (64, 128)}
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}
CORPUS = "chinese"
#: Training documents drawn for the batches: enough for the recipe's mix of long news
#: articles and short reviews, and for the batches of a run to differ.
DOCUMENTS = 4000
QUICK_DOCUMENTS = 600
#: Timed steps per contender (after WARMUP_STEPS untimed ones), in rounds: one step of
#: each contender per round, so that a machine's drift touches them alike.
RUNS = 10
QUICK_RUNS = 3
#: Every timed step's batch is made before timing starts: this many at most, so that memory stays bounded.
MAX_RUNS = 1000
WARMUP_STEPS = 2
#: The "large matrix product" of the roofline: (n, n) x (n, n).
LARGE_PRODUCT = 2048
LEARNING_RATE = 1e-4
SEED = 12345
SDPA, FAST, TRANSFORMERS = "mini_hf_bert sdpa", "mini_hf_bert fast", "transformers"
#: The contender the others are measured against: what ``pretrain`` ran before the fast path.
TODAY = SDPA


@dataclass
class TrainingTiming:
    """One contender on one phase and dtype.

    transformers: none
    """

    contender: str
    phase: str
    dtype: str
    ms: float  # median per optimiser step
    tokens_per_s: float  # real (unpadded) tokens per second
    roofline_share: float  # useful GFLOP/s over the large product's rate in this dtype
    vs_today: float | None = None  # today's ms / this ms
    vs_transformers: float | None = None  # transformers' ms / this ms


@dataclass
class TrainingReport:
    """Everything one run measured.

    transformers: none
    """

    machine: str
    timings: list[TrainingTiming]
    product_rates: dict[str, float]  # dtype -> GFLOP/s of the large product
    fill: dict[str, float]  # phase -> real tokens / padded tokens of its batches
    notes: list[str]


def bf16_unavailable(device: torch.device) -> str | None:
    """Why bf16 training does not run at speed here, or None where it does.

    transformers: none
    """
    if bf16_is_native(device):
        return None
    return "bf16: this CPU has neither AVX512-BF16 nor AMX, so bf16 products are emulated (slower than fp32); not timed"


def large_product_rate(dtype: torch.dtype, runs: int = 5, size: int = LARGE_PRODUCT) -> float:
    """GFLOP/s of one (n, n) x (n, n) product in ``dtype``, the median of ``runs``.

    transformers: none
    """
    from mini_hf_bert.parity.speed import median_ms

    generator = torch.Generator().manual_seed(0)
    a, b = (torch.randn(size, size, generator=generator).to(dtype) for _ in range(2))
    torch.mm(a, b)  # the first call sets up the kernel
    return 2 * size**3 / (median_ms(lambda: torch.mm(a, b), runs) / 1000) / 1e9


def step_flops(config: BertConfig, batch: dict[str, torch.Tensor]) -> float:
    """Multiply-add FLOPs one optimiser step needs on this batch: the encoder's products on
    real tokens (attention within each sequence), the MLM head at the masked positions,
    the pooler and NSP head; the backward counted as twice the forward.

    transformers: none
    """
    from .inference import gemm_flops

    hidden, vocab = config.hidden_size, config.vocab_size
    lengths = batch["attention_mask"].sum(dim=1).tolist()
    masked = int((batch["labels"] != IGNORE_INDEX).sum())
    forward = gemm_flops(config, tuple(lengths))  # the encoder's Linears and attention on real tokens
    forward += 2 * masked * hidden * (hidden + vocab)  # the MLM head's transform and decoder
    forward += 2 * len(lengths) * hidden * (hidden + 2)  # the pooler and the NSP head
    return 3.0 * forward


def phase_batches(phase: str, documents: int, steps: int, tokenizer, seed: int = SEED) -> list[dict[str, torch.Tensor]]:
    """``steps`` batches of ``phase``, from ``documents`` training documents drawn at random.

    transformers: none
    """
    batch_size, max_seq_length = PHASES[phase]
    train, _ = fixed_split(CORPUS)
    drawn = random.Random(seed).sample(train, min(documents, len(train)))
    instances = create_pretraining_instances(drawn, tokenizer, max_seq_length=max_seq_length, dupe_factor=1, seed=seed)
    if len(instances) < batch_size:
        raise ValueError(f"{documents} documents make {len(instances)} instances, fewer than the batch of {batch_size}: "
                         f"draw more documents")
    random.Random(seed + 1).shuffle(instances)
    return [collate_pretraining_batch([instances[(step * batch_size + i) % len(instances)] for i in range(batch_size)],
                                      tokenizer) for step in range(steps)]


#: One optimiser step on a batch; returns the loss it stepped on.
Step = Callable[[dict[str, torch.Tensor]], torch.Tensor]


def _autocast(dtype: str, device: torch.device):
    if dtype == "bf16":
        return torch.autocast(device.type, dtype=torch.bfloat16)
    return contextlib.nullcontext()


def _optimise(model: torch.nn.Module, optimizer: torch.optim.Optimizer, loss: torch.Tensor) -> torch.Tensor:
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), MAX_GRAD_NORM)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return loss.detach()


def _our_step(model: BertForPreTraining, dtype: str) -> Step:
    optimizer = torch.optim.AdamW(parameter_groups(model, 0.01), lr=LEARNING_RATE)
    device = next(model.parameters()).device

    def step(batch: dict[str, torch.Tensor]) -> torch.Tensor:
        with _autocast(dtype, device):
            mlm_logits, labels, nsp_logits = masked_predictions(model, batch)
            loss = (F.cross_entropy(mlm_logits.float(), labels)
                    + F.cross_entropy(nsp_logits.float(), batch["next_sentence_label"]))
        return _optimise(model, optimizer, loss)

    return step


def _transformers_step(model: torch.nn.Module, dtype: str) -> Step:
    optimizer = torch.optim.AdamW(parameter_groups(model, 0.01), lr=LEARNING_RATE)
    device = next(model.parameters()).device

    def step(batch: dict[str, torch.Tensor]) -> torch.Tensor:
        with _autocast(dtype, device):
            loss = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"],
                         token_type_ids=batch["token_type_ids"], labels=batch["labels"],
                         next_sentence_label=batch["next_sentence_label"]).loss
        return _optimise(model, optimizer, loss)

    return step


def contenders(config: BertConfig, dtype: str) -> tuple[dict[str, Step], list[str]]:
    """name -> one optimiser step, every model from the same initial weights; and notes on
    any contender left out.

    transformers: none
    """
    torch.manual_seed(SEED)
    reference = BertForPreTraining(config)
    steps, notes = {}, []
    for name, implementation in ((SDPA, "sdpa"), (FAST, "fast")):
        model = BertForPreTraining(BertConfig.from_dict(config.to_dict(), attn_implementation=implementation))
        model.load_state_dict(reference.state_dict())
        steps[name] = _our_step(model.train(), dtype)
    try:
        import transformers
    except ImportError:
        notes.append("transformers is not installed (pip install 'mini_hf_bert[test]'): its column is left out")
        return steps, notes
    hf_config = transformers.BertConfig(**{k: v for k, v in config.to_dict().items() if k != "attn_implementation"})
    hf_model = transformers.BertForPreTraining(hf_config)
    missing, unexpected = hf_model.load_state_dict(reference.state_dict(), strict=False)
    if unexpected or any(not key.endswith("position_ids") for key in missing):
        raise RuntimeError(f"transformers' BertForPreTraining does not take our weights: missing {missing}, "
                           f"unexpected {unexpected}")
    steps[f"{TRANSFORMERS} {transformers.__version__}"] = _transformers_step(hf_model.train(), dtype)
    return steps, notes


def time_steps(steps: dict[str, Step], batches: list[dict[str, torch.Tensor]], warmup: int) -> dict[str, float]:
    """Median seconds per step of each contender: every contender takes each batch in turn
    (a round), and the first ``warmup`` rounds are not timed.

    transformers: none
    """
    times: dict[str, list[float]] = {name: [] for name in steps}
    for round_index, batch in enumerate(batches):
        for name, step in steps.items():
            start = time.perf_counter()
            step(batch)
            if round_index >= warmup:
                times[name].append(time.perf_counter() - start)
    return {name: statistics.median(seconds) for name, seconds in times.items()}


def run_training_benchmark(phases: tuple[str, ...] = tuple(PHASES), dtypes: tuple[str, ...] = tuple(DTYPES),
                           runs: int = RUNS, documents: int = DOCUMENTS, checkpoint: str | None = None,
                           progress: Callable[[str], None] | None = None) -> TrainingReport:
    """Time every contender on each phase and dtype (see the module docstring).

    ``checkpoint``: the model whose shape and vocabulary are timed (default: the shipped
    Chinese BERT); its weights are not used, every contender starts from the same random ones.

    transformers: none
    """
    from mini_hf_bert.checkpoints.bundled import chinese_checkpoint_dir
    from mini_hf_bert.checkpoints.convert import tokenizer_for
    from .inference import machine_description

    for name, value in (("runs", runs), ("documents", documents)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    if runs > MAX_RUNS:
        raise ValueError(f"runs={runs}: at most {MAX_RUNS} (every timed step's batch is made before timing starts)")
    unknown = [p for p in phases if p not in PHASES] + [d for d in dtypes if d not in DTYPES]
    if unknown:
        raise ValueError(f"unknown phase or dtype {unknown}: phases are {list(PHASES)}, dtypes {list(DTYPES)}")
    source = checkpoint or chinese_checkpoint_dir()
    config = BertConfig.from_pretrained(source)
    config.hidden_dropout_prob = config.attention_probs_dropout_prob = 0.1  # BERT's, as pretrain trains
    tokenizer = tokenizer_for(source)
    device = torch.device("cpu")
    notes, timed_dtypes = [], []
    for dtype in dtypes:
        problem = bf16_unavailable(device) if dtype == "bf16" else None
        if problem:
            notes.append(problem)
        else:
            timed_dtypes.append(dtype)
    rates = {dtype: large_product_rate(DTYPES[dtype]) for dtype in timed_dtypes}
    timings, fill = [], {}
    for phase in phases:
        batches = phase_batches(phase, documents, WARMUP_STEPS + runs, tokenizer)
        real = sum(int(b["attention_mask"].sum()) for b in batches[WARMUP_STEPS:]) / runs
        fill[phase] = real / batches[0]["attention_mask"].numel()
        flops = statistics.mean(step_flops(config, b) for b in batches[WARMUP_STEPS:])
        for dtype in timed_dtypes:
            if progress:
                batch_size, length = PHASES[phase]
                progress(f"{phase} ({batch_size} x {length}), {dtype}")
            steps, skipped = contenders(config, dtype)
            notes += [n for n in skipped if n not in notes]
            seconds = time_steps(steps, batches, WARMUP_STEPS)
            hf = next((s for name, s in seconds.items() if name.startswith(TRANSFORMERS)), None)
            for name, s in seconds.items():
                timings.append(TrainingTiming(name, phase, dtype, 1000 * s, real / s, flops / s / 1e9 / rates[dtype],
                                              vs_today=seconds[TODAY] / s, vs_transformers=None if hf is None else hf / s))
    return TrainingReport(machine_description(), timings, rates, fill, notes)


def format_training_report(report: TrainingReport) -> str:
    """The report as Markdown: one table per phase and dtype.

    transformers: none
    """
    lines = [f"Machine: {report.machine}.", ""]
    lines += [f"Large product ({LARGE_PRODUCT} x {LARGE_PRODUCT} x {LARGE_PRODUCT}): "
              + ", ".join(f"{dtype} {rate:.0f} GFLOP/s" for dtype, rate in report.product_rates.items()) + ".", ""]
    for phase in dict.fromkeys(t.phase for t in report.timings):
        for dtype in dict.fromkeys(t.dtype for t in report.timings if t.phase == phase):
            batch_size, length = PHASES[phase]
            lines += [f"### {phase}: {batch_size} x {length}, {dtype} ({report.fill[phase]:.0%} of the positions "
                      f"are real tokens)", "",
                      "| contender | ms/step | real tokens/s | vs today's (sdpa) | vs transformers | of the large "
                      "product's rate |",
                      "|---|---:|---:|---:|---:|---:|"]
            for t in report.timings:
                if t.phase == phase and t.dtype == dtype:
                    versus = "-" if t.vs_transformers is None else f"{t.vs_transformers:.2f}x"
                    lines.append(f"| {t.contender} | {t.ms:.0f} | {t.tokens_per_s:,.0f} | {t.vs_today:.2f}x | "
                                 f"{versus} | {t.roofline_share:.0%} |")
            lines.append("")
    lines += [f"Note: {note}" for note in report.notes]
    return "\n".join(lines).rstrip() + "\n"
