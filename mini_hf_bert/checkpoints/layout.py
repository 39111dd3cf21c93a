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

#: The other weights files a hub repo may hold alone: transformers 4.x's TensorFlow and Flax
#: classes wrote these, and KerasHub presets on the hub hold their backbone in the third.
TF_WEIGHTS_NAME = "tf_model.h5"
FLAX_WEIGHTS_NAME = "flax_model.msgpack"
KERAS_HUB_WEIGHTS_NAME = "model.weights.h5"
KERAS_HUB_TASK_WEIGHTS_NAME = "task.weights.h5"
OTHER_WEIGHTS_FILE_NAMES = (TF_WEIGHTS_NAME, FLAX_WEIGHTS_NAME, KERAS_HUB_WEIGHTS_NAME)

#: The dtypes weights are stored in, by numpy's names, which are torch's too (``torch.bfloat16``
#: is JAX's and ml_dtypes' ``bfloat16``): what the HDF5 and msgpack readers turn into tensors.
WEIGHT_DTYPE_NAMES = ("float32", "float16", "bfloat16", "float64", "int64", "int32", "int16", "int8", "uint8", "bool")
