"""BertConfig: transformers' fields and defaults, config.json round trips, Google configs,
and errors that name the field."""

from __future__ import annotations

import dataclasses
import json
import logging
import re

import pytest
import torch
import transformers

from mini_hf_bert import BertConfig, ConfigError

# Fields transformers 5.x's BertConfig still has (it dropped position_embedding_type).
SHARED_FIELDS = [
    "vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
    "hidden_act", "hidden_dropout_prob", "attention_probs_dropout_prob", "max_position_embeddings",
    "type_vocab_size", "initializer_range", "layer_norm_eps", "pad_token_id", "is_decoder",
    "add_cross_attention", "chunk_size_feed_forward", "use_cache", "classifier_dropout",
    "bos_token_id", "eos_token_id", "tie_word_embeddings", "output_attentions", "output_hidden_states",
    "return_dict",
]


def test_defaults_equal_transformers():
    ours, theirs = BertConfig(), transformers.BertConfig()
    for name in SHARED_FIELDS:
        assert getattr(ours, name) == getattr(theirs, name), name
    assert ours.position_embedding_type == "absolute"  # 4.x's default; 5.x removed the field


def test_every_field_of_transformers_bert_config_exists_here():
    ours = set(BertConfig.field_names())
    theirs = {f for f in transformers.BertConfig.__annotations__}  # BertConfig's own dataclass fields
    assert theirs <= ours, theirs - ours


def test_reads_real_config_json_and_keeps_unknown_keys(minilm_dir, tmp_path):
    config = BertConfig.from_json_file(f"{minilm_dir}/config.json")
    assert (config.num_hidden_layers, config.hidden_size, config.num_attention_heads) == (6, 384, 12)
    # sentence-transformers' checkpoint carries keys BertConfig has no field for:
    assert config.extra["gradient_checkpointing"] is False
    # ... and keys about the file's own history, which describe no model: dropped, so a saved
    # config never claims that transformers 4.8.2 wrote it.
    assert "transformers_version" not in config.extra and "_name_or_path" not in config.extra
    config.save_pretrained(tmp_path)
    written = json.loads((tmp_path / "config.json").read_text())
    original = json.loads(open(f"{minilm_dir}/config.json").read())
    assert original["transformers_version"] == "4.8.2" and original["_name_or_path"]
    for key, value in original.items():
        if key in ("transformers_version", "_name_or_path"):
            assert key not in written
        else:
            assert written[key] == value, key
    assert "attn_implementation" not in written and "extra" not in written


def test_round_trip_through_transformers(tmp_path):
    ours = BertConfig(hidden_size=96, num_attention_heads=3, hidden_act="gelu_new", layer_norm_eps=1e-5,
                      pad_token_id=7, type_vocab_size=3)
    ours.my_key = [1, 2]  # an attribute that is no field: kept, as transformers keeps it
    ours.save_pretrained(tmp_path)
    theirs = transformers.BertConfig.from_pretrained(tmp_path)
    for name in SHARED_FIELDS:
        assert getattr(theirs, name) == getattr(ours, name), name
    theirs.save_pretrained(tmp_path / "back")
    again = BertConfig.from_json_file(tmp_path / "back" / "config.json")
    for name in SHARED_FIELDS:
        assert getattr(again, name) == getattr(ours, name), name
    assert again.extra["my_key"] == again.my_key == [1, 2]


def test_reads_google_bert_config(tmp_path, caplog):
    google = {  # uncased_L-12_H-768_A-12/bert_config.json
        "attention_probs_dropout_prob": 0.1, "hidden_act": "gelu", "hidden_dropout_prob": 0.1,
        "hidden_size": 768, "initializer_range": 0.02, "intermediate_size": 3072,
        "max_position_embeddings": 512, "num_attention_heads": 12, "num_hidden_layers": 12,
        "type_vocab_size": 2, "vocab_size": 30522,
    }
    path = tmp_path / "bert_config.json"
    path.write_text(json.dumps(google))
    with caplog.at_level(logging.INFO, logger="mini_hf_bert"):
        config = BertConfig.from_json_file(path)
    assert config == BertConfig(hidden_act="gelu")
    assert "tanh approximation" in caplog.text  # says which GELU it took
    assert BertConfig.from_json_file(path, hidden_act="gelu_new").hidden_act == "gelu_new"


