"""Attention pictures: the PNG (one head, a layer's grid, Chinese tokens in a CJK font)
and the self-contained HTML page, opened in headless Chromium."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import warnings

import pytest
import torch
from PIL import Image

from mini_hf_bert import BertModel, BertTokenizer, chinese_checkpoint_dir
from mini_hf_bert.__main__ import main
from mini_hf_bert.companion.visualize import (
    AttentionMaps,
    attention_for_text,
    attention_html,
    cjk_font_family,
    external_references,
    plot_attention,
    write_attention_html,
)

TEXT = "北京是中国的首都。The cat sat on the mat."
#: Set to 1 to leave out the one check that needs a browser (Makefile's `browser` target
#: installs headless Chromium where it can; CI always runs it).
NO_BROWSER = os.environ.get("MINI_HF_BERT_NO_BROWSER") == "1"


@pytest.fixture(scope="module")
def maps(minilm_dir):
    model = BertModel.from_pretrained(minilm_dir)
    return attention_for_text(model, BertTokenizer.from_pretrained(minilm_dir), TEXT)


def test_maps_are_the_models_probabilities(maps, minilm_dir):
    assert maps.num_layers == 6 and maps.num_heads == 12
    assert maps.tokens[:3] == ["[CLS]", "北", "京"] and maps.tokens[-1] == "[SEP]"
    for probs in maps.attentions:
        assert probs.shape == (12, len(maps.tokens), len(maps.tokens))
        assert torch.allclose(probs.sum(-1), torch.ones(12, len(maps.tokens)), atol=1e-5)


def _not_blank(path) -> Image.Image:
    image = Image.open(path).convert("RGB")
    colours = image.getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) > 50, "the picture is (nearly) one colour"
    return image


def _ink_clear_of_the_edges(image: Image.Image) -> None:
    """Nothing drawn touches the picture's border: a label cut off at the edge would."""
    width, height = image.size
    background = image.getpixel((0, 0))
    for name, box in (("top", (0, 0, width, 2)), ("bottom", (0, height - 2, width, height)),
                      ("left", (0, 0, 2, height)), ("right", (width - 2, 0, width, height))):
        colours = image.crop(box).getcolors(maxcolors=1 << 20)
        assert colours == [(colours[0][0], background)], f"something drawn reaches the picture's {name} edge"


@pytest.mark.parametrize("text,language", [(TEXT, "en"), ("北京是中国的首都。", "zh")])
@pytest.mark.parametrize("head", [0, None])
def test_no_label_is_cut_off(text, language, head, minilm_dir, tmp_path):
    checkpoint = minilm_dir if language == "en" else chinese_checkpoint_dir()
    maps = attention_for_text(BertModel.from_pretrained(checkpoint), BertTokenizer.from_pretrained(checkpoint), text)
    image = _not_blank(plot_attention(maps, layer=0, head=head, out=tmp_path / "a.png", language=language))
    _ink_clear_of_the_edges(image)


def test_png_of_one_head_and_of_a_layer(maps, tmp_path):
    one = _not_blank(plot_attention(maps, layer=2, head=3, out=tmp_path / "head.png"))
    grid = _not_blank(plot_attention(maps, layer=2, head=None, out=tmp_path / "layer.png"))
    assert one.size[0] >= 400 and one.size[1] >= 400
    # 12 heads in a 4 x 3 grid: wider and taller than one map.
    assert grid.size[0] > 3 * one.size[0] * 0.6 and grid.size[1] > 2 * one.size[1] * 0.6


def test_a_cjk_font_is_cut_only_for_what_dejavu_cannot_draw_and_once_per_process():
    """Cutting the CJK font reads the whole collection (seconds). English words need no
    second family; the same characters drawn again (a training run's curves at each
    checkpoint) reuse the first cut, in any order."""
    from mini_hf_bert.companion import fonts

    assert fonts.beyond_dejavu("loss步数 step，数 é α") == "数步，"  # full-width comma: CJK punctuation
    with cjk_font_family("training loss 0.5 → step") as family:
        assert family is None
    fonts._cut.cache_clear()
    first = fonts.cjk_font_subset("步数损失")
    assert fonts.cjk_font_subset("损失数步") == first and fonts._cut.cache_info().misses == 1


def test_chinese_tokens_draw_as_chinese_glyphs(maps, tmp_path):
    """matplotlib warns "Glyph ... missing from font(s)" for every character it draws as a
    box; with the CJK font in the fallback list there must be none."""
    from matplotlib import font_manager, ft2font

    with cjk_font_family("".join(maps.tokens)) as family:
        assert family is not None, "no CJK font: pip install 'mini_hf_bert[viz]'"
        path = font_manager.findfont(font_manager.FontProperties(family=family), fallback_to_default=False)
        font = ft2font.FT2Font(path)
        for char in "北京中国的都。":
            assert font.get_char_index(ord(char)) != 0, char
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        plot_attention(maps, layer=0, head=0, out=tmp_path / "zh.png")
    missing = [str(w.message) for w in caught if "missing from font" in str(w.message)]
    assert not missing, missing
    # And the check can fail: DejaVu Sans alone has no Chinese glyphs.
    import matplotlib.pyplot as plt

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig, ax = plt.subplots()
        ax.set_title("北京", family="DejaVu Sans")
        fig.savefig(tmp_path / "boxes.png")
        plt.close(fig)
    assert any("missing from font" in str(w.message) for w in caught)


