"""Reading checkpoint files and fitting their tensors to mini_hf_bert's parameter names.

* ``hf_format``: HuggingFace directories (model.safetensors, pytorch_model.bin, sharded ``*.index.json``).
* ``weight_map``: the name tables (legacy HF names, stray buffers, the ``bert.`` prefix) and the
  function that fits a checkpoint's keys to a model's.

Google's TensorFlow checkpoints join here later (the weight-mapping issue).
"""

from .errors import CheckpointError

__all__ = ["CheckpointError"]
