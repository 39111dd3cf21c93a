"""Write tiny BERTs in every form BERT is published in, each by the library that writes it,
with that library's own outputs as the reference (tests/fixtures/formats/).

    .cache/format-writers/bin/python tools/format_fixtures.py            # all six forms, ~2 min
    .cache/format-writers/bin/python tools/format_fixtures.py keras_hub  # one

The venv is made from tools/format_writers.txt (TensorFlow, Keras, JAX, transformers 4.57.6);
mini_hf_bert and its tests read the files without any of them. Each form is written in a
process of its own (TensorFlow's graph mode, Keras 3 and JAX do not share one well):

==================  ==================================================================
form                written by
==================  ==================================================================
``tf_model_h5``     transformers 4.57.6 ``TFBertForPreTraining.save_pretrained``
``flax_msgpack``    transformers 4.57.6 ``FlaxBertForPreTraining.save_pretrained``
``tf2_encoder``     tf-models-official's ``tf2_bert_encoder_checkpoint_converter`` (its
                    command line), from a Google TF1 checkpoint written by TF1's ``Saver``
``tf2_pretrainer``  the same converter, ``--converted_model=pretrainer`` (encoder + MLM)
``tf_hub``          tf-models-official's ``export_tfhub`` (its command line),
                    ``--export_type=model_with_mlm``, from the pretrainer checkpoint
``keras_hub``       keras-hub's ``BertMaskedLM.save_to_preset``
==================  ==================================================================

The weights are drawn, not trained: small (std 0.05), with LayerNorm scales around 1 and
biases that are not zero, so that correct readers agree within 2e-6 while a kernel read
without its transpose moves the outputs by about 1. Each form gets FORM/ (what a user
would download), FORM.reference.safetensors (the inputs, and the writer's own outputs
computed from what it wrote) and FORM.json (writer, versions, activation, and the
second reader's agreement where one exists). Nothing here is typed by hand: rerun it.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "fixtures", "formats")
FORMS = ("tf_model_h5", "flax_msgpack", "tf2_encoder", "tf2_pretrainer", "tf_hub", "keras_hub")

# A vocabulary of Google's layout (specials first, [unused] slots, then words).
VOCAB = ["[PAD]", "[unused0]", "[unused1]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [
    "the", "a", "cat", "dog", "sat", "on", "mat", "ran", "to", "house", "and", "is", "was", "big", "small",
    "red", "blue", "it", "he", "she", "they", "we", "in", "of", "for", "with", "at", "by", "from", "up",
    "down", "over", "under", "##s", "##ed", "##ing", "##ly", "##er", "##est", ".", ",", "!", "?", "'",
    "one", "two", "three", "four", "five", "six",
]
SIZES = dict(vocab_size=len(VOCAB), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
             intermediate_size=48, max_position_embeddings=40, type_vocab_size=2)
# Two sentence pairs, the second padded: [CLS] a [SEP] b [SEP] [PAD]...
INPUT_IDS = np.array([[4, 7, 9, 11, 12, 13, 5, 25, 14, 15, 5],
                      [4, 8, 10, 16, 5, 26, 17, 5, 0, 0, 0]], dtype=np.int32)
ATTENTION_MASK = (INPUT_IDS != 0).astype(np.int32)
TOKEN_TYPE_IDS = np.array([[0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1],
                           [0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0]], dtype=np.int32)
# Where the masked-LM heads of the TF2, TF Hub and KerasHub forms predict.
MASKED_POSITIONS = np.array([[1, 3, 8], [2, 5, 6]], dtype=np.int32)
SEED = 20261207


def drawn(name: str, shape, rng: np.random.Generator) -> np.ndarray:
    """Small weights with LayerNorm scales near 1 and biases that are not zero."""
    leaf = name.split("/")[-1].split(":")[0]
    if leaf in ("gamma", "scale"):
        return (1.0 + 0.2 * rng.standard_normal(shape)).astype(np.float32)
    if leaf in ("beta", "bias") or "bias" in leaf:
        return (0.1 * rng.standard_normal(shape)).astype(np.float32)
    return (0.05 * rng.standard_normal(shape)).astype(np.float32)


def versions(*names: str) -> dict[str, str]:
    from importlib.metadata import version
    return {name: version(name) for name in names}


def provenance(command: str) -> dict:
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    # What this script writes is left out: rewriting one form's files must not mark the next as made from changed code.
    dirty = bool(subprocess.run(["git", "status", "--porcelain", "--", ".", f":!{os.path.relpath(OUT, ROOT)}"],
                                cwd=ROOT, capture_output=True, text=True).stdout.strip())
    return {"commit": commit, "uncommitted_changes": dirty,
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "machine": f"{platform.processor() or platform.machine()}, {platform.system()} {platform.release()}",
            "command": command}


def write_vocab(path: str) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(VOCAB) + "\n")


def save_reference(form: str, outputs: dict[str, np.ndarray], record: dict) -> None:
    from safetensors.numpy import save_file
    tensors = {"input_ids": INPUT_IDS, "attention_mask": ATTENTION_MASK, "token_type_ids": TOKEN_TYPE_IDS,
               "masked_positions": MASKED_POSITIONS}
    tensors.update({k: np.ascontiguousarray(v, dtype=np.float32) for k, v in outputs.items()})
    save_file(tensors, os.path.join(OUT, f"{form}.reference.safetensors"))
    record = {"form": form, **record, "outputs": sorted(outputs),
              "provenance": provenance(f"{os.path.relpath(sys.executable, ROOT)} tools/format_fixtures.py {form}")}
    with open(os.path.join(OUT, f"{form}.json"), "w", encoding="utf-8") as f:
        json.dump(record, f, indent=1, sort_keys=True)
        f.write("\n")


def fresh_directory(form: str) -> str:
    directory = os.path.join(OUT, form)
    shutil.rmtree(directory, ignore_errors=True)
    os.makedirs(directory)
    return directory


def all_files(directory: str) -> list[str]:
    return sorted(os.path.relpath(os.path.join(d, f), directory) for d, _, names in os.walk(directory) for f in names)


def max_difference(a, b) -> float:
    return float(np.max(np.abs(np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64))))


# ----------------------------------------------------------------- transformers 4.57.6


def hub_model(form: str) -> None:
    """tf_model.h5 or flax_model.msgpack, as transformers 4.57.6 writes them to the hub, and
    transformers' own PyTorch classes reading them back (from_tf / from_flax) as the second reader."""
    import torch
    import transformers
    from transformers import BertConfig, BertForPreTraining, BertTokenizer

    directory = fresh_directory(form)
    rng = np.random.default_rng(SEED + FORMS.index(form))
    config = BertConfig(**SIZES, hidden_act="gelu")
    inputs = dict(input_ids=INPUT_IDS, attention_mask=ATTENTION_MASK, token_type_ids=TOKEN_TYPE_IDS)
    if form == "tf_model_h5":
        from transformers import TFBertForPreTraining
        model = TFBertForPreTraining(config)
        model(model.dummy_inputs)
        for weight in model.weights:
            weight.assign(drawn(weight.name, weight.shape, rng))
        writer = "transformers 4.57.6 TFBertForPreTraining.save_pretrained"
        libraries = versions("transformers", "tensorflow-cpu", "tf-keras", "h5py")
    else:
        from flax import traverse_util
        from transformers import FlaxBertForPreTraining
        model = FlaxBertForPreTraining(config, seed=0)
        flat = traverse_util.flatten_dict(model.params, sep="/")
        model.params = traverse_util.unflatten_dict(
            {k: drawn(k, v.shape, rng) for k, v in flat.items()}, sep="/")
        writer = "transformers 4.57.6 FlaxBertForPreTraining.save_pretrained"
        libraries = versions("transformers", "jax", "flax", "msgpack")
    model.save_pretrained(directory)
    BertTokenizer(os.path.join(_vocab_tmp(), "vocab.txt")).save_pretrained(directory)
    out = model(**inputs, output_hidden_states=True)
    outputs = {"prediction_logits": np.asarray(out.prediction_logits),
               "seq_relationship_logits": np.asarray(out.seq_relationship_logits),
               "last_hidden_state": np.asarray(out.hidden_states[-1])}

    # The second reader: transformers' own PyTorch loader of the same file, the function its
    # from_pretrained(from_tf=True / from_flax=True) calls. (Through from_pretrained itself,
    # 4.57.6 builds the model on the meta device and these loaders' copies into it are no-ops
    # under torch 2.13, leaving the weights unloaded.)
    reader = BertForPreTraining(config)
    if form == "tf_model_h5":
        from transformers.modeling_tf_pytorch_utils import load_tf2_checkpoint_in_pytorch_model as load
        path = os.path.join(directory, "tf_model.h5")
    else:
        from transformers.modeling_flax_pytorch_utils import load_flax_checkpoint_in_pytorch_model as load
        path = os.path.join(directory, "flax_model.msgpack")
    reader = load(reader, path).eval()
    with torch.no_grad():
        again = reader(**{k: torch.from_numpy(v.astype(np.int64)) for k, v in inputs.items()}, output_hidden_states=True)
    second = {"prediction_logits": again.prediction_logits, "seq_relationship_logits": again.seq_relationship_logits,
              "last_hidden_state": again.hidden_states[-1]}
    agreement = {k: max_difference(outputs[k], second[k].numpy()) for k in outputs}
    save_reference(form, outputs, {
        "writer": writer, "versions": {**libraries, "torch": torch.__version__},
        "files": all_files(directory),
        "config": SIZES, "activation": "gelu (erf), transformers' TF and Flax 'gelu'",
        "second_reader": {"what": f"transformers {transformers.__version__} {load.__module__}.{load.__name__}",
                          "max_abs_difference": agreement},
    })


