"""Loading Google's TensorFlow checkpoints through from_pretrained, without TensorFlow,
against what transformers 4.57.6's load_tf_weights_in_bert built from the same files
(committed in tests/fixtures/tf by tools/make_tf_fixture.py)."""

from __future__ import annotations

import logging
import os
import shutil
import zipfile

import pytest
import torch
from safetensors.torch import load_file

import mini_hf_bert
from mini_hf_bert import CheckpointError
from mini_hf_bert.checkpoints.weight_map import (
    TF_WEIGHT_MAP,
    hf_to_tf_name,
    is_tf_training_state,
    tf_to_hf_name,
)
from mini_hf_bert.parity.compare import ParityRow, max_abs_diff
from ..paths import FIXTURES

TF_FIXTURES = os.path.join(FIXTURES, "tf")
GOOGLE_DIR = os.path.join(TF_FIXTURES, "bert_pretraining")
REFERENCE_FAMILY = "Google TF checkpoint vs transformers 4.57.6 load_tf_weights_in_bert (committed reference)"


@pytest.fixture(scope="module")
def reference() -> dict[str, torch.Tensor]:
    return load_file(os.path.join(TF_FIXTURES, "reference_transformers_4.57.6.safetensors"))


def _forms(tmp_path) -> dict[str, str]:
    """The same checkpoint in every form from_pretrained accepts."""
    return {
        "directory": GOOGLE_DIR,
        "prefix": os.path.join(GOOGLE_DIR, "bert_model.ckpt"),
        "index file": os.path.join(GOOGLE_DIR, "bert_model.ckpt.index"),
        "released zip": os.path.join(TF_FIXTURES, "bert_model.ckpt.zip"),
    }


@pytest.mark.parametrize("form", ["directory", "prefix", "index file", "released zip"])
def test_every_form_loads_what_transformers_4_loads(form, tmp_path, reference, record_parity):
    model, info = mini_hf_bert.BertForPreTraining.from_pretrained(_forms(tmp_path)[form], output_loading_info=True)
    assert info["missing_keys"] == set() and info["unexpected_keys"] == set() and info["unmapped_keys"] == []
    assert len(info["skipped_training_state"]) == 2 * 46 + 1  # adam_m + adam_v per variable, global_step
    state = model.state_dict()
    rows = [ParityRow(f"state_dict {k.split('/', 1)[1]}", max_abs_diff(state[k.split("/", 1)[1]], v))
            for k, v in reference.items() if k.startswith("state_dict/") and not k.endswith("position_ids")]
    inputs = {k.split("/", 1)[1]: v for k, v in reference.items() if k.startswith("input/")}
    with torch.no_grad():
        out = model(**inputs, output_hidden_states=True)
    rows.append(ParityRow("prediction_logits", max_abs_diff(out.prediction_logits, reference["output/prediction_logits"])))
    rows.append(ParityRow("seq_relationship_logits", max_abs_diff(out.seq_relationship_logits, reference["output/seq_relationship_logits"])))
    rows += [ParityRow(f"hidden_states[{i}]", max_abs_diff(h, reference[f"output/hidden_states/{i}"])) for i, h in enumerate(out.hidden_states)]
    record_parity(REFERENCE_FAMILY, rows)
    assert all(r.ok for r in rows), [(r.name, r.max_abs_diff) for r in rows if not r.ok]


def test_kernels_are_transposed_by_value_not_just_by_shape():
    """The fixture's attention kernels are square (16 x 16): a missing transpose would load
    without any shape error, so compare the values with the TF tensors themselves."""
    tf_values = load_file(os.path.join(TF_FIXTURES, "reference.safetensors"))
    model = mini_hf_bert.BertForPreTraining.from_pretrained(GOOGLE_DIR)
    kernel = tf_values["bert_pretraining/bert/encoder/layer_1/attention/self/query/kernel"]
    assert kernel.shape[0] == kernel.shape[1] and not torch.equal(kernel, kernel.T)
    assert torch.equal(model.bert.encoder.layer[1].attention.self.query.weight, kernel.T)
    assert torch.equal(model.cls.seq_relationship.weight, tf_values["bert_pretraining/cls/seq_relationship/output_weights"])
    assert torch.equal(model.cls.predictions.bias, tf_values["bert_pretraining/cls/predictions/output_bias"])
    assert model.cls.predictions.decoder.weight is model.bert.embeddings.word_embeddings.weight


def test_base_model_from_a_google_checkpoint_reports_the_heads_by_their_tf_names(caplog):
    with caplog.at_level(logging.INFO, logger="mini_hf_bert"):
        model, info = mini_hf_bert.BertModel.from_pretrained(GOOGLE_DIR, output_loading_info=True)
    assert "cls/predictions/output_bias" in info["unexpected_keys"] and "cls/seq_relationship/output_weights" in info["unexpected_keys"]
    said = [r for r in caplog.records if "bert_model.ckpt.index: 7 checkpoint weights are not used by BertModel" in r.message]
    assert [r.levelname for r in said] == ["INFO"]  # only heads: expected, said at INFO as transformers 4.x does
    assert model.config.hidden_size == 16 and not model.training


