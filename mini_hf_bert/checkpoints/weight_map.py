"""Fit a checkpoint's tensor names to a model's parameter names, from tables.

mini_hf_bert's parameter names *are* transformers' names (``encoder.layer.0.attention.
self.query.weight``), so a current HF state dict needs no renaming at all. What
real checkpoints on the hub still carry, and how each is handled:

==========================================  ===========================================
in the checkpoint                           what happens
==========================================  ===========================================
``...LayerNorm.gamma`` / ``.beta``           renamed to ``.weight`` / ``.bias`` (names from
                                            Google's TF scopes, kept by the first PyTorch
                                            port; bert-base-uncased's ``pytorch_model.bin``)
``bert.`` prefix, target is ``BertModel``    stripped (checkpoint saved from a head model)
no prefix, target has a ``.bert`` module     added (checkpoint saved from ``BertModel``)
``embeddings.position_ids``                  dropped: a buffer computed at init, persistent
                                            in transformers < 4.31
==========================================  ===========================================

The tables below are the single place these rules live; ``fit_checkpoint_keys``
only applies them.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

import torch

from .errors import CheckpointError

#: Legacy name endings -> current ones. Applied to the end of a key only.
LEGACY_SUFFIX_RENAMES: dict[str, str] = {
    "LayerNorm.gamma": "LayerNorm.weight",
    "LayerNorm.beta": "LayerNorm.bias",
}

#: Key endings that are buffers derived from the config, not learned weights:
#: dropped on load, reported at debug level (they are expected in old checkpoints).
DERIVED_BUFFER_SUFFIXES: tuple[str, ...] = (
    "embeddings.position_ids",
)


@dataclass
class FittedCheckpoint:
    """A checkpoint's tensors under the model's names, with a record of what changed."""

    tensors: dict[str, torch.Tensor]
    renamed: list[tuple[str, str]] = field(default_factory=list)  # (name in file, name in model)
    dropped_buffers: list[str] = field(default_factory=list)
    _file_names: dict[str, str] = field(default_factory=dict, repr=False)  # name in model -> name in file

    def name_in_file(self, key: str) -> str:
        """The checkpoint's own name for ``key`` (what a user will find in the file)."""
        if len(self._file_names) != len(self.renamed):  # built once, on first use
            self._file_names = {new: old for old, new in self.renamed}
        return self._file_names.get(key, key)


def fit_checkpoint_keys(
    checkpoint: dict[str, torch.Tensor],
    model_keys: Iterable[str],
    base_model_prefix: str,
) -> FittedCheckpoint:
    """Rename ``checkpoint``'s keys to the names ``model_keys`` uses.

    Args:
        checkpoint: name -> tensor as read from the file.
        model_keys: the target model's ``state_dict()`` keys.
        base_model_prefix: the attribute holding the encoder in head models (``"bert"``).

    Returns:
        The tensors under their new names. Keys that fit nothing keep their name, so the
        caller can report them as unexpected.
    """
    model_keys = set(model_keys)
    prefix = base_model_prefix + "."
    model_is_prefixed = any(k.startswith(prefix) for k in model_keys)

    def modern(key: str) -> str:
        for old, new in LEGACY_SUFFIX_RENAMES.items():
            if key.endswith(old):
                key = key[: -len(old)] + new
        return key

    # A head model's checkpoint loaded into its base model: the base's weights are those
    # under the prefix. A head weight named like one of them (a user model's "linear" beside
    # its base's "base.linear") is the head's own, unused here, not a second copy.
    base_names = set() if model_is_prefixed else {modern(k)[len(prefix):] for k in checkpoint if modern(k).startswith(prefix)}
    fitted = FittedCheckpoint(tensors={})
    for original, tensor in checkpoint.items():
        key = modern(original)
        if key.endswith(DERIVED_BUFFER_SUFFIXES):
            fitted.dropped_buffers.append(original)
            continue
        if model_is_prefixed and not key.startswith(prefix) and prefix + key in model_keys:
            key = prefix + key  # BertModel checkpoint -> head model
        elif not model_is_prefixed and key.startswith(prefix):
            key = key[len(prefix):]  # head-model checkpoint -> BertModel
        elif key in base_names:
            key = f"{key} (the head's, outside {prefix[:-1]})"  # reported as unexpected under its own name
        if key in fitted.tensors:
            raise ValueError(f"two checkpoint tensors map to the same model name {key!r}")
        if key != original:
            fitted.renamed.append((original, key))
        fitted.tensors[key] = tensor
    return fitted