_VOCAB_DIR: list[str] = []


def _vocab_tmp() -> str:
    if not _VOCAB_DIR:
        _VOCAB_DIR.append(tempfile.mkdtemp(prefix="format_fixtures_"))
        write_vocab(os.path.join(_VOCAB_DIR[0], "vocab.txt"))
    return _VOCAB_DIR[0]


# ------------------------------------------------------------ Google's TF1 -> TF2 -> TF Hub


GOOGLE_CONFIG = dict(SIZES, hidden_act="gelu", hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1,
                     initializer_range=0.02)


def tf1_checkpoint(directory: str, rng: np.random.Generator) -> str:
    """Google's TF1 layout (google-research/bert's variable names), written by TF1's Saver:
    the input of tf-models-official's converter, as Google's own releases were."""
    import tensorflow.compat.v1 as tf1
    h, inner, layers = SIZES["hidden_size"], SIZES["intermediate_size"], SIZES["num_hidden_layers"]
    shapes = {
        "bert/embeddings/word_embeddings": (SIZES["vocab_size"], h),
        "bert/embeddings/position_embeddings": (SIZES["max_position_embeddings"], h),
        "bert/embeddings/token_type_embeddings": (SIZES["type_vocab_size"], h),
        "bert/embeddings/LayerNorm/gamma": (h,), "bert/embeddings/LayerNorm/beta": (h,),
        "bert/pooler/dense/kernel": (h, h), "bert/pooler/dense/bias": (h,),
        "cls/predictions/transform/dense/kernel": (h, h), "cls/predictions/transform/dense/bias": (h,),
        "cls/predictions/transform/LayerNorm/gamma": (h,), "cls/predictions/transform/LayerNorm/beta": (h,),
        "cls/predictions/output_bias": (SIZES["vocab_size"],),
        "cls/seq_relationship/output_weights": (2, h), "cls/seq_relationship/output_bias": (2,),
    }
    for i in range(layers):
        p = f"bert/encoder/layer_{i}/"
        for part in ("attention/self/query", "attention/self/key", "attention/self/value", "attention/output/dense"):
            shapes[p + part + "/kernel"], shapes[p + part + "/bias"] = (h, h), (h,)
        shapes[p + "intermediate/dense/kernel"], shapes[p + "intermediate/dense/bias"] = (h, inner), (inner,)
        shapes[p + "output/dense/kernel"], shapes[p + "output/dense/bias"] = (inner, h), (h,)
        for norm in ("attention/output/LayerNorm", "output/LayerNorm"):
            shapes[p + norm + "/gamma"], shapes[p + norm + "/beta"] = (h,), (h,)
    prefix = os.path.join(directory, "bert_model.ckpt")
    with tf1.Graph().as_default():
        variables = {name: tf1.Variable(drawn(name, shape, rng), name=name) for name, shape in shapes.items()}
        with tf1.Session() as session:
            session.run(tf1.global_variables_initializer())
            tf1.train.Saver(variables).save(session, prefix, write_meta_graph=False)
    with open(os.path.join(directory, "bert_config.json"), "w", encoding="utf-8") as f:
        json.dump(GOOGLE_CONFIG, f, indent=1)
    write_vocab(os.path.join(directory, "vocab.txt"))
    return prefix


