"""Every mistake a user can make ends in one clear error naming the file or argument:
bad paths, truncated and corrupt files, hostile pickles, missing and mis-shaped weights,
hostile shard indexes, wrong model inputs. Nothing is returned half-loaded."""

from __future__ import annotations

import json
import logging
import os
import pickle
import random
import re

import pytest
import torch

import mini_hf_bert
from mini_hf_bert import BertModel, CheckpointError, ConfigError

from ..conftest import small_config_kwargs


@pytest.fixture
def good_dir(tmp_path):
    """A valid small checkpoint directory (config.json + model.safetensors)."""
    torch.manual_seed(0)
    BertModel(mini_hf_bert.BertConfig(**small_config_kwargs("tiny"))).save_pretrained(tmp_path / "good")
    return tmp_path / "good"


def _state_dict(good_dir) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file

    return load_file(good_dir / "model.safetensors")


def _as_bin(good_dir, state_dict):
    """Replace the directory's weights with a pytorch_model.bin holding ``state_dict``."""
    os.remove(good_dir / "model.safetensors")
    torch.save(state_dict, good_dir / "pytorch_model.bin")
    return good_dir / "pytorch_model.bin"


# --------------------------------------------------------------------- paths


def test_missing_path(tmp_path):
    with pytest.raises(FileNotFoundError, match=re.escape(f"{tmp_path / 'nope'}: no such directory")):
        BertModel.from_pretrained(tmp_path / "nope")


def test_file_instead_of_directory(good_dir):
    with pytest.raises(CheckpointError, match="model.safetensors: is a file"):
        BertModel.from_pretrained(good_dir / "model.safetensors")


def test_directory_without_config(good_dir):
    os.remove(good_dir / "config.json")
    with pytest.raises(CheckpointError, match=f"{good_dir}: no config.json"):
        BertModel.from_pretrained(good_dir)


def test_directory_without_weights(good_dir):
    os.remove(good_dir / "model.safetensors")
    with pytest.raises(CheckpointError, match=f"{good_dir}: no weights found: expected config.json with model.safetensors.*"
                                              f"tf_model.h5 or flax_model.msgpack.*Google's bert_config.json with "
                                              f"bert_model.ckpt.index.*a KerasHub preset"):
        BertModel.from_pretrained(good_dir)


def test_invalid_config_in_directory(good_dir):
    config = json.loads((good_dir / "config.json").read_text())
    config["num_attention_heads"] = 5
    (good_dir / "config.json").write_text(json.dumps(config))
    with pytest.raises(ConfigError, match="config.json: BertConfig.hidden_size \\(64\\) must be divisible"):
        BertModel.from_pretrained(good_dir)


# -------------------------------------------------------------- corrupt files


@pytest.mark.parametrize("keep_fraction", [0.0, 0.001, 0.5, 0.999])
def test_truncated_safetensors(good_dir, keep_fraction):
    path = good_dir / "model.safetensors"
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep_fraction)])
    with pytest.raises(CheckpointError, match=f"{path}: not a valid safetensors file"):
        BertModel.from_pretrained(good_dir)


def test_safetensors_with_bad_header(good_dir):
    path = good_dir / "model.safetensors"
    data = bytearray(path.read_bytes())
    data[8:16] = b"\xff" * 8  # the JSON header is no longer JSON
    path.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match=f"{path}: not a valid safetensors file"):
        BertModel.from_pretrained(good_dir)


@pytest.mark.parametrize("keep_fraction", [0.0, 0.3, 0.9])
def test_truncated_bin(good_dir, keep_fraction):
    path = _as_bin(good_dir, _state_dict(good_dir))
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep_fraction)])
    with pytest.raises(CheckpointError, match=f"{path}: not a valid PyTorch checkpoint; is it truncated or corrupt"):
        BertModel.from_pretrained(good_dir)


@pytest.mark.parametrize("seed", range(8))
def test_random_bytes_bin(good_dir, seed):
    path = _as_bin(good_dir, {})
    path.write_bytes(random.Random(seed).randbytes(4096))
    with pytest.raises(CheckpointError, match=f"{path}: not a valid PyTorch checkpoint"):
        BertModel.from_pretrained(good_dir)


class _Exploit:
    """A pickle payload that would create a file if unpickled with weights_only=False."""

    marker = ""

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_hostile_pickle_is_refused_and_runs_nothing(good_dir, tmp_path):
    marker = tmp_path / "pwned"
    _Exploit.marker = str(marker)
    state = _state_dict(good_dir)
    state["embeddings.word_embeddings.weight"] = _Exploit()
    path = good_dir / "pytorch_model.bin"
    os.remove(good_dir / "model.safetensors")
    with open(path, "wb") as f:
        torch.save(state, f, pickle_module=pickle)
    with pytest.raises(CheckpointError, match=f"{path}: refused: this is not a plain weights file; its pickle asks for "
                                              f"(io|builtins|__builtin__).open, code that would run") as info:
        BertModel.from_pretrained(good_dir)
    assert not marker.exists()
    assert "weights_only=False" not in str(info.value) and "will likely succeed" not in str(info.value)


