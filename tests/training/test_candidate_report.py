"""tools/candidate_report.py: the rule a newly trained Chinese BERT passes to replace the
shipped one (better on every target), checked on figures worked out here by hand and on the
shipped model's own recorded measurements."""

from __future__ import annotations

import json
import os

import pytest

from mini_hf_bert import chinese_checkpoint_dir
from tools import candidate_report

from ..paths import ROOT

DATA = os.path.join(ROOT, "docs", "training")


def _run(start: str, seed: int, value: float, size: int = 1000) -> tuple[str, dict]:
    return f"sentiment/{size}/{seed}/{start}", {"task": "sentiment", "size": size, "seed": seed, "start": start,
                                                 "value": value}


def test_the_gain_is_the_mean_from_pretrained_weights_minus_the_mean_from_random():
    runs = dict([_run("pretrained", 1, 0.80), _run("pretrained", 2, 0.70), _run("pretrained", 3, 0.90),
                 _run("random", 1, 0.60), _run("random", 2, 0.65), _run("random", 3, 0.55),
                 _run("pretrained", 1, 0.10, size=100), _run("random", 1, 0.99, size=100)])
    assert candidate_report.gain(runs) == pytest.approx(0.80 - 0.60)
    with pytest.raises(ValueError, match="no sentiment runs at 1000 labels from both starts"):
        candidate_report.gain(dict([_run("pretrained", 1, 0.8)]))


def test_a_candidate_replaces_the_shipped_model_only_when_better_on_every_target():
    shipped = {"everyday_top1": 0.22, "everyday_top5": 0.40, "peoples_daily_over_count_model": -0.02,
               "sentiment_gain_1000": 0.02}
    better = {"everyday_top1": 0.41, "everyday_top5": 0.45, "peoples_daily_over_count_model": 0.01,
              "sentiment_gain_1000": 0.03}
    result = candidate_report.compare(better, shipped)
    assert result["better_on_every_target"]
    assert {n: r["candidate_meets"] for n, r in result["targets"].items()} == {
        "everyday_top1": True, "everyday_top5": False, "peoples_daily_over_count_model": True,
        "sentiment_gain_1000": False}
    assert not any(r["shipped_meets"] for r in result["targets"].values())
    for name in shipped:  # equal on one target is not better
        result = candidate_report.compare({**better, name: shipped[name]}, shipped)
        assert not result["better_on_every_target"] and not result["targets"][name]["better"]
    # level with the count model is not above it
    level = candidate_report.compare({**better, "peoples_daily_over_count_model": 0.0}, shipped)
    assert not level["targets"]["peoples_daily_over_count_model"]["candidate_meets"]


def test_the_shipped_model_judged_against_itself_is_not_better(tmp_path):
    with open(os.path.join(DATA, "chinese_bert.json"), encoding="utf-8") as f:
        measured = json.load(f)
    result = candidate_report.verdict(chinese_checkpoint_dir(), os.path.join(DATA, "chinese_bert.json"),
                                      os.path.join(DATA, "learning_curves.json"))
    assert not result["better_on_every_target"]
    rows = result["targets"]
    assert rows["everyday_top1"]["candidate"] == rows["everyday_top1"]["shipped"] == measured["everyday"]["top1"]
    one = measured["sources"]["peoples-daily"]["one_mask"]
    assert rows["peoples_daily_over_count_model"]["shipped"] == one["bert"]["top1"] - one["count_model"]["top1"]
    assert {r["bar"] for r in rows.values()} == {0.40, 0.60, 0.0, 0.05}


def test_figures_of_another_model_are_refused(tmp_path):
    with open(os.path.join(DATA, "chinese_bert.json"), encoding="utf-8") as f:
        measured = json.load(f)
    other = tmp_path / "other.json"
    other.write_text(json.dumps({**measured, "model_safetensors_sha256": "0" * 64}), encoding="utf-8")
    with pytest.raises(ValueError, match=f"{other}: measured another model than"):
        candidate_report.verdict(chinese_checkpoint_dir(), str(other), os.path.join(DATA, "learning_curves.json"))


@pytest.mark.parametrize("argv,message", [
    (["measure", "{tmp}/none", "{tmp}/o.json"], "{tmp}/none: no model.safetensors; give a model directory"),
    (["verdict", "CHINESE", "{tmp}/missing.json", "{tmp}/missing.json", "--out", "{tmp}/v.json"],
     "{tmp}/missing.json: no such measurements file (JSON)"),
    (["verdict", "CHINESE", "{tmp}/pipe", "{tmp}/pipe", "--out", "{tmp}/v.json"], "{tmp}/pipe: cannot be read"),
    (["verdict", "CHINESE", "{tmp}/list.json", "{tmp}/list.json", "--out", "{tmp}/v.json"],
     "{tmp}/list.json: not a measurements file (a JSON object)"),
    (["verdict", "CHINESE", "{tmp}/m.json", "{tmp}/s.json", "--out", "{tmp}/m.json"],
     "{tmp}/m.json: is {tmp}/m.json, which this step reads"),
    (["verdict", "CHINESE", "{tmp}/m.json", "{tmp}/s.json", "--out", "{tmp}/link.json"],
     "{tmp}/link.json: is {tmp}/s.json, which this step reads"),
    (["measure", "{tmp}/model", "{tmp}/model/model.safetensors"],
     "{tmp}/model/model.safetensors: is {tmp}/model/model.safetensors, which this step reads"),
])
def test_mistakes_are_one_line(argv, message, tmp_path, capsys):
    os.mkfifo(tmp_path / "pipe")  # a named pipe must be refused, not read forever
    (tmp_path / "list.json").write_text("[1, 2]")
    (tmp_path / "m.json").write_text("{}")
    (tmp_path / "s.json").write_text("{}")
    os.symlink(tmp_path / "s.json", tmp_path / "link.json")
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "model.safetensors").write_bytes(b"weights")
    before = {p.name: p.read_bytes() for p in [tmp_path / "m.json", tmp_path / "s.json",
                                                tmp_path / "model" / "model.safetensors"]}
    argv = [a.format(tmp=tmp_path).replace("CHINESE", chinese_checkpoint_dir()) for a in argv]
    assert candidate_report.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message.format(tmp=tmp_path) in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "v.json").exists()
    assert {p.name: p.read_bytes() for p in [tmp_path / "m.json", tmp_path / "s.json",
                                             tmp_path / "model" / "model.safetensors"]} == before


def test_the_page_shows_each_target_both_figures_and_the_verdict():
    with open(os.path.join(DATA, "chinese_bert.json"), encoding="utf-8") as f:
        measured = json.load(f)
    result = candidate_report.verdict(chinese_checkpoint_dir(), os.path.join(DATA, "chinese_bert.json"),
                                      os.path.join(DATA, "learning_curves.json"))
    english, chinese = candidate_report.render(result, "en"), candidate_report.render(result, "zh")
    top1 = f"{measured['everyday']['top1']:+.3f}"
    assert f"| everyday sentences: top-1 | >= 0.40 | {top1} | {top1} | no |" in english
    assert f"| 日常句子：top-1 | >= 0.40 | {top1} | {top1} | 否 |" in chinese
    assert "Not better on every target: the shipped model stays." in english
    assert "并非每个目标都更好" in chinese
    assert english.count("Measured on commit `") == chinese.count("测量来源：提交 `") == 3
    better = {**result, "better_on_every_target": True}
    assert "it may replace the shipped model" in candidate_report.render(better, "en")