# --------------------------------------------------------------------------------------
# Google's TensorFlow names <-> transformers / mini_hf_bert names
# --------------------------------------------------------------------------------------
#
# One row per parameter: (name in transformers and here, name in Google's checkpoints,
# transpose?). "{}" stands for a layer number. TF dense kernels are stored [in, out] and
# torch Linear weights are [out, in], hence the transpose; output_weights of the
# classifiers are already [out, in]. The same table converts in both directions.
#
# A square kernel (H x H) loaded without its transpose raises no shape error, which is why
# the tests compare values, not shapes.

TF_WEIGHT_MAP: tuple[tuple[str, str, bool], ...] = (
    ("bert.embeddings.word_embeddings.weight", "bert/embeddings/word_embeddings", False),
    ("bert.embeddings.position_embeddings.weight", "bert/embeddings/position_embeddings", False),
    ("bert.embeddings.token_type_embeddings.weight", "bert/embeddings/token_type_embeddings", False),
    ("bert.embeddings.LayerNorm.weight", "bert/embeddings/LayerNorm/gamma", False),
    ("bert.embeddings.LayerNorm.bias", "bert/embeddings/LayerNorm/beta", False),
    ("bert.encoder.layer.{}.attention.self.query.weight", "bert/encoder/layer_{}/attention/self/query/kernel", True),
    ("bert.encoder.layer.{}.attention.self.query.bias", "bert/encoder/layer_{}/attention/self/query/bias", False),
    ("bert.encoder.layer.{}.attention.self.key.weight", "bert/encoder/layer_{}/attention/self/key/kernel", True),
    ("bert.encoder.layer.{}.attention.self.key.bias", "bert/encoder/layer_{}/attention/self/key/bias", False),
    ("bert.encoder.layer.{}.attention.self.value.weight", "bert/encoder/layer_{}/attention/self/value/kernel", True),
    ("bert.encoder.layer.{}.attention.self.value.bias", "bert/encoder/layer_{}/attention/self/value/bias", False),
    ("bert.encoder.layer.{}.attention.output.dense.weight", "bert/encoder/layer_{}/attention/output/dense/kernel", True),
    ("bert.encoder.layer.{}.attention.output.dense.bias", "bert/encoder/layer_{}/attention/output/dense/bias", False),
    ("bert.encoder.layer.{}.attention.output.LayerNorm.weight", "bert/encoder/layer_{}/attention/output/LayerNorm/gamma", False),
    ("bert.encoder.layer.{}.attention.output.LayerNorm.bias", "bert/encoder/layer_{}/attention/output/LayerNorm/beta", False),
    ("bert.encoder.layer.{}.intermediate.dense.weight", "bert/encoder/layer_{}/intermediate/dense/kernel", True),
    ("bert.encoder.layer.{}.intermediate.dense.bias", "bert/encoder/layer_{}/intermediate/dense/bias", False),
    ("bert.encoder.layer.{}.output.dense.weight", "bert/encoder/layer_{}/output/dense/kernel", True),
    ("bert.encoder.layer.{}.output.dense.bias", "bert/encoder/layer_{}/output/dense/bias", False),
    ("bert.encoder.layer.{}.output.LayerNorm.weight", "bert/encoder/layer_{}/output/LayerNorm/gamma", False),
    ("bert.encoder.layer.{}.output.LayerNorm.bias", "bert/encoder/layer_{}/output/LayerNorm/beta", False),
    ("bert.pooler.dense.weight", "bert/pooler/dense/kernel", True),
    ("bert.pooler.dense.bias", "bert/pooler/dense/bias", False),
    ("cls.predictions.transform.dense.weight", "cls/predictions/transform/dense/kernel", True),
    ("cls.predictions.transform.dense.bias", "cls/predictions/transform/dense/bias", False),
    ("cls.predictions.transform.LayerNorm.weight", "cls/predictions/transform/LayerNorm/gamma", False),
    ("cls.predictions.transform.LayerNorm.bias", "cls/predictions/transform/LayerNorm/beta", False),
    ("cls.predictions.bias", "cls/predictions/output_bias", False),  # the decoder weight is the word embeddings
    ("cls.seq_relationship.weight", "cls/seq_relationship/output_weights", False),  # [2, H] already
    ("cls.seq_relationship.bias", "cls/seq_relationship/output_bias", False),
    ("classifier.weight", "output_weights", False),  # run_classifier.py: [num_labels, H] already
    ("classifier.bias", "output_bias", False),
    ("qa_outputs.weight", "cls/squad/output_weights", False),  # run_squad.py: [2, H] already
    ("qa_outputs.bias", "cls/squad/output_bias", False),
)