def test_html_is_self_contained(maps):
    page = attention_html(maps, TEXT, layer=1)
    assert external_references(page) == []
    assert "<script src" not in page and "<link" not in page
    data = json.loads(re.search(r'<script id="attention-data" type="application/json">(.*?)</script>', page, re.S).group(1))
    assert data["tokens"] == maps.tokens and data["layer"] == 1
    assert len(data["attention"]) == 6 and len(data["attention"][0]) == 12
    assert abs(data["attention"][1][4][2][0] - maps.attentions[1][4, 2, 0].item()) < 1e-4
    assert "@font-face" in page and "data:font/otf;base64," in page  # the Chinese glyphs travel with the page
    # The checker can fail: each way a page could fetch something is caught.
    for bad in ('<script src="https://cdn.example.com/d3.js"></script>', '<link href="//fonts.example.com/x.css">',
                "<style>@import 'https://example.com/a.css';</style>", "<style>body{background:url(http://e.com/i.png)}</style>",
                "<img src=pic.png>", "fetch('https://api.example.com/x')"):
        assert external_references(page.replace("</body>", bad + "</body>")), bad


def _chromium() -> str | None:
    return shutil.which("chromium-headless-shell") or shutil.which("chromium") or shutil.which("chromium-browser")


def test_html_renders_offline_in_headless_chromium(maps, tmp_path):
    if NO_BROWSER:
        pytest.skip("MINI_HF_BERT_NO_BROWSER=1")
    browser = _chromium()
    assert browser, ("no headless Chromium: `make browser` installs it (root with apt-get), or install chromium "
                     "yourself, or set MINI_HF_BERT_NO_BROWSER=1 to leave this check out")
    page = tmp_path / "attention.html"
    page.write_text(attention_html(maps, TEXT, layer=2), encoding="utf-8")
    common = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--virtual-time-budget=5000",
              # Offline: every request but the file itself fails.
              "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9"]
    dom = subprocess.run(common + ["--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert 'data-rendered="true"' in dom.stdout  # the script ran to the end
    assert dom.stdout.count('class="attention-line"') > 100  # lines were drawn
    assert dom.stdout.count("<canvas") == 6 * 12  # the model view: every layer x head
    shot = tmp_path / "attention.png"
    run = subprocess.run(common + ["--window-size=1000,700", f"--screenshot={shot}", page.as_uri()],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and shot.exists(), run.stderr[-2000:]
    _not_blank(shot)


def _hidden_system_fonts(tmp_path) -> dict:
    """An environment in which Chromium sees one font, matplotlib's DejaVu Sans (Latin and
    Greek, no Chinese): as on a machine with no CJK font installed."""
    import matplotlib

    fonts = tmp_path / "fonts"
    fonts.mkdir()
    shutil.copy(os.path.join(matplotlib.get_data_path(), "fonts", "ttf", "DejaVuSans.ttf"), fonts)
    config = tmp_path / "fonts.conf"
    config.write_text(f'<?xml version="1.0"?><!DOCTYPE fontconfig SYSTEM "fonts.dtd"><fontconfig><dir>{fonts}</dir>'
                      f'<cachedir>{tmp_path / "font-cache"}</cachedir></fontconfig>')
    return dict(os.environ, FONTCONFIG_FILE=str(config))


def _heading(browser: str, page: str, tmp_path, name: str, env: dict) -> Image.Image:
    """The top of the page (its <h1>), as Chromium draws it."""
    path = tmp_path / f"{name}.html"
    path.write_text(page, encoding="utf-8")
    shot = tmp_path / f"{name}.png"
    run = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                          "--virtual-time-budget=5000", "--window-size=700,60", f"--screenshot={shot}", path.as_uri()],
                         capture_output=True, text=True, timeout=120, env=env)
    assert run.returncode == 0 and shot.exists(), run.stderr[-2000:]
    return Image.open(shot).convert("L").crop((0, 0, 700, 50))


def test_a_chinese_page_speaks_chinese_and_draws_its_title_from_the_embedded_font(maps, tmp_path):
    """With no CJK font on the system, the <h1> (page words and title) must still draw as
    Chinese glyphs: two different titles draw differently, and the page with its embedded
    font differs from the same page without it (where every character is the same box)."""
    chinese = attention_html(maps, "北京是中国的首都", layer=0)
    assert '<html lang="zh-CN">' in chinese and "<h2>头视图</h2>" in chinese and "unicode-range" in chinese
    assert '<html lang="en">' in attention_html(maps, "The cat sat on the mat.", layer=0)
    assert "<h2>Head view</h2>" in attention_html(maps, "北京是中国的首都", layer=0, language="en")
    if NO_BROWSER:
        pytest.skip("MINI_HF_BERT_NO_BROWSER=1")
    browser = _chromium()
    assert browser, "no headless Chromium: `make browser` installs it"
    env = _hidden_system_fonts(tmp_path)
    beijing = _heading(browser, chinese, tmp_path, "beijing", env)
    weather = _heading(browser, attention_html(maps, "今天天气很好我们", layer=0), tmp_path, "weather", env)
    boxes = _heading(browser, re.sub(r"@font-face \{[^}]*\}", "", chinese), tmp_path, "boxes", env)
    assert beijing.tobytes() != weather.tobytes()  # the title's own glyphs
    assert beijing.tobytes() != boxes.tobytes()  # the embedded font is what draws them
    box_a = _heading(browser, re.sub(r"@font-face \{[^}]*\}", "", attention_html(maps, "今天天气很好我们", layer=0)),
                     tmp_path, "boxes2", env)
    assert box_a.tobytes() == boxes.tobytes()  # the check can fail: without the font, all boxes


#: Tokens that are markup: each would run script, end the data script or comment it out if
#: it reached the page as markup (finding 1 of issue 19).
HOSTILE = ["<!--<script>", "<img src=x onerror=\"document.title='pwned'\">",
           "</script><script>document.body.setAttribute('data-pwned', '1')</script>", "__DATA__", "\u2028"]


def test_a_page_of_hostile_tokens_draws_them_as_text_in_chromium(tmp_path):
    """In a real browser: the page draws (its own script ran to the end), every token is
    text, no element the tokens spell exists, and no script of theirs ran."""
    if NO_BROWSER:
        pytest.skip("MINI_HF_BERT_NO_BROWSER=1")
    browser = _chromium()
    assert browser, "no headless Chromium: `make browser` installs it"
    tokens = ["[CLS]", *HOSTILE, "[SEP]"]
    maps = AttentionMaps(tokens, [torch.softmax(torch.randn(2, len(tokens), len(tokens)), -1)])
    page = tmp_path / "hostile.html"
    page.write_text(attention_html(maps, " ".join(HOSTILE)), encoding="utf-8")
    dom = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=5000",
                          "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9",
                          "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert 'data-rendered="true"' in dom.stdout  # not swallowed by <!--<script>
    assert "<title>pwned</title>" not in dom.stdout and 'data-pwned="1"' not in dom.stdout  # no token's script ran
    assert "<img" not in dom.stdout
    assert dom.stdout.count("&lt;!--&lt;script&gt;") >= 2  # drawn as text, on both sides of the head view


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_attention_command_writes_both(tmp_path):
    png, page = tmp_path / "a.png", tmp_path / "a.html"
    code, out, err = _cli("attention", "北京是中国的首都。", "--layer", "3", "--head", "0", "--out", str(png), "--html", str(page))
    assert code == 0, err
    assert out.splitlines() == [f"checkpoint: zh, the Chinese BERT: the text is mostly Chinese ({chinese_checkpoint_dir()})",
                                f"wrote {png}", f"wrote {page}"]  # the checkpoint chosen for the text, and why
    _not_blank(png)
    assert external_references(page.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("argv,message", [
    (["attention", "text"], "attention needs --out FILE.png and/or --html FILE.html"),
    (["attention", "text", "--layer", "6", "--out", "{tmp}/a.png"], "--layer 6 is out of range: this model has layers 0..5"),
    (["attention", "text", "--head", "-1", "--out", "{tmp}/a.png"], "--head -1 is out of range: this model has heads 0..11"),
    (["attention", "text", "--out", "{tmp}/a.jpg"], "--out {tmp}/a.jpg: give a .png file name"),
    (["attention", "text", "--html", "{tmp}/a.txt"], "--html {tmp}/a.txt: give a .html file name"),
    (["attention", " ", "--out", "{tmp}/a.png"], "the attention picture needs a non-empty text"),
])
def test_attention_mistakes_are_one_line(argv, message, tmp_path):
    code, _, err = _cli(*[a.format(tmp=tmp_path) for a in argv])
    assert code == 2 and err.strip() == "error: " + message.format(tmp=tmp_path)
    assert not list(tmp_path.iterdir())  # nothing half-written


def test_an_output_that_is_a_symlink_is_replaced_not_written_through(maps, tmp_path):
    """--out pointing (by a link) at a checkpoint file must not overwrite the checkpoint."""
    weights = tmp_path / "model.safetensors"
    weights.write_bytes(b"weights")
    for name, write in (("a.png", lambda p: plot_attention(maps, 0, 0, p)),
                        ("a.html", lambda p: write_attention_html(maps, "t", p))):
        link = tmp_path / name
        link.symlink_to(weights)
        write(link)
        assert weights.read_bytes() == b"weights" and not link.is_symlink() and link.stat().st_size > 1000
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.html", "a.png", "model.safetensors"]  # nothing staged left
    assert oct((tmp_path / "a.png").stat().st_mode & 0o777) == oct(0o666 & ~_current_umask())


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
