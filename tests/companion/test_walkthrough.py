"""The walk-throughs (docs/walkthrough.md, docs/zh/walkthrough.md) are what the code
prints today: regenerated here and compared, text exactly and numbers within
``parity.DOC_ATOL`` / ``DOC_RTOL`` (float noise differs between machines)."""

from __future__ import annotations

import os
import re

import pytest
from PIL import Image

from mini_hf_bert.parity.compare import DOC_ATOL
from mini_hf_bert.companion.visualize import external_references
from tools.walkthrough import (DOCUMENTS, all_facts, image_references, keep_committed_numbers, number_drift,
                               render_documents)
from ..paths import ROOT

REGENERATE = ("edit the template under docs/templates/ (the page is generated), then run "
              "`.venv/bin/python tools/walkthrough.py --render-only`; after a change of what the model computes, "
              "without --render-only")


def _read(path: str) -> str:
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return f.read()


@pytest.fixture(scope="module")
def fresh() -> dict[str, str]:
    return render_documents(ROOT, all_facts())


@pytest.mark.parametrize("language", sorted(DOCUMENTS))
def test_walkthrough_is_current(language, fresh):
    doc = DOCUMENTS[language]
    committed = _read(doc.output)
    problems = number_drift(committed, fresh[doc.output])
    assert not problems, f"{doc.output} is stale ({REGENERATE}):\n" + "\n".join(problems[:10])


@pytest.mark.parametrize("language", sorted(DOCUMENTS))
def test_every_picture_exists_and_shows_something(language):
    doc = DOCUMENTS[language]
    text = _read(doc.output)
    references = image_references(text)
    assert len([r for r in references if r.endswith(".png")]) >= 4
    for reference in references:
        path = os.path.normpath(os.path.join(ROOT, os.path.dirname(doc.output), reference))
        assert os.path.isfile(path), f"{doc.output} shows {reference}, which does not exist; {REGENERATE}"
        if path.endswith(".png"):
            colours = Image.open(path).convert("RGB").getcolors(maxcolors=1 << 20)
            assert colours is not None and len(colours) > 50, f"{reference} is blank"
        else:
            with open(path, encoding="utf-8") as f:
                assert external_references(f.read()) == [], reference


def _defines(path: str, dotted: str) -> bool:
    """Whether the Python file ``path`` defines ``dotted``: a class or function at its top
    level, a method as ``Class.method``, or a bare method name one of its classes defines."""
    import ast

    with open(path, encoding="utf-8") as f:
        scope = ast.parse(f.read()).body
    if "." not in dotted and not any(getattr(n, "name", None) == dotted for n in scope):
        return any(isinstance(n, ast.ClassDef) and _defines_in(n.body, dotted) for n in scope)
    return _defines_in(scope, dotted)


def _defines_in(scope: list, dotted: str) -> bool:
    import ast

    for part in dotted.split("."):
        found = next((n for n in scope if isinstance(n, (ast.ClassDef, ast.FunctionDef)) and n.name == part), None)
        if found is None:
            return False
        scope = found.body
    return True


def test_every_source_link_names_what_its_file_defines():
    """[`Name`](...modeling_bert.py): a link into our own files names a class or function
    that the file defines, and carries no line number (a line of explanation added above
    it would move the line; links into upstream's tagged files keep theirs)."""
    for doc in DOCUMENTS.values():
        text = _read(doc.output)
        assert not re.findall(r"\]\((?![a-z]+://)[^)]*\.py#L\d+\)", text), f"{doc.output}: a local link by line number"
        links = re.findall(r"\[`([\w.]+)`\]\(([^)#:]+\.py)\)", text)  # local files (no scheme)
        assert len(links) >= 15
        for name, target in links:
            path = os.path.normpath(os.path.join(ROOT, os.path.dirname(doc.output), target))
            if name == os.path.basename(target):
                assert os.path.isfile(path), f"{doc.output} links to {target}, which does not exist"
                continue  # a link to the file as a whole
            assert _defines(path, name), f"{doc.output} links [`{name}`] to {target}, which does not define it"


