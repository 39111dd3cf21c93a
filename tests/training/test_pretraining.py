"""``pretrain``: a small BERT from scratch on People's Daily learns (held-out MLM accuracy
well above chance), loads in transformers with the same logits, resumes exactly, and runs
unchanged under torchrun with 2 processes, equal to one process on the same global batch."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys

import pytest
import torch
import transformers
from safetensors.torch import load_file

import mini_hf_bert
from mini_hf_bert.__main__ import main
from mini_hf_bert.parity.compare import FP32_ATOL
from ..paths import FIXTURES, ROOT

ZH = os.path.join(FIXTURES, "pretraining", "corpus_zh.txt")
SMALL = ["--no-progress", "--max-seq-length", "32", "--dupe-factor", "1", "--eval-every", "100", "--batch-size", "8"]


def _weights(directory) -> dict[str, torch.Tensor]:
    return load_file(os.path.join(directory, "model.safetensors"))


def test_quick_pretraining_learns_and_loads_in_transformers(tmp_path, capsys):
    """The README's command, as written there."""
    assert main(["pretrain", "peoples-daily", str(tmp_path), "--quick", "--no-progress"]) == 0
    assert "trained 60 steps; held-out: mlm_accuracy" in capsys.readouterr().out
    with open(tmp_path / "training_history.json", encoding="utf-8") as f:
        history = json.load(f)
    vocab = len(mini_hf_bert.BertTokenizer(str(tmp_path / "vocab.txt")))
    final = history["evaluations"][-1]
    assert final["step"] == 60 and final["mlm_accuracy"] > 20 / vocab, final  # chance is 1 / vocab
    assert history["steps"][-1]["loss"] < history["steps"][0]["loss"] - 0.5
    assert (tmp_path / "training_curves.png").stat().st_size > 1000 and (tmp_path / "log.jsonl").exists()
    ours = mini_hf_bert.BertForPreTraining.from_pretrained(tmp_path)
    theirs = transformers.BertForPreTraining.from_pretrained(tmp_path).eval()
    tokenizer = mini_hf_bert.BertTokenizer.from_pretrained(tmp_path)
    batch = tokenizer(["中国人民", "新年快乐，家庭幸福！"], padding=True, return_tensors="pt")
    with torch.no_grad():
        a, b = ours(**batch), theirs(**batch)
    assert torch.allclose(a.prediction_logits, b.prediction_logits, atol=FP32_ATOL, rtol=0)
    assert torch.allclose(a.seq_relationship_logits, b.seq_relationship_logits, atol=FP32_ATOL, rtol=0)


def test_an_interrupted_run_resumed_ends_where_an_uninterrupted_one_does(tmp_path):
    # --threads: every run computes with the same threads (on a busy machine a run would
    # otherwise take one, and its sums in another order end in other last bits)
    run = ["pretrain", ZH, *SMALL, "--max-steps", "6", "--save-every", "3", "--threads", str(torch.get_num_threads())]
    assert main([*run[:1], run[1], str(tmp_path / "whole"), *run[2:]]) == 0
    cut = tmp_path / "cut"  # as if stopped right after step 3: only checkpoint-3 (and the vocabulary) survive
    cut.mkdir()
    shutil.copytree(tmp_path / "whole" / "checkpoint-3", cut / "checkpoint-3")
    shutil.copy(tmp_path / "whole" / "vocab.txt", cut / "vocab.txt")
    assert main([*run[:1], run[1], str(cut), *run[2:], "--resume"]) == 0
    whole, resumed = _weights(tmp_path / "whole"), _weights(cut)
    assert whole.keys() == resumed.keys()
    assert all(torch.equal(whole[k], resumed[k]) for k in whole)
    assert not torch.equal(whole["bert.embeddings.word_embeddings.weight"],
                           _weights(cut / "checkpoint-3")["bert.embeddings.word_embeddings.weight"])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_two_processes_under_torchrun_equal_one_process(tmp_path):
    """gloo on CPU. Dropout off, so the two runs draw nothing at random. One process runs the
    global batch of 8 as 2 accumulated micro-batches: the micro-batches the 2 ranks run."""
    env = dict(os.environ, OMP_NUM_THREADS="1")
    args = ["-m", "mini_hf_bert", "pretrain", ZH, *SMALL, "--max-steps", "4", "--dropout", "0", "--save-every", "100"]
    two = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2",
                          f"--master_port={_free_port()}", *args[:4], str(tmp_path / "two"), *args[4:]],
                         capture_output=True, text=True, env=env, timeout=600)
    assert two.returncode == 0, two.stderr[-3000:]
    one = subprocess.run([sys.executable, *args[:4], str(tmp_path / "one"), *args[4:], "--gradient-accumulation-steps", "2"],
                         capture_output=True, text=True, env=env, timeout=600)
    assert one.returncode == 0, one.stderr[-3000:]
    assert two.stdout.count("trained 4 steps") == 1  # rank 0 alone reports and writes
    log = (tmp_path / "two" / "log.jsonl").read_text()
    assert '"ranks": 2, "rank_parameter_max_diff": 0.0' in log  # the two copies stayed identical
    a, b = _weights(tmp_path / "two"), _weights(tmp_path / "one")
    assert max(float((a[k] - b[k]).abs().max()) for k in a) <= 1e-6
    start = _weights(tmp_path / "one" / "checkpoint-4")
    assert all(torch.equal(b[k], start[k]) for k in b)  # the final model is the last checkpoint's


