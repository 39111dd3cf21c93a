"""Progress bars for the long steps before training starts (reading, building a
vocabulary, making instances): tqdm's where it is installed, an optional dependency;
else none, and the work runs the same."""

from __future__ import annotations


class _NoBar:
    """What ``progress_bar`` gives when no bar is shown: it counts nothing."""

    def update(self, count: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


def progress_bar(total: int, description: str, enabled: bool, unit: str = "it"):
    """A bar of ``total`` steps on stderr (``update``, then ``close``), or one that shows
    nothing when not ``enabled`` or tqdm is not installed.

    transformers: none (its ``utils.logging.tqdm`` wraps tqdm the same way)
    """
    if enabled:
        try:
            from tqdm.auto import tqdm
        except ImportError:
            return _NoBar()
        return tqdm(total=total, desc=description, unit=unit)
    return _NoBar()