def test_a_source_link_check_fails_on_a_name_the_file_lacks(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("class A:\n    def f(self):\n        pass\n\n\ndef g():\n    pass\n")
    assert _defines(str(source), "A") and _defines(str(source), "A.f") and _defines(str(source), "g")
    assert _defines(str(source), "f")  # a method, named alone
    assert not _defines(str(source), "B") and not _defines(str(source), "A.g") and not _defines(str(source), "g.f")


def test_the_chinese_walkthrough_follows_chinese_through_the_chinese_model():
    text = _read(DOCUMENTS["zh"].output)
    prose = re.sub(r"```.*?```|\|.*?\n|\$\$.*?\$\$|`[^`]*`|\[[^\]]*\]\([^)]*\)", "", text, flags=re.S)
    letters = [c for c in prose if c.isalpha()]
    chinese = [c for c in letters if "\u4e00" <= c <= "\u9fff"]
    assert len(chinese) > 0.6 * len(letters), "the prose should be Chinese"
    assert "（Masked LM）" in text and "（CJK split）" in text  # English terms in parentheses, where code uses them
    # The Chinese model reads every character; the English vocabulary, shown beside it, loses two.
    assert "| WordPiece | `北 · 京 · 是 · 中 · 国 · 的 · 首 · 都 · 。` |" in text
    assert "`[CLS] 北 京 [UNK] 中 国 的 [UNK] 都 。 [SEP]`，其中 2 个 `[UNK]`" in text
    assert "这里有 0 个 `[UNK]`" in text and "[UNK]" not in re.search(r"\| 位置 \| token \| id \|.*?\n\n", text, re.S).group()
    # A real masked-LM step (five candidates with probabilities) and a real NSP step (two pairs).
    top = re.findall(r"^\| (\d) \| `(.+?)` \| (\d\.\d{4}) \|$", text, re.M)
    assert [int(rank) for rank, _, _ in top] == [1, 2, 3, 4, 5]
    probabilities = [float(p) for _, _, p in top]
    assert probabilities == sorted(probabilities, reverse=True) and sum(probabilities) <= 1.0
    is_next = re.findall(r"（(真的下一句|随机一句)） \| (\d\.\d{4}) \|", text)
    assert [kind for kind, _ in is_next] == ["真的下一句", "随机一句"]
    # Every class the notes read links to its line in 3.4.0 (the lines: test_reading_beside_340.py).
    for name in ("BertEmbeddings", "BertSelfAttention", "BertSelfOutput", "BertAttention", "BertIntermediate",
                 "BertOutput", "BertLayer", "BertEncoder", "BertPooler", "BertModel", "BertForPreTraining"):
        assert re.search(rf"\[`{name}`\]\(https://github\.com/huggingface/transformers/blob/v3\.4\.0/", text), name
    assert "images/walkthrough/zh/attention-layer0.png" in text


def test_number_drift_can_fail():
    base = "scores differ by 0.1234 at position 6, mask -3.4028e+38\n"
    assert number_drift(base, base) == []
    assert number_drift(base.replace("0.1234", "0.1236"), base) == []  # the last digit moved: float noise
    assert number_drift(base.replace("0.1234", f"{0.1234 + 2 * DOC_ATOL:.4f}"), base)  # a real change
    assert number_drift(base.replace("position 6", "position 7"), base)  # an index is exact
    assert number_drift(base.replace("scores", "logits"), base)  # the text is exact
    assert number_drift(base + "1.0\n", base)  # one number more


@pytest.mark.parametrize("rank, right", [(1, True), (4, False)])
def test_the_chinese_page_says_whether_its_own_sentence_is_filled_right(rank, right):
    from tools.walkthrough import mlm_verdict

    said = mlm_verdict("zh", {"mlm.rank": rank, "mlm.best": "首" if right else "先", "focus_token": "首"})
    assert ("猜对了" in said) is right and ("猜错了" in said) is not right
    if not right:  # what it put first, and where the answer ranks
        assert "“先”" in said and f"第 {rank} 位" in said


def test_render_only_keeps_committed_numbers_within_tolerance_and_no_others():
    committed = "Prose about x: 0.1234 and 3.8147e-06; position 6.\nA second line 2.5000.\n"
    fresh = "Prose, edited, about x: 0.1235 and 1.9073e-06; position 6.\nA second line 2.9000.\n"
    kept = keep_committed_numbers(committed, fresh)
    # the edited sentence's numbers kept where within tolerance; a moved number (2.5 -> 2.9) is today's
    assert kept == "Prose, edited, about x: 0.1234 and 3.8147e-06; position 6.\nA second line 2.9000.\n"
    assert number_drift(kept, fresh) == []
