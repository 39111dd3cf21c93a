"""Is a newly trained Chinese BERT better than the shipped one on every target? Measures a
candidate the way the shipped model was measured, and compares.

    .venv/bin/python tools/candidate_report.py measure runs/zh-stage2 /tmp/measure.json      # ~15 min
    .venv/bin/python tools/candidate_report.py sentiment runs/zh-stage2 /tmp/sentiment.json  # ~20 min
    .venv/bin/python tools/candidate_report.py verdict runs/zh-stage2 /tmp/measure.json /tmp/sentiment.json
    .venv/bin/python tools/candidate_report.py render    # only the pages, from the JSON

On 2 cores the first two run side by side, one thread each (OMP_NUM_THREADS=1), each into
its own file; ``verdict`` joins them, so no file has two writers.

``measure`` is tools/chinese_bert_report.py's own measurement (held-out [MASK] accuracy, the
one-[MASK] test beside the count model, the everyday set, the fill-mask set); ``sentiment``
is tools/learning_curves.py's runs at 1,000 labels (its seeds, steps and settings), from
the candidate's weights and from random weights of the candidate's size. The shipped model's
figures are those docs/training/chinese_bert.json and learning_curves.json record for it.

``verdict`` writes both beside each other, each target's bar, and whether the candidate is
better than the shipped model on every one (the rule a model must pass to replace it), into
docs/training/candidate.json, and renders docs/candidate_model.md and its Chinese twin from it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from mini_hf_bert.file_utils import write_text  # noqa: E402
from tools import provenance  # noqa: E402

OUT = os.path.join(ROOT, "docs", "training", "candidate.json")
PAGES = {"en": os.path.join(ROOT, "docs", "candidate_model.md"),
         "zh": os.path.join(ROOT, "docs", "zh", "candidate_model.md")}
#: The code the figures depend on (tools/docs_status.py watches it): the report's
#: measurement, learning_curves' runs, and this tool.
MEASURED_SOURCES = ("tools/candidate_report.py", "tools/chinese_bert_report.py", "tools/mask_benchmark.py",
                    "tools/everyday_cloze.py", "tools/data/everyday_zh.tsv", "tools/learning_curves.py",
                    "mini_hf_bert/training/corpora.py", "mini_hf_bert/training/finetuning.py",
                    "mini_hf_bert/training/trainer.py", "mini_hf_bert/training/optimization.py")

#: The targets a shipped Chinese BERT is held to (everyday sentences, the People's Daily
#: one-[MASK] test against the count model, fine-tuning on 1,000 sentiment labels).
TARGETS = {"everyday_top1": 0.40, "everyday_top5": 0.60, "peoples_daily_over_count_model": 0.0,
           "sentiment_gain_1000": 0.05}
LABELS = 1000
SENTIMENT_SEEDS = (1, 2, 3)


def model_digest(checkpoint: str) -> str:
    with open(os.path.join(checkpoint, "model.safetensors"), "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def measure(checkpoint: str) -> dict:
    from tools.chinese_bert_report import measure as report_measure

    return report_measure(checkpoint)


def sentiment(checkpoint: str) -> dict:
    """learning_curves' runs at ``LABELS`` labels, both starts, its seeds."""
    from tools.learning_curves import key, run_one
    from tools.provenance import collect

    runs = {}
    with tempfile.TemporaryDirectory() as work:
        for seed in SENTIMENT_SEEDS:
            for start in ("pretrained", "random"):
                runs[key("sentiment", LABELS, seed, start)] = run_one("sentiment", LABELS, seed, start, checkpoint, work)
    return {"runs": runs, "provenance": collect(sys.argv), "model_safetensors_sha256": model_digest(checkpoint)}


def gain(runs: dict) -> float:
    """Mean accuracy from the pre-trained weights minus mean from random weights, at ``LABELS``."""
    chosen = [r for r in runs.values() if r["task"] == "sentiment" and r["size"] == LABELS]
    pre = [r["value"] for r in chosen if r["start"] == "pretrained"]
    rnd = [r["value"] for r in chosen if r["start"] == "random"]
    if not pre or not rnd:
        raise ValueError(f"no sentiment runs at {LABELS} labels from both starts")
    return statistics.mean(pre) - statistics.mean(rnd)


def scores(measured: dict, runs: dict) -> dict[str, float]:
    """The four figures the targets name, from a measurement and its sentiment runs."""
    one = measured["sources"]["peoples-daily"]["one_mask"]
    return {"everyday_top1": measured["everyday"]["top1"], "everyday_top5": measured["everyday"]["top5"],
            "peoples_daily_over_count_model": one["bert"]["top1"] - one["count_model"]["top1"],
            "sentiment_gain_1000": gain(runs)}