class _Call:
    """A pickle payload calling ``function(*args)`` when unpickled."""

    def __init__(self, function, args):
        self.function, self.args = function, args

    def __reduce__(self):
        return (self.function, self.args)


class _NotATensor:
    pass


@pytest.mark.parametrize("protocol", [2, 4])
@pytest.mark.parametrize("zip_format", [True, False])
@pytest.mark.parametrize("payload,named", [
    (lambda marker: _Call(os.system, (f"touch {marker}",)), "posix.system"),
    (lambda marker: _Call(eval, (f"open({str(marker)!r}, 'w')",)), "eval"),
    (lambda marker: _Call(__import__("subprocess").call, (["touch", str(marker)],)), ".call"),
    (lambda marker: _NotATensor(), "_NotATensor"),
], ids=["os.system", "eval", "subprocess.call", "a class"])
def test_hostile_pickles_are_named_as_hostile(good_dir, tmp_path, protocol, zip_format, payload, named):
    """Whatever the pickle protocol or container format: the refused global is named, the file
    is said to try to run code, torch's advice to retry with weights_only=False never appears,
    and nothing runs."""
    marker = tmp_path / "pwned"
    state = _state_dict(good_dir)
    state["extra"] = payload(marker)
    os.remove(good_dir / "model.safetensors")
    torch.save(state, good_dir / "pytorch_model.bin", pickle_protocol=protocol, _use_new_zipfile_serialization=zip_format)
    with pytest.raises(CheckpointError) as info:
        BertModel.from_pretrained(good_dir)
    message = str(info.value)
    assert message.startswith(f"{good_dir / 'pytorch_model.bin'}: refused: this is not a plain weights file")
    assert named in message and "code that would run when it is unpickled" in message
    assert "weights_only=False" not in message and "likely succeed" not in message and "trust" not in message
    assert not marker.exists()


def test_protocol_4_state_dict_gets_its_own_message(good_dir):
    os.remove(good_dir / "model.safetensors")
    torch.save({"a": torch.zeros(2)}, good_dir / "pytorch_model.bin", pickle_protocol=4)
    with pytest.raises(CheckpointError, match="written with pickle protocol 4, which torch's weights-only reader does not read"):
        BertModel.from_pretrained(good_dir)


@pytest.mark.parametrize(
    "payload,message",
    [
        ([torch.zeros(2)], "expected a dict of tensors \\(a state_dict\\), found a list"),
        ({"state_dict": {"a": torch.zeros(1)}, "epoch": 3}, "nested dicts under \\['state_dict'\\]: a training checkpoint"),
        ({"a": 1.0}, "entries are not tensors, e.g. 'a'"),
    ],
)
def test_bin_that_is_not_a_flat_state_dict(good_dir, payload, message):
    path = _as_bin(good_dir, payload)
    with pytest.raises(CheckpointError, match=f"{path}: .*{message}"):
        BertModel.from_pretrained(good_dir)


# --------------------------------------------------------- weights that do not fit


def test_missing_weights_are_an_error_naming_them(good_dir):
    state = _state_dict(good_dir)
    del state["encoder.layer.1.output.dense.weight"]
    path = _as_bin(good_dir, state)
    with pytest.raises(CheckpointError, match=f"{path}: cannot load into BertModel: 1 weights missing: encoder.layer.1.output.dense.weight"):
        BertModel.from_pretrained(good_dir)


def test_non_strict_load_reports_and_keeps_the_rest(good_dir, caplog):
    state = _state_dict(good_dir)
    del state["encoder.layer.1.output.dense.weight"]
    _as_bin(good_dir, state)
    with caplog.at_level(logging.WARNING, logger="mini_hf_bert"):
        model, info = BertModel.from_pretrained(good_dir, strict=False, output_loading_info=True)
    assert info["missing_keys"] == {"encoder.layer.1.output.dense.weight"}
    assert "encoder.layer.1.output.dense.weight" in caplog.text and "fresh initialisation" in caplog.text
    assert torch.equal(model.encoder.layer[0].output.dense.weight, state["encoder.layer.0.output.dense.weight"])


def test_shape_that_disagrees_with_the_config(good_dir):
    config = json.loads((good_dir / "config.json").read_text())
    config["vocab_size"] = 300
    (good_dir / "config.json").write_text(json.dumps(config))
    with pytest.raises(
        CheckpointError,
        match=r"1 weights have the wrong shape for the config: embeddings.word_embeddings.weight is \(211, 64\) "
        r"in the checkpoint, the model expects \(300, 64\)",
    ):
        BertModel.from_pretrained(good_dir)


def test_integer_tensor_where_a_float_weight_belongs(good_dir):
    state = _state_dict(good_dir)
    state["pooler.dense.bias"] = torch.zeros(64, dtype=torch.int64)
    _as_bin(good_dir, state)
    with pytest.raises(CheckpointError, match="wrong dtype kind, e.g. pooler.dense.bias is torch.int64"):
        BertModel.from_pretrained(good_dir)


