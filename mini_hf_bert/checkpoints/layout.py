"""The file names of transformers' checkpoint layout: what ``save_pretrained`` writes and a
hub repo holds. Names only, importing nothing, so that every reader of the layout (the
format readers, the hub cache) can share them without importing one another.

transformers: ``utils/constants`` (``CONFIG_NAME``, ``SAFE_WEIGHTS_NAME``, ...)
"""

SAFE_WEIGHTS_NAME = "model.safetensors"
SAFE_WEIGHTS_INDEX_NAME = "model.safetensors.index.json"
WEIGHTS_NAME = "pytorch_model.bin"
WEIGHTS_INDEX_NAME = "pytorch_model.bin.index.json"
CONFIG_NAME = "config.json"

#: Where ``from_pretrained`` looks, in this order (transformers prefers safetensors too).
WEIGHTS_FILE_NAMES = (SAFE_WEIGHTS_NAME, SAFE_WEIGHTS_INDEX_NAME, WEIGHTS_NAME, WEIGHTS_INDEX_NAME)