def run_tool(module: str, *flags: str) -> None:
    """A tf-models-official command line, as a user runs it."""
    subprocess.run([sys.executable, "-m", module, *flags], check=True)


def google_forms(form: str) -> None:
    import tensorflow as tf
    import tf_keras
    import torch
    import transformers
    from official.legacy.bert import configs
    from official.nlp.modeling import models, networks
    from official.modeling import tf_utils

    work = tempfile.mkdtemp(prefix="format_fixtures_tf1_")
    rng = np.random.default_rng(SEED + FORMS.index("tf2_encoder"))  # one TF1 checkpoint feeds all three
    tf1_prefix = tf1_checkpoint(work, rng)
    config_file = os.path.join(work, "bert_config.json")
    cfg = configs.BertConfig.from_json_file(config_file)
    encoder_inputs = dict(input_word_ids=tf.constant(INPUT_IDS), input_mask=tf.constant(ATTENTION_MASK),
                          input_type_ids=tf.constant(TOKEN_TYPE_IDS))
    converter = "official.nlp.tools.tf2_bert_encoder_checkpoint_converter"
    common = {"versions": {**versions("tf-models-official", "tensorflow-cpu", "tf-keras"), "torch": torch.__version__},
              "config": GOOGLE_CONFIG,
              "activation": "gelu_new: tf-models-official's 'gelu' is the tanh approximation "
                            "(official.modeling.activations.gelu, approximate=True)"}

    def encoder_network():
        return networks.BertEncoder(
            vocab_size=cfg.vocab_size, hidden_size=cfg.hidden_size, num_layers=cfg.num_hidden_layers,
            num_attention_heads=cfg.num_attention_heads, intermediate_size=cfg.intermediate_size,
            activation=tf_utils.get_activation(cfg.hidden_act), dropout_rate=0.0, attention_dropout_rate=0.0,
            max_sequence_length=cfg.max_position_embeddings, type_vocab_size=cfg.type_vocab_size,
            initializer=tf_keras.initializers.TruncatedNormal(stddev=cfg.initializer_range), dict_outputs=True)

    # The second reader of all three: transformers 4.57.6's TF1 reader of the same weights,
    # computing the tanh GELU as the TF2 code does.
    from transformers import BertConfig, BertForPreTraining
    from transformers.models.bert.modeling_bert import load_tf_weights_in_bert
    reference = BertForPreTraining(BertConfig(**SIZES, hidden_act="gelu_new"))
    load_tf_weights_in_bert(reference, None, tf1_prefix)
    reference.eval()
    with torch.no_grad():
        torch_inputs = dict(input_ids=torch.from_numpy(INPUT_IDS.astype(np.int64)),
                            attention_mask=torch.from_numpy(ATTENTION_MASK.astype(np.int64)),
                            token_type_ids=torch.from_numpy(TOKEN_TYPE_IDS.astype(np.int64)))
        second = reference(**torch_inputs, output_hidden_states=True)
        second_pooled = reference.bert.pooler(second.hidden_states[-1]).numpy()
    gather = np.take_along_axis
    second_mlm = gather(second.prediction_logits.numpy(), MASKED_POSITIONS[:, :, None].astype(np.int64), axis=1)
    second_reader = f"transformers {transformers.__version__} load_tf_weights_in_bert over the TF1 checkpoint " \
                    f"the converter read (hidden_act='gelu_new')"

    if form == "tf2_encoder":
        directory = fresh_directory(form)
        prefix = os.path.join(directory, "bert_model")
        run_tool(converter, f"--bert_config_file={config_file}", f"--checkpoint_to_convert={tf1_prefix}",
                 f"--converted_checkpoint_path={prefix}")
        encoder = encoder_network()
        encoder(encoder_inputs)
        tf.train.Checkpoint(encoder=encoder).restore(tf.train.latest_checkpoint(directory)).assert_existing_objects_matched()
        out = encoder(encoder_inputs, training=False)
        outputs = {"sequence_output": out["sequence_output"].numpy(), "pooled_output": out["pooled_output"].numpy()}
        writer = f"tf-models-official {converter} (--converted_model=encoder)"
    elif form in ("tf2_pretrainer", "tf_hub"):
        directory = fresh_directory("tf2_pretrainer") if form == "tf2_pretrainer" else tempfile.mkdtemp()
        prefix = os.path.join(directory, "bert_model")
        run_tool(converter, f"--bert_config_file={config_file}", f"--checkpoint_to_convert={tf1_prefix}",
                 f"--converted_checkpoint_path={prefix}", "--converted_model=pretrainer",
                 "--checkpoint_model_name=model")
        checkpoint = tf.train.latest_checkpoint(directory)
        if form == "tf2_pretrainer":
            pretrainer = models.BertPretrainerV2(encoder_network=encoder_network(),
                                                 mlm_activation=tf_utils.get_activation(cfg.hidden_act))
            inputs = dict(encoder_inputs, masked_lm_positions=tf.constant(MASKED_POSITIONS))
            pretrainer(inputs)
            tf.train.Checkpoint(**pretrainer.checkpoint_items).restore(checkpoint).assert_existing_objects_matched()
            out = pretrainer(inputs, training=False)
            outputs = {"sequence_output": out["sequence_output"].numpy(),
                       "pooled_output": out["pooled_output"].numpy(), "mlm_logits": out["mlm_logits"].numpy()}
            writer = f"tf-models-official {converter} (--converted_model=pretrainer)"
        else:
            directory = fresh_directory("tf_hub")
            shutil.rmtree(directory)
            run_tool("official.nlp.tools.export_tfhub", f"--bert_config_file={config_file}",
                     f"--model_checkpoint_path={checkpoint}", f"--vocab_file={os.path.join(work, 'vocab.txt')}",
                     "--do_lower_case=true", "--export_type=model_with_mlm", f"--export_path={directory}")
            hub = tf.saved_model.load(directory)
            out = hub(encoder_inputs, training=False)
            mlm = hub.mlm(dict(encoder_inputs, masked_lm_positions=tf.constant(MASKED_POSITIONS)), training=False)
            outputs = {"sequence_output": out["sequence_output"].numpy(), "pooled_output": out["pooled_output"].numpy(),
                       "mlm_logits": mlm["mlm_logits"].numpy()}
            writer = "tf-models-official official.nlp.tools.export_tfhub (--export_type=model_with_mlm)"
    agreement = {"sequence_output": max_difference(outputs["sequence_output"], second.hidden_states[-1].numpy()),
                 "pooled_output": max_difference(outputs["pooled_output"], second_pooled)}
    if "mlm_logits" in outputs:
        agreement["mlm_logits"] = max_difference(outputs["mlm_logits"], second_mlm)
    save_reference(form, outputs, {
        **common, "writer": writer, "files": all_files(directory),
        "second_reader": {"what": second_reader, "max_abs_difference": agreement},
    })
    shutil.rmtree(work)


