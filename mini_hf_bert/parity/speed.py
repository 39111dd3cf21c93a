"""Inference speed of mini_hf_bert's own paths, with nothing else installed.

``python -m mini_hf_bert benchmark`` runs this where the benchmarks beside the package
(benchmarks/, ``pip install ./benchmarks``) are not installed; with them it times
transformers and the other engines too (mini_hf_bert_benchmarks.inference, which shares
the workloads and the timing rules below). On identical seeded weights of bert-base's
shape it times the three attention implementations a user can choose:

    "eager"  the reference: the model file's own matmul-softmax-matmul
    "sdpa"   the same layers with torch's scaled_dot_product_attention
    "fast"   the fast path (modeling_bert_fast): padding skipped, products pre-packed

each on the same inputs, alternating run by run (a slow moment of the machine hits all
alike), and reports the median of ``runs`` timed calls after a warm-up, real tokens per
second, the speed-up over "eager", and each path's ``max|diff|`` from the fp32 eager
output on real tokens (so a fast wrong answer shows).

transformers: none (its benchmark scripts time its own model only)
"""

from __future__ import annotations

import dataclasses
import os
import platform
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch

from .. import cpu_capability
from ..configuration_bert import BertConfig
from ..modeling_bert import BertModel

#: bert-base-uncased's shape.
BERT_BASE = dict(vocab_size=30522, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                 intermediate_size=3072, max_position_embeddings=512)
#: The paths timed here, the first being the reference the speed-ups are taken against.
PATHS = ("eager", "sdpa", "fast")
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}
#: Timed calls per path (the median is reported) and untimed calls before them.
RUNS, WARMUP = 10, 2
#: The most timed calls a benchmark takes per contender: a median of a thousand is as
#: steady as it gets, and bert-base's W3 at a second a call would already take hours.
MAX_RUNS = 1000
#: Seconds of quiet before each timed call: a call's threads spin for a while after it
#: returns (torch's about 10 ms) and would steal a core from whichever path came next.
SETTLE_S = 0.06


@dataclass(frozen=True)
class Workload:
    """A batch shape to time: B sequences padded to T, of the given real lengths.

    transformers: none
    """

    name: str
    batch_size: int
    seq_length: int
    lengths: tuple[int, ...]

    @property
    def real_tokens(self) -> int:
        return sum(self.lengths)

    def describe(self) -> str:
        padded = self.batch_size * self.seq_length
        return (f"{self.name}: {self.batch_size} x {self.seq_length}, {self.real_tokens} real tokens of {padded} "
                f"({100 * (padded - self.real_tokens) / padded:.0f}% padding)")


WORKLOADS = {
    "W1": Workload("W1", 8, 128, (128, 120, 110, 100, 90, 80, 64, 50)),
    "W2": Workload("W2", 1, 16, (16,)),
    "W3": Workload("W3", 4, 512, (512, 400, 300, 200)),
    "W4": Workload("W4", 1, 64, (64,)),
    "W5": Workload("W5", 1, 128, (128,)),
}
#: What ``benchmark`` times by default here: one padded batch and one short sentence.
DEFAULT_WORKLOADS = ("W1", "W2")


@dataclass
class PathTiming:
    """One path on one workload and dtype.

    transformers: none
    """

    path: str
    workload: str
    dtype: str
    ms: float  # median per call
    tokens_per_s: float  # real tokens per second
    max_diff: float  # on real tokens, against the fp32 eager output
    speedup: float  # eager's ms / this ms, in the same dtype


def machine_description() -> str:
    """The CPU, its threads and matrix units, torch and Python: where the timings hold.

    transformers: none
    """
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return (f"{cpu}, {torch.get_num_threads()} threads ({os.cpu_count()} CPUs), {cpu_capability.cpu_kind()}; "
            f"torch {torch.__version__}, Python {platform.python_version()}")


