"""tools/templates.py, the renderer of every generated page from docs/templates/."""

from __future__ import annotations

import pytest

from tools.templates import render


def test_values_fill_placeholders_and_a_generated_block_may_name_another():
    text = render("a {{x}} and {{block}}.", {"x": "1", "block": "b {{x}}"}, "t.md")
    assert text == "a 1 and b 1."


def test_a_name_no_value_answers_is_an_error_naming_the_template():
    with pytest.raises(KeyError, match=r"docs/templates/t\.md names \{\{missing\}\}, which its tool does not provide"):
        render("{{missing}}", {}, "docs/templates/t.md")


def test_single_braces_are_text():
    assert render("{x} {{x}}", {"x": "2"}, "t.md") == "{x} 2"
