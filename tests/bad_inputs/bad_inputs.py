"""A corpus of bad inputs, each written into a fresh directory by a small builder: the
files and arguments a user can get wrong, hostile files among them. Used by
``test_bad_input_corpus.py``, which runs every case through the command line and the
library and expects one clear error naming the file or argument.

Each builder takes a directory holding a valid small checkpoint (``good``: config.json,
model.safetensors, vocab.txt; ``google``: a copy of the Google TF fixture) and returns
the SRC to pass. ``CASES`` maps a case name to (builder, fragment the error must contain,
the commands that must refuse it: the others must succeed).
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import zipfile

import torch

from mini_hf_bert.file_utils import MOVING_IN_MARKER

from ..paths import FIXTURES

TF_FIXTURES = os.path.join(FIXTURES, "tf")
GOOGLE_DIR = os.path.join(TF_FIXTURES, "bert_pretraining")
#: The published forms, each written by its own library (tools/format_fixtures.py).
FORMATS = os.path.join(FIXTURES, "formats")

ALL = ("inspect", "convert", "demo", "parity", "trace", "attention")
LOADING = ALL  # fails wherever the weights or config are read
TOKENIZING = ("convert", "demo", "parity", "trace", "attention")  # only what reads the vocabulary
#: Commands that read a checkpoint as the demo does (model + tokenizer): a case that names
#: "demo" among its refusing commands is refused by these too.
LIKE_DEMO = ("trace", "attention")


class _Call:
    """A pickle payload that calls ``function(*args)`` when unpickled."""

    def __init__(self, function, args):
        self.function, self.args = function, args

    def __reduce__(self):
        return (self.function, self.args)


def _json(path, value) -> None:
    with open(path, "w", encoding="utf-8") as f:
        json.dump(value, f)


def _config(d) -> dict:
    with open(os.path.join(d, "config.json"), encoding="utf-8") as f:
        return json.load(f)


def _edit_config(d, **changes) -> str:
    _json(os.path.join(d, "config.json"), {**_config(d), **changes})
    return d


def _write(path, data: bytes | str) -> None:
    with open(path, "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)


def _state(d) -> dict:
    from safetensors.torch import load_file

    return load_file(os.path.join(d, "model.safetensors"))


def _as_bin(d, payload, **save_kwargs) -> str:
    os.remove(os.path.join(d, "model.safetensors"))
    torch.save(payload, os.path.join(d, "pytorch_model.bin"), **save_kwargs)
    return d


def _as_safetensors(d, state) -> str:
    from safetensors.torch import save_file

    save_file(state, os.path.join(d, "model.safetensors"))
    return d


def _sharded(d, weight_map_or_index) -> str:
    os.rename(os.path.join(d, "model.safetensors"), os.path.join(d, "shard.safetensors"))
    _write(os.path.join(d, "model.safetensors.index.json"),
           weight_map_or_index if isinstance(weight_map_or_index, (str, bytes)) else json.dumps(weight_map_or_index))
    return d


def _google(d) -> str:
    target = os.path.join(d, "google")
    shutil.copytree(GOOGLE_DIR, target)
    return target


def _zip(d, members: dict[str, bytes], name="model.zip") -> str:
    path = os.path.join(d, name)
    with zipfile.ZipFile(path, "w") as archive:
        for member, data in members.items():
            archive.writestr(member, data)
    return path


def _google_zip_members(d) -> dict[str, bytes]:
    out = {}
    for name in os.listdir(GOOGLE_DIR):
        with open(os.path.join(GOOGLE_DIR, name), "rb") as f:
            out[f"uncased_L-2_H-16_A-4/{name}"] = f.read()
    return out


def _safetensors_header(d, header: dict | bytes, length: int | None = None) -> str:
    raw = header if isinstance(header, bytes) else json.dumps(header).encode()
    _write(os.path.join(d, "model.safetensors"), struct.pack("<Q", len(raw) if length is None else length) + raw + b"\0" * 16)
    return d


def _nested_json(depth: int) -> str:
    return "[" * depth + "]" * depth


def _form(d, fixture: str) -> str:
    """A copy of one published form's fixture (tests/fixtures/formats/FIXTURE) inside ``d``."""
    target = os.path.join(d, fixture)
    shutil.copytree(os.path.join(FORMATS, fixture), target)
    return target


def _h5_edit(d, fixture: str, file_name: str, edit) -> str:
    """A copy of an HDF5 form with ``edit(h5py.File)`` applied to its ``file_name``."""
    import h5py

    target = _form(d, fixture)
    with h5py.File(os.path.join(target, file_name), "r+") as f:
        edit(f)
    return target


