"""Attention pictures that need no network: a PNG (matplotlib) and a self-contained HTML page.

* ``attention_for_text``: the attention probabilities of every layer and head for a text.
* ``plot_attention``: one head as a heat map, or every head of a layer in a grid, with the
  tokens on both axes; Chinese tokens are drawn in a CJK font (``cjk_font_family``).
* ``attention_html``: a page with a head view (lines from each token to the tokens it
  attends to, one colour per head) and a model view (every layer x head as a thumbnail),
  in the manner of bertviz, but with every script and style inline: it opens offline,
  from a file, and behind any firewall.

matplotlib is the ``viz`` extra (``pip install 'mini_hf_bert[viz]'``), which also brings
Noto Sans CJK (the ``manimgx-fonts-cjk`` package). Nothing here is needed by the model.
"""

from __future__ import annotations

import base64
import functools
import html
import importlib.resources
import importlib.util
import json
import logging
import math
import os
import re
from dataclasses import dataclass

import torch

from .fonts import (  # noqa: F401  (cjk_font_family: importable from here too)
    PACKAGED_FAMILY, _matplotlib, _packaged_cjk_font, cjk_font_family, cjk_font_subset, figure_fonts)
from .languages import checkpoint_for_text, text_language
from ..checkpoints.convert import as_hf_directory, load_tokenizer
from ..file_utils import save_png, write_text
from ..modeling_bert import BertModel

logger = logging.getLogger(__name__)

@dataclass
class AttentionMaps:
    """Every layer's attention probabilities for one sequence."""

    tokens: list[str]  # T tokens, [CLS] ... [SEP]
    attentions: list[torch.Tensor]  # L tensors (N, T, T): row = query, column = key; rows sum to 1
    full_length: int | None = None  # the text's token count when it was cut to T; None if it was not

    @property
    def truncation_note(self) -> str | None:
        """"the text has 900 tokens; shown: the first 512" when it was cut, else None."""
        if self.full_length is None:
            return None
        return f"the text has {self.full_length} tokens; shown: the first {len(self.tokens)} (--max-length)"

    @property
    def num_layers(self) -> int:
        return len(self.attentions)

    @property
    def num_heads(self) -> int:
        return self.attentions[0].shape[0]


def attention_for_text(model, tokenizer, text: str, text_pair: str | None = None,
                       max_length: int | None = None) -> AttentionMaps:
    """Run one text (or a pair) and keep every layer's (N, T, T) attention probabilities.

    ``output_attentions=True`` takes the eager path in every layer, so the probabilities
    are the ones the model computed, whatever its ``attn_implementation``.

    Args:
        max_length: at most this many tokens, special ones included; default the model's
            position table (and the tokenizer's ``model_max_length``, if smaller). A longer
            text is cut, and the maps say so (``full_length``), as does a logged warning.
    """
    if not isinstance(text, str) or not text.strip():
        raise ValueError("the attention picture needs a non-empty text")
    limit = min(model.config.max_position_embeddings, tokenizer.model_max_length)
    if max_length is not None:
        if isinstance(max_length, bool) or not isinstance(max_length, int) or max_length < 1:
            raise ValueError(f"--max-length must be a positive int, got {max_length!r}")
        if max_length > model.config.max_position_embeddings:
            raise ValueError(f"--max-length {max_length} is more than this model's "
                             f"{model.config.max_position_embeddings} positions")
        limit = max_length
    full_length = len(tokenizer(text, text_pair)["input_ids"])
    batch = tokenizer(text, text_pair, truncation=True, max_length=limit, return_tensors="pt")
    with torch.no_grad():
        outputs = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"],
                        token_type_ids=batch["token_type_ids"], output_attentions=True)
    tokens = tokenizer.convert_ids_to_tokens(batch["input_ids"][0].tolist())
    maps = AttentionMaps(tokens, [layer[0].float() for layer in outputs.attentions],
                         full_length if full_length > len(tokens) else None)
    if maps.truncation_note is not None:
        logger.warning("attention: %s", maps.truncation_note)
    return maps