#: Training state in Google's checkpoints, never model weights: skipped and reported.
#: Adam moments of google-research/bert's AdamWeightDecayOptimizer (``.../adam_m``,
#: ``.../adam_v``), TF1 optimizers' slot variables (``.../Adam``, ``.../Adam_1``,
#: ``.../AdamWeightDecayOptimizer[_1]``, ``.../BERTAdam[_1]``), and step counters.
TF_OPTIMIZER_SLOT_SUFFIXES = (
    "/adam_m", "/adam_v", "/Adam", "/Adam_1", "/AdamWeightDecayOptimizer", "/AdamWeightDecayOptimizer_1",
    "/BERTAdam", "/BERTAdam_1", "/Momentum", "/LAMB", "/LAMB_1",
)
TF_TRAINING_STATE_NAMES = ("global_step", "beta1_power", "beta2_power", "good_steps", "current_loss_scale")


def _pattern(template: str) -> re.Pattern:
    """A table name with "{}" for the layer number -> an exact-match regex capturing it."""
    return re.compile("^" + re.escape(template).replace(r"\{\}", r"(\d+)") + "$")


@functools.cache
def _compiled_table(direction: str) -> list[tuple[re.Pattern, str, bool]]:
    """The table as (pattern, target, transpose) rows for one direction; compiled on
    first use, so loading an HF checkpoint never pays for the TF table's regexes."""
    if direction == "tf_to_hf":
        return [(_pattern(tf_name), hf_name, transpose) for hf_name, tf_name, transpose in TF_WEIGHT_MAP]
    return [(_pattern(hf_name), tf_name, transpose) for hf_name, tf_name, transpose in TF_WEIGHT_MAP]


def is_tf_training_state(tf_name: str) -> bool:
    return tf_name in TF_TRAINING_STATE_NAMES or tf_name.endswith(TF_OPTIMIZER_SLOT_SUFFIXES)


def _lookup(rows: list[tuple[re.Pattern, str, bool]], name: str) -> tuple[str, bool] | None:
    for pattern, target, transpose in rows:
        match = pattern.match(name)
        if match:
            return target.replace("{}", match.group(1)) if match.groups() else target, transpose
    return None


def tf_to_hf_name(tf_name: str) -> tuple[str, bool] | None:
    """Google TF variable name -> (transformers name, transpose?), or None if unmapped."""
    return _lookup(_compiled_table("tf_to_hf"), tf_name)


def hf_to_tf_name(hf_name: str) -> tuple[str, bool] | None:
    """transformers name (with the ``bert.`` prefix of head models) -> (Google TF name, transpose?)."""
    return _lookup(_compiled_table("hf_to_tf"), hf_name)


@dataclass
class TFConversion:
    """A Google checkpoint's variables under transformers' names, and what was left out."""

    tensors: dict[str, torch.Tensor]
    renamed: list[tuple[str, str]] = field(default_factory=list)  # (TF name, HF name)
    skipped: list[str] = field(default_factory=list)  # optimizer slots, global_step
    unmapped: list[str] = field(default_factory=list)  # anything else: reported, not loaded


