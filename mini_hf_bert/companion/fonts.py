"""Fonts for the figures mini_hf_bert draws (attention pictures, training curves): matplotlib
with DejaVu Sans, and a CJK family for the Chinese characters of a figure's text.

The CJK font is the ``viz`` extra's Noto Sans CJK SC (the ``manimgx-fonts-cjk`` package),
cut to the characters a figure draws; where it is missing, the first CJK family the system
has. matplotlib itself is the ``viz`` extra (``pip install 'mini_hf_bert[viz]'``). This
module imports nothing else of the package, so a figure of any part of it (a training
curve) does not reach the model or the checkpoint converter.

transformers: none
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import logging
import os
from collections.abc import Iterator
from typing import Any

#: CJK fonts found on common systems, tried after the packaged Noto Sans CJK SC.
CJK_FAMILIES = (
    "Noto Sans CJK SC", "Noto Sans SC", "Source Han Sans SC", "Source Han Sans CN", "WenQuanYi Micro Hei",
    "WenQuanYi Zen Hei", "Microsoft YaHei", "SimHei", "PingFang SC", "Hiragino Sans GB", "Heiti SC",
    "Droid Sans Fallback", "Arial Unicode MS",
)
#: The font package of the viz extra and the file it ships.
CJK_FONT_PACKAGE, CJK_FONT_FILE = "manimgx_fonts_cjk", "NotoSansCJK-VF.otf.ttc"
#: A probe character: a font that has it is taken to cover Chinese.
_PROBE = "北"


def _matplotlib():
    try:
        import matplotlib
    except ImportError:
        raise RuntimeError("attention pictures need matplotlib: pip install 'mini_hf_bert[viz]'") from None
    matplotlib.use("Agg")  # files only, no display needed
    import matplotlib.pyplot as plt

    return plt


def _font_has(path: str, face_index: int, char: str) -> bool:
    from matplotlib import ft2font

    try:
        return ft2font.FT2Font(path, face_index=face_index).get_char_index(ord(char)) != 0
    except (OSError, RuntimeError):
        return False


def _packaged_cjk_font() -> str | None:
    """The viz extra's Noto Sans CJK collection file, if installed."""
    spec = importlib.util.find_spec(CJK_FONT_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = os.path.join(list(spec.submodule_search_locations)[0], CJK_FONT_FILE)
    return path if os.path.isfile(path) else None


def _system_cjk_family() -> str | None:
    from matplotlib import font_manager

    available = {f.name: f for f in font_manager.fontManager.ttflist}
    for family in CJK_FAMILIES:
        entry = available.get(family)
        if entry is not None and _font_has(entry.fname, getattr(entry, "face_index", 0), _PROBE):
            return family
    return None


#: The family name given to the static font cut from the packaged variable one.
PACKAGED_FAMILY = "mini_hf_bert Noto Sans CJK SC"


@contextlib.contextmanager
def cjk_font_family(text: str) -> Iterator[str | None]:
    """A font family with Chinese glyphs for ``text``, registered with matplotlib while the
    block runs: a static Regular cut of the viz extra's Noto Sans CJK SC holding just the
    characters of ``text`` (the packaged font is variable, and matplotlib draws a variable
    font at its default weight, Thin, too faint for small labels), else the first of
    ``CJK_FAMILIES`` the system has; None if neither exists (Chinese then draws as boxes).
    """
    _matplotlib()
    from matplotlib import font_manager

    beyond = beyond_dejavu(text)
    if not beyond:  # DejaVu Sans draws every character: no second family to find or cut
        yield None
        return
    packaged = _packaged_cjk_font()
    if packaged is None:
        yield _system_cjk_family()
        return
    import tempfile

    with tempfile.TemporaryDirectory(prefix="mini_hf_bert-font-") as directory:
        path = os.path.join(directory, "cjk.otf")
        with open(path, "wb") as f:
            f.write(cjk_font_subset(beyond, packaged))
        font_manager.fontManager.addfont(path)
        try:
            yield PACKAGED_FAMILY
        finally:
            font_manager.fontManager.ttflist = [f for f in font_manager.fontManager.ttflist if f.fname != path]
            font_manager.fontManager._findfont_cached.cache_clear()


def beyond_dejavu(text: str) -> str:
    """The characters of ``text`` that DejaVu Sans, matplotlib's own font, has no glyph for
    (each once, sorted); whitespace is never drawn and never counts."""
    from matplotlib import font_manager, ft2font

    dejavu = ft2font.FT2Font(font_manager.findfont("DejaVu Sans", fallback_to_default=False))
    return "".join(sorted(c for c in set(text) if not c.isspace() and dejavu.get_char_index(ord(c)) == 0))


def cjk_font_subset(text: str, packaged: str | None = None) -> bytes:
    """A static Regular OpenType font, family ``PACKAGED_FAMILY``, holding the glyphs of
    ``text`` cut from the packaged Noto Sans CJK SC (a few KB for a sentence)."""
    packaged = packaged or _packaged_cjk_font()
    if packaged is None:
        raise RuntimeError("no packaged CJK font: pip install 'mini_hf_bert[viz]'")
    # Cutting reads the whole 20 MB collection (seconds); a process drawing the same words
    # again (a training run's curves at every checkpoint) reuses the cut.
    return _cut("".join(sorted(set(text))), packaged, os.path.getmtime(packaged))


@functools.lru_cache(maxsize=16)
def _cut(characters: str, packaged: str, modified: float) -> bytes:
    """``cjk_font_subset``'s work; ``modified`` (the file's mtime) is only part of the cache
    key, so a font file replaced while the process runs is cut again."""
    import io

    from fontTools import subset
    from fontTools.ttLib import TTFont
    from fontTools.varLib import instancer

    font = TTFont(packaged, fontNumber=_collection_index(packaged, "Noto Sans CJK SC"), lazy=False)
    options = subset.Options()
    options.name_IDs = ["*"]
    subsetter = subset.Subsetter(options)
    subsetter.populate(text=characters + _PROBE)
    subsetter.subset(font)
    instancer.instantiateVariableFont(font, {"wght": 400}, inplace=True)  # Regular
    for record in font["name"].names:
        if record.nameID in (1, 4, 16):
            record.string = PACKAGED_FAMILY
    buffer = io.BytesIO()
    font.save(buffer)
    return buffer.getvalue()


def _collection_index(path: str, family: str) -> int:
    from fontTools.ttLib import TTCollection

    for index, font in enumerate(TTCollection(path, lazy=True).fonts):
        if font["name"].getDebugName(1) == family:
            return index
    raise RuntimeError(f"{path}: no {family} face in this font collection")


@contextlib.contextmanager
def _quiet_font_manager() -> Iterator[None]:
    # A variable CJK font registers one weight; asking for "normal" logs a fallback
    # notice per text drawn, though the glyphs are the right ones.
    font_logger = logging.getLogger("matplotlib.font_manager")
    level = font_logger.level
    font_logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        font_logger.setLevel(level)


@contextlib.contextmanager
def figure_fonts(text: str) -> Iterator[Any]:
    """matplotlib (pyplot) with fonts for ``text``: DejaVu Sans, then a CJK family holding
    its Chinese characters (``cjk_font_family``), for the figures drawn in the block."""
    plt = _matplotlib()
    with _quiet_font_manager(), cjk_font_family(text) as cjk, \
            plt.rc_context({"font.family": ["DejaVu Sans"] + ([cjk] if cjk else [])}):
        yield plt
