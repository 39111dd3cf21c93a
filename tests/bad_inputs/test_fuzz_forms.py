"""The published forms' readers, fuzzed (tests/fixtures/formats/): every outcome is a loaded
model or one CheckpointError naming the file -- never another exception, a hang, or a giant
allocation.

* tf_model.h5: bytes changed and the file cut short, in a child process (libhdf5 is C: a
  crash there would end the test run, so the child's exit status is what is checked);
  datasets replaced with drawn shapes, dtypes and fill states;
* flax_model.msgpack: bytes changed and cut short; whole parameter trees drawn, with arrays
  whose declared shape, dtype and byte count disagree;
* a TF2 object graph: bytes changed before it is parsed.

The named hostile cases (links, external storage, bombs, wrong ranks) are in bad_inputs.py.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys

import msgpack
import pytest
import torch
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from mini_hf_bert import BertModel, CheckpointError
from mini_hf_bert.checkpoints.flax_msgpack import read_flax_msgpack
from mini_hf_bert.checkpoints.tf_bundle import OBJECT_GRAPH_KEY, TFCheckpoint, object_graph_names

from ..paths import FIXTURES
from .test_fuzz_checkpoints import FUZZ, _outcome, allocation_guard  # noqa: F401  (a fixture)

FORMATS = os.path.join(FIXTURES, "formats")
H5_DIR = os.path.join(FORMATS, "tf_model_h5")
FLAX_FILE = os.path.join(FORMATS, "flax_msgpack", "flax_model.msgpack")
WORD_EMBEDDINGS = "bert/tf_bert_for_pre_training/bert/embeddings/word_embeddings/weight:0"
#: Raw-byte mutations of tf_model.h5 the child process tries (seeded: the same each run).
H5_BYTE_MUTATIONS = 120

_CHILD = r"""
import json, random, sys
from mini_hf_bert import BertModel, CheckpointError
source, target, seed, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
data = open(source, "rb").read()
rng = random.Random(seed)
outcomes = {"loaded": 0, "refused": 0}
for _ in range(count):
    mutated = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        mutated[rng.randrange(len(mutated))] = rng.randrange(256)
    if rng.random() < 0.2:
        del mutated[rng.randrange(len(mutated)):]
    open(target + "/tf_model.h5", "wb").write(mutated)
    try:
        BertModel.from_pretrained(target)
        outcomes["loaded"] += 1
    except CheckpointError as e:
        assert target in str(e), str(e)
        outcomes["refused"] += 1
print(json.dumps(outcomes))
"""


def test_tf_model_h5_bytes_changed_end_in_a_model_or_one_error(tmp_path):
    target = tmp_path / "h5"
    shutil.copytree(H5_DIR, target)
    done = subprocess.run([sys.executable, "-c", _CHILD, os.path.join(H5_DIR, "tf_model.h5"), str(target), "20261207",
                           str(H5_BYTE_MUTATIONS)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    outcomes = json.loads(done.stdout.strip().splitlines()[-1])
    assert sum(outcomes.values()) == H5_BYTE_MUTATIONS and outcomes["refused"] > 0, outcomes


@FUZZ
@given(shape=st.lists(st.integers(0, 2**40), max_size=4),
       dtype=st.sampled_from(["f4", "f2", "f8", "i8", "u1", "S4", "c8", "bool"]),
       written=st.booleans())
def test_tf_model_h5_datasets_of_drawn_shapes_and_dtypes(tmp_path_factory, shape, dtype, written, allocation_guard):
    import h5py
    import numpy as np

    target = tmp_path_factory.mktemp("h5") / "m"
    shutil.copytree(H5_DIR, target)
    with h5py.File(target / "tf_model.h5", "r+") as f:
        del f[WORD_EMBEDDINGS]
        count = math.prod(shape)
        try:
            if written and count <= 4096:
                f.create_dataset(WORD_EMBEDDINGS, data=np.zeros(shape, dtype=dtype))
            else:  # declared, never written: HDF5 reads it as fill values, whatever its size
                f.create_dataset(WORD_EMBEDDINGS, shape=tuple(shape), dtype=dtype, chunks=True if shape and count else None)
        except (ValueError, OSError):
            assume(False)  # past what HDF5 itself can write
    _outcome(BertModel.from_pretrained, target)


@FUZZ
@given(data=st.data())
def test_flax_msgpack_bytes_changed_end_in_a_model_or_one_error(tmp_path_factory, data, allocation_guard):
    original = open(FLAX_FILE, "rb").read()
    mutated = bytearray(original)
    for _ in range(data.draw(st.integers(1, 6))):
        mutated[data.draw(st.integers(0, len(mutated) - 1))] = data.draw(st.integers(0, 255))
    if data.draw(st.booleans()):
        del mutated[data.draw(st.integers(0, len(mutated) - 1)):]
    target = tmp_path_factory.mktemp("flax") / "m"
    shutil.copytree(os.path.dirname(FLAX_FILE), target)
    (target / "flax_model.msgpack").write_bytes(bytes(mutated))
    _outcome(BertModel.from_pretrained, target)


_INTS = st.integers(-2**63, 2**63 - 1)  # what msgpack can write
_ARRAYS = st.builds(
    lambda shape, dtype, extra: msgpack.ExtType(1, msgpack.packb((shape, dtype, b"\0" * extra), use_bin_type=True)),
    st.lists(st.integers(-2, 2**40), max_size=9) | _INTS | st.text(max_size=3),
    st.sampled_from(["float32", "bfloat16", "float16", "int64", "object", "<f4", "", "complex64"]) | _INTS,
    st.integers(0, 64),
)
_TREES = st.recursive(_ARRAYS | _INTS | st.text(max_size=3) | st.binary(max_size=4) | st.none(),
                      lambda children: st.dictionaries(st.text(max_size=4) | st.integers(-2, 2), children, max_size=4),
                      max_leaves=12)


@FUZZ
@given(tree=_TREES)
def test_flax_parameter_trees_drawn_whole(tmp_path_factory, tree, allocation_guard):
    path = tmp_path_factory.mktemp("tree") / "flax_model.msgpack"
    path.write_bytes(msgpack.packb(tree, use_bin_type=True))
    try:
        tensors = read_flax_msgpack(str(path))
    except CheckpointError as e:
        assert str(path) in str(e)
        return
    assert all(isinstance(t, torch.Tensor) for t in tensors.values())


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_object_graph_bytes_changed_parse_or_are_refused(data):
    checkpoint = TFCheckpoint(os.path.join(FORMATS, "tf2_pretrainer", "bert_model-1"))
    graph = bytearray(checkpoint.read_strings(OBJECT_GRAPH_KEY)[0])
    for _ in range(data.draw(st.integers(1, 8))):
        graph[data.draw(st.integers(0, len(graph) - 1))] = data.draw(st.integers(0, 255))
    if data.draw(st.booleans()):
        del graph[data.draw(st.integers(0, len(graph) - 1)):]
    try:
        names = object_graph_names(bytes(graph), "the graph")
    except CheckpointError as e:
        assert str(e).startswith("the graph is corrupt")
        return
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in names.items())


@pytest.mark.parametrize("fixture", ["tf2_encoder", "tf_hub"])
def test_the_fixtures_object_graphs_name_every_variable(fixture):
    prefix = os.path.join(FORMATS, fixture, *(["bert_model-1"] if fixture == "tf2_encoder" else ["variables", "variables"]))
    checkpoint = TFCheckpoint(prefix)
    names = checkpoint.variable_names()
    assert set(names) == set(checkpoint.entries) - {OBJECT_GRAPH_KEY}