def _check_layer_head(maps: AttentionMaps, layer: int, head: int | None) -> None:
    if not 0 <= layer < maps.num_layers:
        raise ValueError(f"--layer {layer} is out of range: this model has layers 0..{maps.num_layers - 1}")
    if head is not None and not 0 <= head < maps.num_heads:
        raise ValueError(f"--head {head} is out of range: this model has heads 0..{maps.num_heads - 1}")


# --------------------------------------------------------------------------------------
# PNG
# --------------------------------------------------------------------------------------


#: The picture's words, by language ("auto": the tokens' language, as the page's).
PICTURE_WORDS = {
    "en": {"title": "attention probabilities softmax(QKᵀ/√D + M)", "rows": "each row sums to 1",
           "panel": "layer {l}, head {h}", "key": "key (attended to)", "query": "query (attending)"},
    "zh": {"title": "注意力概率 softmax(QKᵀ/√D + M)", "rows": "每行之和为 1",
           "panel": "第 {l} 层，{h} 号头", "key": "键（被关注的 token）", "query": "查询（发出关注的 token）"},
}


def plot_attention(maps: AttentionMaps, layer: int, head: int | None, out: str | os.PathLike,
                   language: str = "auto") -> str:
    """Draw one head (``head`` given) or all heads of ``layer`` (a grid) to a PNG file.

    Each map is (T, T): row i is query token i, column j key token j, the colour the
    probability that i attends to j (each row sums to 1). ``language``: of the labels,
    "en", "zh" or "auto" (the tokens').

    Returns:
        The path written.
    """
    _check_layer_head(maps, layer, head)
    out = os.fspath(out)
    if not out.lower().endswith(".png"):
        raise ValueError(f"--out {out}: give a .png file name")
    if language not in PAGE_LANGUAGES:
        raise ValueError(f"--lang {language!r}: expected one of {', '.join(PAGE_LANGUAGES)}")
    text = "".join(t for t in maps.tokens if not (t.startswith("[") and t.endswith("]")))  # [CLS], [UNK]: no language
    words = PICTURE_WORDS[page_language(text) if language == "auto" else language]
    plt = _matplotlib()
    probs = maps.attentions[layer]  # (N, T, T)
    tokens = maps.tokens
    size = len(tokens)
    heads = [head] if head is not None else list(range(maps.num_heads))
    columns = 1 if head is not None else min(4, len(heads))
    rows = math.ceil(len(heads) / columns)
    cell = max(3.0 if head is None else 4.8, 0.28 * size + 1.2)  # inches per map: room for the token labels
    title = words["title"] + ("\n" if head is not None else ": ") + words["rows"]
    if maps.truncation_note is not None:
        title += f"\n({maps.truncation_note})"
    with figure_fonts("".join(tokens) + "".join(words.values())):
        fig, axes = plt.subplots(rows, columns, figsize=(cell * columns, cell * rows + 0.6), squeeze=False)
        for ax in axes.flat[len(heads):]:
            ax.axis("off")
        label_size = 9 if size <= 24 else 6
        for ax, h in zip(axes.flat, heads):
            image = ax.imshow(probs[h].numpy(), cmap="Blues", vmin=0.0, vmax=1.0)
            if head is not None:
                fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
            ax.set_title(words["panel"].format(l=layer, h=h), fontsize=10)
            ax.set_xticks(range(size), tokens, rotation=90, fontsize=label_size)
            ax.set_yticks(range(size), tokens, fontsize=label_size)
            ax.set_xlabel(words["key"], fontsize=8)
            ax.set_ylabel(words["query"], fontsize=8)
        fig.suptitle(title, fontsize=11)
        fig.tight_layout(rect=(0, 0, 1, 0.97))
        save_png(fig, out)
    return out


# --------------------------------------------------------------------------------------
# HTML
# --------------------------------------------------------------------------------------

#: The page's template (package data): __NAME__ placeholders, filled by ``attention_html``.
_HTML_TEMPLATE = "attention_page.html"


@functools.cache
def _page_template() -> str:
    return importlib.resources.files(__package__).joinpath(_HTML_TEMPLATE).read_text(encoding="utf-8")


