"""The training commands: show-instances, pretrain, finetune."""

from __future__ import annotations

import argparse

from .arguments import ANY_FORM, checkpoint_source


def add_commands(commands: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    show = commands.add_parser("show-instances", parents=[common],
                               help="a few pre-training instances (Google's create_pretraining_data), masks marked")
    show.add_argument("corpus", help="a text file in Google's format (one sentence per line, a blank line between "
                                     "documents), or a named corpus: chinese, peoples-daily, english")
    show.add_argument("--vocab", "--checkpoint", dest="vocab", metavar="SRC", type=checkpoint_source,
                      help="a directory with vocab.txt or tokenizer.json, a vocab.txt file, or any checkpoint form, or "
                           "zh (default: zh's character vocabulary for a mostly-Chinese corpus, such as chinese and "
                           "peoples-daily; else all-MiniLM-L6-v2's uncased vocabulary, which has no 是 or 首)")
    show.add_argument("--count", type=int, default=3, help="how many instances to print (default 3)")
    show.add_argument("--max-seq-length", type=int, default=128)
    show.add_argument("--masked-lm-prob", type=float, default=0.15)
    show.add_argument("--max-predictions-per-seq", type=int, default=20)
    show.add_argument("--short-seq-prob", type=float, default=0.1)
    show.add_argument("--whole-word-mask", action="store_true",
                      help="mask all pieces of a word together (on the Chinese corpora, all characters of a word)")
    show.add_argument("--seed", type=int, default=12345)

    pretrain = commands.add_parser("pretrain", parents=[common],
                                   help="pre-train a small BERT from scratch (MLM + NSP); runs under torchrun too")
    pretrain.add_argument("corpus", help="a text file in Google's format, or a named corpus: chinese (People's Daily + "
                                         "the shopping reviews, less the fixed test split), peoples-daily, english")
    pretrain.add_argument("output_dir", help="where checkpoints, vocab.txt, log.jsonl and training_curves.png go")
    pretrain.add_argument("--vocab", metavar="SRC", type=checkpoint_source, help="a vocab.txt or tokenizer directory (default: build one "
                                                          "from the training documents, see --build-vocab)")
    pretrain.add_argument("--build-vocab", choices=("auto", "chars", "wordpiece"), default="auto",
                          help="chars: one token per character, as BERT-Chinese; wordpiece: trained merges; "
                               "auto: chars for mostly-Chinese text, else wordpiece (default: %(default)s)")
    pretrain.add_argument("--vocab-size", type=int, default=8000, help="WordPiece vocabulary size (default: %(default)s)")
    pretrain.add_argument("--size", choices=tuple(PRETRAIN_SIZES),
                          help="model size: " + ", ".join(f"{name} {shape}" for name, shape in PRETRAIN_SIZES.items())
                               + f" (default: {SIZED['size'][0]}; --quick: {SIZED['size'][1]})")
    pretrain.add_argument("--quick", action="store_true",
                          help="a CI-sized run: " + ", ".join(f"--{k.replace('_', '-')} {v[1]}" for k, v in SIZED.items()
                                                              if v[1] is not None))
    for name, (full, quick) in SIZED.items():
        if name in ("size", "max_documents"):
            continue
        pretrain.add_argument(f"--{name.replace('_', '-')}", type=int, metavar="N",
                              help=f"{SIZED_HELP[name]} (default: {full}; --quick: {quick})")
    pretrain.add_argument("--batch-size", type=int, default=32,
                          help="examples per optimiser step, over all processes (default: %(default)s)")
    pretrain.add_argument("--gradient-accumulation-steps", type=int, default=1, metavar="N",
                          help="micro-batches per step and process (default: %(default)s)")
    pretrain.add_argument("--learning-rate", type=float, default=1e-3, help="peak learning rate (default: %(default)s)")
    pretrain.add_argument("--warmup-steps", type=int, metavar="N", help="(default: a tenth of the steps)")
    pretrain.add_argument("--optimizer", choices=("adamw", "google"), default="adamw",
                          help="adamw: torch AdamW, transformers' linear schedule; google: AdamWeightDecay, Google's "
                               "(default: %(default)s)")
    pretrain.add_argument("--whole-word-mask", action="store_true",
                          help="mask all pieces of a word together; on the Chinese corpora, all characters of a "
                               "word of their segmentation (Chinese BERT-wwm)")
    pretrain.add_argument("--dynamic-masking", action="store_true",
                          help="new masks every step (RoBERTa) instead of Google's static ones")
    pretrain.add_argument("--max-documents", type=int, metavar="N",
                          help="use only the first N documents (default: all; --quick: "
                               f"{SIZED['max_documents'][1]})")
    pretrain.add_argument("--seed", type=int, default=12345, help="(default: %(default)s)")
    pretrain.add_argument("--dropout", type=float, default=0.1,
                          help="hidden and attention dropout (default: %(default)s, BERT's)")
    _add_compute_arguments(pretrain)
    pretrain.add_argument("--resume", action="store_true", help="continue from the latest checkpoint in OUTPUT_DIR")
    pretrain.add_argument("--no-progress", action="store_true", help="no progress bar")
    pretrain.add_argument("--init-checkpoint", metavar="SRC", type=checkpoint_source,
                          help="start from this BertForPreTraining (and its vocabulary) instead of random weights: "
                               "Google's second phase at a longer --max-seq-length (its --size is the checkpoint's) "
                               "(default: none, random weights)")
    pretrain.add_argument("--max-position-embeddings", type=int, metavar="N",
                          help="positions the new model has (default: --max-seq-length); a first phase at a short "
                               "length gives the final length here")

    finetune = commands.add_parser("finetune", parents=[common],
                                   help="fine-tune CHECKPOINT on sentiment (shopping reviews), ner (People's Daily) or "
                                        "your own labelled file, and report it beside a majority baseline and the "
                                        "same run from random weights")
    finetune.add_argument("task", metavar="TASK",
                          help="sentiment, ner, or your own labelled file: .csv/.tsv with a header row text,label "
                               "(or text,text_pair,label) for classification, or .conll/.bio (a token and its BIO "
                               "label a line, a blank line after each sentence) for tagging; docs/training.md §3")
    finetune.add_argument("checkpoint", type=checkpoint_source, help=ANY_FORM)
    finetune.add_argument("output_dir", help="where checkpoints, log.jsonl and training_curves.png go "
                                             "(the run from random weights: OUTPUT_DIR/from-scratch)")
    finetune.add_argument("--max-steps", type=int, default=300, metavar="N", help="(default: %(default)s)")
    finetune.add_argument("--batch-size", type=int, default=32, help="(default: %(default)s)")
    finetune.add_argument("--learning-rate", type=float, default=5e-4, help="peak learning rate (default: %(default)s)")
    finetune.add_argument("--max-length", type=int, default=64, metavar="N", help="tokens per example (default: %(default)s)")
    finetune.add_argument("--max-examples", type=int, metavar="N",
                          help="train on N labelled examples (default: all); the test set is always the fixed split's "
                               "(or your dev file, or the part of your file held out)")
    finetune.add_argument("--dev", metavar="FILE",
                          help="your held-out examples, in TASK's format (default: hold out --dev-fraction of TASK)")
    finetune.add_argument("--dev-fraction", type=float, default=0.1, metavar="F",
                          help="the share of your file held out when there is no --dev (default: %(default)s)")
    finetune.add_argument("--format", dest="data_format", choices=("csv", "tsv", "conll"),
                          help="your file's format (default: from its extension)")
    finetune.add_argument("--optimizer", choices=("adamw", "google"), default="adamw", help="(default: %(default)s)")
    finetune.add_argument("--eval-every", type=int, default=100, metavar="N", help="steps (default: %(default)s)")
    finetune.add_argument("--save-every", type=int, default=100, metavar="N", help="steps (default: %(default)s)")
    finetune.add_argument("--seed", type=int, default=12345, help="(default: %(default)s)")
    finetune.add_argument("--no-scratch-baseline", action="store_true",
                          help="skip the same fine-tuning from random weights (in OUTPUT_DIR/from-scratch)")
    _add_compute_arguments(finetune)
    finetune.add_argument("--resume", action="store_true", help="continue from the latest checkpoint in OUTPUT_DIR")
    finetune.add_argument("--no-progress", action="store_true", help="no progress bar")
    show.set_defaults(run=run_show_instances)
    pretrain.set_defaults(run=run_pretrain, interrupted_hint=resumable)
    finetune.set_defaults(run=run_finetune, interrupted_hint=resumable)


def resumable(args: argparse.Namespace) -> str:
    """What an interrupted run leaves, as __main__.main says it after Ctrl-C or SIGTERM."""
    return (f"{args.output_dir} keeps its checkpoints up to the last complete one; the same command with --resume "
            f"continues from it")


def _add_compute_arguments(parser: argparse.ArgumentParser) -> None:
    """How the training commands compute: the encoder's path, and bfloat16 or not."""
    parser.add_argument("--attn-implementation", choices=("eager", "sdpa", "fast"), default="fast",
                        help="the encoder's path: fast is modeling_bert_fast's training path, equal to eager in loss "
                             "and gradients and the fastest (docs/training_speed.md) (default: %(default)s)")
    parser.add_argument("--threads", type=int, metavar="N",
                        help="CPU threads to compute with (default: torch's, one per core; one where the machine is "
                             "already busy, its load average at least the number of cores)")
    parser.add_argument("--bf16", action=argparse.BooleanOptionalAction,
                        help="compute in bfloat16 (autocast; fp32 weights) (default: on where the hardware computes "
                             "it: a GPU, or a CPU with AVX512-BF16 or AMX; off elsewhere, where it is slower)")


#: The model sizes --size offers: (hidden, layers) as training/pretraining.py's MODEL_SIZES
#: defines them, written here so that --help loads no torch (a test compares the two).
PRETRAIN_SIZES = {"quick": "2x64 (CI, seconds)", "tiny": "2x128", "small": "4x256"}
#: pretrain's settings that --quick changes: (default, with --quick).
SIZED = {"size": ("small", "quick"), "max_seq_length": (128, 64), "max_steps": (1000, 60), "dupe_factor": (5, 2),
         "eval_every": (100, 20), "save_every": (100, 30), "max_documents": (None, 300)}
SIZED_HELP = {"max_seq_length": "tokens per instance", "max_steps": "optimiser steps",
              "dupe_factor": "passes over the corpus, each with other masks",
              "eval_every": "steps between held-out evaluations", "save_every": "steps between checkpoints"}


def run_show_instances(args: argparse.Namespace) -> int:
    from ..checkpoints.convert import tokenizer_for
    from ..tokenization_bert_fast import BertTokenizerFast
    from .arguments import chosen_checkpoint
    from ..training import pretraining_data
    from ..training.pretraining import LANGUAGE_SAMPLE_DOCUMENTS

    if args.count < 1:
        raise ValueError(f"--count must be at least 1, got {args.count}")
    documents = pretraining_data.load_corpus(args.corpus, segmented=args.whole_word_mask)
    sample = "".join("".join(sentence) for document in documents[:LANGUAGE_SAMPLE_DOCUMENTS] for sentence in document)
    tokenizer = tokenizer_for(chosen_checkpoint(args.vocab, sample), BertTokenizerFast)
    instances = pretraining_data.create_pretraining_instances(
        documents, tokenizer,
        max_seq_length=args.max_seq_length,
        short_seq_prob=args.short_seq_prob, masked_lm_prob=args.masked_lm_prob,
        max_predictions_per_seq=args.max_predictions_per_seq, dupe_factor=1,
        whole_word_mask=args.whole_word_mask, seed=args.seed, source=args.corpus)
    print(f"{len(instances)} instances (one pass over the corpus); the first {min(args.count, len(instances))}:")
    print("marks: [MASK]→x replaced by [MASK] (80%), ⟨x⟩ kept but predicted (10%), ~y~→x random token (10%)\n")
    print("\n\n".join(pretraining_data.format_instance(i) for i in instances[:args.count]))
    return 0


def run_pretrain(args: argparse.Namespace) -> int:
    from ..cpu_capability import training_threads
    from ..training.curves import HELD_OUT_COUNTS
    from ..training.pretraining import pretrain, verdicts

    # Given values win; the rest come from --quick's sizes, else the full defaults.
    chosen = {k: getattr(args, k) if getattr(args, k) is not None else pair[args.quick] for k, pair in SIZED.items()}
    with training_threads(args.threads) as threads:
        if threads:
            print(threads)
        trainer = pretrain(args.corpus, args.output_dir, vocab=args.vocab, batch_size=args.batch_size,
                           gradient_accumulation_steps=args.gradient_accumulation_steps,
                           learning_rate=args.learning_rate, warmup_steps=args.warmup_steps, optimizer=args.optimizer,
                           whole_word_mask=args.whole_word_mask, dynamic_masking=args.dynamic_masking, seed=args.seed,
                           resume=args.resume, progress=not args.no_progress, dropout=args.dropout,
                           build_vocab=args.build_vocab, vocab_size=args.vocab_size, bf16=args.bf16,
                           init_checkpoint=args.init_checkpoint, max_position_embeddings=args.max_position_embeddings,
                           attn_implementation=args.attn_implementation, **chosen)
    if trainer.rank == 0:
        last = trainer.history.evaluations[-1] if trainer.history.evaluations else {}
        print(f"trained {trainer.step} steps; held-out: " + ", ".join(f"{k} {v:.4f}" for k, v in last.items()
                                                                        if k != "step" and k not in HELD_OUT_COUNTS))
        if "held_out_pairs" in last:
            print(f"  (on {last['held_out_pairs']:,} held-out sentence pairs, {last['held_out_mask_positions']:,} "
                  f"[MASK] positions)")
        for warning in verdicts(last) if last else []:
            print(f"warning: {warning}")
        print(f"wrote {args.output_dir} (model, vocab.txt, checkpoints, log.jsonl, training_curves.png)")
    return 0


def run_finetune(args: argparse.Namespace) -> int:
    from ..cpu_capability import training_threads
    from ..training.finetuning import finetune_and_compare

    with training_threads(args.threads) as threads:
        if threads:
            print(threads)
        report = finetune_and_compare(
            args.task, args.checkpoint, args.output_dir, scratch_baseline=not args.no_scratch_baseline,
            resume=args.resume, max_steps=args.max_steps, batch_size=args.batch_size, learning_rate=args.learning_rate,
            max_length=args.max_length, max_examples=args.max_examples, optimizer=args.optimizer,
            eval_every=args.eval_every, save_every=args.save_every, seed=args.seed, progress=not args.no_progress,
            bf16=args.bf16, attn_implementation=args.attn_implementation, dev=args.dev, dev_fraction=args.dev_fraction,
            data_format=args.data_format)
    result = report.result
    if result.trainer.rank == 0:
        print(f"{args.task}: held-out {result.metric} on {result.held_out_examples:,} examples after "
              f"{result.trainer.step} steps on {result.train_examples:,}; {args.output_dir} holds the best evaluation's "
              f"weights, step {result.best_step}'s")
        for name, value in report.rows:
            print(f"  {value:7.4f}  {name}")
        for warning in report.warnings:
            print(f"warning: {warning}")
    return 0