def convert_tf_checkpoint(checkpoint, progress: bool = False) -> TFConversion:
    """Read every model variable of a ``TFCheckpoint`` and map it through ``TF_WEIGHT_MAP``.

    Training state is never read; unmapped variables are listed by name, not loaded.
    ``progress`` shows a bar (tqdm, when installed) over the bytes read and CRC-checked.
    """
    out = TFConversion(tensors={})
    names = checkpoint.keys()
    bar = _progress_bar(sum(checkpoint.entries[n].size for n in names if not is_tf_training_state(n)),
                        f"reading {checkpoint.prefix}") if progress else None
    for tf_name in names:
        if is_tf_training_state(tf_name):
            out.skipped.append(tf_name)
            continue
        mapped = tf_to_hf_name(tf_name)
        if mapped is None:
            out.unmapped.append(tf_name)
            continue
        hf_name, transpose = mapped
        tensor = checkpoint.read(tf_name)
        if transpose:
            if tensor.dim() != 2:
                raise CheckpointError(f"{checkpoint.index_path}: tensor {tf_name!r} should be a 2-D kernel, has shape {list(tensor.shape)}")
            # [in, out] -> [out, in] as a view of the mapped shard, not a copy; F.linear takes
            # it as it is, and transformers 4.x's np.transpose also gives a view, so the two
            # compute bit-identical outputs (a contiguous copy differed by ~1e-7).
            tensor = tensor.t()
        out.tensors[hf_name] = tensor
        out.renamed.append((tf_name, hf_name))
        if bar is not None:
            bar.update(checkpoint.entries[tf_name].size)
    if bar is not None:
        bar.close()
    return out


def _progress_bar(total_bytes: int, description: str):
    """A tqdm byte counter, or None when tqdm is not installed (it is optional)."""
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm(total=total_bytes, unit="B", unit_scale=True, desc=description)


# --------------------------------------------------------------------------------------
# The other published forms: the hub's TF and Flax files, Google's TF2 and KerasHub
# --------------------------------------------------------------------------------------
#
# One table per form, one row per parameter: (name in transformers and here, name in the
# file, how the file's tensor becomes ours). "{}" stands for a layer number. The readers
# (checkpoints/forms.py) name each tensor as these tables expect; convert --inspect and
# docs/weight_map.md print the same rows.

AS_IS = "as is"
#: A dense kernel stored [in, out] (TF, Keras, Flax) -> torch's [out, in].
TRANSPOSE = "transpose"
#: Keras' EinsumDense query/key/value kernel [hidden, heads, head_dim] -> [heads * head_dim, hidden].
HEADS_IN = "merge heads, transpose"
#: Its bias [heads, head_dim] -> [heads * head_dim].
HEADS_BIAS = "merge heads"
#: The attention output kernel [heads, head_dim, hidden] -> [hidden, heads * head_dim].
HEADS_OUT = "merge heads, transpose (output side)"


def _transformers_rows(layer: str, word: str, table: str, norm: tuple[str, str], mlm: str, nsp: str) -> tuple:
    """transformers 4.x's TF and Flax classes name every parameter alike, Google's scopes
    under ``bert/``; they differ in the layer's path, the embeddings' and LayerNorm's leaf
    names and the heads' scopes. ``norm``: (scale, shift) leaves."""
    scale, shift = norm
    dense = (("attention.self.query", "attention/self/query"), ("attention.self.key", "attention/self/key"),
             ("attention.self.value", "attention/self/value"), ("attention.output.dense", "attention/output/dense"),
             ("intermediate.dense", "intermediate/dense"), ("output.dense", "output/dense"))
    return (
        ("bert.embeddings.word_embeddings.weight", f"bert/embeddings/word_embeddings/{word}", AS_IS),
        ("bert.embeddings.position_embeddings.weight", f"bert/embeddings/position_embeddings/{table}", AS_IS),
        ("bert.embeddings.token_type_embeddings.weight", f"bert/embeddings/token_type_embeddings/{table}", AS_IS),
        ("bert.embeddings.LayerNorm.weight", f"bert/embeddings/LayerNorm/{scale}", AS_IS),
        ("bert.embeddings.LayerNorm.bias", f"bert/embeddings/LayerNorm/{shift}", AS_IS),
        *((f"bert.encoder.layer.{{}}.{ours}.{leaf}", f"{layer}/{theirs}/{their_leaf}", transform)
          for ours, theirs in dense
          for leaf, their_leaf, transform in (("weight", "kernel", TRANSPOSE), ("bias", "bias", AS_IS))),
        *((f"bert.encoder.layer.{{}}.{ours}.LayerNorm.{leaf}", f"{layer}/{theirs}/LayerNorm/{their_leaf}", AS_IS)
          for ours, theirs in (("attention.output", "attention/output"), ("output", "output"))
          for leaf, their_leaf in (("weight", scale), ("bias", shift))),
        ("bert.pooler.dense.weight", "bert/pooler/dense/kernel", TRANSPOSE),
        ("bert.pooler.dense.bias", "bert/pooler/dense/bias", AS_IS),
        ("cls.predictions.transform.dense.weight", f"{mlm}/predictions/transform/dense/kernel", TRANSPOSE),
        ("cls.predictions.transform.dense.bias", f"{mlm}/predictions/transform/dense/bias", AS_IS),
        ("cls.predictions.transform.LayerNorm.weight", f"{mlm}/predictions/transform/LayerNorm/{scale}", AS_IS),
        ("cls.predictions.transform.LayerNorm.bias", f"{mlm}/predictions/transform/LayerNorm/{shift}", AS_IS),
        ("cls.predictions.bias", f"{mlm}/predictions/bias", AS_IS),  # the decoder is the word embeddings
        ("cls.seq_relationship.weight", f"{nsp}/seq_relationship/kernel", TRANSPOSE),
        ("cls.seq_relationship.bias", f"{nsp}/seq_relationship/bias", AS_IS),
        ("classifier.weight", "classifier/kernel", TRANSPOSE),  # sequence, token and multiple-choice heads
        ("classifier.bias", "classifier/bias", AS_IS),
        ("qa_outputs.weight", "qa_outputs/kernel", TRANSPOSE),
        ("qa_outputs.bias", "qa_outputs/bias", AS_IS),
    )


