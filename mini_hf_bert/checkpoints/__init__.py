"""Reading checkpoint files and fitting their tensors to mini_hf_bert's parameter names.

* ``hf_format``: HuggingFace directories (model.safetensors, pytorch_model.bin, sharded ``*.index.json``).
* ``tf_bundle``: Google's TensorFlow checkpoints (V2 tensor bundles), read without TensorFlow.
* ``weight_map``: the name tables (legacy HF names, stray buffers, the ``bert.`` prefix, Google
  TF <-> transformers) and the function that fits a checkpoint's keys to a model's.
* ``resolve``: what a user passes to ``from_pretrained`` -> a config file and tensors.

Nothing here imports the model code, so ``modeling_utils`` can import it at module level.
"""

from .errors import CheckpointError

__all__ = ["CheckpointError"]
