"""The curves a training run draws (``training_curves.png``): the loss, and each held-out
metric beside the baseline it has to beat. A baseline is black and dashed and drawn on
top, so it stays visible where a curve runs along it; accuracies share one scale, 0 to
1, so that a rise of a few points looks as small as it is."""

from __future__ import annotations

from typing import Any

from ..file_utils import save_png

#: The held-out panels of pre-training: (title, metrics drawn as curves, their baselines).
#: ``mlm_accuracy`` is Google's mixed figure: it counts the 10% of positions that keep their
#: own token, which a model copies, so it rises without any use of context; it is drawn
#: faint beside the honest ``mlm_mask_accuracy``.
PRETRAINING_PANELS = (
    ("masked LM", ("mlm_mask_accuracy", "mlm_accuracy"), ("mlm_most_frequent_token_accuracy",)),
    ("next sentence", ("nsp_accuracy",), ("nsp_majority_accuracy",)),
)
FAINT_METRICS = ("mlm_accuracy",)
#: Evaluation entries that are sizes, not metrics (pre-training's held-out pairs and
#: [MASK] positions): not drawn.
HELD_OUT_COUNTS = ("held_out_pairs", "held_out_mask_positions")
#: Every line's words, by language: a Chinese corpus or task gets Chinese labels.
CURVE_WORDS = {
    "en": {"step": "step", "training loss": "training loss", "loss": "loss", "masked LM": "masked LM (held out)",
           "next sentence": "next sentence (held out)", "held-out evaluation": "held-out evaluation",
           "mlm_accuracy": "mlm_accuracy (mixed: counts kept tokens)", "mlm_mask_accuracy": "accuracy at [MASK]",
           "mlm_most_frequent_token_accuracy": "always the commonest token", "nsp_accuracy": "NSP accuracy",
           "nsp_majority_accuracy": "always the majority label", "accuracy": "accuracy", "entity_f1": "entity F1",
           "from random weights": "the same from random weights", "majority class": "always the majority class"},
    "zh": {"step": "步数", "training loss": "训练损失", "loss": "损失", "masked LM": "掩码语言模型（留出集）",
           "next sentence": "下一句预测（留出集）", "held-out evaluation": "留出集上的评估",
           "mlm_accuracy": "MLM 准确率（混合指标，含保留原字的位置）", "mlm_mask_accuracy": "[MASK] 位置准确率",
           "mlm_most_frequent_token_accuracy": "总猜最常见的字", "nsp_accuracy": "NSP 准确率",
           "nsp_majority_accuracy": "总猜多数类", "accuracy": "准确率", "entity_f1": "实体 F1",
           "from random weights": "同样微调，从随机权重开始", "majority class": "总猜多数类"},
}
#: A baseline: black, dashed, above the curves.
BASELINE_STYLE = {"color": "black", "linestyle": "--", "lw": 1.6, "zorder": 3}
#: A reference run (the same fine-tuning from random weights): grey, dotted, with crosses.
REFERENCE_STYLE = {"color": "tab:grey", "linestyle": ":", "marker": "x", "markersize": 6, "lw": 1.4, "zorder": 2}
CURVE_STYLE = {"marker": "o", "markersize": 5, "lw": 1.8, "zorder": 2}
FAINT_STYLE = {"color": "tab:blue", "alpha": 0.35, "linestyle": ":", "lw": 1.2, "zorder": 1}
PANEL_INCHES = 4.6
#: Accuracies from 0 to 1, a little room beyond so that a line at 0 or 1 is not hidden by the frame.
AXIS_LIMITS = (-0.02, 1.02)


def plot_history(history: Any, path: str, language: str = "en",
                 references: dict[str, list[tuple[int, float]]] | None = None,
                 baselines: dict[str, float] | None = None) -> str | None:
    """The loss and the held-out metrics of ``history`` (a ``Trainer``'s) against the step,
    as a PNG at ``path``; None without matplotlib or steps.

    ``language``: "en" or "zh", the labels' (``CURVE_WORDS``). ``references``: other runs'
    curves of the same metric, by name ("from random weights"); ``baselines``: constant
    lines, by name ("majority class"). Both go in the panel of a metric no pre-training
    panel takes, labelled in ``CURVE_WORDS`` where it has the name.

    transformers: none
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
    except ImportError:
        return None
    if not history.steps:
        return None
    from matplotlib.ticker import MaxNLocator

    from ..companion.fonts import figure_fonts

    words = CURVE_WORDS.get(language, CURVE_WORDS["en"])
    measured = {k for e in history.evaluations for k in e if k != "step" and k not in HELD_OUT_COUNTS}
    panels = [(title, [m for m in curves if m in measured], [b for b in lines if b in measured])
              for title, curves, lines in PRETRAINING_PANELS]
    panels = [panel for panel in panels if panel[1]]
    taken = {m for _, curves, lines in PRETRAINING_PANELS for m in curves + lines}
    others = sorted(measured - taken)
    if others:
        panels.append(("held-out evaluation", others, []))
    with figure_fonts("".join(words.values())) as plt:
        figure, axes = plt.subplots(1, 1 + len(panels), figsize=(PANEL_INCHES * (1 + len(panels)) + 2, 4),
                                    squeeze=False)
        loss = axes[0][0]
        loss.plot([s["step"] for s in history.steps], [s["loss"] for s in history.steps], lw=1)
        loss.set(xlabel=words["step"], ylabel=words["training loss"], title=words["loss"])
        loss.xaxis.set_major_locator(MaxNLocator(integer=True))
        for axis, (title, curves, lines) in zip(axes[0][1:], panels):
            for name in curves:
                points = [(e["step"], e[name]) for e in history.evaluations if name in e]
                axis.plot(*zip(*points), label=words.get(name, name),
                          **(FAINT_STYLE if name in FAINT_METRICS else CURVE_STYLE))
            for name in lines:
                points = [(e["step"], e[name]) for e in history.evaluations if name in e]
                axis.plot(*zip(*points), label=words.get(name, name), **BASELINE_STYLE)
            if title == "held-out evaluation":
                for name, points in (references or {}).items():
                    if points:
                        axis.plot(*zip(*points), label=words.get(name, name), **REFERENCE_STYLE)
                for name, value in (baselines or {}).items():
                    axis.axhline(value, label=words.get(name, name), **BASELINE_STYLE)
            axis.set(xlabel=words["step"], title=words[title], ylim=AXIS_LIMITS)
            axis.xaxis.set_major_locator(MaxNLocator(integer=True))  # steps are whole numbers
            # Below the axes, not on them: a legend inside would cover the curves where they end.
            axis.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=1, frameon=False)
        figure.tight_layout()
        return save_png(figure, path)