@pytest.mark.parametrize("argv,fragment", [
    (["pretrain", ZH, "OUT", "--batch-size", "6", "--gradient-accumulation-steps", "4"],
     "batch_size=6 must divide into 1 process(es) x 4 accumulation step(s)"),
    (["pretrain", ZH, "OUT", "--max-seq-length", "4"], "max_seq_length=4: an instance needs"),
    (["pretrain", ZH, "OUT", "--max-documents", "2"], f"{ZH} has 2 document(s); pre-training needs at least 3: 2 held "
                                                       "out for evaluation, the rest to train on. The format is one "
                                                       "sentence per line, and a blank line between documents"),
    (["pretrain", ZH, "OUT", "--resume"], "OUT: --resume, but there is no complete checkpoint-STEP directory"),
    (["pretrain", ZH, "OUT", "--warmup-steps", "5000"], "warmup_steps must be from 0 to max_steps (1000)"),
])
def test_bad_pretraining_arguments_are_one_line_errors(tmp_path, capsys, argv, fragment):
    argv = [str(tmp_path / "OUT") if a == "OUT" else a for a in argv] + ["--no-progress"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and fragment.replace("OUT", str(tmp_path / "OUT")) in err and err.count("\n") == 1, err
    assert not (tmp_path / "OUT").exists()  # refused before anything was written


def test_bf16_autocast_trains_with_fp32_weights(tmp_path, capsys):
    """--bf16 (meant for a GPU; CPU autocast supports it too): the loss stays finite, the
    weights stay float32 and move."""
    assert main(["pretrain", ZH, str(tmp_path), *SMALL, "--max-steps", "3", "--save-every", "3", "--bf16"]) == 0
    with open(tmp_path / "training_history.json", encoding="utf-8") as f:
        losses = [s["loss"] for s in json.load(f)["steps"]]
    assert len(losses) == 3 and all(torch.isfinite(torch.tensor(losses)))
    weights = _weights(tmp_path)
    assert all(w.dtype == torch.float32 for w in weights.values())


def test_an_output_directory_that_could_destroy_an_input_is_refused(tmp_path, capsys):
    corpus_dir = tmp_path / "data"
    corpus_dir.mkdir()
    corpus = corpus_dir / "corpus.txt"
    shutil.copyfile(ZH, corpus)
    for output, fragment in ((corpus_dir, "holds the source"), (corpus, "is the source"),
                             (tmp_path, "holds the source")):
        assert main(["pretrain", str(corpus), str(output), "--no-progress"]) == 2
        assert fragment in capsys.readouterr().err
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "model.safetensors").write_bytes(b"earlier work")
    assert main(["pretrain", ZH, str(tmp_path / "used"), "--no-progress"]) == 2
    assert "exists and is not empty; pass --resume" in capsys.readouterr().err
    assert (tmp_path / "used" / "model.safetensors").read_bytes() == b"earlier work"
    assert corpus.read_bytes() == open(ZH, "rb").read()