BAD_VALUES = [
    (dict(hidden_act="gelu_fancy"), "hidden_act 'gelu_fancy' is not a known activation"),
    (dict(intermediate_size=3.5), "intermediate_size must be an int"),
    (dict(hidden_dropout_prob=1.5), "hidden_dropout_prob must be a probability"),
    (dict(layer_norm_eps=0.0), "layer_norm_eps must be positive"),
    (dict(pad_token_id=30522), "pad_token_id (30522) must index a row"),
    (dict(position_embedding_type="rotary"), "position_embedding_type 'rotary' is not one of"),
    (dict(chunk_size_feed_forward=-1), "chunk_size_feed_forward must be >= 0"),
    (dict(add_cross_attention=True), "add_cross_attention=True needs is_decoder=True"),
    (dict(is_decoder="yes"), "is_decoder must be true or false"),
    (dict(pruned_heads={12: [0]}), "pruned_heads names layer 12; the model has layers 0..11"),
    (dict(pruned_heads={-13: [0]}), "pruned_heads names layer -13; the model has layers 0..11"),
    (dict(pruned_heads={0: [12]}), "pruned_heads[0] names head 12"),
    (dict(num_labels=0), "num_labels must be a positive int"),
    (dict(problem_type="ranking"), "problem_type 'ranking' is not one of"),
]


@pytest.mark.parametrize("kwargs,message", BAD_VALUES, ids=[m.split()[0] for _, m in BAD_VALUES])
def test_invalid_values_name_the_field(kwargs, message):
    with pytest.raises(ConfigError, match=re.escape("BertConfig." + message.split(" ")[0].split("(")[0])) as info:
        BertConfig(**kwargs)
    assert message in str(info.value)


def test_heads_that_do_not_divide_hidden_are_refused_by_the_model_not_the_config(tmp_path):
    """transformers and Google accept such a config and refuse the model (Google's own
    test_config_to_json_string builds hidden_size=37 with the default 12 heads)."""
    from mini_hf_bert import BertForSequenceClassification, BertModel

    config = BertConfig(vocab_size=99, hidden_size=37)
    assert json.loads(config.to_json_string())["hidden_size"] == 37
    for model_class in (BertModel, BertForSequenceClassification):
        with pytest.raises(ConfigError, match=re.escape("hidden_size (37) must be divisible by num_attention_heads (12)")):
            model_class(config)
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "bert", "hidden_size": 100, "num_attention_heads": 12}))
    assert BertConfig.from_json_file(path).hidden_size == 100


@pytest.mark.parametrize("name,value", [("hidden_size", 0), ("num_hidden_layers", 0), ("vocab_size", -5),
                                        ("num_attention_heads", 0)])
def test_sizes_that_build_no_model_are_refused_by_the_model_not_the_config(name, value):
    """transformers 4.57.6's ConfigTester builds BertConfig(hidden_size=0) and accepts only
    success; such a config describes no model, so building one is what fails."""
    from mini_hf_bert import BertModel

    config = BertConfig(**{name: value})
    assert getattr(config, name) == value
    with pytest.raises(ConfigError, match=re.escape(f"BertConfig.{name} must be positive to build a model, got {value}")):
        BertModel(config)


def test_invalid_config_file_names_the_file(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "bert", "hidden_size": -100}))
    with pytest.raises(ConfigError, match=f"{path}: BertConfig.hidden_size must be positive to build a model"):
        BertConfig.from_json_file(path, check_model=True)
    path.write_text("{not json")
    with pytest.raises(ConfigError, match=f"{path}: not valid JSON"):
        BertConfig.from_json_file(path)
    path.write_text(json.dumps({"model_type": "roberta"}))
    with pytest.raises(ConfigError, match="model_type 'roberta'"):
        BertConfig.from_json_file(path)
    with pytest.raises(FileNotFoundError, match="nope.json"):
        BertConfig.from_json_file(tmp_path / "nope.json")


def test_a_typo_is_an_error_not_an_ignored_attribute():
    with pytest.raises(TypeError, match="hiden_size"):
        BertConfig(hiden_size=10)
    with pytest.raises(TypeError, match="no field 'hiden_size'"):
        BertConfig.from_dict({}, hiden_size=10)


