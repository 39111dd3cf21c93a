"""The bounds on work and memory: the largest config, file, archive and text accepted.

Every input that could make mini_hf_bert work without end, or fill the memory or the
disk, meets one of these bounds before the work starts, and is refused in one line that
names the file or argument, the bound, and the argument that raises it. The bounds sit
far above any real BERT, so only a wrong or hostile input meets them. docs/reliability.md
lists them with their reasons.

A bound is raised by passing ``limits=Limits(...)`` (``from_pretrained``, ``convert``, the
tokenizer), never as a side effect of another option: ``strict=False`` and
``ignore_mismatched_sizes=True`` relax the checks of the weights, not these.

transformers: none (it builds what a config asks for, and reads what it is given)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

KiB, MiB, GiB, TiB = 1024, 1024**2, 1024**3, 1024**4


@dataclass(frozen=True)
class Limits:
    """The bounds one call works within; ``Limits()`` holds the defaults.

    ``Limits(model_bytes=64 * GiB)`` raises one bound and keeps the others.
    """

    #: Parameters and buffers of a model built from a config.json, in the dtype it is
    #: built in. bert-large in float32 is 1.3 GB, the largest BERT-shaped releases
    #: (Megatron-BERT 3.9B) are 15.6 GB; a config past this is a mistake or an attack that
    #: would end in an allocation failure, or in swapping, minutes later.
    model_bytes: int = 16 * GiB
    #: Encoder layers of a model built from a config.json. Each layer is a dozen Python
    #: objects built one by one (a million take minutes, whatever their size); the deepest
    #: BERTs have 48.
    hidden_layers: int = 1024
    #: What a checkpoint zip may unpack to: Google's bert-large zip unpacks to 1.3 GB.
    archive_bytes: int = 16 * GiB
    #: How far a zip's members may expand over their compressed size, in total. Float
    #: weights barely deflate (Google's bert-base zip: 1.09x) and vocabularies about 3-4x; a
    #: run of zeros, a zip bomb's usual payload, deflates about 1000x.
    archive_ratio: int = 20
    #: Characters of one text the tokenizer reads whole: when nothing truncates it, every
    #: token is kept with its offsets and word ids, several hundred bytes per character of
    #: Chinese. With ``truncation`` (and no overflowing windows) the tokenizer stops at
    #: ``max_length`` tokens, and a text of any length is accepted.
    text_chars: int = 4 * 1024**2

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"Limits.{field.name} must be a positive int, got {value!r}")

    @staticmethod
    def given(limits: Limits | None, argument: str = "limits") -> Limits:
        """``limits`` as passed to a function: None is the defaults; anything but a
        ``Limits`` is a TypeError naming the argument."""
        if limits is None:
            return DEFAULT_LIMITS
        if not isinstance(limits, Limits):
            raise TypeError(f"{argument} must be a mini_hf_bert.Limits, got {type(limits).__name__}")
        return limits


DEFAULT_LIMITS = Limits()

# Bounds of a format, not of a request: no valid file of the kind comes near them, so no
# argument raises them. The two every file reader shares, METADATA_BYTES (a JSON file or a
# vocabulary, 64 MiB) and LOCK_TIMEOUT_SECONDS (300 s), are file_utils'.

#: A TensorFlow checkpoint's .index: bert-large's is about 60 KB.
TF_INDEX_BYTES = 256 * MiB
#: How far a legacy (non-zip) ``.bin`` is scanned for its pickles, which come first; the
#: rest is raw tensor data.
PICKLE_SCAN_BYTES = 16 * MiB
#: A labelled data file (``finetune --train-file``): a learner's data set, read whole.
LABELLED_FILE_BYTES = 1 * GiB


def size_text(count: int) -> str:
    """``17179869184`` -> ``"16.0 GiB"``: a byte count as people read it, for messages."""
    for unit, size in (("TiB", TiB), ("GiB", GiB), ("MiB", MiB), ("KiB", KiB)):
        if count >= size:
            return f"{count / size:.1f} {unit}"
    return f"{count} bytes"
