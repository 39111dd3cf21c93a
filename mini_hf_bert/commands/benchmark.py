"""The benchmark commands: inference speed of attn_implementation="fast" against transformers
and its peers (``benchmark``), and a pre-training step's speed on every path that computes it
(``benchmark-training``).

Both run the benchmarks beside the package (benchmarks/: ``pip install ./benchmarks``).
Without them, ``benchmark`` times mini_hf_bert's own three paths (mini_hf_bert/parity/speed.py),
which needs nothing else, and says what the full comparison needs; ``benchmark-training``
says so and stops."""

from __future__ import annotations

import argparse
import importlib.util
import sys

#: The distribution that holds the comparisons, and how to get it from a checkout.
BENCHMARKS = "mini_hf_bert_benchmarks"
INSTALL_BENCHMARKS = 'pip install ./benchmarks "mini_hf_bert[bench]", from a checkout of the repository'


def benchmarks_installed() -> bool:
    return importlib.util.find_spec(BENCHMARKS) is not None


def add_commands(commands: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    benchmark = commands.add_parser("benchmark", parents=[common],
                                    help='inference speed of attn_implementation="fast" against transformers and peers')
    benchmark.add_argument("--quick", action="store_true",
                           help="W1 and W2 only, 10 runs, no ablations, nothing compiled")
    benchmark.add_argument("--runs", type=int, metavar="N", help="timed calls per contender (default 15; quick 10)")
    benchmark.add_argument("--workload", action="append", choices=("W1", "W2", "W3", "W4", "W5"),
                           help="repeatable (default: all; W4, W5: one sequence of 64, 128 tokens)")
    benchmark.add_argument("--dtype", action="append", choices=("fp32", "bf16", "fp16"),
                           help="repeatable (default: fp32 and bf16 on the CPU; fp16, bf16 and fp32 on a GPU; "
                                "fp16 on a GPU only)")
    benchmark.add_argument("--device", default="cpu", metavar="DEVICE",
                           help="cpu (default), or cuda / cuda:N: the fast path against transformers on that GPU")
    benchmark.set_defaults(run=run_benchmark)

    training = commands.add_parser("benchmark-training", parents=[common],
                                   help="a pre-training step of the shipped Chinese BERT's recipe: today's path, the "
                                        "fast path and transformers, side by side")
    training.add_argument("--quick", action="store_true",
                          help="3 timed steps per contender and 600 documents (default: 10 and 4000)")
    training.add_argument("--runs", type=int, metavar="N", help="timed steps per contender (default 10; quick 3)")
    training.add_argument("--phase", action="append", choices=("1", "2"),
                          help="repeatable: 1 = 128 x 32, 2 = 64 x 128 (default: both)")
    training.add_argument("--dtype", action="append", choices=("fp32", "bf16"),
                          help="repeatable (default: both; bf16 only where the CPU has it)")
    training.add_argument("--documents", type=int, metavar="N",
                          help="training documents the batches are made from (default 4000; quick 600)")
    training.set_defaults(run=run_training_benchmark)


def _progress(line: str) -> None:
    print(f"timing {line} ...", file=sys.stderr, flush=True)


def run_benchmark(args: argparse.Namespace) -> int:
    if args.device != "cpu" and not (args.device == "cuda" or args.device.startswith("cuda:")):
        raise ValueError(f"--device {args.device}: the GPU benchmark runs on cuda or cuda:N (the CPU's: --device cpu)")
    if args.device == "cpu" and args.dtype and "fp16" in args.dtype:
        raise ValueError("--dtype fp16: the CPU benchmark runs fp32 and bf16 (fp16 is measured with --device cuda)")
    if not benchmarks_installed():
        return _run_own_paths(args)
    from mini_hf_bert_benchmarks import inference as bench

    quick = args.quick
    workloads = tuple(args.workload or (("W1", "W2") if quick else bench.WORKLOADS))
    if args.device != "cpu":
        return _run_gpu_benchmark(args, workloads)
    report = bench.run_benchmark(
        workloads=workloads, dtypes=tuple(args.dtype or bench.DTYPES),
        runs=args.runs if args.runs is not None else (bench.QUICK_RUNS if quick else bench.RUNS), ablations=not quick,
        peers=tuple(peer for peer in bench.PEERS if not (quick and peer == "compile")),
        progress=_progress,
    )
    print(bench.format_report(report), end="")
    return 0


def _run_own_paths(args: argparse.Namespace) -> int:
    """mini_hf_bert's eager, sdpa and fast paths only: what runs with nothing else installed."""
    from ..parity import speed

    if args.device != "cpu":
        raise ValueError(f"--device {args.device}: the GPU benchmark is in the benchmarks beside the package; "
                         f"install them: {INSTALL_BENCHMARKS}")
    print(f"note: timing mini_hf_bert's own paths only; transformers and the other engines are timed by the "
          f"benchmarks beside the package, not installed here ({INSTALL_BENCHMARKS})", file=sys.stderr)
    timings = speed.run_speed(workloads=tuple(args.workload or speed.DEFAULT_WORKLOADS),
                              dtypes=tuple(args.dtype) if args.dtype else None,
                              runs=args.runs if args.runs is not None else speed.RUNS, progress=_progress)
    print(speed.format_speed(timings, speed.machine_description()), end="")
    return 0


def _run_gpu_benchmark(args: argparse.Namespace, workloads: tuple[str, ...]) -> int:
    from mini_hf_bert_benchmarks import gpu as benchmark_gpu

    quick = args.quick
    report = benchmark_gpu.run_gpu_benchmark(
        workloads=workloads, dtypes=tuple(args.dtype or benchmark_gpu.GPU_DTYPES),
        runs=args.runs if args.runs is not None else benchmark_gpu.GPU_RUNS, ablations=not quick,
        device=args.device, progress=_progress,
    )
    print(benchmark_gpu.format_gpu_report(report), end="")
    return 0


def run_training_benchmark(args: argparse.Namespace) -> int:
    if not benchmarks_installed():
        raise ValueError(f"benchmark-training: the training benchmark is in the benchmarks beside the package, "
                         f"not installed here; install them: {INSTALL_BENCHMARKS}")
    from mini_hf_bert_benchmarks import training_speed as speed

    quick = args.quick
    report = speed.run_training_benchmark(
        phases=tuple(f"phase {p}" for p in args.phase) if args.phase else tuple(speed.PHASES),
        dtypes=tuple(args.dtype or speed.DTYPES),
        runs=args.runs if args.runs is not None else (speed.QUICK_RUNS if quick else speed.RUNS),
        documents=args.documents if args.documents is not None else (speed.QUICK_DOCUMENTS if quick else speed.DOCUMENTS),
        progress=_progress,
    )
    print(speed.format_training_report(report), end="")
    return 0