def test_a_second_phase_starts_from_the_first(tmp_path, capsys):
    """Google's two phases: a short length first, with room for the final length's
    positions, then the final length from its weights and vocabulary (--init-checkpoint)."""
    first, second = tmp_path / "first", tmp_path / "second"
    assert main(["pretrain", ZH, str(first), *SMALL, "--max-steps", "2", "--save-every", "2",
                 "--max-seq-length", "16", "--max-position-embeddings", "32"]) == 0
    assert main(["pretrain", ZH, str(second), *SMALL, "--max-steps", "2", "--save-every", "1",
                 "--max-seq-length", "32", "--init-checkpoint", str(first)]) == 0
    start, end, before = _weights(second / "checkpoint-1"), _weights(second), _weights(first)
    assert (second / "vocab.txt").read_bytes() == (first / "vocab.txt").read_bytes()
    assert start.keys() == before.keys() and all(start[k].shape == before[k].shape for k in start)
    assert not torch.equal(start["bert.encoder.layer.0.output.dense.weight"], end["bert.encoder.layer.0.output.dense.weight"])
    # one step from the first phase's weights: close to them, far closer than a fresh model is
    moved = max(float((start[k] - before[k]).abs().max()) for k in start)
    assert 0 < moved < 0.05, moved
    capsys.readouterr()
    assert main(["pretrain", ZH, str(tmp_path / "third"), *SMALL, "--max-seq-length", "64",
                 "--init-checkpoint", str(first)]) == 2
    assert "it has 32 positions, fewer than max_seq_length=64" in capsys.readouterr().err
    assert main(["pretrain", ZH, str(tmp_path / "fourth"), *SMALL, "--max-position-embeddings", "16"]) == 2
    assert "max_position_embeddings=16 is less than max_seq_length=32" in capsys.readouterr().err


def _drawn_figures(monkeypatch) -> list:
    """(figure, renderer) of each figure saved from now on, kept before ``save_png`` closes it."""
    import matplotlib.figure

    drawn = []
    save = matplotlib.figure.Figure.savefig

    def savefig(figure, *args, **kwargs):
        save(figure, *args, **kwargs)
        drawn.append((figure, figure.canvas.get_renderer()))

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", savefig)
    return drawn


def test_the_curves_keep_every_baseline_visible_and_the_legend_off_the_lines(tmp_path, monkeypatch):
    """Where the model's line meets its baseline (a plateau), both stay visible: the model's
    line has markers, the baseline is black, dashed and drawn above it; MLM and NSP have a
    panel each on one 0-1 scale; the legends sit below the axes; a Chinese corpus's
    curves are labelled in Chinese."""
    from mini_hf_bert.training.curves import plot_history
    from mini_hf_bert.training.trainer import History

    drawn = _drawn_figures(monkeypatch)
    plateau = {"mlm_accuracy": 0.09, "mlm_mask_accuracy": 0.05, "mlm_most_frequent_token_accuracy": 0.05,
               "nsp_accuracy": 0.6, "nsp_majority_accuracy": 0.6, "held_out_pairs": 2000,
               "held_out_mask_positions": 15000}
    history = History(steps=[{"step": s, "loss": 5 - s / 100} for s in range(1, 101)],
                      evaluations=[{"step": s, **plateau} for s in (50, 100)])
    for language in ("en", "zh"):
        assert plot_history(history, str(tmp_path / f"{language}.png"), language)
        assert (tmp_path / f"{language}.png").stat().st_size > 1000
    for (figure, renderer), (mask, guess, nsp, majority) in zip(drawn, (
            ("accuracy at [MASK]", "always the commonest token", "NSP accuracy", "always the majority label"),
            ("[MASK] 位置准确率", "总猜最常见的字", "NSP 准确率", "总猜多数类"))):
        assert len(figure.axes) == 3  # loss, masked LM, next sentence: the counts are not drawn
        for axes, model, baseline in ((figure.axes[1], mask, guess), (figure.axes[2], nsp, majority)):
            assert not axes.get_legend().get_window_extent(renderer).overlaps(axes.get_window_extent(renderer))
            lines = {line.get_label(): line for line in axes.get_lines()}
            assert lines[model].get_marker() not in (None, "", "None") and lines[model].get_linestyle() == "-"
            assert lines[baseline].get_linestyle() == "--" and lines[baseline].get_color() == "black"
            assert lines[baseline].get_zorder() > lines[model].get_zorder()
            assert axes.get_ylim()[0] <= 0.0 and axes.get_ylim()[1] >= 1.0