def test_unexpected_weights_are_reported_by_name(good_dir, caplog):
    state = _state_dict(good_dir)
    state["encoder.layer.7.output.dense.weight"] = torch.zeros(3)
    _as_bin(good_dir, state)
    with caplog.at_level(logging.WARNING, logger="mini_hf_bert"):
        _, info = BertModel.from_pretrained(good_dir, output_loading_info=True)
    assert info["unexpected_keys"] == {"encoder.layer.7.output.dense.weight"}
    assert "not used by BertModel: encoder.layer.7.output.dense.weight" in caplog.text


def test_two_names_for_one_weight(good_dir):
    state = _state_dict(good_dir)
    state["embeddings.LayerNorm.gamma"] = state["embeddings.LayerNorm.weight"].clone()
    path = _as_bin(good_dir, state)
    with pytest.raises(CheckpointError, match=f"{path}: two checkpoint tensors map to the same model name 'embeddings.LayerNorm.weight'"):
        BertModel.from_pretrained(good_dir)


# ------------------------------------------------------------ hostile indexes


def _write_index(good_dir, weight_map, name="model.safetensors.index.json"):
    os.rename(good_dir / "model.safetensors", good_dir / "shard.safetensors")
    (good_dir / name).write_text(json.dumps({"weight_map": weight_map}))
    return good_dir / name


@pytest.mark.parametrize(
    "shard,message",
    [
        ("../shard.safetensors", "is not a file name in this directory"),
        ("/etc/passwd", "is not a file name in this directory"),
        ("model.safetensors.index.json", "is neither a .safetensors nor a .bin file"),
        ("absent.safetensors", "absent.safetensors: not a valid safetensors file|no such file"),
    ],
)
def test_hostile_or_broken_shard_index(good_dir, shard, message):
    names = list(_state_dict(good_dir))
    index = _write_index(good_dir, {**{k: "shard.safetensors" for k in names[1:]}, names[0]: shard})
    with pytest.raises(CheckpointError, match=message):
        BertModel.from_pretrained(good_dir)
    assert index.exists()


def test_index_placing_a_tensor_in_the_wrong_shard(good_dir):
    names = list(_state_dict(good_dir))
    _write_index(good_dir, {**{k: "shard.safetensors" for k in names}, "not.there": "shard.safetensors"})
    with pytest.raises(CheckpointError, match="shard.safetensors: the index .* places 1 tensors in this shard that it does not hold, e.g. 'not.there'"):
        BertModel.from_pretrained(good_dir)


def test_index_without_weight_map(good_dir):
    _write_index(good_dir, {})
    with pytest.raises(CheckpointError, match="no 'weight_map' object"):
        BertModel.from_pretrained(good_dir)


# ------------------------------------------------------------------ model inputs


@pytest.fixture(scope="module")
def tiny_model():
    return BertModel(mini_hf_bert.BertConfig(**small_config_kwargs("tiny"))).eval()


@pytest.mark.parametrize(
    "kwargs,error,message",
    [
        (dict(), ValueError, "pass exactly one of input_ids or inputs_embeds"),
        (dict(input_ids=torch.ones(2, 4, dtype=torch.long), inputs_embeds=torch.ones(2, 4, 64)), ValueError, "exactly one"),
        (dict(input_ids=torch.ones(4, dtype=torch.long)), ValueError, r"input_ids must be \(batch, seq\) = \(\*, \*\), got shape \(4,\)"),
        (dict(input_ids=torch.full((2, 4), 211)), ValueError, r"input_ids must lie in \[0, vocab_size=211\), got values in \[211, 211\]"),
        (dict(input_ids=torch.ones(2, 4)), TypeError, "input_ids must hold integer ids, got dtype torch.float32"),
        (dict(input_ids=torch.ones(2, 41, dtype=torch.long)), ValueError, "sequence length 41 exceeds max_position_embeddings=40"),
        (dict(input_ids=torch.ones(2, 4, dtype=torch.long), attention_mask=torch.ones(2, 5)), ValueError,
         r"attention_mask must be \(batch, seq\) = \(2, 4\) to match the input, got shape \(2, 5\)"),
        (dict(input_ids=torch.ones(2, 4, dtype=torch.long), token_type_ids=torch.full((2, 4), 2)), ValueError,
         r"token_type_ids must lie in \[0, type_vocab_size=2\)"),
        (dict(input_ids=torch.ones(2, 4, dtype=torch.long), token_type_ids=torch.zeros(2, 3, dtype=torch.long)), ValueError,
         r"token_type_ids must be \(batch, seq\) = \(2, 4\), got shape \(2, 3\)"),
        (dict(input_ids=torch.ones(2, 4, dtype=torch.long), position_ids=torch.zeros(3, 4, dtype=torch.long)), ValueError,
         r"position_ids must be \(batch, seq\) = \(2, 4\) or \(1, 4\)"),
        (dict(inputs_embeds=torch.ones(2, 4, 63)), ValueError, r"inputs_embeds must be \(batch, seq, hidden_size\) = \(\*, \*, 64\)"),
    ],
)
def test_wrong_model_inputs_say_what_was_expected(tiny_model, kwargs, error, message):
    with pytest.raises(error, match=message):
        tiny_model(**kwargs)
