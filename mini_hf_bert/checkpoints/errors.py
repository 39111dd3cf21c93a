"""The one exception type for checkpoints that cannot be read or do not fit the model."""


class CheckpointError(ValueError):
    """A checkpoint file that is missing, corrupt, hostile, or does not fit the model.

    The message always names the file (or directory) and says what is wrong with it.
    """