#: The page's own words, by language. Markup in them is the template's (entities), never text's.
PAGE_WORDS = {
    "en": {"LANG": "en", "ATTENTION": "attention", "ATTENTION_TITLE": "Attention",
           "FORMULA": "Each layer and head: softmax(QK&#7488;/&radic;D + M), query token on the left, key token on "
                      "the right. Data embedded in this file; it loads nothing from the network.",
           "HEAD_VIEW": "Head view", "LAYER": "Layer",
           "HEAD_HINT": "(click a colour to show or hide that head; hover a token to see only its lines)",
           "MODEL_VIEW": "Model view",
           "MODEL_HINT": "Rows: layers 0..L-1; columns: heads 0..N-1. Click a thumbnail to open it in the head view.",
           "TRUNCATED": "Truncated", "head": "head {h}", "layer_head": "layer {l}, head {h}"},
    "zh": {"LANG": "zh-CN", "ATTENTION": "注意力", "ATTENTION_TITLE": "注意力",
           "FORMULA": "每层、每个头：softmax(QK&#7488;/&radic;D + M)，左边是查询 token，右边是键 token。"
                      "数据都嵌在这个文件里，不从网络加载任何东西。",
           "HEAD_VIEW": "头视图", "LAYER": "层",
           "HEAD_HINT": "（点击颜色块显示或隐藏该头；鼠标停在左侧某个 token 上，只看它的连线）",
           "MODEL_VIEW": "模型视图",
           "MODEL_HINT": "行：第 0..L-1 层；列：0..N-1 号头（都从 0 数起）。点击缩略图，在头视图中打开它。",
           "TRUNCATED": "已截断", "head": "{h} 号头", "layer_head": "第 {l} 层，{h} 号头"},
}
PAGE_LANGUAGES = ("auto", *PAGE_WORDS)
#: The ranges the embedded CJK font serves (CSS unicode-range): CJK radicals to ideographs,
#: compatibility ideographs, vertical and small forms, full-width forms, extension B and on.
#: Every other character stays in the system's font, so Latin text looks as it always does.
_CJK_UNICODE_RANGE = "U+2E80-9FFF, U+F900-FAFF, U+FE30-FE4F, U+FF00-FFEF, U+20000-2FA1F"


def page_language(text: str) -> str:
    """"zh" for a mostly-Chinese text, else "en" (``companion.languages.text_language``)."""
    return text_language(text)


def attention_html(maps: AttentionMaps, title: str, layer: int = 0, language: str = "auto") -> str:
    """A self-contained page: head view and model view of ``maps``, data inline.

    The page references no URL: no script, style sheet, font or image is fetched, so it
    renders offline and where CDNs are blocked. Its CJK glyphs come with it, as a font
    subset in a data: URL. (The one "http://www.w3.org/2000/svg"
    string is the SVG namespace name, an identifier that is never fetched.)

    Nothing from the text or the vocabulary becomes markup: the template is filled in one
    pass (a value is never searched for another placeholder), the title is HTML-escaped,
    the data is JSON with every ``<``, ``>``, ``&`` and U+2028/9 written ``\\uXXXX``
    (so it cannot end or comment out its script element), and the script sets every
    token as text (``textContent``).
    """
    _check_layer_head(maps, layer, None)
    if language not in PAGE_LANGUAGES:
        raise ValueError(f"--lang {language!r}: expected one of {', '.join(PAGE_LANGUAGES)}")
    words = PAGE_WORDS[page_language(title) if language == "auto" else language]
    data = {
        "tokens": maps.tokens,
        "layer": layer,
        "words": {"head": words["head"], "layer_head": words["layer_head"]},
        # Rounded to 4 decimals: a 4x smaller file, and no picture can show the difference.
        "attention": [[[[round(p, 4) for p in row] for row in head] for head in probs.tolist()]
                      for probs in maps.attentions],  # [layer][head][query][key]
    }
    face = ""
    shown = title + "".join(maps.tokens) + "".join(v for k, v in words.items() if k.isupper())
    if _packaged_cjk_font() is not None and any(ord(c) > 0x2E7F for c in shown):
        # The page's CJK characters, as a font inside the page (a data: URL, never
        # fetched): title, tokens and the page's words read as Chinese even where the
        # system has no CJK font. The family comes first in the page's font list and
        # serves only CJK code points (unicode-range): a browser that meets a CJK
        # character in a family listed earlier (system-ui) asks the system for a
        # fallback there, and finds none.
        font = base64.b64encode(cjk_font_subset(shown)).decode("ascii")
        face = (f"@font-face {{ font-family: '{PACKAGED_FAMILY}'; src: url(data:font/otf;base64,{font}); "
                f"unicode-range: {_CJK_UNICODE_RANGE}; }}")
    note = maps.truncation_note
    values = {
        **{k: v for k, v in words.items() if k.isupper()},
        "FONT_FACE": face,
        "FONT_FAMILY": PACKAGED_FAMILY,
        "TITLE": html.escape(title),
        "NOTE": "" if note is None else f'<p class="note" id="truncated">{words["TRUNCATED"]}: {html.escape(note)}.</p>',
        "DATA": script_json(data),
    }
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], _page_template())