def make_inputs(workload: Workload, vocab_size: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Token ids (B, T) (padding 0, real tokens drawn from [1000, V)) and the 0/1 mask (B, T).

    transformers: none
    """
    generator = torch.Generator().manual_seed(seed)
    ids = torch.randint(min(1000, vocab_size - 1), vocab_size, (workload.batch_size, workload.seq_length),
                        generator=generator)  # (B, T)
    mask = torch.zeros(workload.batch_size, workload.seq_length, dtype=torch.long)  # (B, T)
    for row, length in enumerate(workload.lengths):
        mask[row, :length] = 1
    return ids.masked_fill(mask == 0, 0), mask


def median_ms(call: Callable[[], object], runs: int) -> float:
    """The median wall time of ``runs`` calls, in milliseconds.

    transformers: none
    """
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)


def time_alternating(calls: dict[str, Callable[[], object]], runs: int) -> dict[str, list[float]]:
    """Seconds of each of ``runs`` calls of every entry, the entries alternating and their
    order rotating run by run, each call after SETTLE_S of quiet.

    transformers: none
    """
    names = list(calls)
    times: dict[str, list[float]] = {name: [] for name in names}
    for run in range(runs):
        for name in names[run % len(names):] + names[: run % len(names)]:
            time.sleep(SETTLE_S)
            start = time.perf_counter()
            calls[name]()
            times[name].append(time.perf_counter() - start)
    return times


def default_dtypes() -> tuple[str, ...]:
    """fp32, and bf16 where the CPU computes it in hardware (elsewhere it is emulated, and
    slower than fp32: nothing a user would choose).

    transformers: none
    """
    return ("fp32", "bf16") if cpu_capability.bf16_is_native() else ("fp32",)


def check_cases(workloads: tuple[str, ...], dtypes: tuple[str, ...], known_dtypes: dict, runs: int) -> None:
    """Refuse a workload not in WORKLOADS, a dtype not in ``known_dtypes`` or fewer than
    one run, naming it: what a benchmark (this one, the CPU and GPU comparisons beside the
    package) is asked to time.

    transformers: none
    """
    for name in workloads:
        if name not in WORKLOADS:
            raise ValueError(f"workload {name!r} is not one of {sorted(WORKLOADS)}")
    for name in dtypes:
        if name not in known_dtypes:
            raise ValueError(f"dtype {name!r} is not one of {sorted(known_dtypes)}")
    if not 1 <= runs <= MAX_RUNS:
        raise ValueError(f"runs must be between 1 and {MAX_RUNS}, got {runs}")


def seeded_reference(config: BertConfig, workloads: tuple[str, ...]) -> tuple[dict, dict, dict]:
    """What every contender of a benchmark is measured against: the state dict of a seeded
    eager BertModel of ``config``'s shape, each workload's inputs (ids, mask), and that
    model's fp32 ``last_hidden_state`` on them (B, T, H).

    transformers: none
    """
    torch.manual_seed(0)
    reference = BertModel(dataclasses.replace(config, attn_implementation="eager")).eval().requires_grad_(False)
    inputs = {name: make_inputs(WORKLOADS[name], config.vocab_size) for name in workloads}
    with torch.inference_mode():
        outputs = {name: reference(ids, attention_mask=mask).last_hidden_state for name, (ids, mask) in inputs.items()}
    return reference.state_dict(), inputs, outputs


def run_speed(workloads: tuple[str, ...] = DEFAULT_WORKLOADS, dtypes: tuple[str, ...] | None = None,
              runs: int = RUNS, config: BertConfig | None = None,
              progress: Callable[[str], None] | None = None) -> list[PathTiming]:
    """Time PATHS on each workload and dtype (see the module docstring).

    Args:
        workloads / dtypes: names from WORKLOADS / DTYPES (dtypes default: default_dtypes()).
        runs: timed calls per path and case (the median is kept).
        config: the model's shape (default bert-base); the weights are seeded, not trained.
        progress: called with a line before each case.

    transformers: none
    """
    dtypes = default_dtypes() if dtypes is None else dtypes
    check_cases(workloads, dtypes, DTYPES, runs)
    config = config or BertConfig(**BERT_BASE)
    state, inputs, expected = seeded_reference(config, workloads)  # every max|diff| is taken against expected
    timings = []
    for dtype_name in dtypes:
        models = {}
        for path in PATHS:
            model = BertModel(dataclasses.replace(config, attn_implementation=path))
            model.load_state_dict(state)
            models[path] = model.to(DTYPES[dtype_name]).eval().requires_grad_(False)
        for name in workloads:
            workload = WORKLOADS[name]
            if progress:
                progress(f"{workload.describe()}, {dtype_name}")
            ids, mask = inputs[name]
            real = mask.bool()
            calls = {path: (lambda m=model: m(ids, attention_mask=mask).last_hidden_state)
                     for path, model in models.items()}
            with torch.inference_mode():
                outputs = {}
                for path, call in calls.items():
                    for _ in range(WARMUP):
                        outputs[path] = call()
                seconds = time_alternating(calls, runs)
            medians = {path: 1000 * statistics.median(s) for path, s in seconds.items()}
            for path in PATHS:
                diff = float((outputs[path][real].float() - expected[name][real]).abs().max())
                timings.append(PathTiming(path, name, dtype_name, medians[path],
                                          workload.real_tokens / (medians[path] / 1000), diff,
                                          medians[PATHS[0]] / medians[path]))
    return timings


def format_speed(timings: list[PathTiming], machine: str) -> str:
    """The timings as a text table, one row per path, workload and dtype.

    transformers: none
    """
    lines = [f"machine: {machine}", "",
             f"{'workload':<9}{'dtype':<7}{'path':<7}{'ms':>10}{'tokens/s':>11}{'vs eager':>10}{'max|diff|':>11}"]
    for t in timings:
        lines.append(f"{t.workload:<9}{t.dtype:<7}{t.path:<7}{t.ms:>10.2f}{t.tokens_per_s:>11.0f}"
                     f"{t.speedup:>9.2f}x{t.max_diff:>11.1e}")
    return "\n".join(lines) + "\n"
