"""The benchmark command: inference speed of attn_implementation="fast" against transformers and its peers."""

from __future__ import annotations

import argparse
import sys


def add_commands(commands: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    benchmark = commands.add_parser("benchmark", parents=[common],
                                    help='inference speed of attn_implementation="fast" against transformers and peers')
    benchmark.add_argument("--quick", action="store_true",
                           help="W1 and W2 only, 10 runs, no ablations, nothing compiled")
    benchmark.add_argument("--runs", type=int, metavar="N", help="timed calls per contender (default 15; quick 10)")
    benchmark.add_argument("--workload", action="append", choices=("W1", "W2", "W3", "W4", "W5"),
                           help="repeatable (default: all; W4, W5: one sequence of 64, 128 tokens)")
    benchmark.add_argument("--dtype", action="append", choices=("fp32", "bf16"), help="repeatable (default: both)")
    benchmark.set_defaults(run=run_benchmark)


def run_benchmark(args: argparse.Namespace) -> int:
    from ..parity import benchmark as bench

    quick = args.quick
    workloads = tuple(args.workload or (("W1", "W2") if quick else bench.WORKLOADS))
    report = bench.run_benchmark(
        workloads=workloads, dtypes=tuple(args.dtype or bench.DTYPES),
        runs=args.runs if args.runs is not None else (bench.QUICK_RUNS if quick else bench.RUNS), ablations=not quick,
        peers=tuple(peer for peer in bench.PEERS if not (quick and peer == "compile")),
        progress=lambda line: print(f"timing {line} ...", file=sys.stderr, flush=True),
    )
    print(bench.format_report(report), end="")
    return 0