#: transformers 4.x's TFBert* classes, as ``save_pretrained`` writes them to ``tf_model.h5``.
#: Each name is the Keras weight name less its model scope (``tf_bert_for_pre_training/``)
#: and ``:0``. The MLM head is the layer ``mlm___cls``, the NSP head ``nsp___cls``.
TF_H5_WEIGHT_MAP: tuple[tuple[str, str, str], ...] = _transformers_rows(
    layer="bert/encoder/layer_._{}", word="weight", table="embeddings", norm=("gamma", "beta"),
    mlm="mlm___cls", nsp="nsp___cls")

#: transformers 4.x's FlaxBert* classes, as ``save_pretrained`` writes them to
#: ``flax_model.msgpack``: the nested parameter dict, its keys joined by "/". (FlaxBertModel
#: keeps the encoder's parameters at the top; the reader puts them under ``bert/``.)
FLAX_WEIGHT_MAP: tuple[tuple[str, str, str], ...] = _transformers_rows(
    layer="bert/encoder/layer/{}", word="embedding", table="embedding", norm=("scale", "bias"), mlm="cls", nsp="cls")

#: Google's TF2 code (tf-models-official's BertEncoder and BertPretrainerV2), in TF2
#: checkpoints and TF Hub SavedModels alike: the variables' own names, which the files'
#: object graph records beside each checkpoint key (``encoder/layer_with_weights-4/...``,
#: ``variables/21/...``). Attention is Keras' EinsumDense, its kernels per head.
TF2_WEIGHT_MAP: tuple[tuple[str, str, str], ...] = (
    ("bert.embeddings.word_embeddings.weight", "word_embeddings/embeddings", AS_IS),
    ("bert.embeddings.position_embeddings.weight", "position_embedding/embeddings", AS_IS),
    ("bert.embeddings.token_type_embeddings.weight", "type_embeddings/embeddings", AS_IS),
    ("bert.embeddings.LayerNorm.weight", "embeddings/layer_norm/gamma", AS_IS),
    ("bert.embeddings.LayerNorm.bias", "embeddings/layer_norm/beta", AS_IS),
    *((f"bert.encoder.layer.{{}}.attention.self.{part}.{ours}", f"transformer/layer_{{}}/self_attention/{part}/{theirs}", transform)
      for part in ("query", "key", "value")
      for ours, theirs, transform in (("weight", "kernel", HEADS_IN), ("bias", "bias", HEADS_BIAS))),
    ("bert.encoder.layer.{}.attention.output.dense.weight", "transformer/layer_{}/self_attention/attention_output/kernel", HEADS_OUT),
    ("bert.encoder.layer.{}.attention.output.dense.bias", "transformer/layer_{}/self_attention/attention_output/bias", AS_IS),
    ("bert.encoder.layer.{}.attention.output.LayerNorm.weight", "transformer/layer_{}/self_attention_layer_norm/gamma", AS_IS),
    ("bert.encoder.layer.{}.attention.output.LayerNorm.bias", "transformer/layer_{}/self_attention_layer_norm/beta", AS_IS),
    ("bert.encoder.layer.{}.intermediate.dense.weight", "transformer/layer_{}/intermediate/kernel", TRANSPOSE),
    ("bert.encoder.layer.{}.intermediate.dense.bias", "transformer/layer_{}/intermediate/bias", AS_IS),
    ("bert.encoder.layer.{}.output.dense.weight", "transformer/layer_{}/output/kernel", TRANSPOSE),
    ("bert.encoder.layer.{}.output.dense.bias", "transformer/layer_{}/output/bias", AS_IS),
    ("bert.encoder.layer.{}.output.LayerNorm.weight", "transformer/layer_{}/output_layer_norm/gamma", AS_IS),
    ("bert.encoder.layer.{}.output.LayerNorm.bias", "transformer/layer_{}/output_layer_norm/beta", AS_IS),
    ("bert.pooler.dense.weight", "pooler_transform/kernel", TRANSPOSE),
    ("bert.pooler.dense.bias", "pooler_transform/bias", AS_IS),
    # BertPretrainerV2's MaskedLM layer, scoped as its converter and its trainer build it.
    ("cls.predictions.transform.dense.weight", "bert/cls/predictions/transform/dense/kernel", TRANSPOSE),
    ("cls.predictions.transform.dense.bias", "bert/cls/predictions/transform/dense/bias", AS_IS),
    ("cls.predictions.transform.LayerNorm.weight", "bert/cls/predictions/transform/LayerNorm/gamma", AS_IS),
    ("cls.predictions.transform.LayerNorm.bias", "bert/cls/predictions/transform/LayerNorm/beta", AS_IS),
    ("cls.predictions.bias", "bert/cls/predictions/output_bias/bias", AS_IS),
)

