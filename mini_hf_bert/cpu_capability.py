"""What the CPU's kernels can do here: the instruction sets torch, oneDNN and MKL run on,
and what bf16 costs where the CPU has no bf16 instructions.

The kernels may run on less than the CPU has: ``ATEN_CPU_CAPABILITY=avx2``,
``ONEDNN_MAX_CPU_ISA=AVX2`` and ``MKL_ENABLE_INSTRUCTIONS=AVX2`` hold torch's own kernels,
oneDNN's and MKL's to AVX2, which is how an AVX-512 machine measures and tests the code
an AVX2 laptop runs (``make test`` does, for the tests marked ``cpu_kernels``).
``cpu_kind`` reports what the kernels run on, and says when they are held.

A process forked from this one runs torch's CPU kernels on one thread
(``single_threaded_after_fork``): GNU OpenMP, which they run their threads on, does not
survive a fork.

transformers: none
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import time
from collections.abc import Callable, Iterator

import torch
import torch.nn.functional as F

logger = logging.getLogger(__name__)

#: The switches that hold the CPU kernels to fewer instructions (see the module docstring).
EMULATION_SWITCHES = ("ATEN_CPU_CAPABILITY", "ONEDNN_MAX_CPU_ISA", "MKL_ENABLE_INSTRUCTIONS")
#: ONEDNN_MAX_CPU_ISA values (oneDNN's names, any case) below AVX-512: oneDNN then runs
#: neither AVX512-BF16 nor AMX.
_ONEDNN_BELOW_AVX512 = ("SSE41", "AVX", "AVX2", "AVX2_VNNI", "AVX2_VNNI_2")


def _onednn_held_below_avx512() -> bool:
    return os.environ.get("ONEDNN_MAX_CPU_ISA", "").upper() in _ONEDNN_BELOW_AVX512


def cpu_features() -> dict[str, bool]:
    """Which instruction sets the kernels run on here: AVX2, AVX-512, AVX512-BF16, AMX.

    AVX-512 is torch's own dispatch (``ATEN_CPU_CAPABILITY`` lowers it); the bf16 and
    matrix units count only where oneDNN, which runs bf16 products, may use them.

    transformers: none
    """
    capability = torch.backends.cpu.get_cpu_capability()  # "AVX2", "AVX512", "DEFAULT", ...
    avx512 = capability.startswith("AVX512")
    onednn_full = avx512 and not _onednn_held_below_avx512()
    return {
        "AVX2": capability.startswith(("AVX2", "AVX512")),
        "AVX-512": avx512,
        "AVX512-BF16": onednn_full and torch.cpu._is_avx512_bf16_supported(),
        "AMX": onednn_full and torch.cpu._is_amx_tile_supported(),
    }


def cpu_kind() -> str:
    """The CPU kind the kernels run as, e.g. "AVX-512 + AVX512-BF16", "AVX2", "AVX2
    (emulated: ATEN_CPU_CAPABILITY=avx2, ... on a CPU with AVX-512, AVX512-BF16)".

    transformers: none
    """
    features = cpu_features()
    if features["AVX-512"]:
        kind = " + ".join(["AVX-512"] + [name for name in ("AVX512-BF16", "AMX") if features[name]])
    else:
        kind = "AVX2" if features["AVX2"] else "no AVX2"
    switches = [f"{name}={os.environ[name]}" for name in EMULATION_SWITCHES if os.environ.get(name)]
    if switches:
        hardware = [name for name, present in (("AVX-512", torch.cpu._is_avx512_supported()),
                                               ("AVX512-BF16", torch.cpu._is_avx512_bf16_supported()),
                                               ("AMX", torch.cpu._is_amx_tile_supported())) if present]
        kind += f" (emulated: {', '.join(switches)}, on a CPU with {', '.join(hardware) or 'AVX2'})"
    return kind


def bf16_is_native() -> bool:
    """Whether the CPU kernels compute bf16 products in hardware (AVX512-BF16 or AMX).

    transformers: none
    """
    features = cpu_features()
    return features["AVX512-BF16"] or features["AMX"]


#: The product bf16 is timed on against fp32: a batch of tokens through bert-base's
#: first feed-forward Linear, (rows, H) x (H, I).
BF16_PROBE_SHAPE = (128, 768, 3072)
#: Timed calls per dtype (the fastest is kept: the others met a busy moment).
BF16_PROBE_RUNS = 3


@functools.cache
def fastest_seconds(call: Callable[[], object], runs: int) -> float:
    """The fastest of ``runs`` timed calls, in seconds, after one untimed call (a kernel's
    first call sets itself up, and the data comes into cache): what the CPU can do, where
    a median would also count what other work took from it.

    transformers: none
    """
    call()
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - start)
    return best


def bf16_slowdown() -> float:
    """How many times slower a bf16 product runs than the same fp32 one on this CPU
    (F.linear on ``BF16_PROBE_SHAPE``): above 1 where bf16 is emulated. Measured once.

    transformers: none
    """
    rows, inner, outer = BF16_PROBE_SHAPE
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(rows, inner, generator=generator)  # (rows, H)
    weight = torch.randn(outer, inner, generator=generator)  # (I, H)
    best = {}
    with torch.inference_mode():
        for dtype in (torch.float32, torch.bfloat16):
            x_, weight_ = x.to(dtype), weight.to(dtype)
            best[dtype] = fastest_seconds(lambda: F.linear(x_, weight_), BF16_PROBE_RUNS)
    return best[torch.bfloat16] / best[torch.float32]


_WARNED = False


def warn_if_bf16_is_slow(asked_by: str) -> float | None:
    """Where the CPU has no bf16 instructions, say once per process that bf16 will be
    slower than fp32, by the factor measured here (``bf16_slowdown``); bf16 still runs as
    asked. Returns the factor where it warned (or had warned), None where bf16 is native.

    ``asked_by`` names what asked for bf16 (the fast path, ``pretrain --bf16``, the benchmark).

    transformers: none
    """
    global _WARNED
    if bf16_is_native():
        return None
    factor = bf16_slowdown()
    if factor <= 1.0:
        return None
    if not _WARNED:
        _WARNED = True
        logger.warning("%s: bf16 on this CPU (%s) runs %.1fx slower than fp32, measured on a %d x %d x %d product: "
                       "it has no bf16 instructions (AVX512-BF16 or AMX), so bf16 products are emulated. Running "
                       "bf16 as asked; fp32 is faster here.", asked_by, cpu_kind(), factor, *BF16_PROBE_SHAPE)
    return factor


def busy_machine_threads(requested: int | None) -> tuple[int, str | None]:
    """How many threads a training command computes with, and a sentence for its output
    when that is not torch's own choice (None otherwise).

    ``requested`` (``--threads``) wins. Otherwise torch's default (one per core, or
    ``OMP_NUM_THREADS``) is kept, except on a busy machine: where ``OMP_NUM_THREADS`` is
    unset and the 1-minute load average is already at least the number of threads torch
    would use, the run takes one. Its threads would otherwise wait for one another at every
    operation while the other work holds the cores: a learner's run on a busy 2-core
    machine took about 10 times longer a step with 2 threads than with 1.
    """
    default = torch.get_num_threads()
    if requested is not None:
        if requested < 1:
            raise ValueError(f"--threads must be at least 1, got {requested}")
        return requested, None if requested == default else f"threads: {requested} (--threads)"
    if os.environ.get("OMP_NUM_THREADS") or default == 1 or not hasattr(os, "getloadavg"):
        return default, None
    load = os.getloadavg()[0]
    if load < default:
        return default, None
    return 1, (f"threads: 1, not {default}: the machine is busy (load average {load:.1f} on {default} cores), and "
               f"threads that wait for one another slow every step; --threads {default} uses them all")


@contextlib.contextmanager
def training_threads(requested: int | None) -> Iterator[str | None]:
    """Compute with ``busy_machine_threads(requested)`` threads inside the block (yielding
    its sentence, or None), and give torch back its own number after it."""
    before = torch.get_num_threads()
    threads, sentence = busy_machine_threads(requested)
    torch.set_num_threads(threads)
    try:
        yield sentence
    finally:
        torch.set_num_threads(before)


def single_threaded_after_fork() -> None:
    """In a child just forked from this process: torch's CPU kernels on one thread.

    torch, oneDNN and MKL run their threads on GNU OpenMP, which does not survive a fork: a
    child whose parent had run parallel work waits forever at its first parallel region of
    its own. Measured with a bf16 model: every plain fork that then called it hung, with
    or without another thread inside the model at the fork; DataLoader's workers escape
    it because DataLoader sets one thread in each. Registered with ``os.register_at_fork``
    when this module is imported (``modeling_utils`` imports it), so it covers every fork,
    the user's own ones included. A child that needs more threads should be started with
    the spawn method (``multiprocessing.get_context("spawn")``), not raise the count:
    that brings the hang back.

    transformers: none (torch's own DataLoader workers call ``torch.set_num_threads(1)``)
    """
    torch.set_num_threads(1)


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=single_threaded_after_fork)
