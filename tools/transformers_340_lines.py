"""Where each class and function of transformers 3.4.0's BERT starts, for the links that
docs/versions.md, docs/zh/versions.md and the zh walk-through make to 3.4.0's source.

    .venv/bin/python tools/transformers_340_lines.py            # pip-downloads the 3.4.0 wheel
    .venv/bin/python tools/transformers_340_lines.py --wheel transformers-3.4.0-py3-none-any.whl

Writes tests/fixtures/transformers_340/lines.json: {file: {name: first line}} for
``modeling_bert.py``, ``modeling_utils.py`` and ``tokenization_bert.py``, plus the lines of
the variables the notes annotate. The wheel's files are the tag v3.4.0's
``src/transformers/`` files, line for line; nothing else of 3.4.0 is kept.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import subprocess
import sys
import tempfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "fixtures", "transformers_340", "lines.json")
FILES = ("modeling_bert.py", "modeling_utils.py", "tokenization_bert.py")
#: Assignments whose first line the variable map links to: (file, class.method, variable).
#: The key and value projections are assigned twice, for cross-attention (from
#: ``encoder_hidden_states``) and then for self-attention: the map links to the self-attention
#: lines, ``SELF_ATTENTION_READS``.
VARIABLES = [("modeling_bert.py", "BertSelfAttention.forward", name) for name in (
    "mixed_query_layer", "mixed_key_layer", "mixed_value_layer", "query_layer", "key_layer", "value_layer",
    "attention_scores", "attention_probs", "context_layer", "new_context_layer_shape")] + [
    ("modeling_bert.py", "BertSelfAttention.transpose_for_scores", "new_x_shape"),
    ("modeling_bert.py", "BertModel.forward", "extended_attention_mask"),
    ("modeling_bert.py", "BertModel.forward", "embedding_output"),
    ("modeling_bert.py", "BertModel.forward", "sequence_output"),
    ("modeling_bert.py", "BertModel.forward", "pooled_output"),
    ("modeling_bert.py", "BertEncoder.forward", "all_attentions"),
    ("tokenization_bert.py", "BasicTokenizer.tokenize", "token"),
]


def definitions(source: str) -> dict[str, int]:
    """Top-level classes and functions, and each class's methods ("Class.method"): first line."""
    lines = {}
    for node in ast.parse(source).body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            lines[node.name] = node.lineno
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    lines[f"{node.name}.{item.name}"] = item.lineno
    return lines


SELF_ATTENTION_READS = {"mixed_key_layer": "hidden_states", "mixed_value_layer": "hidden_states"}
#: Config switches whose first reading the tables link to: (file, class.method, attribute),
#: recorded as "class.method.config.attribute".
CONFIG_READS = [("modeling_bert.py", "BertEncoder.forward", "gradient_checkpointing")]


def first_config_read(source: str, scope: str, attribute: str) -> int:
    """The first line inside ``scope`` that reads ``config.attribute`` (as an attribute or
    through ``getattr(config, "attribute", ...)``)."""
    owner, method = scope.split(".")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef) and node.name == owner:
            function = next(f for f in node.body if isinstance(f, ast.FunctionDef) and f.name == method)
            reads = [n.lineno for n in ast.walk(function)
                     if (isinstance(n, ast.Attribute) and n.attr == attribute)
                     or (isinstance(n, ast.Constant) and n.value == attribute)]
            return min(reads)
    raise KeyError(f"{scope}.config.{attribute}")


def first_assignment(source: str, scope: str, name: str, reads: str | None = None) -> int:
    """The first line inside ``scope`` ("Class.method") that assigns ``name`` (from a value
    that reads the variable ``reads``, where given)."""
    owner, method = scope.split(".")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef) and node.name == owner:
            function = next(f for f in node.body if isinstance(f, ast.FunctionDef) and f.name == method)
            targets = [n for n in ast.walk(function) if isinstance(n, (ast.Assign, ast.AnnAssign))
                       and any(isinstance(t, ast.Name) and t.id == name
                               for t in (n.targets if isinstance(n, ast.Assign) else [n.target]))
                       and (reads is None or any(isinstance(v, ast.Name) and v.id == reads for v in ast.walk(n.value)))]
            return min(t.lineno for t in targets)
    raise KeyError(f"{scope}.{name}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wheel", help="transformers-3.4.0-py3-none-any.whl (default: pip download it)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as work:
        wheel = args.wheel
        if wheel is None:
            subprocess.run([sys.executable, "-m", "pip", "download", "transformers==3.4.0", "--no-deps", "-q", "-d", work],
                           check=True)
            wheel = os.path.join(work, next(n for n in os.listdir(work) if n.endswith(".whl")))
        with zipfile.ZipFile(wheel) as archive:
            sources = {name: archive.read(f"transformers/{name}").decode("utf-8") for name in FILES}
    result = {name: definitions(source) for name, source in sources.items()}
    result["variables"] = {f"{scope}.{name}": first_assignment(sources[file], scope, name, SELF_ATTENTION_READS.get(name))
                           for file, scope, name in VARIABLES}
    result["variables"].update({f"{scope}.config.{attribute}": first_config_read(sources[file], scope, attribute)
                                for file, scope, attribute in CONFIG_READS})
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump(result, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