#: KerasHub's BertBackbone (``model.weights.h5``) and BertMaskedLM head
#: (``task.weights.h5``): Keras 3 stores each layer's variables as ``vars/0``, ``vars/1``
#: (kernel then bias; gamma then beta) under the layer's path. The reader names the first
#: transformer layer ``transformer_encoder_0`` (Keras leaves it unnumbered).
KERAS_HUB_WEIGHT_MAP: tuple[tuple[str, str, str], ...] = (
    ("bert.embeddings.word_embeddings.weight", "model.weights.h5/layers/reversible_embedding/vars/0", AS_IS),
    ("bert.embeddings.position_embeddings.weight", "model.weights.h5/layers/position_embedding/vars/0", AS_IS),
    ("bert.embeddings.token_type_embeddings.weight", "model.weights.h5/layers/embedding/vars/0", AS_IS),
    ("bert.embeddings.LayerNorm.weight", "model.weights.h5/layers/layer_normalization/vars/0", AS_IS),
    ("bert.embeddings.LayerNorm.bias", "model.weights.h5/layers/layer_normalization/vars/1", AS_IS),
    *((f"bert.encoder.layer.{{}}.attention.self.{part}.{ours}",
       f"model.weights.h5/layers/transformer_encoder_{{}}/_self_attention_layer/{part}_dense/vars/{index}", transform)
      for part in ("query", "key", "value")
      for ours, index, transform in (("weight", 0, HEADS_IN), ("bias", 1, HEADS_BIAS))),
    *((f"bert.encoder.layer.{{}}.{ours}", f"model.weights.h5/layers/transformer_encoder_{{}}/{theirs}", transform)
      for ours, theirs, transform in (
          ("attention.output.dense.weight", "_self_attention_layer/output_dense/vars/0", HEADS_OUT),
          ("attention.output.dense.bias", "_self_attention_layer/output_dense/vars/1", AS_IS),
          ("attention.output.LayerNorm.weight", "_self_attention_layer_norm/vars/0", AS_IS),
          ("attention.output.LayerNorm.bias", "_self_attention_layer_norm/vars/1", AS_IS),
          ("intermediate.dense.weight", "_feedforward_intermediate_dense/vars/0", TRANSPOSE),
          ("intermediate.dense.bias", "_feedforward_intermediate_dense/vars/1", AS_IS),
          ("output.dense.weight", "_feedforward_output_dense/vars/0", TRANSPOSE),
          ("output.dense.bias", "_feedforward_output_dense/vars/1", AS_IS),
          ("output.LayerNorm.weight", "_feedforward_layer_norm/vars/0", AS_IS),
          ("output.LayerNorm.bias", "_feedforward_layer_norm/vars/1", AS_IS))),
    ("bert.pooler.dense.weight", "model.weights.h5/layers/dense/vars/0", TRANSPOSE),
    ("bert.pooler.dense.bias", "model.weights.h5/layers/dense/vars/1", AS_IS),
    ("cls.predictions.transform.dense.weight", "task.weights.h5/layers/masked_lm_head/_intermediate_dense/vars/0", TRANSPOSE),
    ("cls.predictions.transform.dense.bias", "task.weights.h5/layers/masked_lm_head/_intermediate_dense/vars/1", AS_IS),
    ("cls.predictions.transform.LayerNorm.weight", "task.weights.h5/layers/masked_lm_head/_intermediate_layer_norm/vars/0", AS_IS),
    ("cls.predictions.transform.LayerNorm.bias", "task.weights.h5/layers/masked_lm_head/_intermediate_layer_norm/vars/1", AS_IS),
    ("cls.predictions.bias", "task.weights.h5/layers/masked_lm_head/vars/0", AS_IS),
)

