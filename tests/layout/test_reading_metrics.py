"""tools/reading_metrics.py counts what its report says: plumbing by one set of rules for
every file, the config class, the package's groups; each checked on sources written here
with counts worked by hand."""

from __future__ import annotations

import os

import pytest

from tools import reading_metrics


def _write(tmp_path, name: str, source: str) -> str:
    path = os.path.join(tmp_path, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(source)
    return path


def test_plumbing_counts_code_lines_of_each_kind(tmp_path):
    source = (
        '"""A model. head_mask in a docstring is explanation, not plumbing."""\n'
        "import torch\n"
        "\n"
        "class M:\n"
        "    # past_key_values in a comment is not counted either\n"
        "    def forward(self, x, head_mask=None, past_key_values=None):\n"  # head_mask and caches: one line
        "        y = x + 1\n"
        "        if output_attentions:\n"  # outputs
        "            y = y * 2\n"
        "        return y\n"
    )
    counted = reading_metrics.plumbing(_write(tmp_path, "m.py", source))
    # code lines: import, class, def, y =, if, y = y * 2, return: 7; plumbing: def and if
    assert counted["code"] == 7 and counted["plumbing"] == 2
    assert counted["share"] == round(2 / 7, 4)
    assert counted["kinds"]["head_mask"] == 1 and counted["kinds"]["caches"] == 1
    assert counted["kinds"]["outputs"] == 1 and counted["kinds"]["cross-attention"] == 0


@pytest.mark.parametrize("source, kind", [
    ("@auto_docstring\ndef f():\n    return 1\n", "catch-all arguments and decorators"),
    ("def f(x, **kwargs):\n    return x\n", "catch-all arguments and decorators"),
    ("def f(x, *exported_defaults):\n    return x\n", "catch-all arguments and decorators"),
    ("def f(name):\n    return ALL_ATTENTION_FUNCTIONS[name]\n", "dispatch"),
    ("def f(config):\n    return config._attn_implementation == 'sdpa'\n", "dispatch"),
    ("def f(self):\n    return self.key(encoder_hidden_states)\n", "cross-attention"),
    ("def f(a, b):\n    return EncoderDecoderCache(a, b)\n", "caches"),
    ("def f(out):\n    return out if return_dict else out.to_tuple()\n", "outputs"),
    ("def f(outputs):\n    return dict(\n        hidden_states=outputs.hidden_states,\n    )\n", "outputs"),
])
def test_each_kind_is_recognised(tmp_path, source, kind):
    counted = reading_metrics.plumbing(_write(tmp_path, "m.py", source))
    assert counted["plumbing"] == 1 and counted["kinds"][kind] == 1, counted


def test_every_line_of_a_decorator_is_plumbing(tmp_path):
    source = "@check_model_inputs(\n    tie_last_hidden_states=False,\n)\ndef f(x):\n    return x\n"
    counted = reading_metrics.plumbing(_write(tmp_path, "m.py", source))
    assert counted["code"] == 5 and counted["plumbing"] == 3 and counted["kinds"]["catch-all arguments and decorators"] == 3


def test_each_core_forward_is_counted_with_its_decorators_and_signature(tmp_path):
    forward = ("    @can_return_tuple\n    def forward(self, x, head_mask=None):\n        y = x + 1\n"
               "        return y\n")
    source = "".join(f"class {name}:\n    n = 1\n\n{forward}\n" for name in reading_metrics.CORE_FORWARDS)
    counted = reading_metrics.forward_plumbing(_write(tmp_path, "m.py", source))
    assert counted["BertLayer"] == {"code": 4, "plumbing": 2, "share": 0.5,
                                    "kinds": dict.fromkeys(reading_metrics.PLUMBING, 0) | {
                                        "head_mask": 1, "catch-all arguments and decorators": 1}}
    assert counted["together"]["code"] == 16 and counted["together"]["plumbing"] == 8


def test_plain_code_is_not_plumbing(tmp_path):
    source = "def f(hidden_states, attention_mask):\n    return hidden_states * attention_mask  # (B, T, H)\n"
    assert reading_metrics.plumbing(_write(tmp_path, "m.py", source))["plumbing"] == 0


def test_config_class_and_first_class(tmp_path):
    path = _write(tmp_path, "c.py", '"""Config."""\nimport os\n\n\n@dataclass\nclass BertConfig:\n'
                                    '    """Fields."""\n\n    hidden_size: int = 768  # H\n\n'
                                    '    vocab_size: int = 30522\n')
    assert reading_metrics.config_class(path) == {"lines": 7, "code": 4, "file": 11}
    assert reading_metrics.first_class_line(path) == 5  # its decorator's line


def test_another_model_file_is_counted_by_the_same_rules(tmp_path):
    """What --other (and the installed transformers' file) reports: its plumbing, its four
    forwards', and the names imported before its first class (``from __future__`` not)."""
    classes = "".join(f"class {name}:\n    def forward(self, x, **kwargs):\n        return x\n\n"
                      for name in reading_metrics.CORE_FORWARDS)
    source = ("from __future__ import annotations\nimport os, sys\nfrom torch import nn, Tensor as T\n\n\n"
              + classes + "import json\n")
    counted = reading_metrics.other_model_file(_write(tmp_path, "m.py", source))
    assert counted["names_before_first_class"] == 4
    assert counted["forward_plumbing"]["BertModel"]["code"] == 2 and counted["forward_plumbing"]["BertModel"]["plumbing"] == 1
    rows = dict(reading_metrics.other_rows("x", counted))
    assert rows["x: names imported before the first class"] == "4"
    assert rows["x: plumbing in the four forwards together"] == "50.0% (4 of 8)"


def test_package_groups(tmp_path):
    _write(tmp_path, reading_metrics.MODEL_FILE, "x = 1\n\ny = 2\n")
    _write(tmp_path, "mini_hf_bert/modeling_bert_fast.py", "# a comment\nz = 3\n")
    _write(tmp_path, "mini_hf_bert/sub/other.py", "a = 1\n")
    _write(tmp_path, "mini_hf_bert/README.txt", "not python\n")
    groups = reading_metrics.package_groups(str(tmp_path))
    assert groups == {"lesson": {"files": 1, "lines": 3, "code": 2},
                      "library": {"files": 1, "lines": 1, "code": 1},
                      "performance": {"files": 1, "lines": 2, "code": 1}}


def test_every_named_file_exists():
    """The groups name real files, so that a rename does not quietly move lines to the
    library; the former ones are gone from the package (they are for older checkouts)."""
    from ..paths import ROOT

    missing = [f for f in reading_metrics.LESSON_FILES + reading_metrics.PERFORMANCE_FILES
               if not os.path.isfile(os.path.join(ROOT, f))]
    assert missing == [], missing
    still_here = [f for f in reading_metrics.FORMER_PERFORMANCE_FILES if os.path.exists(os.path.join(ROOT, f))]
    assert still_here == [], still_here


def test_the_model_file_keeps_its_plumbing_share():
    """The model file's plumbing (head_mask, caches, cross-attention, output switches,
    dispatch, catch-all arguments, decorators), counted in code lines, never comments, stays
    at or below that of the installed transformers' modeling_bert.py, counted by the same
    rules here (not a figure typed from an earlier count)."""
    from ..paths import ROOT

    measured = reading_metrics.plumbing(os.path.join(ROOT, reading_metrics.MODEL_FILE))
    theirs = reading_metrics.plumbing(reading_metrics.transformers_model_file())
    assert measured["share"] <= theirs["share"], (measured, theirs)


def test_the_config_class_is_its_fields():
    """BertConfig is typed fields with their meaning: no method, no attribute hook (the I/O
    and checks stand beside it, in configuration_utils and validation). Its code lines: 5.x's
    BertConfig has 24, plus the five fields the layers read that transformers keeps on its
    base class (output_attentions, output_hidden_states, chunk_size_feed_forward,
    pruned_heads, problem_type) and their keyword-only marker, which ours holds where a
    reader of the model looks; bounded with headroom for a comment's line break, not a field."""
    import ast

    from ..paths import ROOT

    with open(os.path.join(ROOT, reading_metrics.CONFIG_FILE), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    config = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "BertConfig")
    assert [n.name for n in config.body if isinstance(n, ast.FunctionDef)] == []
    assert reading_metrics.config_class(os.path.join(ROOT, reading_metrics.CONFIG_FILE))["code"] <= 34