def test_edited_config_is_validated_when_a_model_is_built():
    from mini_hf_bert import BertModel

    config = BertConfig(hidden_size=64, num_attention_heads=4, num_hidden_layers=1, intermediate_size=64)
    config.num_attention_heads = 5
    with pytest.raises(ConfigError, match="divisible"):
        BertModel(config)


def test_replace_keeps_validation():
    with pytest.raises(ConfigError):
        dataclasses.replace(BertConfig(), hidden_size="7")


@pytest.mark.parametrize("key", ["extra", "update", "to_dict", "_attn_implementation", "use_return_dict",
                                 "save_pretrained", "validate"])
def test_a_config_file_cannot_replace_a_method_or_property(tmp_path, key):
    """Keys that are no field become attributes, but never one that would hide a method or
    property of the class: refused, naming the file and the key (not an AttributeError)."""
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "bert", "hidden_size": 8, "num_attention_heads": 2, key: 1}))
    with pytest.raises(ConfigError, match=rf"config.json: config key '{key}' names BertConfig.{key}, not a setting"):
        BertConfig.from_json_file(path)


def test_the_config_has_no_attribute_hooks_and_keeps_what_is_set():
    """No __setattr__ / __getattr__ of its own: an attribute set on a config is an ordinary
    attribute, saved with the fields and kept by replace(); num_labels rebuilds the labels."""
    for cls in BertConfig.__mro__[:-1]:
        assert "__setattr__" not in vars(cls) and "__getattr__" not in vars(cls), cls
    config = BertConfig(hidden_size=8, num_attention_heads=2)
    config.quantization_config = {"bits": 8}
    assert config.extra == {"quantization_config": {"bits": 8}}
    assert config.to_dict()["quantization_config"] == {"bits": 8}
    assert config.replace(num_hidden_layers=2).quantization_config == {"bits": 8}
    config.num_labels = 3
    assert config.id2label == {0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"} and config.label2id["LABEL_2"] == 2


def test_transformers_4_keywords_are_kept_and_written_only_when_set(tmp_path):
    """4.x's PretrainedConfig keywords (tests_transformers4/test_config_4x.py holds them to
    4.57.6): accepted, saved when they differ from 4.x's default, left out of config.json otherwise."""
    plain = json.loads(BertConfig().to_json_string())
    for name in ("torchscript", "num_beams", "finetuning_task", "max_length", "torch_dtype"):
        assert name not in plain, name
    config = BertConfig(num_beams=4, finetuning_task="sst-2", torchscript=True, torch_dtype="bfloat16")
    written = json.loads(config.to_json_string())
    assert (written["num_beams"], written["finetuning_task"], written["torchscript"], written["dtype"]) == (
        4, "sst-2", True, "bfloat16")
    assert "torch_dtype" not in written and "max_length" not in written
    config.save_pretrained(tmp_path)
    again = BertConfig.from_pretrained(tmp_path)
    assert (again.num_beams, again.finetuning_task, again.torchscript, again.dtype) == (4, "sst-2", True, torch.bfloat16)
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "bert", "torch_dtype": "float16"}))
    assert BertConfig.from_pretrained(tmp_path).dtype == torch.float16 and "torch_dtype" not in BertConfig.from_pretrained(tmp_path).extra
    with pytest.raises(ConfigError, match="torchscript must be true or false"):
        BertConfig(torchscript="yes")


def test_torchscript_config_returns_tuples_unless_asked():
    from mini_hf_bert import BertModel

    config = BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=20,
                        torchscript=True)
    model = BertModel(config).eval()
    ids = torch.tensor([[1, 2, 3]])
    with torch.no_grad():
        assert isinstance(model(ids), tuple)
        assert not isinstance(model(ids, return_dict=True), tuple)
        config.torchscript = False
        assert not isinstance(model(ids), tuple)


def test_is_encoder_decoder_is_a_class_setting_not_an_argument():
    """Kept on purpose (docs/conformance.md): 4.x's PretrainedConfig takes is_encoder_decoder
    like any keyword; a BertConfig is one stack, so the argument is a TypeError, while a
    config.json that writes it (false) still reads."""
    with pytest.raises(TypeError, match="is_encoder_decoder"):
        BertConfig(is_encoder_decoder=True)
    assert BertConfig.is_encoder_decoder is False
    assert BertConfig.from_dict({"model_type": "bert", "is_encoder_decoder": False}).is_encoder_decoder is False
