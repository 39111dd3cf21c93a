"""transformers' Trainer on our models, end to end, through mini_hf_bert.integrations.Trainer:
the loss curve equals transformers' own model under transformers' own Trainer; checkpoints
and save_model write a directory both libraries load with equal logits, tied weights
included; resume ends where an uninterrupted run ends; bf16 and gradient checkpointing
train; a transformers tokenizer as processing_class is saved beside the weights."""

from __future__ import annotations

import os

import pytest
import torch
import transformers

import mini_hf_bert
from mini_hf_bert.integrations import Trainer
from mini_hf_bert.parity.compare import FP32_ATOL

from ..conftest import small_config_kwargs

STEPS = 6


class TokenDataset(torch.utils.data.Dataset):
    """Fixed random token rows; for masked LM every label is its input (the task is to copy),
    for classification the label is whether the first token is in the upper half."""

    def __init__(self, task: str, rows: int = 48, length: int = 10, vocab: int = 99) -> None:
        generator = torch.Generator().manual_seed(0)
        self.ids = torch.randint(5, vocab, (rows, length), generator=generator)
        self.task, self.vocab = task, vocab

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, i: int) -> dict[str, torch.Tensor]:
        ids = self.ids[i]
        label = ids.clone() if self.task == "mlm" else torch.tensor(int(ids[0] > self.vocab // 2))
        return {"input_ids": ids, "labels": label}


def _models(class_name: str):
    """transformers' model with seeded weights, and ours holding the same."""
    torch.manual_seed(0)
    theirs = getattr(transformers, class_name)(transformers.BertConfig(**small_config_kwargs("tiny")))
    ours = getattr(mini_hf_bert, class_name)(mini_hf_bert.BertConfig(**small_config_kwargs("tiny")))
    ours.load_state_dict(theirs.state_dict())
    return ours, theirs


def _arguments(output_dir, **overrides) -> transformers.TrainingArguments:
    options = dict(max_steps=STEPS, per_device_train_batch_size=8, learning_rate=1e-3, logging_steps=1,
                   save_steps=STEPS // 2, report_to=[], use_cpu=True, disable_tqdm=True, seed=7,
                   dataloader_num_workers=0)
    options.update(overrides)
    return transformers.TrainingArguments(str(output_dir), **options)


def _losses(trainer) -> list[float]:
    return [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]


@pytest.mark.parametrize("class_name,task", [("BertForMaskedLM", "mlm"), ("BertForSequenceClassification", "classify")])
def test_training_equals_transformers_and_checkpoints_reload_in_both_libraries(class_name, task, tmp_path):
    ours, theirs = _models(class_name)
    data = TokenDataset(task)
    mine = Trainer(model=ours, args=_arguments(tmp_path / "ours"), train_dataset=data)
    mine.train()
    reference = transformers.Trainer(model=theirs, args=_arguments(tmp_path / "theirs"), train_dataset=data)
    reference.train()
    assert len(_losses(mine)) == STEPS
    assert _losses(mine) == pytest.approx(_losses(reference), abs=FP32_ATOL)  # dropout on, same seed: same curve
    if task == "mlm":  # copying the input is learnt within a few steps
        assert _losses(mine)[-1] < _losses(mine)[0]

    mine.save_model(str(tmp_path / "final"))
    for directory in (tmp_path / "ours" / f"checkpoint-{STEPS // 2}", tmp_path / "final"):
        assert (directory / "config.json").is_file() and (directory / "model.safetensors").is_file()
        again = getattr(mini_hf_bert, class_name).from_pretrained(directory)
        theirs_again = getattr(transformers, class_name).from_pretrained(directory)
        ids = data.ids[:4]
        with torch.no_grad():
            assert torch.equal(again(ids).logits, theirs_again(ids).logits)
        if class_name == "BertForMaskedLM":  # saved once, tied again on loading
            assert again.cls.predictions.decoder.weight is again.bert.embeddings.word_embeddings.weight
    with torch.no_grad():
        assert torch.equal(again(data.ids[:4]).logits, ours.eval()(data.ids[:4]).logits)


def test_resume_from_a_checkpoint_ends_equal_to_an_uninterrupted_run(tmp_path):
    data = TokenDataset("mlm")
    whole, _ = _models("BertForMaskedLM")
    Trainer(model=whole, args=_arguments(tmp_path / "whole"), train_dataset=data).train()
    resumed, _ = _models("BertForMaskedLM")
    trainer = Trainer(model=resumed, args=_arguments(tmp_path / "whole"), train_dataset=data)
    trainer.train(resume_from_checkpoint=str(tmp_path / "whole" / f"checkpoint-{STEPS // 2}"))
    assert trainer.state.global_step == STEPS
    for (name, a), b in zip(whole.state_dict().items(), resumed.state_dict().values()):
        assert torch.equal(a, b), name


@pytest.mark.parametrize("setting", [dict(bf16=True), dict(gradient_checkpointing=True)],
                         ids=["bf16", "gradient_checkpointing"])
def test_bf16_and_gradient_checkpointing_train(setting, tmp_path):
    """Both failed before (an output rebuilt from a dict; 5.23's activation_checkpointing_enable)."""
    data = TokenDataset("mlm")
    plain, _ = _models("BertForMaskedLM")
    baseline = Trainer(model=plain, args=_arguments(tmp_path / "plain"), train_dataset=data)
    baseline.train()
    model, _ = _models("BertForMaskedLM")
    trainer = Trainer(model=model, args=_arguments(tmp_path / "set", **setting), train_dataset=data)
    trainer.train()
    if "gradient_checkpointing" in setting:  # the same computation, recomputed: the same curve
        assert model.is_gradient_checkpointing
        assert _losses(trainer) == pytest.approx(_losses(baseline), abs=FP32_ATOL)
    else:  # bf16 autocast: every loss near fp32's (bf16 keeps 8 mantissa bits: ~1e-2 relative)
        assert _losses(trainer) == pytest.approx(_losses(baseline), rel=BF16_LOSS_RTOL)
        assert _losses(trainer) != _losses(baseline)  # autocast did run in bf16


#: bf16 autocast against fp32, on a loss of ~4.6 through 2 layers: each op rounds to 8
#: mantissa bits (2**-8 ~ 4e-3 relative); the loss after a few steps moves by ~1e-3 to 1e-2.
#: 5e-2 still catches a step that went wrong (a NaN, a skipped update moves it by > 0.1).
BF16_LOSS_RTOL = 5e-2


def test_a_transformers_tokenizer_as_processing_class_is_saved(tmp_path, minilm_dir):
    tokenizer = transformers.AutoTokenizer.from_pretrained(minilm_dir)
    model = mini_hf_bert.BertForSequenceClassification.from_pretrained(minilm_dir, num_labels=2)
    texts = ["a great film", "an awful film"] * 8
    encoded = tokenizer(texts, padding=True, return_tensors="pt")
    rows = [{"input_ids": encoded["input_ids"][i], "attention_mask": encoded["attention_mask"][i],
             "labels": torch.tensor(i % 2)} for i in range(len(texts))]
    trainer = Trainer(model=model, args=_arguments(tmp_path / "run", max_steps=2, save_steps=2),
                      train_dataset=rows, processing_class=tokenizer)
    trainer.train()
    checkpoint = tmp_path / "run" / "checkpoint-2"
    assert {"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"} <= set(os.listdir(checkpoint))
    assert mini_hf_bert.AutoTokenizer.from_pretrained(checkpoint)("a great film")["input_ids"] == \
        tokenizer("a great film")["input_ids"]
    metrics = trainer.evaluate(rows)
    predictions = trainer.predict(rows)
    assert predictions.predictions.shape == (len(texts), 2) and metrics["eval_loss"] > 0


def test_training_args_are_written_whole_or_not_at_all(tmp_path, monkeypatch):
    """A save that dies while writing training_args.bin leaves the previous file as it was,
    and no temporary file beside it."""
    model, _ = _models("BertForSequenceClassification")
    trainer = Trainer(model=model, args=_arguments(tmp_path / "run"), train_dataset=TokenDataset("classify"))
    out = tmp_path / "saved"
    trainer.save_model(str(out))
    before = (out / "training_args.bin").read_bytes()

    real_save = torch.save

    def dies_half_way(obj, path, *args, **kwargs):
        if isinstance(obj, transformers.TrainingArguments):
            with open(path, "wb") as f:
                f.write(b"half")
            raise OSError("disk full")
        return real_save(obj, path, *args, **kwargs)

    monkeypatch.setattr(torch, "save", dies_half_way)
    with pytest.raises(OSError, match="disk full"):
        trainer.save_model(str(out))
    assert (out / "training_args.bin").read_bytes() == before
    assert sorted(p.name for p in out.iterdir() if p.name.endswith(".tmp")) == []


class _Gadget:
    """A pickle that would run code when loaded without weights_only (os.system here)."""

    def __reduce__(self):
        return (os.system, ("echo ran > ran.txt",))


@pytest.mark.parametrize("name", ["rng_state.pth", "optimizer.pt", "scheduler.pt"])
def test_a_hostile_file_in_a_checkpoint_is_refused_by_name_and_never_run(name, tmp_path, monkeypatch):
    from mini_hf_bert.checkpoints import CheckpointError
    data = TokenDataset("mlm")
    model, _ = _models("BertForMaskedLM")
    Trainer(model=model, args=_arguments(tmp_path / "run"), train_dataset=data).train()
    checkpoint = tmp_path / "run" / f"checkpoint-{STEPS // 2}"
    torch.save({"state": _Gadget()}, checkpoint / name)
    monkeypatch.chdir(tmp_path)
    resumed, _ = _models("BertForMaskedLM")
    trainer = Trainer(model=resumed, args=_arguments(tmp_path / "run"), train_dataset=data)
    with pytest.raises(CheckpointError, match=rf"^{checkpoint / name}: refused as unsafe: its pickle asks for "
                                              r"posix.system, code that would run .*nothing in it was run") as refused:
        trainer.train(resume_from_checkpoint=str(checkpoint))
    assert "weights_only" not in str(refused.value)  # torch's advice to load it anyway is not relayed
    assert not (tmp_path / "ran.txt").exists()


def test_resume_passes_over_a_checkpoint_cut_short_and_says_so(tmp_path, caplog):
    """A kill between the weights and the optimizer leaves checkpoint-N without its
    trainer_state.json (written last); True resumes from the newest whole one."""
    data = TokenDataset("mlm")
    whole, _ = _models("BertForMaskedLM")
    Trainer(model=whole, args=_arguments(tmp_path / "run"), train_dataset=data).train()
    cut = tmp_path / "run" / f"checkpoint-{STEPS}"
    (cut / "trainer_state.json").unlink()
    (cut / "optimizer.pt").unlink()
    resumed, _ = _models("BertForMaskedLM")
    trainer = Trainer(model=resumed, args=_arguments(tmp_path / "run"), train_dataset=data)
    with caplog.at_level("WARNING"):
        trainer.train(resume_from_checkpoint=True)
    assert f"{cut}: skipped: its trainer_state.json is missing" in caplog.text
    assert trainer.state.global_step == STEPS
    for (key, a), b in zip(whole.state_dict().items(), resumed.state_dict().values()):
        assert torch.equal(a, b), key  # resumed from checkpoint-3 to the same end


def test_resume_with_no_whole_checkpoint_says_why(tmp_path):
    (tmp_path / "run" / "checkpoint-2").mkdir(parents=True)
    (tmp_path / "run" / "checkpoint-2" / "trainer_state.json").write_text('{"global_st')
    model, _ = _models("BertForMaskedLM")
    trainer = Trainer(model=model, args=_arguments(tmp_path / "run"), train_dataset=TokenDataset("mlm"))
    with pytest.raises(ValueError, match=r"No valid checkpoint found in output directory .*: no checkpoint-N in it "
                                         r"holds a complete trainer_state.json"):
        trainer.train(resume_from_checkpoint=True)


def test_our_tokenizer_as_processing_class_pads_unequal_rows_as_transformers(tmp_path, minilm_dir):
    """With no collator, transformers' Trainer pads its own tokenizers' rows with
    DataCollatorWithPadding; ours gets the same collator, and the same losses follow."""
    texts = ["a great film", "an awful film that went on and on", "fine", "not good at all, sadly"] * 4
    losses, collators = [], []
    for tokenizer, model_class, trainer_class in (
            (mini_hf_bert.BertTokenizer.from_pretrained(minilm_dir), mini_hf_bert.BertForSequenceClassification, Trainer),
            (transformers.BertTokenizer.from_pretrained(minilm_dir), transformers.BertForSequenceClassification,
             transformers.Trainer)):
        torch.manual_seed(0)
        model = model_class.from_pretrained(minilm_dir, num_labels=2)
        rows = [{**tokenizer(text), "labels": i % 2} for i, text in enumerate(texts)]  # unequal lengths
        trainer = trainer_class(model=model, args=_arguments(tmp_path / model_class.__module__, max_steps=2, save_steps=2),
                                train_dataset=rows, processing_class=tokenizer)
        collators.append(type(trainer.data_collator).__name__)
        trainer.train()
        losses.append(_losses(trainer))
    assert collators == ["DataCollatorWithPadding"] * 2
    assert losses[0] == pytest.approx(losses[1], abs=FP32_ATOL)
    given = Trainer(model=mini_hf_bert.BertForSequenceClassification.from_pretrained(minilm_dir, num_labels=2),
                    args=_arguments(tmp_path / "given"), processing_class=mini_hf_bert.BertTokenizer.from_pretrained(minilm_dir),
                    data_collator=transformers.default_data_collator)
    assert given.data_collator is transformers.default_data_collator  # a collator given is kept
