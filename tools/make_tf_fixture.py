"""Write the TensorFlow-checkpoint test fixtures with real TensorFlow (run by hand, not in CI).

CI reads the committed output (tests/fixtures/tf/); nothing there needs TensorFlow.
Run this in a throwaway environment that has tensorflow-cpu, torch==2.13.0 and
transformers==4.57.6 (the last release with load_tf_weights_in_bert):

    python3 -m venv /tmp/tfenv
    /tmp/tfenv/bin/pip install tensorflow-cpu==2.21.0 torch==2.13.0 -r requirements-transformers4.txt
    /tmp/tfenv/bin/python tools/make_tf_fixture.py tests/fixtures/tf

It writes, under the output directory:

* ``bert_pretraining/``: a tiny BERT pre-training checkpoint saved by
  ``tf.compat.v1.train.Saver`` with google-research/bert's exact variable names, Adam
  slots (``.../adam_m``, ``.../adam_v``) and ``global_step``, plus ``bert_config.json``
  and ``vocab.txt``, as in Google's released zips; ``bert_model.ckpt.zip`` is the
  same files zipped;
* ``sharded/``: a checkpoint saved with ``Saver(sharded=True)`` over two CPU devices
  (two ``.data-0000N-of-00002`` shards);
* ``dtypes/``: one variable of each dtype the reader supports;
* ``reference.safetensors``: what TensorFlow itself reads back for every variable of
  all three checkpoints (keys ``<checkpoint>/<variable>``);
* ``reference_transformers_4.57.6.safetensors``: the BertForPreTraining state dict that
  transformers 4.57.6's ``load_tf_weights_in_bert`` builds from ``bert_pretraining``, and its
  outputs on fixed inputs (``output/...``), in fp32 with the config's exact-erf GELU.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import zipfile

import numpy as np

CONFIG = {  # google-research/bert's bert_config.json keys, a tiny model
    "attention_probs_dropout_prob": 0.1,
    "hidden_act": "gelu",
    "hidden_dropout_prob": 0.1,
    "hidden_size": 16,
    "initializer_range": 0.02,
    "intermediate_size": 24,
    "max_position_embeddings": 32,
    "num_attention_heads": 4,
    "num_hidden_layers": 2,
    "type_vocab_size": 2,
    "vocab_size": 40,
}
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"tok{i}" for i in range(CONFIG["vocab_size"] - 5)]
INPUT_IDS = [[2, 7, 12, 19, 3, 25, 30, 3], [2, 9, 4, 33, 3, 0, 0, 0]]
TOKEN_TYPE_IDS = [[0, 0, 0, 0, 0, 1, 1, 1], [0, 0, 0, 0, 0, 0, 0, 0]]
ATTENTION_MASK = [[1] * 8, [1, 1, 1, 1, 1, 0, 0, 0]]


def bert_variable_shapes(c: dict) -> dict[str, list[int]]:
    """Every variable google-research/bert's run_pretraining.py creates, with its shape."""
    h, i, v = c["hidden_size"], c["intermediate_size"], c["vocab_size"]
    shapes = {
        "bert/embeddings/word_embeddings": [v, h],
        "bert/embeddings/token_type_embeddings": [c["type_vocab_size"], h],
        "bert/embeddings/position_embeddings": [c["max_position_embeddings"], h],
        "bert/embeddings/LayerNorm/gamma": [h],
        "bert/embeddings/LayerNorm/beta": [h],
    }
    for layer in range(c["num_hidden_layers"]):
        p = f"bert/encoder/layer_{layer}"
        for name in ("query", "key", "value"):
            shapes[f"{p}/attention/self/{name}/kernel"] = [h, h]  # TF kernels are [in, out]
            shapes[f"{p}/attention/self/{name}/bias"] = [h]
        shapes[f"{p}/attention/output/dense/kernel"] = [h, h]
        shapes[f"{p}/attention/output/dense/bias"] = [h]
        shapes[f"{p}/attention/output/LayerNorm/gamma"] = [h]
        shapes[f"{p}/attention/output/LayerNorm/beta"] = [h]
        shapes[f"{p}/intermediate/dense/kernel"] = [h, i]
        shapes[f"{p}/intermediate/dense/bias"] = [i]
        shapes[f"{p}/output/dense/kernel"] = [i, h]
        shapes[f"{p}/output/dense/bias"] = [h]
        shapes[f"{p}/output/LayerNorm/gamma"] = [h]
        shapes[f"{p}/output/LayerNorm/beta"] = [h]
    shapes.update({
        "bert/pooler/dense/kernel": [h, h],
        "bert/pooler/dense/bias": [h],
        "cls/predictions/transform/dense/kernel": [h, h],
        "cls/predictions/transform/dense/bias": [h],
        "cls/predictions/transform/LayerNorm/gamma": [h],
        "cls/predictions/transform/LayerNorm/beta": [h],
        "cls/predictions/output_bias": [v],
        "cls/seq_relationship/output_weights": [2, h],  # already [out, in]
        "cls/seq_relationship/output_bias": [2],
    })
    return shapes


