"""The Auto classes, against transformers' own on checkpoints transformers writes here:
the same class chosen for the same checkpoint, the same outputs, and a clear refusal of
what is not BERT."""

from __future__ import annotations

import json
import logging

import pytest
import torch
import transformers

import mini_hf_bert
from mini_hf_bert.validation import ConfigError
from mini_hf_bert.parity.compare import FP32_ATOL
from mini_hf_bert.tokenization_utils_base import TokenizerFileError

from ..conftest import small_config_kwargs

#: Auto class -> the class transformers saves the checkpoint from (and both should give).
HEADS = {
    "AutoModelForPreTraining": "BertForPreTraining",
    "AutoModelForMaskedLM": "BertForMaskedLM",
    "AutoModelForCausalLM": "BertLMHeadModel",
    "AutoModelForSequenceClassification": "BertForSequenceClassification",
    "AutoModelForTokenClassification": "BertForTokenClassification",
    "AutoModelForQuestionAnswering": "BertForQuestionAnswering",
    "AutoModelForMultipleChoice": "BertForMultipleChoice",
    "AutoModelForNextSentencePrediction": "BertForNextSentencePrediction",
}


def _save(tmp_path, class_name: str, **extra) -> str:
    torch.manual_seed(0)
    config = transformers.BertConfig(**small_config_kwargs("tiny"), **extra)
    model = getattr(transformers, class_name)(config)
    directory = tmp_path / class_name
    model.save_pretrained(directory)
    return str(directory)


def _inputs(class_name: str, vocab_size: int) -> dict[str, torch.Tensor]:
    torch.manual_seed(1)
    shape = (2, 3, 7) if class_name == "BertForMultipleChoice" else (2, 7)
    ids = torch.randint(1, vocab_size, shape)
    mask = torch.ones(shape, dtype=torch.long)
    mask[..., -2:] = 0  # padding in the second half of every row
    return {"input_ids": ids, "attention_mask": mask}


@pytest.mark.parametrize("auto_name", sorted(HEADS))
def test_each_auto_class_loads_what_transformers_loads(auto_name, tmp_path):
    class_name = HEADS[auto_name]
    extra = {"is_decoder": True} if class_name == "BertLMHeadModel" else {}
    path = _save(tmp_path, class_name, **extra)
    ours = getattr(mini_hf_bert, auto_name).from_pretrained(path)
    theirs = getattr(transformers, auto_name).from_pretrained(path).eval()
    assert type(ours).__name__ == type(theirs).__name__ == class_name
    inputs = _inputs(class_name, ours.config.vocab_size)
    with torch.no_grad():
        a, b = ours(**inputs), theirs(**inputs)
    fields = [k for k in b.keys() if isinstance(b[k], torch.Tensor)]
    assert fields
    for field in fields:
        assert (a[field] - b[field]).abs().max().item() <= FP32_ATOL, (auto_name, field)


def test_auto_model_is_the_base_model_whatever_was_saved(tmp_path):
    path = _save(tmp_path, "BertForPreTraining")
    with open(f"{path}/config.json") as f:
        assert json.load(f)["architectures"] == ["BertForPreTraining"]
    ours = mini_hf_bert.AutoModel.from_pretrained(path)
    theirs = transformers.AutoModel.from_pretrained(path).eval()
    assert type(ours).__name__ == type(theirs).__name__ == "BertModel"
    inputs = _inputs("BertModel", ours.config.vocab_size)
    with torch.no_grad():
        diff = (ours(**inputs).last_hidden_state - theirs(**inputs).last_hidden_state).abs().max().item()
    assert diff <= FP32_ATOL
    config = mini_hf_bert.AutoConfig.from_pretrained(path)
    assert isinstance(config, mini_hf_bert.BertConfig) and config.architectures == ["BertForPreTraining"]
    assert type(mini_hf_bert.AutoModelForMaskedLM.from_config(config)).__name__ == "BertForMaskedLM"


def test_a_missing_head_is_initialised_and_named_as_transformers(tmp_path, caplog):
    path = _save(tmp_path, "BertForPreTraining")
    with caplog.at_level(logging.WARNING, logger="mini_hf_bert"):
        model, info = mini_hf_bert.AutoModelForSequenceClassification.from_pretrained(
            path, num_labels=3, output_loading_info=True)
    _, theirs = transformers.AutoModelForSequenceClassification.from_pretrained(path, num_labels=3, output_loading_info=True)
    assert model.classifier.out_features == 3
    assert info["missing_keys"] == theirs["missing_keys"] == {"classifier.weight", "classifier.bias"}
    assert "are newly initialized: classifier.weight, classifier.bias" in caplog.text


def test_auto_tokenizer_equals_transformers(minilm_dir):
    ours = mini_hf_bert.AutoTokenizer.from_pretrained(minilm_dir, use_fast=True)
    theirs = transformers.AutoTokenizer.from_pretrained(minilm_dir)
    text = ["Ms. Müller's café serves unaffable croissants!", "北京是中国的首都。"]
    assert ours(text, padding=True)["input_ids"] == theirs(text, padding=True)["input_ids"]


@pytest.fixture
def roberta_dir(tmp_path, minilm_dir):
    directory = tmp_path / "roberta"
    directory.mkdir()
    with open(f"{minilm_dir}/config.json") as f:
        config = json.load(f)
    config["model_type"] = "roberta"
    (directory / "config.json").write_text(json.dumps(config))
    (directory / "tokenizer_config.json").write_text(json.dumps({"tokenizer_class": "RobertaTokenizer"}))
    (directory / "vocab.txt").write_text(open(f"{minilm_dir}/vocab.txt", encoding="utf-8").read(), encoding="utf-8")
    return str(directory)


@pytest.mark.parametrize("auto_name", ["AutoConfig", "AutoModel", "AutoModelForMaskedLM"])
def test_another_model_type_is_refused_saying_what_is_supported(auto_name, roberta_dir):
    with pytest.raises(ConfigError, match=r"model_type 'roberta' is not supported; mini_hf_bert implements BERT only"):
        getattr(mini_hf_bert, auto_name).from_pretrained(roberta_dir)


def test_another_tokenizer_class_is_refused(roberta_dir):
    with pytest.raises(TokenizerFileError, match=r"tokenizer_class 'RobertaTokenizer' is not supported"):
        mini_hf_bert.AutoTokenizer.from_pretrained(roberta_dir)


def test_misuse_is_a_clear_error():
    with pytest.raises(OSError, match=r"AutoModel is used through AutoModel.from_pretrained"):
        mini_hf_bert.AutoModel()
    with pytest.raises(TypeError, match="from_config needs a BertConfig"):
        mini_hf_bert.AutoModel.from_config({"hidden_size": 64})
    with pytest.raises(ConfigError, match="model_type 'gpt2' is not supported"):
        mini_hf_bert.AutoConfig.for_model("gpt2")
    assert mini_hf_bert.AutoConfig.for_model("bert", hidden_size=64, num_attention_heads=4).hidden_size == 64