def compare(candidate: dict[str, float], shipped: dict[str, float]) -> dict:
    """Per target: both figures, the bar, whether each meets it, whether the candidate is
    better (strictly); and whether it is better on every target."""
    rows = {name: {"candidate": candidate[name], "shipped": shipped[name], "bar": bar,
                   "candidate_meets": candidate[name] >= bar if name != "peoples_daily_over_count_model"
                   else candidate[name] > bar,
                   "shipped_meets": shipped[name] >= bar if name != "peoples_daily_over_count_model"
                   else shipped[name] > bar,
                   "better": candidate[name] > shipped[name]}
            for name, bar in TARGETS.items()}
    return {"targets": rows, "better_on_every_target": all(r["better"] for r in rows.values())}


def _load(path: str) -> dict:
    from mini_hf_bert.file_utils import read_json

    found = read_json(path, ValueError, "measurements file (JSON)")  # bounded; a pipe or device refused
    if not isinstance(found, dict):
        raise ValueError(f"{path}: not a measurements file (a JSON object)")
    return found


def _refuse_overwriting_inputs(out: str, inputs: list[str]) -> None:
    """``out`` must not be (or, through a link, resolve to) a file this step reads: the
    checkpoint's files or a part it joins."""
    target = os.path.realpath(out)
    for path in inputs:
        if os.path.exists(path) and os.path.realpath(path) == target:
            raise ValueError(f"{out}: is {path}, which this step reads; write the output elsewhere")


def verdict(checkpoint: str, measured_path: str, sentiment_path: str) -> dict:
    from mini_hf_bert.checkpoints.bundled import chinese_checkpoint_dir

    measured, runs = _load(measured_path), _load(sentiment_path)
    digest = model_digest(checkpoint)
    for path, part in ((measured_path, measured), (sentiment_path, runs)):
        if part.get("model_safetensors_sha256") != digest:
            raise ValueError(f"{path}: measured another model than {checkpoint}'s")
    shipped_measured = _load(os.path.join(ROOT, "docs", "training", "chinese_bert.json"))
    shipped_curves = _load(os.path.join(ROOT, "docs", "training", "learning_curves.json"))
    shipped_digest = model_digest(chinese_checkpoint_dir())
    for name, part in (("chinese_bert.json", shipped_measured), ("learning_curves.json", shipped_curves)):
        if part.get("model_safetensors_sha256") != shipped_digest:
            raise ValueError(f"docs/training/{name}: measured another model than the shipped one; measure it again")
    run_json = os.path.join(checkpoint, "run.json")
    return {"provenance": provenance.collect(sys.argv), "candidate": {"checkpoint": checkpoint, "model_safetensors_sha256": digest, "config": measured["config"],
                          "parameters": measured["parameters"], "bytes": measured["bytes"],
                          "training": _load(run_json) if os.path.isfile(run_json) else None,
                          "measured": measured, "sentiment": runs},
            "shipped": {"model_safetensors_sha256": shipped_digest, "config": shipped_measured["config"]},
            **compare(scores(measured, runs["runs"]), scores(shipped_measured, shipped_curves["runs"]))}


NAMES = {"everyday_top1": ("everyday sentences: top-1", "日常句子：top-1"),
         "everyday_top5": ("everyday sentences: top-5", "日常句子：top-5"),
         "peoples_daily_over_count_model": ("People's Daily, one [MASK]: top-1 minus the count model's",
                                            "人民日报单个 [MASK]：top-1 减去计数模型的"),
         "sentiment_gain_1000": ("sentiment at 1,000 labels: gain over random weights",
                                 "情感分类，1,000 个标签：比随机权重多出的准确率")}


def _size(config: dict) -> str:
    return f"{config['num_hidden_layers']} x {config['hidden_size']}"