def test_google_config_gelu_note_and_the_tanh_option(caplog):
    with caplog.at_level(logging.INFO, logger="mini_hf_bert"):
        model = mini_hf_bert.BertModel.from_pretrained(GOOGLE_DIR)
    assert model.config.hidden_act == "gelu" and "tanh approximation" in caplog.text
    assert mini_hf_bert.BertModel.from_pretrained(GOOGLE_DIR, hidden_act="gelu_new").config.hidden_act == "gelu_new"


# ------------------------------------------------------------------- the name table


def test_table_covers_every_parameter_of_every_google_head():
    config = mini_hf_bert.BertConfig(vocab_size=40, hidden_size=16, num_attention_heads=4, num_hidden_layers=2,
                                     intermediate_size=24, max_position_embeddings=32)
    for cls in (mini_hf_bert.BertForPreTraining, mini_hf_bert.BertForSequenceClassification, mini_hf_bert.BertForQuestionAnswering):
        model = cls(config)
        for name in model.state_dict():
            if name in model.tied_weights():
                continue
            mapped = hf_to_tf_name(name)
            assert mapped is not None, (cls.__name__, name)
            tf_name, transpose = mapped
            assert tf_to_hf_name(tf_name) == (name, transpose)  # the one table, both directions


def test_fine_tuned_google_names_and_training_state():
    assert tf_to_hf_name("output_weights") == ("classifier.weight", False)  # run_classifier.py, [labels, H]
    assert tf_to_hf_name("cls/squad/output_bias") == ("qa_outputs.bias", False)  # run_squad.py
    assert tf_to_hf_name("bert/encoder/layer_23/output/dense/kernel") == ("bert.encoder.layer.23.output.dense.weight", True)
    for name in ("global_step", "bert/pooler/dense/kernel/adam_m", "bert/pooler/dense/kernel/AdamWeightDecayOptimizer_1",
                 "output_weights/BERTAdam", "bert/embeddings/word_embeddings/Adam"):
        assert is_tf_training_state(name), name
    assert not is_tf_training_state("bert/pooler/dense/kernel")
    assert tf_to_hf_name("bert/encoder/layer_x/output/dense/kernel") is None
    assert len({row[1] for row in TF_WEIGHT_MAP}) == len(TF_WEIGHT_MAP)  # no TF name twice


# ------------------------------------------------------------------- broken inputs


def test_zip_with_a_member_escaping_the_directory(tmp_path):
    path = tmp_path / "evil.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("../../etc/evil", b"x")
    with pytest.raises(CheckpointError, match=r"evil.zip: member '../../etc/evil' would be written outside"):
        mini_hf_bert.BertModel.from_pretrained(path)


def test_truncated_zip(tmp_path):
    data = open(os.path.join(TF_FIXTURES, "bert_model.ckpt.zip"), "rb").read()
    path = tmp_path / "cut.zip"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match="cut.zip: "):
        mini_hf_bert.BertModel.from_pretrained(path)


def test_zip_without_a_checkpoint(tmp_path):
    path = tmp_path / "empty.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("readme.txt", b"hello")
    with pytest.raises(CheckpointError, match="empty.zip: the zip holds no checkpoint"):
        mini_hf_bert.BertModel.from_pretrained(path)


def test_google_checkpoint_without_its_config(tmp_path):
    shutil.copytree(GOOGLE_DIR, tmp_path / "ckpt")
    os.remove(tmp_path / "ckpt" / "bert_config.json")
    with pytest.raises(CheckpointError, match="no config.json or bert_config.json beside this checkpoint; pass config="):
        mini_hf_bert.BertModel.from_pretrained(tmp_path / "ckpt")
    config = mini_hf_bert.BertConfig.from_json_file(os.path.join(GOOGLE_DIR, "bert_config.json"))
    assert mini_hf_bert.BertModel.from_pretrained(tmp_path / "ckpt", config=config).config.hidden_size == 16


def test_google_config_that_disagrees_with_the_tensors(tmp_path):
    shutil.copytree(GOOGLE_DIR, tmp_path / "ckpt")
    config = (tmp_path / "ckpt" / "bert_config.json").read_text().replace('"intermediate_size": 24', '"intermediate_size": 32')
    (tmp_path / "ckpt" / "bert_config.json").write_text(config)
    with pytest.raises(CheckpointError, match=r"bert_model.ckpt.index: cannot load into BertModel: .*"
                                              r"bert/encoder/layer_0/intermediate/dense/kernel is \(24, 16\) in the checkpoint, the model expects \(32, 16\)"):
        mini_hf_bert.BertModel.from_pretrained(tmp_path / "ckpt")