def save_pretraining_checkpoint(tf, directory: str, rng: np.random.Generator) -> None:
    graph = tf.Graph()
    with graph.as_default():
        for name, shape in bert_variable_shapes(CONFIG).items():
            value = rng.normal(0.0, 0.5, size=shape).astype(np.float32)
            if name.endswith("LayerNorm/gamma"):
                value = 1.0 + 0.1 * value
            tf.compat.v1.get_variable(name, initializer=value)
            # AdamWeightDecayOptimizer's slots, named as google-research/bert names them.
            tf.compat.v1.get_variable(name + "/adam_m", initializer=(0.01 * value).astype(np.float32))
            tf.compat.v1.get_variable(name + "/adam_v", initializer=np.abs(0.001 * value).astype(np.float32))
        tf.compat.v1.train.get_or_create_global_step()
        assign_step = tf.compat.v1.assign(tf.compat.v1.train.get_global_step(), 1000)
        saver = tf.compat.v1.train.Saver()
        with tf.compat.v1.Session(graph=graph) as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            sess.run(assign_step)
            saver.save(sess, os.path.join(directory, "bert_model.ckpt"), write_meta_graph=False, write_state=False)
    with open(os.path.join(directory, "bert_config.json"), "w") as f:
        json.dump(CONFIG, f, indent=2)
    with open(os.path.join(directory, "vocab.txt"), "w") as f:
        f.write("\n".join(VOCAB) + "\n")


def save_sharded_checkpoint(tf, directory: str, rng: np.random.Generator) -> None:
    graph = tf.Graph()
    with graph.as_default():
        for device, names in (("/cpu:0", ["a/w", "a/b"]), ("/cpu:1", ["b/w", "b/b"])):
            with tf.device(device):
                for name in names:
                    shape = [5, 3] if name.endswith("w") else [3]
                    tf.compat.v1.get_variable(name, initializer=rng.normal(size=shape).astype(np.float32))
        saver = tf.compat.v1.train.Saver(sharded=True)
        config = tf.compat.v1.ConfigProto(device_count={"CPU": 2})
        with tf.compat.v1.Session(graph=graph, config=config) as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            saver.save(sess, os.path.join(directory, "model.ckpt"), write_meta_graph=False, write_state=False)


def save_dtypes_checkpoint(tf, directory: str, rng: np.random.Generator) -> None:
    graph = tf.Graph()
    with graph.as_default():
        values = {
            "f32": tf.constant(rng.normal(size=[4, 3]).astype(np.float32)),
            "f16": tf.constant(rng.normal(size=[5]).astype(np.float16)),
            "bf16": tf.cast(tf.constant(rng.normal(size=[2, 3]).astype(np.float32)), tf.bfloat16),
            "f64": tf.constant(rng.normal(size=[3]).astype(np.float64)),
            "i32": tf.constant(np.arange(-3, 4, dtype=np.int32)),
            "i64": tf.constant(np.array([-(2**40), 0, 2**40 + 7], dtype=np.int64)),
            "scalar": tf.constant(np.float32(2.5)),
            "empty": tf.constant(np.zeros([0, 4], dtype=np.float32)),
        }
        variables = [tf.compat.v1.get_variable(k, initializer=v) for k, v in values.items()]
        saver = tf.compat.v1.train.Saver(variables)
        with tf.compat.v1.Session(graph=graph) as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            saver.save(sess, os.path.join(directory, "model.ckpt"), write_meta_graph=False, write_state=False)


