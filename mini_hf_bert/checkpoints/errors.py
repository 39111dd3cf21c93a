"""The one exception type for checkpoints that cannot be read or do not fit the model."""


class CheckpointError(ValueError):
    """A checkpoint file that is missing, corrupt, hostile, or does not fit the model.

    The message always names the file (or directory) and says what is wrong with it.
    """


class CheckpointNotFoundError(CheckpointError, OSError):
    """No checkpoint where one was named: no weights or config in a directory, nothing
    at a path or hub id.

    Also an OSError, the type transformers raises there, so the ``except OSError``
    fallbacks of code written for transformers catch it.
    """


class CheckpointShapeError(CheckpointError, RuntimeError):
    """Checkpoint tensors whose shapes do not fit the model's config.

    Also a RuntimeError, the type transformers raises for a size mismatch, so code written
    for either library catches it.
    """


class MetaDeviceLoadError(ValueError, RuntimeError):
    """``from_pretrained`` called under ``torch.device("meta")``: it would load no weights.

    Also a RuntimeError, the type transformers raises for it.
    """
