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


@pytest.mark.parametrize("task,head", [("SEQ_CLS", "BertForSequenceClassification"),
                                       ("TOKEN_CLS", "BertForTokenClassification"),
                                       ("QUESTION_ANS", "BertForQuestionAnswering")])
def test_prefix_tuning_equals_transformers(task, head):
    """peft's prefix tuning feeds learned keys and values (a transformers DynamicCache) to
    every layer: the task model passes them on as an encoder prefix, with the positions
    shifted past it, as transformers' BERT does. Same base weights and prefix: the same
    logits and loss, and a training step moves the prefix alike."""
    from peft import PrefixTuningConfig

    from mini_hf_bert.parity.compare import max_abs_diff

    sizes = dict(vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=37,
                 num_labels=2 if task == "QUESTION_ANS" else 3, hidden_dropout_prob=0.0,
                 attention_probs_dropout_prob=0.0)
    torch.manual_seed(0)
    ours = getattr(mini_hf_bert, head)(mini_hf_bert.BertConfig(**sizes))
    theirs = getattr(transformers, head)(transformers.BertConfig(**sizes))
    theirs.load_state_dict(ours.state_dict())
    ids = torch.tensor([[1, 5, 7, 2, 0], [1, 9, 2, 0, 0]])
    with torch.no_grad():
        plain = ours(input_ids=ids, attention_mask=(ids != 0).long())
    tuned = []
    for model in (ours, theirs):
        torch.manual_seed(1)
        tuned.append(get_peft_model(model, PrefixTuningConfig(num_virtual_tokens=4, task_type=task)))
    tuned[1].prompt_encoder.load_state_dict(tuned[0].prompt_encoder.state_dict())
    labels = {"SEQ_CLS": {"labels": torch.tensor([0, 2])}, "TOKEN_CLS": {"labels": ids % 3},
              "QUESTION_ANS": {"start_positions": torch.tensor([1, 1]), "end_positions": torch.tensor([2, 1])}}[task]
    outputs = [model(input_ids=ids, attention_mask=(ids != 0).long(), **labels) for model in tuned]
    name = "start_logits" if task == "QUESTION_ANS" else "logits"
    assert max_abs_diff(outputs[0][name], outputs[1][name]) <= FP32_ATOL
    assert abs(outputs[0].loss.item() - outputs[1].loss.item()) <= FP32_ATOL
    assert max_abs_diff(outputs[0][name], plain[name]) > 100 * FP32_ATOL  # the prefix is used
    for model, output in zip(tuned, outputs):
        output.loss.backward()
    grads = [[p.grad for p in model.prompt_encoder.parameters() if p.requires_grad] for model in tuned]
    assert grads[0] and all(max_abs_diff(a, b) <= FP32_ATOL for a, b in zip(*grads))
    assert [p.requires_grad for p in ours.bert.parameters()] == [False] * len(list(ours.bert.parameters()))
