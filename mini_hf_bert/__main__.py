"""``python -m mini_hf_bert COMMAND``: thin command-line wrappers over the library.

Each command lives in the module of its purpose in ``commands/`` (``companion.py``,
``checkpoints.py``, ``training.py``, ``benchmark.py``): its arguments and a ``run_*``
function that calls the library and prints. This module builds the parser and turns errors
into one line; it is also the ``mini-hf-bert`` script's entry point.

Commands:
    demo     encode sentences with a real checkpoint, print similarities and a parity table
    parity   module-by-module comparison with transformers (the tracer's, on the demo's sentences)
    trace    every module's output for one text, in the order the modules ran (--compare: beside transformers)
    tokenize the tokenizer's stages for one text (--explain)
    attention  attention maps of one text: a PNG (one head or a layer's grid) and an offline HTML page
    convert  any checkpoint form (Google TF directory / prefix / zip, HF directory) -> an HF directory
    inspect  which official checkpoint a path is (content fingerprint), or the architecture it implies
    show-instances  pre-training instances made from a corpus as Google makes them, masks marked
    pretrain  train a small BertForPreTraining from scratch on a corpus (also under torchrun)
    finetune  fine-tune a checkpoint on Chinese sentiment or named entities, beside two baselines
    benchmark  inference speed of attn_implementation="fast" against transformers and its peers
    benchmark-training  a pre-training step's speed: today's path, the fast path and transformers
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
import traceback

from .commands import benchmark, checkpoints, companion, training

#: Exit status for every error a user can cause (argparse uses 2 for bad arguments too).
EXIT_USER_ERROR = 2
#: Errors that a user's input causes -- a bad path or file, a config, an argument -- and
#: whose message already names the file or argument: printed as they are, in one line.
#: The library's own (CheckpointError, ConfigError, TokenizerFileError) are ValueErrors;
#: naming them here would import torch before ``--help`` could answer.
USER_ERRORS = (OSError, ValueError, TypeError, RuntimeError)
#: Exit status after Ctrl-C or SIGTERM: 128 + the signal, as a shell reports a killed job;
#: and after the reader of the output went away (``... | head``), as SIGPIPE would.
EXIT_INTERRUPTED = {signal.SIGINT: 128 + signal.SIGINT, signal.SIGTERM: 128 + signal.SIGTERM}
EXIT_PIPE_CLOSED = 128 + signal.SIGPIPE


class Terminated(KeyboardInterrupt):
    """SIGTERM (``kill PID``, a scheduler's stop), raised as Ctrl-C is, so that a run
    unwinds the same way: its lock released, its unfinished files removed."""


def _raise_terminated(signum: int, frame: object) -> None:
    raise Terminated()


#: The modules that add commands, in the order ``--help`` lists them.
COMMAND_MODULES = (companion, checkpoints, training, benchmark)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m mini_hf_bert", description=__doc__.split("\n")[0])
    verbose = dict(action="store_true", help="log loading details, and show the traceback of an error")
    parser.add_argument("-v", "--verbose", **verbose)
    # Accepted after the command too; SUPPRESS keeps a subcommand from resetting the flag.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-v", "--verbose", default=argparse.SUPPRESS, **{k: v for k, v in verbose.items()})
    commands = parser.add_subparsers(dest="command", required=True)
    for module in COMMAND_MODULES:
        module.add_commands(commands, common)
    return parser


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
    # SIGTERM unwinds like Ctrl-C (only the main thread may set a handler: a command run
    # from another thread, as a test may, keeps the default).
    in_main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _raise_terminated) if in_main_thread else None
    try:
        return args.run(args)  # each command module set its run_* function
    except BrokenPipeError:
        # The reader took what it wanted and left (`tokenize ... | head`): not an error, so
        # nothing is said; the rest of the output goes nowhere, not into a second error at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_PIPE_CLOSED
    except KeyboardInterrupt as e:
        signum = signal.SIGTERM if isinstance(e, Terminated) else signal.SIGINT
        hint = getattr(args, "interrupted_hint", None)
        print(f"interrupted by {signal.Signals(signum).name}" + (f": {hint(args)}" if hint else ""), file=sys.stderr)
        return EXIT_INTERRUPTED[signum]
    except Exception as e:  # noqa: BLE001 - a command line prints one line, never a traceback (unless -v)
        if args.verbose:
            traceback.print_exc()
        print(f"error: {error_message(e)}", file=sys.stderr)
        return EXIT_USER_ERROR
    finally:
        if in_main_thread:
            signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    sys.exit(main())
