"""Fine-tuning keeps its best (transformers' ``load_best_model_at_end``): the output
directory holds the weights of the best held-out evaluation, whose checkpoint is always
saved, and says which step it was; ``finetune`` reports that evaluation, and the model it
saved scores it again."""

from __future__ import annotations

import json
import os

import pytest
import torch
from safetensors.torch import load_file

from mini_hf_bert import BertConfig, BertForSequenceClassification
from mini_hf_bert.__main__ import main
from mini_hf_bert.pipelines import pipeline
from mini_hf_bert.training.trainer import Trainer, TrainingConfig, TrainingTask

#: The held-out scores a scripted evaluation reports at steps 2, 4, 6 and 8: the best comes
#: at step 4, step 6 only ties it, and the last step is the worst.
SCORES = {2: 0.5, 4: 0.9, 6: 0.9, 8: 0.4}


def _trainer(tmp_path, **options) -> Trainer:
    torch.manual_seed(0)
    model = BertForSequenceClassification(BertConfig(vocab_size=40, hidden_size=16, num_hidden_layers=1,
                                                     num_attention_heads=2, intermediate_size=32, num_labels=2))
    examples = list(range(16))
    trainer = None

    def collate(batch, step, chunk):
        ids = torch.tensor([[2, 5 + i % 30, 3] for i in batch])
        return {"input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": torch.tensor([i % 2 for i in batch])}

    def loss_terms(model, batch):
        logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
        return [torch.nn.functional.cross_entropy(logits, batch["labels"], reduction="sum")]

    def evaluate(model):
        return {"accuracy": SCORES[trainer.step]}

    config = TrainingConfig(output_dir=str(tmp_path), max_steps=8, batch_size=4, learning_rate=1e-2, eval_every=2,
                            save_every=100, progress=False, **options)
    trainer = Trainer(model, TrainingTask(examples, collate, loss_terms, lambda b: [len(b["labels"])], evaluate),
                      config)
    return trainer


def _weights(directory) -> dict[str, torch.Tensor]:
    return load_file(os.path.join(directory, "model.safetensors"))


def _same(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_the_output_directory_holds_the_best_evaluations_weights(tmp_path):
    trainer = _trainer(tmp_path, load_best_model_at_end=True, metric_for_best_model="accuracy")
    trainer.train()
    # Each new best is saved although save_every (100) would not save it; a tie is not new.
    assert sorted(os.listdir(tmp_path / "checkpoint-2")) and (tmp_path / "checkpoint-4").is_dir()
    assert not (tmp_path / "checkpoint-6").exists() and (tmp_path / "checkpoint-8").is_dir()
    best, last = _weights(tmp_path / "checkpoint-4"), _weights(tmp_path / "checkpoint-8")
    assert not _same(best, last)  # the steps between changed the weights: the test can tell them apart
    assert _same(_weights(tmp_path), best)
    assert _same({k: v for k, v in trainer.model.state_dict().items() if k in best}, best)
    with open(tmp_path / "training_history.json", encoding="utf-8") as f:
        assert json.load(f)["best"] == {"step": 4, "accuracy": 0.9}
    with open(tmp_path / "log.jsonl", encoding="utf-8") as f:
        assert json.loads(f.read().splitlines()[-1]) == {"best": {"step": 4, "accuracy": 0.9}}


def test_lower_is_better_and_without_the_option_the_last_step_stays(tmp_path):
    lower = _trainer(tmp_path / "lower", load_best_model_at_end=True, metric_for_best_model="accuracy",
                     greater_is_better=False)
    lower.train()
    assert lower.history.best == {"step": 8, "accuracy": 0.4}
    assert _same(_weights(tmp_path / "lower"), _weights(tmp_path / "lower" / "checkpoint-8"))
    plain = _trainer(tmp_path / "plain")
    plain.train()
    assert plain.history.best is None and not (tmp_path / "plain" / "checkpoint-4").exists()
    assert _same(_weights(tmp_path / "plain"), _weights(tmp_path / "plain" / "checkpoint-8"))


def test_a_best_metric_that_is_missing_or_not_measured_is_named(tmp_path):
    with pytest.raises(ValueError, match="load_best_model_at_end needs metric_for_best_model"):
        _trainer(tmp_path / "a", load_best_model_at_end=True)
    trainer = _trainer(tmp_path / "b", load_best_model_at_end=True, metric_for_best_model="f1")
    with pytest.raises(ValueError, match="metric_for_best_model='f1': the evaluations measure accuracy"):
        trainer.train()


def test_finetune_saves_and_reports_its_best_evaluation(tiny_checkpoint, tmp_path, capsys):
    rows = "".join(f"第{i}条评论{'很好' if i % 3 else '很差'},{'好评' if i % 3 else '差评'}\n" for i in range(40))
    train = tmp_path / "train.csv"
    train.write_text("text,label\n" + rows, encoding="utf-8")
    dev_rows = [("很好的一家店", "好评"), ("很差的一家店", "差评"), ("真的很好", "好评"), ("实在很差", "差评"),
                ("很好", "好评"), ("很差", "差评")]
    dev = tmp_path / "dev.csv"
    dev.write_text("text,label\n" + "".join(f"{t},{y}\n" for t, y in dev_rows), encoding="utf-8")
    out = tmp_path / "out"
    assert main(["finetune", str(train), tiny_checkpoint, str(out), "--dev", str(dev), "--max-steps", "12",
                 "--batch-size", "8", "--learning-rate", "5e-3", "--eval-every", "2", "--no-progress",
                 "--no-scratch-baseline"]) == 0
    lines = capsys.readouterr().out.splitlines()
    with open(out / "training_history.json", encoding="utf-8") as f:
        history = json.load(f)
    scores = [e["accuracy"] for e in history["evaluations"]]
    best_step = history["evaluations"][scores.index(max(scores))]["step"]
    assert history["best"] == {"step": best_step, "accuracy": max(scores)}
    assert lines[0].endswith(f"{out} holds the best evaluation's weights, step {best_step}'s")
    assert float(lines[1].split()[0]) == pytest.approx(max(scores), abs=5e-5)
    # The saved model, loaded as a user would, scores the reported accuracy on the dev file again.
    classify = pipeline("text-classification", model=str(out))
    again = sum(classify(text)[0]["label"] == label for text, label in dev_rows) / len(dev_rows)
    assert again == max(scores)


def test_a_checkpoint_from_before_these_options_resumes_as_if_they_were_off(tmp_path):
    from mini_hf_bert.training.trainer import COMPLETE_MARKER, ArgumentsChangedError

    _trainer(tmp_path).train()
    marker_path = tmp_path / "checkpoint-8" / COMPLETE_MARKER
    marker = json.loads(marker_path.read_text(encoding="utf-8"))
    for name in ("load_best_model_at_end", "metric_for_best_model", "greater_is_better"):
        del marker["arguments"][name]  # as a checkpoint written before they existed
    marker_path.write_text(json.dumps(marker), encoding="utf-8")
    _trainer(tmp_path).resume(str(tmp_path / "checkpoint-8"))
    with pytest.raises(ArgumentsChangedError, match="--load-best-model-at-end: True now, False in the checkpoint"):
        _trainer(tmp_path, load_best_model_at_end=True, metric_for_best_model="accuracy").resume(
            str(tmp_path / "checkpoint-8"))
