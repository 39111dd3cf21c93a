"""Knowing what you loaded: official files recognised by content fingerprint (size, then
SHA-256), and for anything else the architecture inferred from the tensors."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import pytest

from mini_hf_bert.checkpoints import fingerprints
from mini_hf_bert.checkpoints.fingerprints import KNOWN_FILES, identify_file
from mini_hf_bert.checkpoints.convert import describe_checkpoint, format_description
from ..paths import FIXTURES, ROOT

TF_FIXTURES = os.path.join(FIXTURES, "tf")


def test_known_files_are_well_formed():
    for known in KNOWN_FILES:
        assert len(known.sha256) == 64 and int(known.sha256, 16) >= 0 and known.size > 0 and known.source
    assert len({k.sha256 for k in KNOWN_FILES}) == len(KNOWN_FILES)
    # The fingerprint the issue quotes for the hub's bert-base-uncased pytorch_model.bin.
    assert any(k.filename == "pytorch_model.bin" and k.size == 440473133
               and k.sha256 == "097417381d6c7230bd9e3557456d726de6e83245ec8b24f529f60198a67b203a" for k in KNOWN_FILES)


def test_the_packaged_real_checkpoint_is_recognised(minilm_dir):
    """A real official file at hand: all-MiniLM-L6-v2's weights, and its vocab, which is
    bert-base-uncased's (the hub's published SHA-256 for that vocab.txt matches it)."""
    weights = identify_file(os.path.join(minilm_dir, "model.safetensors"))
    vocab = identify_file(os.path.join(minilm_dir, "vocab.txt"))
    assert weights is not None and weights.name.startswith("all-MiniLM-L6-v2")
    assert vocab is not None and vocab.name.startswith("bert-base-uncased vocabulary")
    with open(os.path.join(minilm_dir, "vocab.txt"), "rb") as f:
        assert hashlib.sha256(f.read()).hexdigest() == vocab.sha256


def test_same_size_other_content_is_not_recognised(tmp_path):
    known = next(k for k in KNOWN_FILES if k.filename == "vocab.txt")
    impostor = tmp_path / "vocab.txt"
    impostor.write_bytes(b"x" * known.size)
    assert identify_file(str(impostor)) is None


def test_unknown_sizes_are_never_hashed(tmp_path, monkeypatch):
    def no_hashing(*args, **kwargs):
        raise AssertionError("hashed a file whose size matches no known file")

    monkeypatch.setattr(fingerprints, "sha256_file", no_hashing)
    path = tmp_path / "model.safetensors"
    path.write_bytes(b"\0" * 1234)
    assert identify_file(str(path)) is None
    assert identify_file(str(tmp_path / "missing")) is None


def test_bert_base_shaped_checkpoint_is_described_by_inference(bert_base_legacy_dir):
    description = describe_checkpoint(bert_base_legacy_dir)
    assert description.recognised == []  # same layout as the hub's, other weights
    assert description.architecture == "BertForPreTraining"
    assert (description.num_hidden_layers, description.hidden_size, description.num_attention_heads,
            description.intermediate_size, description.vocab_size, description.max_position_embeddings,
            description.type_vocab_size) == (12, 768, 12, 3072, 30522, 512, 2)
    text = format_description(description)
    assert "not a checkpoint this tool knows by fingerprint" in text
    assert "BertForPreTraining: 12 layers, hidden 768, heads 12 (from config), intermediate 3072, vocab 30522" in text
    assert "heads present: pooler, masked-LM head (cls.predictions), next-sentence head (cls.seq_relationship)" in text


@pytest.mark.parametrize("form", ["bert_pretraining", "bert_pretraining/bert_model.ckpt", "bert_model.ckpt.zip"])
def test_google_checkpoint_described_from_its_index_alone(form):
    """Shapes come from the bundle's index (transposed kernels turned round); they agree
    with the bert_config.json the checkpoint was written with."""
    with open(os.path.join(TF_FIXTURES, "bert_pretraining", "bert_config.json")) as f:
        config = json.load(f)
    d = describe_checkpoint(os.path.join(TF_FIXTURES, form))
    assert d.architecture == "BertForPreTraining"
    assert (d.num_hidden_layers, d.hidden_size, d.num_attention_heads, d.intermediate_size, d.vocab_size,
            d.max_position_embeddings, d.type_vocab_size) == (
        config["num_hidden_layers"], config["hidden_size"], config["num_attention_heads"], config["intermediate_size"],
        config["vocab_size"], config["max_position_embeddings"], config["type_vocab_size"])


def test_encoder_only_checkpoint_lists_its_heads(minilm_dir):
    d = describe_checkpoint(minilm_dir)
    assert d.architecture == "BertModel" and d.heads == ["pooler"]
    assert [known.filename for _, known in d.recognised] == ["model.safetensors", "vocab.txt"]
    text = format_description(d)
    assert text.startswith("recognised model.safetensors: all-MiniLM-L6-v2 weights")
    assert "not a checkpoint this tool knows" not in text


def test_cli_inspect(minilm_dir):
    result = subprocess.run([sys.executable, "-m", "mini_hf_bert", "inspect", minilm_dir, "--tensors", "--no-progress"],
                            capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert "recognised model.safetensors: all-MiniLM-L6-v2" in result.stdout
    assert "encoder.layer.5.output.LayerNorm.weight" in result.stdout  # the tensor list