# ------------------------------------------------------------------------------ KerasHub


def keras_hub_preset(form: str) -> None:
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    import keras
    import keras_hub

    directory = fresh_directory(form)
    shutil.rmtree(directory)
    rng = np.random.default_rng(SEED + FORMS.index(form))
    backbone = keras_hub.models.BertBackbone(
        vocabulary_size=SIZES["vocab_size"], num_layers=SIZES["num_hidden_layers"],
        num_heads=SIZES["num_attention_heads"], hidden_dim=SIZES["hidden_size"],
        intermediate_dim=SIZES["intermediate_size"], dropout=0.1,
        max_sequence_length=SIZES["max_position_embeddings"], num_segments=SIZES["type_vocab_size"])
    tokenizer = keras_hub.models.BertTokenizer(vocabulary=VOCAB, lowercase=True)
    preprocessor = keras_hub.models.BertMaskedLMPreprocessor(tokenizer, sequence_length=16)
    model = keras_hub.models.BertMaskedLM(backbone, preprocessor=preprocessor)
    for weight in model.weights:
        weight.assign(drawn(weight.path, tuple(weight.shape), rng))
    model.save_to_preset(directory)
    inputs = {"token_ids": INPUT_IDS, "padding_mask": ATTENTION_MASK.astype(bool), "segment_ids": TOKEN_TYPE_IDS}
    out = backbone(inputs, training=False)
    logits = model({**inputs, "mask_positions": MASKED_POSITIONS}, training=False)
    outputs = {"sequence_output": keras.ops.convert_to_numpy(out["sequence_output"]),
               "pooled_output": keras.ops.convert_to_numpy(out["pooled_output"]),
               "mlm_logits": keras.ops.convert_to_numpy(logits)}
    # Loaded back by keras-hub itself, the one other reader there is.
    again = keras_hub.models.BertMaskedLM.from_preset(directory)
    again_logits = keras.ops.convert_to_numpy(again({**inputs, "mask_positions": MASKED_POSITIONS}, training=False))
    save_reference(form, outputs, {
        "writer": "keras-hub BertMaskedLM.save_to_preset", "files": all_files(directory),
        "versions": versions("keras-hub", "keras", "tensorflow-cpu", "h5py"), "config": SIZES,
        "activation": "gelu_new in the encoder (keras-hub's gelu_approximate); the masked-LM head's transform "
                      "computes erf GELU with LayerNorm epsilon 1e-5 (MaskedLMHead(intermediate_activation='gelu'))",
        "second_reader": {"what": "keras-hub BertMaskedLM.from_preset (the writer's own reader; no other exists)",
                          "max_abs_difference": {"mlm_logits": max_difference(outputs["mlm_logits"], again_logits)}},
    })


WRITERS = {"tf_model_h5": hub_model, "flax_msgpack": hub_model, "tf2_encoder": google_forms,
           "tf2_pretrainer": google_forms, "tf_hub": google_forms, "keras_hub": keras_hub_preset}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("forms", nargs="*", metavar="FORM", help=f"the forms to write (default: all): {', '.join(FORMS)}")
    parser.add_argument("--in-process", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    unknown = [form for form in args.forms if form not in FORMS]
    if unknown:
        parser.error(f"unknown form(s) {', '.join(unknown)}; the forms are {', '.join(FORMS)}")
    os.makedirs(OUT, exist_ok=True)
    forms = args.forms or list(FORMS)
    if args.in_process:
        for form in forms:
            WRITERS[form](form)
        return 0
    for form in forms:  # one process each
        print(f"writing {form}", flush=True)
        subprocess.run([sys.executable, os.path.abspath(__file__), "--in-process", form], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