def test_fine_tuning_curves_carry_the_run_from_random_weights_and_the_majority(tmp_path, monkeypatch):
    from mini_hf_bert.training.curves import plot_history
    from mini_hf_bert.training.trainer import History

    drawn = _drawn_figures(monkeypatch)
    history = History(steps=[{"step": s, "loss": 1 / s} for s in range(1, 11)],
                      evaluations=[{"step": 5, "accuracy": 0.7}, {"step": 10, "accuracy": 0.8}])
    plot_history(history, str(tmp_path / "c.png"), "en", {"from random weights": [(5, 0.6), (10, 0.65)]},
                 {"majority class": 0.55})
    lines = {line.get_label(): line for line in drawn[0][0].axes[1].get_lines()}
    assert list(lines["the same from random weights"].get_ydata()) == [0.6, 0.65]
    assert list(lines["always the majority class"].get_ydata()) == [0.55, 0.55]
    assert lines["always the majority class"].get_color() == "black"


def test_the_verdicts_name_each_shortfall_and_the_held_out_size():
    from mini_hf_bert.training.pretraining import MIN_HELD_OUT_PAIRS, verdicts

    learned = {"mlm_accuracy": 0.3, "mlm_mask_accuracy": 0.25, "mlm_most_frequent_token_accuracy": 0.04,
               "nsp_accuracy": 0.8, "nsp_majority_accuracy": 0.55, "held_out_pairs": 2000,
               "held_out_mask_positions": 15000}
    assert verdicts(learned) == []
    plateau = dict(learned, mlm_mask_accuracy=0.045, nsp_accuracy=0.56)
    said = verdicts(plateau)
    assert len(said) == 2
    assert "no better than always guessing the commonest token (0.040) by the margin this check asks for, 0.01" in said[0]
    assert ("NSP accuracy (0.560) is no better than always answering the majority label (0.550) by the margin this "
            "check asks for, 0.02") in said[1]
    # within the margin but above the majority: the sentence names the margin that decided it
    assert any("(0.720) is no better than always answering the majority label (0.701) by the margin this check "
               "asks for, 0.02" in s for s in verdicts(dict(learned, nsp_accuracy=0.72, nsp_majority_accuracy=0.701)))
    few = verdicts(dict(learned, held_out_pairs=16))
    assert few == ["only 16 held-out sentence pairs: one pair moves NSP accuracy by 0.062, so these figures are "
                   "rough; a larger corpus holds out more"]
    assert verdicts(dict(learned, held_out_pairs=MIN_HELD_OUT_PAIRS)) == []


def test_a_warning_gets_a_line_of_its_own_above_the_progress_bar(tmp_path):
    """The plateau warning of an evaluation is written while the training bar is open; it
    must never be glued onto the bar's line (each \\r or \\n ends a screen line)."""
    run = subprocess.run([sys.executable, "-m", "mini_hf_bert", "pretrain", ZH, str(tmp_path / "out"),
                          "--max-seq-length", "32", "--dupe-factor", "1", "--batch-size", "8", "--max-steps", "4",
                          "--eval-every", "2", "--quick"], cwd=ROOT, capture_output=True, text=True, timeout=600,
                         env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert run.returncode == 0, run.stderr[-2000:]
    screen_lines = re.split(r"[\r\n]", run.stderr)
    warnings = [line for line in screen_lines if "no better than always guessing the commonest token" in line]
    assert len(warnings) >= 2  # one per evaluation: the model has had 4 steps
    assert all(line.startswith("WARNING ") and "%|" not in line for line in warnings), warnings  # tqdm's bar: "%|"
    assert any(line.startswith("training:") for line in screen_lines)  # the bar was shown