#: Each form's table, by the form names of checkpoints/forms.py.
FORM_WEIGHT_MAPS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "tf_model_h5": TF_H5_WEIGHT_MAP,
    "flax_msgpack": FLAX_WEIGHT_MAP,
    "tf2": TF2_WEIGHT_MAP,
    "saved_model": TF2_WEIGHT_MAP,
    "keras_hub": KERAS_HUB_WEIGHT_MAP,
}


@functools.cache
def _compiled_form_table(form: str) -> list[tuple[re.Pattern, str, str]]:
    return [(_pattern(theirs), ours, transform) for ours, theirs, transform in FORM_WEIGHT_MAPS[form]]


def form_to_hf_name(form: str, name: str) -> tuple[str, str] | None:
    """A tensor's name in a ``form``'s file -> (transformers name, how to transform it), or None."""
    for pattern, target, transform in _compiled_form_table(form):
        match = pattern.match(name)
        if match:
            return (target.replace("{}", match.group(1)) if match.groups() else target), transform
    return None


def transformed(tensor: torch.Tensor, transform: str, where: str) -> torch.Tensor:
    """The file's ``tensor`` in transformers' layout (see the transforms above), its rank
    checked first: a kernel of the wrong rank is refused naming ``where``."""
    rank = {AS_IS: None, TRANSPOSE: 2, HEADS_IN: 3, HEADS_BIAS: 2, HEADS_OUT: 3}[transform]
    if rank is not None and tensor.dim() != rank:
        raise CheckpointError(f"{where}: expected a {rank}-D tensor ({transform}), found shape {list(tensor.shape)}")
    if transform == TRANSPOSE:
        return tensor.t()
    if transform == HEADS_IN:  # [hidden, heads, head_dim] -> [hidden, all_head_size] -> [all_head_size, hidden]
        return tensor.reshape(tensor.shape[0], -1).t()
    if transform == HEADS_BIAS:  # [heads, head_dim] -> [all_head_size]
        return tensor.reshape(-1)
    if transform == HEADS_OUT:  # [heads, head_dim, hidden] -> [all_head_size, hidden] -> [hidden, all_head_size]
        return tensor.reshape(-1, tensor.shape[-1]).t()
    return tensor


def transformed_shape(shape: tuple[int, ...], transform: str) -> tuple[int, ...] | None:
    """The shape ``transformed`` gives, without reading the tensor; None for a wrong rank."""
    if transform == AS_IS:
        return tuple(shape)
    if transform == TRANSPOSE:
        return tuple(reversed(shape)) if len(shape) == 2 else None
    if transform == HEADS_IN:
        return (shape[1] * shape[2], shape[0]) if len(shape) == 3 else None
    if transform == HEADS_BIAS:
        return (shape[0] * shape[1],) if len(shape) == 2 else None
    return (shape[2], shape[0] * shape[1]) if len(shape) == 3 else None
