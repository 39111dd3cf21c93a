"""peft LoRA on our models, end to end: the adapted model trains under the Trainer with
transformers' loss curve; the adapter saves with its base model's path recorded (it was
null: peft reads ``name_or_path`` from the instance's ``__dict__``) and reloads onto a fresh
base with the same logits; merged, it saves and reloads in both libraries with the
adapted model's logits."""

from __future__ import annotations

import json

import pytest
import torch
import transformers
from peft import LoraConfig, PeftModel, get_peft_model

import mini_hf_bert
from mini_hf_bert.integrations import Trainer
from mini_hf_bert.parity.compare import FP32_ATOL

from ..conftest import small_config_kwargs
from .test_trainer import TokenDataset, _arguments, _losses


def _lora():
    return LoraConfig(r=4, lora_alpha=8, target_modules=["query", "value"], lora_dropout=0.0, task_type="SEQ_CLS")


@pytest.fixture
def base_dir(tmp_path):
    """A classifier checkpoint written by transformers: the base both libraries adapt."""
    torch.manual_seed(0)
    transformers.BertForSequenceClassification(transformers.BertConfig(**small_config_kwargs("tiny"))).save_pretrained(
        tmp_path / "base")
    return tmp_path / "base"


def test_lora_trains_saves_reloads_and_merges(base_dir, tmp_path):
    data = TokenDataset("classify")
    torch.manual_seed(3)
    ours = get_peft_model(mini_hf_bert.BertForSequenceClassification.from_pretrained(base_dir), _lora())
    torch.manual_seed(3)
    theirs = get_peft_model(transformers.BertForSequenceClassification.from_pretrained(base_dir), _lora())
    trainable = [n for n, p in ours.named_parameters() if p.requires_grad]
    assert trainable == [n for n, p in theirs.named_parameters() if p.requires_grad]
    assert any("lora_A" in n for n in trainable) and any("classifier" in n for n in trainable)

    mine = Trainer(model=ours, args=_arguments(tmp_path / "ours", learning_rate=1e-2), train_dataset=data)
    mine.train()
    reference = transformers.Trainer(model=theirs, args=_arguments(tmp_path / "theirs", learning_rate=1e-2),
                                     train_dataset=data)
    reference.train()
    assert _losses(mine) == pytest.approx(_losses(reference), abs=FP32_ATOL)

    ours.save_pretrained(tmp_path / "adapter")
    with open(tmp_path / "adapter" / "adapter_config.json") as f:
        assert json.load(f)["base_model_name_or_path"] == str(base_dir)
    ids = data.ids[:4]
    ours.eval()
    with torch.no_grad():
        adapted = ours(input_ids=ids).logits
    reloaded = PeftModel.from_pretrained(mini_hf_bert.BertForSequenceClassification.from_pretrained(base_dir),
                                         tmp_path / "adapter").eval()
    with torch.no_grad():
        assert torch.equal(reloaded(input_ids=ids).logits, adapted)

    merged = ours.merge_and_unload()
    assert type(merged) is mini_hf_bert.BertForSequenceClassification
    merged.save_pretrained(tmp_path / "merged")
    for library in (mini_hf_bert, transformers):
        model = library.BertForSequenceClassification.from_pretrained(tmp_path / "merged").eval()
        with torch.no_grad():
            assert torch.allclose(model(input_ids=ids).logits, adapted, atol=FP32_ATOL)  # W + BA summed once
