"""The conversion tool: Google TF checkpoint -> an HF directory that transformers' own
from_pretrained loads with nothing missing and the same outputs; round trips; the CLI,
HF's script name and arguments, --inspect; the source never modified."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys

import pytest
import torch
import transformers

import mini_hf_bert
from mini_hf_bert.convert import convert, infer_architecture, inspect_checkpoint
from mini_hf_bert.parity import FP32_ATOL, max_abs_diff

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "tf")
GOOGLE_DIR = os.path.join(FIXTURES, "bert_pretraining")
INPUTS = dict(input_ids=torch.tensor([[2, 7, 12, 19, 3, 25, 30, 3]]), token_type_ids=torch.tensor([[0, 0, 0, 0, 0, 1, 1, 1]]))


def _digest(directory: str) -> dict[str, str]:
    return {f: hashlib.sha256(open(os.path.join(directory, f), "rb").read()).hexdigest() for f in sorted(os.listdir(directory))}


def test_converted_directory_loads_in_transformers_with_nothing_missing(tmp_path):
    before = _digest(GOOGLE_DIR)
    report = convert(GOOGLE_DIR, tmp_path / "hf", progress=False)
    assert _digest(GOOGLE_DIR) == before  # the source is only read
    assert report.architecture == "BertForPreTraining" and report.skipped_training_state == 93
    assert sorted(os.listdir(tmp_path / "hf")) == ["config.json", "model.safetensors", "vocab.txt"]
    theirs, info = transformers.BertForPreTraining.from_pretrained(tmp_path / "hf", output_loading_info=True, dtype=torch.float32)
    assert not info["missing_keys"] and not info["unexpected_keys"] and not info["mismatched_keys"]
    ours = mini_hf_bert.BertForPreTraining.from_pretrained(GOOGLE_DIR)
    with torch.no_grad():
        a, b = ours(**INPUTS), theirs.eval()(**INPUTS)
    assert max_abs_diff(a.prediction_logits, b.prediction_logits) <= FP32_ATOL
    assert max_abs_diff(a.seq_relationship_logits, b.seq_relationship_logits) <= FP32_ATOL


def test_round_trip_google_to_hf_to_mini_is_bit_identical(tmp_path):
    convert(GOOGLE_DIR, tmp_path / "hf", progress=False)
    direct = mini_hf_bert.BertForPreTraining.from_pretrained(GOOGLE_DIR)
    through_hf = mini_hf_bert.BertForPreTraining.from_pretrained(tmp_path / "hf")
    for (n1, p1), (n2, p2) in zip(direct.state_dict().items(), through_hf.state_dict().items()):
        assert n1 == n2 and torch.equal(p1, p2), n1
    convert(tmp_path / "hf", tmp_path / "again", progress=False)  # an HF directory converts too
    again = mini_hf_bert.BertForPreTraining.from_pretrained(tmp_path / "again")
    assert all(torch.equal(a, b) for a, b in zip(direct.state_dict().values(), again.state_dict().values()))


def test_existing_destination_is_not_clobbered(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "keep.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="out: exists and is not empty"):
        convert(GOOGLE_DIR, tmp_path / "out", progress=False)
    assert (tmp_path / "out" / "keep.txt").read_text() == "mine"
    convert(GOOGLE_DIR, tmp_path / "out", overwrite=True, progress=False)
    assert not (tmp_path / "out" / "keep.txt").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".converting-")]  # no staging left behind


def test_architecture_is_inferred_from_the_names():
    assert infer_architecture({"bert.pooler.dense.weight", "cls.predictions.bias", "cls.seq_relationship.weight"}) == "BertForPreTraining"
    assert infer_architecture({"bert.embeddings.word_embeddings.weight", "cls.predictions.bias"}) == "BertForMaskedLM"
    assert infer_architecture({"bert.pooler.dense.weight", "classifier.weight"}) == "BertForSequenceClassification"
    assert infer_architecture({"qa_outputs.weight"}) == "BertForQuestionAnswering"
    assert infer_architecture({"embeddings.word_embeddings.weight"}) == "BertModel"


def test_inspect_lists_every_tensor_and_where_it_goes():
    rows = {r.name: r for r in inspect_checkpoint(GOOGLE_DIR)}
    assert len(rows) == 46 + 93
    assert rows["bert/encoder/layer_0/attention/self/query/kernel"].maps_to == "bert.encoder.layer.0.attention.self.query.weight (transposed)"
    assert rows["bert/encoder/layer_0/attention/self/query/kernel"].shape == (16, 16)
    assert rows["global_step"].maps_to == "skipped (training state)" and rows["global_step"].dtype == "int64"


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=ROOT, timeout=300)


def test_cli_convert_and_inspect(tmp_path):
    result = _run("-m", "mini_hf_bert", "convert", os.path.join(FIXTURES, "bert_model.ckpt.zip"), str(tmp_path / "out"), "--inspect")
    assert result.returncode == 0, result.stderr
    assert "cls/seq_relationship/output_weights" in result.stdout and "cls.seq_relationship.weight" in result.stdout
    assert "wrote " in result.stdout and "BertForPreTraining" in result.stdout
    assert os.path.isfile(tmp_path / "out" / "model.safetensors")
    result = _run("-m", "mini_hf_bert", "convert", str(tmp_path / "missing"), str(tmp_path / "x"))
    assert result.returncode == 2 and result.stderr.startswith("error: ") and "Traceback" not in result.stderr


@pytest.mark.parametrize("dump", ["pytorch_model.bin", "hf_dir"])
def test_hf_script_arguments(tmp_path, dump):
    result = _run(os.path.join("tools", "convert_bert_original_tf_checkpoint_to_pytorch.py"),
                  "--tf_checkpoint_path", os.path.join(GOOGLE_DIR, "bert_model.ckpt"),
                  "--bert_config_file", os.path.join(GOOGLE_DIR, "bert_config.json"),
                  "--pytorch_dump_path", str(tmp_path / dump))
    assert result.returncode == 0, result.stderr
    if dump.endswith(".bin"):
        state = torch.load(tmp_path / dump, weights_only=True)
        reference = mini_hf_bert.BertForPreTraining.from_pretrained(GOOGLE_DIR).state_dict()
        assert state.keys() == reference.keys() and all(torch.equal(state[k], reference[k]) for k in state)
    else:
        assert transformers.BertForPreTraining.from_pretrained(tmp_path / dump) is not None
