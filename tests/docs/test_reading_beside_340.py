"""The links to transformers 3.4.0's source point at the line that defines what the link's
row names: checked against tests/fixtures/transformers_340/lines.json, which
tools/transformers_340_lines.py read from the 3.4.0 wheel."""

from __future__ import annotations

import json
import os
import re

import pytest

from ..paths import FIXTURES, ROOT

with open(os.path.join(FIXTURES, "transformers_340", "lines.json"), encoding="utf-8") as _f:
    LINES = json.load(_f)
LINK = re.compile(r"https://github\.com/huggingface/transformers/blob/v3\.4\.0/src/transformers/(\w+\.py)#L(\d+)")
DOCS = ["docs/versions.md", "docs/zh/versions.md", "docs/templates/walkthrough.zh.md", "docs/templates/walkthrough.en.md"]


def _resolve(name: str, file: str) -> int | None:
    """The 3.4.0 line of ``name``: a class, Class.method or function of ``file``, or a variable."""
    if name in LINES[file]:
        return LINES[file][name]
    matches = [line for key, line in LINES["variables"].items() if key.endswith("." + name)]
    return matches[0] if len(matches) == 1 else None


@pytest.mark.parametrize("doc", DOCS)
def test_every_link_to_340_points_at_what_its_row_names(doc):
    with open(os.path.join(ROOT, doc), encoding="utf-8") as f:
        text = f.read()
    checked = 0
    for line in text.splitlines():
        for file, number in LINK.findall(line):
            names = re.findall(r"`([A-Za-z_.]+)`", line)
            lines = [_resolve(n, file) for n in names if _resolve(n, file) is not None]
            if "tokenization_bert.py#L" in line and not lines:  # prose about BasicTokenizer.tokenize
                lines = [LINES["variables"]["BasicTokenizer.tokenize.token"]]
            assert int(number) in lines, f"{doc}: {file}#L{number} on a line naming {names}: 3.4.0 has {lines}"
            checked += 1
    assert checked >= (1 if "walkthrough" in doc else 30), f"{doc}: only {checked} links to 3.4.0"


def test_the_class_table_covers_the_classes_the_notes_read():
    with open(os.path.join(ROOT, "docs", "versions.md"), encoding="utf-8") as f:
        text = f.read()
    for name in ("BertEmbeddings", "BertSelfAttention", "BertSelfOutput", "BertAttention", "BertIntermediate",
                 "BertOutput", "BertLayer", "BertEncoder", "BertPooler", "BertModel", "BertForPreTraining"):
        assert f"| `{name}` | [modeling_bert.py#L{LINES['modeling_bert.py'][name]}]" in text, name
