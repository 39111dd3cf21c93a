"""The template renderer of the generated pages: a template under docs/templates/ holds the
prose, ``{{name}}`` marks each value a tool measured or computed.

A value may itself hold placeholders (a generated block that names another value): they
are filled in a second pass. A name no value answers is an error naming the template and
the name, never a page with a hole in it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping

PLACEHOLDER = re.compile(r"\{\{([\w.\- ]+)\}\}")


def render(template: str, values: Mapping[str, str], source: str) -> str:
    """``template`` with every ``{{name}}`` replaced by ``values[name]`` (twice, so that
    generated blocks may hold placeholders); ``source`` names the template in an error."""

    def substitute(match: re.Match) -> str:
        name = match.group(1)
        if name not in values:
            raise KeyError(f"{source} names {{{{{name}}}}}, which its tool does not provide")
        return values[name]

    return PLACEHOLDER.sub(substitute, PLACEHOLDER.sub(substitute, template))


def measured_or_recorded(data: str, measure: Callable[[], dict], render_only: bool) -> dict:
    """The measurements a page is rendered from: read from ``data`` (a tool's ``--render-only``,
    after the prose changed), or measured now and written there first, so that the page and
    its JSON always hold one measurement."""
    if render_only:
        with open(data, encoding="utf-8") as f:
            return json.load(f)
    from mini_hf_bert.file_utils import write_json

    measured = measure()
    write_json(data, measured)
    return measured