def tf_reference(tf, prefix: str, label: str) -> dict[str, np.ndarray]:
    reader = tf.train.load_checkpoint(prefix)
    out = {}
    for name in reader.get_variable_to_shape_map():
        value = reader.get_tensor(name)
        if value.dtype.name == "bfloat16":
            value = value.astype(np.float32)  # safetensors' numpy path has no bfloat16; compared as float32
        out[f"{label}/{name}"] = np.array(value, copy=True)  # keeps 0-d scalars 0-d (ascontiguousarray would not)
    return out


def transformers_reference(directory: str) -> dict:
    import torch
    import transformers
    from transformers import BertConfig, BertForPreTraining
    from transformers.models.bert.modeling_bert import load_tf_weights_in_bert

    assert transformers.__version__ == "4.57.6", transformers.__version__
    config = BertConfig.from_json_file(os.path.join(directory, "bert_config.json"))
    model = BertForPreTraining(config)
    load_tf_weights_in_bert(model, config, os.path.join(directory, "bert_model.ckpt"))
    model.eval()
    with torch.no_grad():
        out = model(
            input_ids=torch.tensor(INPUT_IDS),
            token_type_ids=torch.tensor(TOKEN_TYPE_IDS),
            attention_mask=torch.tensor(ATTENTION_MASK),
            output_hidden_states=True,
        )
    tensors = {f"state_dict/{k}": v.detach().contiguous().clone() for k, v in model.state_dict().items()}
    tensors["output/prediction_logits"] = out.prediction_logits.contiguous()
    tensors["output/seq_relationship_logits"] = out.seq_relationship_logits.contiguous()
    for i, h in enumerate(out.hidden_states):
        tensors[f"output/hidden_states/{i}"] = h.contiguous()
    tensors["input/input_ids"] = torch.tensor(INPUT_IDS)
    tensors["input/token_type_ids"] = torch.tensor(TOKEN_TYPE_IDS)
    tensors["input/attention_mask"] = torch.tensor(ATTENTION_MASK)
    return tensors


def main(out_dir: str) -> int:
    import tensorflow as tf
    from safetensors.numpy import save_file as save_numpy
    from safetensors.torch import save_file as save_torch

    tf.compat.v1.disable_eager_execution()
    rng = np.random.default_rng(20181011)  # the BERT paper's arXiv date
    if os.path.isdir(out_dir):
        shutil.rmtree(out_dir)
    dirs = {name: os.path.join(out_dir, name) for name in ("bert_pretraining", "sharded", "dtypes")}
    for d in dirs.values():
        os.makedirs(d)
    save_pretraining_checkpoint(tf, dirs["bert_pretraining"], rng)
    save_sharded_checkpoint(tf, dirs["sharded"], rng)
    save_dtypes_checkpoint(tf, dirs["dtypes"], rng)

    reference = {}
    reference.update(tf_reference(tf, os.path.join(dirs["bert_pretraining"], "bert_model.ckpt"), "bert_pretraining"))
    reference.update(tf_reference(tf, os.path.join(dirs["sharded"], "model.ckpt"), "sharded"))
    reference.update(tf_reference(tf, os.path.join(dirs["dtypes"], "model.ckpt"), "dtypes"))
    save_numpy(reference, os.path.join(out_dir, "reference.safetensors"))
    save_torch(transformers_reference(dirs["bert_pretraining"]), os.path.join(out_dir, "reference_transformers_4.57.6.safetensors"))

    # Google's release form: a zip holding the checkpoint directory.
    with zipfile.ZipFile(os.path.join(out_dir, "bert_model.ckpt.zip"), "w", zipfile.ZIP_DEFLATED) as z:
        for name in sorted(os.listdir(dirs["bert_pretraining"])):
            z.write(os.path.join(dirs["bert_pretraining"], name), arcname=f"tiny_L-2_H-16_A-4/{name}")
    total = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(out_dir) for f in fs)
    print(f"wrote {out_dir} ({total} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "tests/fixtures/tf"))
