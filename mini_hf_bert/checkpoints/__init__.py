"""Checkpoint files: reading every form BERT is published in, fitting their tensors to
mini_hf_bert's parameter names, writing HF directories, and converting between forms.

Formats (no model code; ``modeling_utils`` builds on these):

* ``errors``: ``CheckpointError``, the one error a bad checkpoint raises (``CheckpointNotFoundError``,
  also an OSError as transformers', where there is none).
* ``hf_format``: HuggingFace directories (model.safetensors, pytorch_model.bin, sharded ``*.index.json``).
* ``tf_bundle`` (+ ``crc32c``): Google's TensorFlow checkpoints (V2 tensor bundles), read without TensorFlow.
* ``hub``: hub ids, read from the local HuggingFace cache.
* ``weight_map``: the name tables (legacy HF names, stray buffers, the ``bert.`` prefix, Google
  TF <-> transformers) and the function that fits a checkpoint's keys to a model's.
* ``resolve``: what a user passes to ``from_pretrained`` -> a config file and tensors.
* ``loading`` / ``saving``: a model built on the meta device and filled; a model's files written.
* ``fingerprints``: official files recognised by size and SHA-256.
* ``bundled``: checkpoints that pip packages ship (the default all-MiniLM-L6-v2).

Tools over the model (they import ``modeling_bert``):

* ``convert``: any form -> an HF directory; ``as_hf_directory``, ``tokenizer_for``.
"""

from .errors import CheckpointError, CheckpointNotFoundError

__all__ = ["CheckpointError", "CheckpointNotFoundError"]
