"""tools/templates.py, the renderer of every generated page from docs/templates/."""

from __future__ import annotations

import json

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


def test_a_page_is_rendered_from_the_recorded_measurement_or_from_one_written_first(tmp_path):
    from tools.templates import measured_or_recorded

    data = tmp_path / "measured.json"
    data.write_text('{"tokens_per_second": 1}')

    def measure() -> dict:
        return {"tokens_per_second": 2}

    assert measured_or_recorded(str(data), measure, render_only=True) == {"tokens_per_second": 1}
    assert measured_or_recorded(str(data), measure, render_only=False) == {"tokens_per_second": 2}
    assert json.loads(data.read_text()) == {"tokens_per_second": 2}  # what the page shows is what the file holds