def render(result: dict, language: str) -> str:
    """docs/candidate_model.md (``language`` "en") or its Chinese twin, from ``result``."""
    def t(en: str, zh: str) -> str:
        return zh if language == "zh" else en

    candidate, shipped = result["candidate"], result["shipped"]
    lines = [t("# The next Chinese BERT: the latest candidate against the shipped model",
               "# 下一个中文 BERT：最新的候选模型与随包模型的对比"), "",
             t("<!-- generated by tools/candidate_report.py from docs/training/candidate.json; do not edit -->",
               "<!-- 由 tools/candidate_report.py 根据 docs/training/candidate.json 生成；请勿手改 -->"), "",
             t(f"A model replaces the shipped one ({_size(shipped['config'])}) only if it is better on every target "
               "below. How to train and judge one: [training.md](training.md#is-a-new-model-better-toolscandidate_reportpy).",
               f"新模型只有在下面每个目标上都更好，才能替换随包的模型（{_size(shipped['config'])}）。怎样训练和评判："
               "[training.md](training.md#新模型更好吗toolscandidate_reportpy)。"), ""]
    training = candidate.get("training")
    size = _size(candidate["config"])
    if training:
        minutes = training["wall_seconds"] / 60
        lines += [t(f"The candidate: {size}, {candidate['parameters']:,} parameters ({candidate['bytes']:,} bytes "
                    f"stored), {training['steps']:,} steps of {training['batch_size']} x {training['seq_length']} "
                    f"positions on {training['device']} in {minutes:.0f} minutes "
                    f"({training['positions_per_second']:,.0f} positions/s).",
                    f"候选模型：{size}，{candidate['parameters']:,} 个参数（存储 {candidate['bytes']:,} 字节），在 "
                    f"{training['device']} 上训练 {training['steps']:,} 步，每步 {training['batch_size']} x "
                    f"{training['seq_length']} 个位置，用时 {minutes:.0f} 分钟（每秒 "
                    f"{training['positions_per_second']:,.0f} 个位置）。"), "",
                  t("Its training: ", "它的训练：") + provenance.render(training["provenance"], language), ""]
    else:
        lines += [t(f"The candidate: {size}, {candidate['parameters']:,} parameters.",
                    f"候选模型：{size}，{candidate['parameters']:,} 个参数。"), ""]
    lines += ["| " + " | ".join((t("target", "目标"), t("bar", "要求"), t("shipped", "随包模型"),
                                  t("candidate", "候选模型"), t("better", "更好"))) + " |",
              "| --- | --- | --- | --- | --- |"]
    for name, row in result["targets"].items():
        bar = (">" if name == "peoples_daily_over_count_model" else ">=") + f" {row['bar']:+.2f}".replace("+", "")
        lines.append(f"| {t(*NAMES[name])} | {bar} | {row['shipped']:+.3f} | {row['candidate']:+.3f} | "
                     f"{t('yes', '是') if row['better'] else t('no', '否')} |")
    verdict_line = (t("Better on every target: it may replace the shipped model.",
                      "每个目标上都更好：可以替换随包的模型。") if result["better_on_every_target"] else
                    t("Not better on every target: the shipped model stays.", "并非每个目标都更好：随包的模型保留。"))
    lines += ["", verdict_line, "",
              t("The candidate measured: ", "候选模型的测量：") + provenance.render(candidate["measured"]["provenance"],
                                                                            language),
              "",
              t("Its fine-tuning runs: ", "它的微调：") + provenance.render(candidate["sentiment"]["provenance"], language),
              "",
              t("Compared: ", "对比：") + provenance.render(result["provenance"], language),
              "",
              t("The shipped model's figures are those of [training_results.md](training_results.md), with the "
                "provenance printed there.", "随包模型的数字取自 [training_results.md](training_results.md)，来源见那一页。"),
              ""]
    return "\n".join(lines)


def write_pages(result: dict) -> list[str]:
    for language, path in PAGES.items():
        write_text(path, render(result, language))
    return list(PAGES.values())


def table(result: dict) -> str:
    lines = [f"{'target':34} {'bar':>7} {'shipped':>8} {'candidate':>10}  better"]
    for name, row in result["targets"].items():
        lines.append(f"{name:34} {row['bar']:>7.3f} {row['shipped']:>8.3f} {row['candidate']:>10.3f}  "
                     f"{'yes' if row['better'] else 'no'}")
    lines.append("better on every target: " + ("yes" if result["better_on_every_target"] else "no"))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    steps = parser.add_subparsers(dest="step", required=True)
    for name, text in (("measure", "the report's measurement of CHECKPOINT into OUT"),
                       ("sentiment", f"fine-tuning at {LABELS} labels from CHECKPOINT and from random weights")):
        p = steps.add_parser(name, help=text)
        p.add_argument("checkpoint")
        p.add_argument("out")
    v = steps.add_parser("verdict", help="join the two, compare with the shipped model, write --out")
    v.add_argument("checkpoint")
    v.add_argument("measured")
    v.add_argument("sentiment")
    v.add_argument("--out", default=OUT, help="(default docs/training/candidate.json; the pages are rendered from it)")
    steps.add_parser("render", help="only render docs/candidate_model.md (en, zh) from docs/training/candidate.json")
    args = parser.parse_args(argv)
    try:
        if args.step == "render":
            for path in write_pages(_load(OUT)):
                sys.stdout.write(f"wrote {path}\n")
            return 0
        if not os.path.isfile(os.path.join(args.checkpoint, "model.safetensors")):
            raise ValueError(f"{args.checkpoint}: no model.safetensors; give a model directory")
        checkpoint_files = [os.path.join(args.checkpoint, name) for name in os.listdir(args.checkpoint)]
        parts = [args.measured, args.sentiment] if args.step == "verdict" else []
        _refuse_overwriting_inputs(args.out, checkpoint_files + parts)
        if args.step == "verdict":
            result = verdict(args.checkpoint, args.measured, args.sentiment)
            write_text(args.out, json.dumps(result, indent=1, ensure_ascii=False) + "\n")
            if os.path.abspath(args.out) == OUT:
                write_pages(result)
            sys.stdout.write(table(result) + "\n")
        else:
            result = measure(args.checkpoint) if args.step == "measure" else sentiment(args.checkpoint)
            write_text(args.out, json.dumps(result, indent=1, ensure_ascii=False) + "\n")
            sys.stdout.write(f"wrote {args.out}\n")
    except (OSError, ValueError) as e:
        sys.stderr.write(f"error: {e}\n")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