#: The template's placeholders, each replaced once, in one pass over the template.
_PLACEHOLDER = re.compile(r"__(FONT_FACE|FONT_FAMILY|TITLE|NOTE|DATA|LANG|ATTENTION_TITLE|ATTENTION|FORMULA|HEAD_VIEW|"
                          r"LAYER|HEAD_HINT|MODEL_VIEW|MODEL_HINT)__")
#: What JSON inside a <script> element must not hold literally: "</script" or "<!--"
#: would end or derail the element, and U+2028/9 end a line in older JavaScript.
_SCRIPT_ESCAPES = {ord("<"): "\\u003c", ord(">"): "\\u003e", ord("&"): "\\u0026",
                   0x2028: "\\u2028", 0x2029: "\\u2029"}


def script_json(value) -> str:
    """``value`` as JSON safe to place inside ``<script>``: the characters in
    ``_SCRIPT_ESCAPES`` written as ``\\uXXXX`` (which JSON reads back as the same string)."""
    return json.dumps(value, ensure_ascii=False).translate(_SCRIPT_ESCAPES)


def write_attention_html(maps: AttentionMaps, title: str, out: str | os.PathLike, layer: int = 0,
                         language: str = "auto") -> str:
    out = os.fspath(out)
    if not out.lower().endswith((".html", ".htm")):
        raise ValueError(f"--html {out}: give a .html file name")
    page = attention_html(maps, title, layer, language)
    write_text(out, page)
    return out


def external_references(page: str) -> list[str]:
    """Every URL a page could fetch: src/href attributes, CSS url(...) and @import, and
    any http(s):// or protocol-relative //host address other than the SVG namespace name."""
    import re

    found = []
    found += re.findall(r"""\b(?:src|href)\s*=\s*["']?([^"'\s>]+)""", page, re.I)
    found += [u for u in re.findall(r"""url\(\s*["']?([^"')]+)""", page, re.I) if not u.startswith("data:")]
    found += re.findall(r"""@import\s+["']?([^"';\s]+)""", page, re.I)
    addresses = re.findall(r"""(?:https?:)?//[\w.-]+\.[a-z]{2,}[^\s"'<>)]*""", page, re.I)
    found += [a for a in addresses if a not in ("http://www.w3.org/2000/svg",)]
    return found


def draw_attention(
    text: str,
    checkpoint: str | None = None,
    layer: int = 0,
    head: int | None = None,
    out: str | None = None,
    html_out: str | None = None,
    text_pair: str | None = None,
    max_length: int | None = None,
    language: str = "auto",
) -> list[str]:
    """The attention picture(s) of one text: a PNG (``out``) and/or an offline HTML page
    (``html_out``), of at most ``max_length`` tokens (default: the model's positions; a
    cut is said on stderr and in the pictures). Returns the paths written."""
    if out is None and html_out is None:
        raise ValueError("attention needs --out FILE.png and/or --html FILE.html")
    path = checkpoint or checkpoint_for_text(text if text_pair is None else text + text_pair)
    model = BertModel.from_pretrained(path)
    with as_hf_directory(path) as hf_dir:
        tokenizer = load_tokenizer(hf_dir, path)
    maps = attention_for_text(model, tokenizer, text, text_pair, max_length)
    written = []
    if out is not None:
        written.append(plot_attention(maps, layer, head, out, language))
    if html_out is not None:
        title = text if text_pair is None else f"{text} / {text_pair}"
        written.append(write_attention_html(maps, title, html_out, layer, language))
    return written
