"""The checkpoint commands: convert (any form -> an HF directory) and inspect."""

from __future__ import annotations

import argparse

from .arguments import ANY_FORM, boolean, checkpoint_source


def add_commands(commands: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    convert = commands.add_parser("convert", parents=[common],
                                  help="write an HF directory (config.json, model.safetensors, tokenizer) from any checkpoint form")
    convert.add_argument("src", type=checkpoint_source, help=ANY_FORM)
    convert.add_argument("dst", nargs="?", help="output directory (omit with --inspect to only list)")
    convert.add_argument("--inspect", action="store_true", help="list every tensor: name, shape, dtype and where it maps")
    convert.add_argument("--config", metavar="FILE", help="config file to use instead of the one beside SRC")
    convert.add_argument("--do_lower_case", "--do-lower-case", type=boolean, metavar="{true,false}",
                         help="the tokenizer's casing to record (default: the source's tokenizer_config.json, else "
                              "Google's release name, else the vocabulary)")
    convert.add_argument("--overwrite", action="store_true", help="replace DST if it exists (once the new one is complete)")
    convert.add_argument("--no-progress", action="store_true", help="no progress bar")

    inspect = commands.add_parser("inspect", parents=[common],
                                  help="which official checkpoint SRC is (by fingerprint), or its inferred architecture")
    inspect.add_argument("src", type=checkpoint_source, help=ANY_FORM)
    inspect.add_argument("--tensors", action="store_true", help="also list every tensor: name, shape, dtype and where it maps")
    inspect.add_argument("--no-progress", action="store_true", help="no progress bar while hashing large files")

    convert.set_defaults(run=run_convert)
    inspect.set_defaults(run=run_inspect)


def run_convert(args: argparse.Namespace) -> int:
    from ..checkpoints import convert

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
    if report.config_note:  # a form that keeps no BERT config: say where this one came from
        print(report.config_note)
    return 0


def run_inspect(args: argparse.Namespace) -> int:
    from ..checkpoints import convert

    print(convert.format_description(convert.describe_checkpoint(args.src, progress=not args.no_progress)))
    if args.tensors:
        print(convert.format_inspection(convert.inspect_checkpoint(args.src)))
    return 0