def _replace_dataset(f, path: str, **create) -> None:
    del f[path]
    f.create_dataset(path, **create)


def _cut(path: str, keep: float) -> None:
    with open(path, "rb") as f:
        data = f.read()
    _write(path, data[: int(len(data) * keep)])


def _msgpack(d, data: bytes) -> str:
    target = _form(d, "flax_msgpack")
    _write(os.path.join(target, "flax_model.msgpack"), data)
    return target


def _msgpack_array(shape, dtype: str, raw: bytes) -> bytes:
    """One Flax array as flax.serialization writes it: extension 1 of msgpack (shape, dtype, bytes)."""
    import msgpack

    return msgpack.packb({"bert": {"embeddings": {"word_embeddings": {"embedding": msgpack.ExtType(
        1, msgpack.packb((shape, dtype, raw), use_bin_type=True))}}}}, use_bin_type=True)


def _tf2_graph_corrupted(d) -> str:
    """The TF2 encoder's object graph with one byte changed inside it (its CRC no longer holds)."""
    from mini_hf_bert.checkpoints.tf_bundle import OBJECT_GRAPH_KEY, TFCheckpoint

    target = _form(d, "tf2_encoder")
    entry = TFCheckpoint(os.path.join(target, "bert_model-1")).entries[OBJECT_GRAPH_KEY]
    data_file = os.path.join(target, "bert_model-1.data-00000-of-00001")
    with open(data_file, "r+b") as f:
        f.seek(entry.offset + entry.size // 2)
        byte = f.read(1)
        f.seek(entry.offset + entry.size // 2)
        f.write(bytes([byte[0] ^ 0x20]))
    return target


def _keras_config(d, **changes) -> str:
    target = _form(d, "keras_hub")
    with open(os.path.join(target, "config.json"), encoding="utf-8") as f:
        config = json.load(f)
    config.update(changes)
    _json(os.path.join(target, "config.json"), config)
    return target


H5_LAYER = "bert/tf_bert_for_pre_training/bert"
H5_QUERY = f"{H5_LAYER}/encoder/layer_._0/attention/self/query/kernel:0"
KERAS_QUERY = "layers/transformer_encoder/_self_attention_layer/query_dense/vars/0"
READING = ("convert", "demo", "parity")  # what reads the weights themselves (inspect reads the headers)

CASES = {
    # ---------------------------------------------------------------- paths
    "missing path": (lambda d: os.path.join(d, "nope"), "nope: no such directory", ALL),
    "empty directory": (lambda d: (os.makedirs(os.path.join(d, "empty")), os.path.join(d, "empty"))[1], "no weights found", ALL),
    "a text file": (lambda d: (_write(os.path.join(d, "notes.txt"), "hello"), os.path.join(d, "notes.txt"))[1],
                    "notes.txt: is a file that is neither", ALL),
    "a broken symlink": (lambda d: (os.symlink(os.path.join(d, "gone"), os.path.join(d, "link")), os.path.join(d, "link"))[1],
                         "link: no such directory", ALL),
    "a symlink loop": (lambda d: (os.symlink(os.path.join(d, "loop"), os.path.join(d, "loop")), os.path.join(d, "loop"))[1],
                       "loop: no such directory", ALL),
    "the weights file instead of its directory": (lambda d: os.path.join(d, "model.safetensors"), "model.safetensors: is a file", ALL),
    "a directory named like the weights file": (
        lambda d: (os.remove(os.path.join(d, "model.safetensors")), os.mkdir(os.path.join(d, "model.safetensors")), d)[2],
        "no weights found", ALL),
    # -------------------------------------------------------------- configs
    # inspect lists a weights-only directory (from_pretrained takes one with config=); the rest need the config
    "config: no config.json": (lambda d: (os.remove(os.path.join(d, "config.json")), d)[1], "no config.json", ALL[1:]),
    "config: not JSON": (lambda d: (_write(os.path.join(d, "config.json"), "{hidden_size: 768"), d)[1],
                         "config.json: not valid JSON", ALL),
    "config: empty file": (lambda d: (_write(os.path.join(d, "config.json"), ""), d)[1], "config.json: not valid JSON", ALL),
    "config: not UTF-8": (lambda d: (_write(os.path.join(d, "config.json"), b'{"a": "\xff\xfe"}'), d)[1],
                          "config.json: not valid JSON", ALL),
    "config: a JSON list": (lambda d: (_json(os.path.join(d, "config.json"), [1, 2]), d)[1],
                            "config.json: a BERT config must be a JSON object", ALL),
    "config: nested 100000 deep": (lambda d: (_write(os.path.join(d, "config.json"), _nested_json(100000)), d)[1],
                                   "config.json: ", ALL),
    "config: a string where a number belongs": (lambda d: _edit_config(d, hidden_size="64"),
                                                "config.json: BertConfig.hidden_size must be an int", ALL),
    "config: heads do not divide hidden": (lambda d: _edit_config(d, num_attention_heads=5),
                                           "config.json: BertConfig.hidden_size (64) must be divisible", ALL),
    "config: a size past int64 (found by tools/fuzz_checkpoints.py)": (
        lambda d: _edit_config(d, intermediate_size=2**63), "config.json: BertConfig.intermediate_size must be at most", ALL),
    "config: negative vocabulary": (lambda d: _edit_config(d, vocab_size=-3), "config.json: BertConfig.vocab_size must be positive", ALL),
    "config: NaN epsilon": (lambda d: (_write(os.path.join(d, "config.json"), json.dumps(_config(d)).replace(
        '"layer_norm_eps": 1e-12', '"layer_norm_eps": NaN')), d)[1], "config.json: BertConfig.layer_norm_eps must be a finite number", ALL),
    "config: unknown activation": (lambda d: _edit_config(d, hidden_act="swishy"), "config.json: BertConfig.hidden_act 'swishy'", ALL),
    "config: another model type": (lambda d: _edit_config(d, model_type="gpt2"), "config.json: config has model_type 'gpt2'", ALL),
    "config: a million layers": (lambda d: _edit_config(d, num_hidden_layers=10**6),
                                 "num_hidden_layers=1000000, but the checkpoint holds layers 0..1", ("convert", "demo", "parity")),
    "config: pruned heads of a missing layer": (lambda d: _edit_config(d, pruned_heads={"9": [0]}),
                                                "config.json: BertConfig.pruned_heads names layer 9", ALL),
    "config: id2label not a mapping": (lambda d: _edit_config(d, id2label=[1, 2]), "config.json: BertConfig.id2label must be a mapping", ALL),
    "config: vocabulary larger than the weights": (lambda d: _edit_config(d, vocab_size=300),
                                                   "embeddings.word_embeddings.weight is (211, 64) in the checkpoint",
                                                   ("convert", "demo", "parity")),
    # ------------------------------------------------------- safetensors files
    "safetensors: empty file": (lambda d: (_write(os.path.join(d, "model.safetensors"), b""), d)[1],
                                "model.safetensors: not a valid safetensors file", ALL),
    "safetensors: truncated": (lambda d: (_write(os.path.join(d, "model.safetensors"),
                                                 open(os.path.join(d, "model.safetensors"), "rb").read()[:1000]), d)[1],
                               "model.safetensors: not a valid safetensors file", ALL),
    "safetensors: header length 2**63": (lambda d: _safetensors_header(d, b"{}", length=2**63),
                                         "model.safetensors: not a valid safetensors file", ALL),
    "safetensors: header not JSON": (lambda d: _safetensors_header(d, b"\x00\x01garbage"), "model.safetensors: not a valid safetensors file", ALL),
    "safetensors: offsets past the end": (lambda d: _safetensors_header(d, {"w": {"dtype": "F32", "shape": [1000, 1000], "data_offsets": [0, 4000000]}}),
                                          "model.safetensors: not a valid safetensors file", ALL),
    "safetensors: a weight missing": (lambda d: _as_safetensors(d, {k: v for k, v in _state(d).items() if "layer.1.output.dense.weight" not in k}),
                                      "1 weights missing: encoder.layer.1.output.dense.weight", ("convert", "demo", "parity")),
    "safetensors: a weight of the wrong shape": (lambda d: _as_safetensors(d, {**_state(d), "pooler.dense.weight": torch.zeros(3, 3)}),
                                                 "pooler.dense.weight is (3, 3) in the checkpoint, the model expects (64, 64)", ("convert", "demo", "parity")),
    "safetensors: integers where floats belong": (lambda d: _as_safetensors(d, {**_state(d), "pooler.dense.bias": torch.zeros(64, dtype=torch.int32)}),
                                                  "wrong dtype kind, e.g. pooler.dense.bias is torch.int32", ("convert", "demo", "parity")),
    "safetensors: no tensors at all": (lambda d: _as_safetensors(d, {}), "weights missing", ("convert", "demo", "parity")),
    # -------------------------------------------------------------- .bin files
    "bin: random bytes": (lambda d: (_as_bin(d, {}), _write(os.path.join(d, "pytorch_model.bin"), os.urandom(4096)), d)[2],
                          "pytorch_model.bin: not a valid PyTorch checkpoint", ALL),
    "bin: an empty file": (lambda d: (_as_bin(d, {}), _write(os.path.join(d, "pytorch_model.bin"), b""), d)[2],
                           "pytorch_model.bin: not a valid PyTorch checkpoint", ALL),
    "bin: calls os.system": (lambda d: _as_bin(d, {**_state(d), "x": _Call(os.system, ("true",))}),
                             "pytorch_model.bin: refused: this is not a plain weights file; its pickle asks for posix.system", ALL),
    "bin: calls eval, protocol 4": (lambda d: _as_bin(d, {"x": _Call(eval, ("1",))}, pickle_protocol=4),
                                    "refused: this is not a plain weights file; its pickle asks for builtins.eval", ALL),
    "bin: a list": (lambda d: _as_bin(d, [torch.zeros(1)]), "expected a dict of tensors (a state_dict), found a list", ALL),
    "bin: a training checkpoint": (lambda d: _as_bin(d, {"model": _state(d), "epoch": 3}), "a training checkpoint?", ALL),
    "bin: a number where a tensor belongs": (lambda d: _as_bin(d, {**_state(d), "x": 1.0}), "entries are not tensors, e.g. 'x'", ALL),
    # ----------------------------------------------------------- shard indexes
    "directory: a save killed while moving its files in": (
        lambda d: (_write(os.path.join(d, MOVING_IN_MARKER), b'{"pid": 1, "files": ["model.safetensors", "config.json"]}'), d)[1],
        "a save into this directory was stopped while it moved its files in (model.safetensors, config.json)", ALL),
    "index: not JSON": (lambda d: _sharded(d, "{weight_map"), "model.safetensors.index.json: not valid JSON", ALL),
    "index: a JSON list": (lambda d: _sharded(d, "[1, 2]"), "model.safetensors.index.json: expected a JSON object with a 'weight_map', found a list", ALL),
    "index: weight_map values are lists": (lambda d: _sharded(d, {"weight_map": {"a": ["shard.safetensors"]}}),
                                           "weight_map['a'] = ['shard.safetensors'] is not a file name", ALL),
    "index: weight_map a list": (lambda d: _sharded(d, {"weight_map": ["shard.safetensors"]}), "no 'weight_map' object", ALL),
    "index: a shard outside the directory": (lambda d: _sharded(d, {"weight_map": {"a": "../shard.safetensors"}}),
                                             "is not a file name in this directory", ALL),
    "index: a NUL byte in a shard name": (lambda d: _sharded(d, {"weight_map": {"a": "model\0.safetensors"}}),
                                          "model.safetensors.index.json: weight_map['a'] = 'model\\x00.safetensors' is not a file name",
                                          ALL),
    "index: an absolute shard path": (lambda d: _sharded(d, {"weight_map": {"a": "/etc/passwd"}}), "is not a file name in this directory", ALL),
    "index: a shard that is missing": (lambda d: _sharded(d, {"weight_map": {k: "gone.safetensors" for k in _state(d)}}),
                                       "gone.safetensors: no such file", ALL),
    "index: names itself as a shard": (lambda d: _sharded(d, {"weight_map": {"a": "model.safetensors.index.json"}}),
                                       "is neither a .safetensors nor a .bin file", ALL),
    "index: nested 100000 deep": (lambda d: _sharded(d, _nested_json(100000)), "model.safetensors.index.json: ", ALL),
    # ---------------------------------------------------------- Google / TF
    "google: index is garbage": (lambda d: (lambda g: (_write(os.path.join(g, "bert_model.ckpt.index"), os.urandom(500)), g)[1])(_google(d)),
                                 "bert_model.ckpt.index", ALL),
    "google: data file truncated": (lambda d: (lambda g: (_write(os.path.join(g, "bert_model.ckpt.data-00000-of-00001"),
                                                                  open(os.path.join(GOOGLE_DIR, "bert_model.ckpt.data-00000-of-00001"), "rb").read()[:5000]), g)[1])(_google(d)),
                                    "bert_model.ckpt.data-00000-of-00001", ("convert", "demo", "parity")),
    "google: data file missing": (lambda d: (lambda g: (os.remove(os.path.join(g, "bert_model.ckpt.data-00000-of-00001")), g)[1])(_google(d)),
                                  "bert_model.ckpt.data-00000-of-00001", ("convert", "demo", "parity")),
    "google: bert_config.json missing": (lambda d: (lambda g: (os.remove(os.path.join(g, "bert_config.json")), g)[1])(_google(d)),
                                         "no config.json or bert_config.json beside this checkpoint", ("convert", "demo", "parity")),
    "zip: not a zip": (lambda d: (_write(os.path.join(d, "model.zip"), b"PK\x03\x04" + os.urandom(100)), os.path.join(d, "model.zip"))[1],
                       "model.zip: is a file that is neither", ALL),
    "zip: a member escaping the directory": (lambda d: _zip(d, {"../evil.txt": b"x", **_google_zip_members(d)}),
                                             "model.zip: member '../evil.txt' would be written outside", ALL),
    "zip: an absolute member": (lambda d: _zip(d, {"/tmp/evil.txt": b"x"}), "model.zip: member '/tmp/evil.txt' would be written outside", ALL),
    "zip: no checkpoint inside": (lambda d: _zip(d, {"readme.txt": b"hello"}), "model.zip: the zip holds no checkpoint", ALL),
    # ------------------------------------------- the published forms (tests/fixtures/formats)
    "tf_model.h5: truncated": (lambda d: (lambda g: (_cut(os.path.join(g, "tf_model.h5"), 0.5), g)[1])(_form(d, "tf_model_h5")),
                               "tf_model.h5: not a readable HDF5 file", ALL),
    "tf_model.h5: not HDF5": (lambda d: (lambda g: (_write(os.path.join(g, "tf_model.h5"), os.urandom(4096)), g)[1])(
                              _form(d, "tf_model_h5")), "tf_model.h5: not a readable HDF5 file", ALL),
    "tf_model.h5: a dataset of 10**9 elements, never written": (
        lambda d: _h5_edit(d, "tf_model_h5", "tf_model.h5", lambda f: _replace_dataset(
            f, f"{H5_LAYER}/embeddings/word_embeddings/weight:0", shape=(31_250_000, 32), dtype="f4", chunks=(1024, 32))),
        "refused as a bomb", READING),
    "tf_model.h5: an external link": (lambda d: _h5_edit(d, "tf_model_h5", "tf_model.h5", lambda f: f.__setitem__(
        "bert/elsewhere", __import__("h5py").ExternalLink("/etc/hostname", "/"))), "is an external link to another file", ALL),
    "tf_model.h5: a soft link": (lambda d: _h5_edit(d, "tf_model_h5", "tf_model.h5", lambda f: f.__setitem__(
        "bert/again", __import__("h5py").SoftLink("/bert"))), "is a soft link", ALL),
    "tf_model.h5: data stored in another file": (lambda d: _h5_edit(d, "tf_model_h5", "tf_model.h5", lambda f: f.create_dataset(
        "bert/outside", shape=(4,), dtype="f4", external=[("/etc/hostname", 0, 16)])), "keeps its data outside this file", ALL),
    "tf_model.h5: a kernel of the wrong rank": (lambda d: _h5_edit(d, "tf_model_h5", "tf_model.h5", lambda f: _replace_dataset(
        f, H5_QUERY, data=torch.zeros(32, 4, 8).numpy())), "expected a 2-D tensor (transpose), found shape [32, 4, 8]", READING),
    "tf_model.h5: two copies of a weight disagree": (lambda d: _h5_edit(d, "tf_model_h5", "tf_model.h5", lambda f: f[
        "mlm___cls/tf_bert_for_pre_training/bert/embeddings/word_embeddings/weight:0"].__setitem__((0, 0), 7.0)),
        "both hold 'bert/embeddings/word_embeddings/weight', with different values", READING),
    "tf_model.h5: a layer missing": (lambda d: _h5_edit(d, "tf_model_h5", "tf_model.h5", lambda f: f.__delitem__(
        f"{H5_LAYER}/encoder/layer_._1")), "the config asks for num_hidden_layers=2, but the checkpoint holds layers 0..0",
        READING),
    "tf_model.h5: a weight missing": (lambda d: _h5_edit(d, "tf_model_h5", "tf_model.h5", lambda f: f.__delitem__(
        f"{H5_LAYER}/encoder/layer_._1/attention/self/query")), "2 weights missing", READING),
    "flax_model.msgpack: truncated": (lambda d: (lambda g: (_cut(os.path.join(g, "flax_model.msgpack"), 0.5), g)[1])(
        _form(d, "flax_msgpack")), "flax_model.msgpack: not a valid msgpack file", ALL),
    "flax_model.msgpack: a map declaring 2**32 entries": (lambda d: _msgpack(d, b"\xdf\xff\xff\xff\xff" + b"\x00" * 64),
                                                          "flax_model.msgpack: not a valid msgpack file", ALL),
    "flax_model.msgpack: maps nested 100,000 deep": (lambda d: _msgpack(d, b"\x81\xa1a" * 100_000 + b"\xc0"),
                                                     "flax_model.msgpack: nested deeper than", ALL),
    "flax_model.msgpack: an array of 10**9 elements in 4 bytes": (
        lambda d: _msgpack(d, _msgpack_array([10**9], "float32", b"\x00" * 4)),
        "needs 4000000000 bytes, the file holds 4", ALL),
    "flax_model.msgpack: a key holding a '/'": (lambda d: _msgpack(d, __import__("msgpack").packb(
        {"bert/embeddings": {}}, use_bin_type=True)), "which would make two parameters' names collide", ALL),
    "flax_model.msgpack: an object dtype": (lambda d: _msgpack(d, _msgpack_array([1], "object", b"\x00" * 8)),
                                            "dtype 'object' is not one mini_hf_bert reads", ALL),
    "tf2: its object graph corrupted": (_tf2_graph_corrupted, "CRC-32C mismatch", ALL),
    "keras_hub: not a BertBackbone": (lambda d: _keras_config(d, class_name="RobertaBackbone"),
                                      "a KerasHub 'RobertaBackbone', not a BertBackbone", ALL),
    "keras_hub: an attention kernel of the wrong rank": (lambda d: _h5_edit(d, "keras_hub", "model.weights.h5", lambda f: _replace_dataset(
        f, KERAS_QUERY, data=torch.zeros(32, 32).numpy())),
        "expected a 3-D tensor (merge heads, transpose), found shape [32, 32]", READING),
    "keras_hub: a weight missing": (lambda d: _h5_edit(d, "keras_hub", "model.weights.h5", lambda f: f.__delitem__(
        "layers/transformer_encoder_1/_feedforward_output_dense")), "2 weights missing", READING),
    "saved_model: its variables missing": (lambda d: (lambda g: (shutil.rmtree(os.path.join(g, "variables")), g)[1])(
        _form(d, "tf_hub")), "no weights found", ALL),
    # ------------------------------------------------------------ tokenizer files
    "vocab: empty": (lambda d: (_write(os.path.join(d, "vocab.txt"), b""), d)[1], "vocab.txt", TOKENIZING),
    "vocab: binary": (lambda d: (_write(os.path.join(d, "vocab.txt"), b"\xff\xfe\x00garbage\x80"), d)[1], "vocab.txt", TOKENIZING),
    "vocab: no special tokens": (lambda d: (_write(os.path.join(d, "vocab.txt"), "a\nb\nc\n"), d)[1],
                                 "vocab.txt: the special tokens", TOKENIZING),
    "vocab: a directory": (lambda d: (os.remove(os.path.join(d, "vocab.txt")), os.mkdir(os.path.join(d, "vocab.txt")), d)[2],
                           "vocab.txt", TOKENIZING),
    "tokenizer_config: not JSON": (lambda d: (_write(os.path.join(d, "tokenizer_config.json"), "{"), d)[1],
                                   "tokenizer_config.json: not valid JSON", TOKENIZING),
    "tokenizer_config: a list": (lambda d: (_json(os.path.join(d, "tokenizer_config.json"), []), d)[1],
                                 "tokenizer_config.json: expected a JSON object", TOKENIZING),
    "tokenizer_config: model_max_length a string": (lambda d: (_json(os.path.join(d, "tokenizer_config.json"), {"model_max_length": "x"}), d)[1],
                                                    "tokenizer_config.json", TOKENIZING),
    "tokenizer.json only, malformed": (lambda d: (os.remove(os.path.join(d, "vocab.txt")), _write(os.path.join(d, "tokenizer.json"), '{"model": 3}'), d)[2],
                                       "tokenizer.json", TOKENIZING),
    "no vocabulary at all": (lambda d: (os.remove(os.path.join(d, "vocab.txt")), d)[1], "no vocab.txt or tokenizer.json", ("demo", "parity")),
}
