"""Read the weights of an HDF5 file with h5py, never TensorFlow or Keras: transformers'
``tf_model.h5`` (Keras 2's ``save_weights`` layout) and KerasHub's ``*.weights.h5`` (Keras 3's).

Both are a tree of groups whose leaves (datasets) are the weights:

* ``tf_model.h5``: ``LAYER/MODEL_SCOPE/.../NAME:0``, e.g.
  ``bert/tf_bert_for_pre_training/bert/embeddings/word_embeddings/weight:0``. The weight's
  own name is the path less the layer group and the model scope (``bert/embeddings/
  word_embeddings/weight``). A layer that reuses another's weight stores a copy under its
  own group (the MLM head holds the word embeddings again).
* ``model.weights.h5``: ``layers/LAYER/.../vars/I``, a layer's variables by position.

Everything read is untrusted. Links other than plain (hard) ones, datasets stored outside
the file (external or virtual), and any tree past ``MAX_OBJECTS`` are refused before a
byte of data is read; each dataset's shape and dtype are known before it is read, so the
caller bounds what it will read; every failure is one ``CheckpointError`` naming the file.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

from .errors import CheckpointError
from .layout import WEIGHT_DTYPE_NAMES

#: Groups and datasets one file may hold: bert-large's tf_model.h5 has under 1,000.
MAX_OBJECTS = 100_000
#: numpy's dtype names (JAX's and ml_dtypes' bfloat16 among them) -> torch.
DTYPES: dict[str, torch.dtype] = {name: getattr(torch, name) for name in WEIGHT_DTYPE_NAMES}


def require_h5py(path: str):
    try:
        import h5py
    except ImportError:
        raise CheckpointError(f"{path}: reading an HDF5 checkpoint (.h5) needs h5py: "
                              f"pip install 'mini_hf_bert[formats]'") from None
    return h5py


@dataclass(frozen=True)
class HDF5Entry:
    """One dataset: where it is in the file, and what it holds (read from its header only)."""

    dataset: str  # its path in the file
    shape: tuple[int, ...]
    dtype_name: str

    @property
    def nbytes(self) -> int:
        dtype = DTYPES.get(self.dtype_name)
        return math.prod(self.shape) * (torch.empty((), dtype=dtype).element_size() if dtype else 1)


class HDF5Weights:
    """The datasets of one HDF5 file, named by ``naming`` (dataset path -> name; None leaves
    a dataset out). Open while in use; ``read(name)`` returns one tensor."""

    def __init__(self, path: str, naming: Callable[[str], str | None]) -> None:
        h5py = require_h5py(path)
        self.path = path
        try:
            self._file = h5py.File(path, "r")
        except (OSError, ValueError) as e:
            raise CheckpointError(f"{path}: not a readable HDF5 file ({e}); truncated or not an .h5 "
                                  f"checkpoint?") from None
        self.entries: dict[str, HDF5Entry] = {}
        self.duplicates: dict[str, list[str]] = {}  # name -> every other dataset stored under it
        try:
            self._index(h5py, naming)
        except CheckpointError:
            self._file.close()
            raise
        except Exception as e:  # noqa: BLE001 - a corrupt file surfaces as any of h5py's and HDF5's errors
            self._file.close()
            raise CheckpointError(f"{path}: its tree of groups and datasets does not read ({type(e).__name__}: "
                                  f"{_first_line(e)}); truncated or corrupt?") from None
        except BaseException:
            self._file.close()
            raise

    def _index(self, h5py, naming: Callable[[str], str | None]) -> None:
        links: list[tuple[str, object]] = []

        def visit(name: str, link) -> None:
            links.append((name, link))
            if len(links) > MAX_OBJECTS:
                raise CheckpointError(f"{self.path}: more than {MAX_OBJECTS} groups and datasets; no BERT has as many")

        self._file.visititems_links(visit)
        for name, link in links:
            if not isinstance(link, h5py.HardLink):
                kind = "an external link to another file" if isinstance(link, h5py.ExternalLink) else "a soft link"
                raise CheckpointError(f"{self.path}: {name!r} is {kind}; a weights file holds its own data, "
                                      f"so it is refused unread")
            item = self._file[name]
            if not isinstance(item, h5py.Dataset):
                continue
            if item.is_virtual or item.external:
                raise CheckpointError(f"{self.path}: dataset {name!r} keeps its data outside this file "
                                      f"({'virtual' if item.is_virtual else 'external storage'}); refused unread")
            weight = naming(name)
            if weight is None:
                continue
            entry = HDF5Entry(name, tuple(int(d) for d in item.shape), _dtype_name(item.dtype))
            if weight in self.entries:
                self.duplicates.setdefault(weight, []).append(name)
            else:
                self.entries[weight] = entry

    def read(self, name: str) -> torch.Tensor:
        entry = self.entries[name]
        where = f"{self.path}: dataset {entry.dataset!r}"
        tensor = self._read_dataset(entry, where)
        for other in self.duplicates.get(name, ()):  # the same weight stored by a second layer: must agree
            copy = self._read_dataset(HDF5Entry(other, entry.shape, entry.dtype_name), f"{self.path}: dataset {other!r}")
            if copy.shape != tensor.shape or not torch.equal(copy, tensor):
                raise CheckpointError(f"{self.path}: datasets {entry.dataset!r} and {other!r} both hold {name!r}, "
                                      f"with different values; which one is the weight is unclear, so neither is used")
        return tensor

    def _read_dataset(self, entry: HDF5Entry, where: str) -> torch.Tensor:
        dtype = DTYPES.get(entry.dtype_name)
        if dtype is None:
            raise CheckpointError(f"{where}: dtype {entry.dtype_name} is not one mini_hf_bert reads")
        try:
            dataset = self._file[entry.dataset]
            shape = tuple(dataset.shape)
            array = dataset[()] if shape == entry.shape else None
        except Exception as e:  # noqa: BLE001 - a corrupt file surfaces as any of h5py's and HDF5's errors
            raise CheckpointError(f"{where}: its data does not read ({type(e).__name__}: {_first_line(e)}); "
                                  f"truncated or corrupt?") from None
        if array is None:
            raise CheckpointError(f"{where}: shape {list(shape)}, where the weight it repeats has {list(entry.shape)}")
        if entry.dtype_name == "bfloat16":  # ml_dtypes' numpy type: reinterpret its bits
            return torch.from_numpy(array.view("uint16").copy()).view(torch.bfloat16)
        return torch.from_numpy(array) if getattr(array, "ndim", 0) else torch.tensor(array, dtype=dtype)

    def close(self) -> None:
        self._file.close()


def _dtype_name(dtype) -> str:
    """A dataset's numpy dtype as a plain name ("float32"), or its repr when it is not one."""
    try:
        return dtype.name if dtype.fields is None and dtype.kind in "fiub" or dtype.name == "bfloat16" else str(dtype)
    except (AttributeError, TypeError):
        return str(dtype)


def _first_line(error: BaseException) -> str:
    text = str(error) or str(error.__cause__ or "") or type(error).__name__
    return text.splitlines()[0] if text else type(error).__name__
