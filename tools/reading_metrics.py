"""What a reader of the package meets, counted: the figures of a "does it still read as
BERT" review (lines per class and per forward, the encoder core, the tokenizer's
modules, the names imported before the first class, repeated code, the deepest import
chain, and how long ``python -m mini_hf_bert --help`` takes).

    .venv/bin/python tools/reading_metrics.py                 # this checkout
    .venv/bin/python tools/reading_metrics.py --repo /tmp/old # another checkout, to compare
    .venv/bin/python tools/reading_metrics.py --json          # machine-readable

Two counts of each class and ``forward``: its lines, from the ``class``/``def`` line to
its last, docstring and comments included (what a reader scrolls through), and its code
lines (lines holding code: not blank, not only a comment, not a docstring), which is what
the size targets below hold. Explanation is never what a target limits. The encoder core
runs from ``class BertEmbeddings`` to the end of ``BertPooler``. ``duplicates`` is the tool
library's command; where it is not installed, that row says so.
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
import tokenize

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODEL_FILE = "mini_hf_bert/modeling_bert.py"
TOKENIZER_FILES = ("mini_hf_bert/tokenization_bert.py", "mini_hf_bert/tokenization_utils_base.py")
HELP_RUNS = 5
#: The most code lines each part of the lesson may grow to (tests/layout/test_reading_path.py
#: holds the model file to them; this tool's report prints each beside today's size). Each
#: leaves about five lines of headroom (the core about a tenth), so that a small fix fits
#: while a new branch or option does not pass unnoticed; comments and docstrings are never
#: counted. transformers 3.4.0's BertSelfAttention, the review's yardstick, is 76 lines.
TARGET_CODE_LINES = {"BertSelfAttention": 48, "BertSelfAttention.forward": 26, "BertModel.forward": 60,
                     "encoder core": 230}


def _parse(path: str) -> ast.Module:
    with open(path, encoding="utf-8") as f:
        return ast.parse(f.read())


def _span(node: ast.AST) -> int:
    first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    return node.end_lineno - first + 1


def code_line_numbers(source: str) -> set[int]:
    """The numbers of the lines of ``source`` that hold code: a token other than a comment,
    and not part of a docstring (the string that opens a module, class or function)."""
    docstrings = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                docstrings.update(range(first.lineno, first.end_lineno + 1))
    skipped = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}
    lines = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type not in skipped:
            lines.update(n for n in range(token.start[0], token.end[0] + 1) if n not in docstrings)
    return lines


def _code_lines(node: ast.AST, code: set[int]) -> int:
    first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    return sum(1 for n in range(first, node.end_lineno + 1) if n in code)


def class_lines(path: str) -> dict[str, dict[str, int]]:
    """{class: {"class": lines, "forward": lines of its forward (0 if none), "class_code",
    "forward_code": the same in code lines}}, in file order."""
    with open(path, encoding="utf-8") as f:
        source = f.read()
    code = code_line_numbers(source)
    out = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.ClassDef):
            forward = next((n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "forward"), None)
            out[node.name] = {"class": _span(node), "forward": _span(forward) if forward else 0,
                              "class_code": _code_lines(node, code),
                              "forward_code": _code_lines(forward, code) if forward else 0}
    return out


def encoder_core_lines(path: str) -> tuple[int, int, int]:
    """(lines, non-blank lines, code lines) from ``class BertEmbeddings`` to the end of ``BertPooler``."""
    with open(path, encoding="utf-8") as f:
        source = f.read()
    nodes = {n.name: n for n in ast.parse(source).body if isinstance(n, ast.ClassDef)}
    first, last = nodes["BertEmbeddings"].lineno, nodes["BertPooler"].end_lineno
    lines = source.splitlines()[first - 1:last]
    code = code_line_numbers(source)
    return len(lines), sum(1 for line in lines if line.strip()), sum(1 for n in range(first, last + 1) if n in code)


def target_size(measured: dict, name: str) -> int:
    """The code lines a TARGET_CODE_LINES entry counts, from ``measure``'s classes and core."""
    if name == "encoder core":
        return measured["encoder_core"][2]
    cls, _, method = name.partition(".")
    return measured["classes"][cls]["forward_code" if method else "class_code"]


def names_before_first_class(path: str) -> int:
    """Names the module imports before its first class (``import a.b`` counts as ``a``)."""
    count = 0
    for node in _parse(path).body:
        if isinstance(node, ast.ClassDef):
            break
        if isinstance(node, (ast.Import, ast.ImportFrom)) and not (
                isinstance(node, ast.ImportFrom) and node.module == "__future__"):
            count += len(node.names)
    return count


def file_lines(path: str) -> int | None:
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        return sum(1 for _ in f)


def duplicate_pairs(package: str) -> str:
    if shutil.which("duplicates") is None:
        return "n/a (no duplicates command)"
    out = subprocess.run(["duplicates", "--seconds", "60"], cwd=package, capture_output=True, text=True).stdout
    first = out.splitlines()[0] if out else ""
    return first.split(" pairs")[0] if " pairs" in first else first


def deepest_chain(repo: str) -> list[str]:
    code = ("import sys; sys.path.insert(0, 'tools'); import import_graph as g; "
            "print('\\n'.join(g.deepest_chain(g.import_graph())))")
    out = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True, text=True, check=True).stdout
    return out.split()


def help_seconds(repo: str) -> float:
    """Median wall time of ``python -m mini_hf_bert --help`` over HELP_RUNS runs (after one warm-up)."""
    env = dict(os.environ, PYTHONPATH=repo)
    times = []
    for run in range(HELP_RUNS + 1):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "mini_hf_bert", "--help"], cwd=repo, env=env,
                       capture_output=True, check=True)
        if run:
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def measure(repo: str) -> dict:
    model = os.path.join(repo, MODEL_FILE)
    return {
        "classes": class_lines(model),
        "model_file": file_lines(model),
        "encoder_core": encoder_core_lines(model),
        "names_before_first_class": names_before_first_class(model),
        "tokenizer_files": {name: file_lines(os.path.join(repo, name)) for name in TOKENIZER_FILES},
        "duplicate_pairs": duplicate_pairs(os.path.join(repo, "mini_hf_bert")),
        "deepest_chain": deepest_chain(repo),
        "help_seconds": round(help_seconds(repo), 3),
    }


def render(m: dict) -> str:
    lines = ["| class | lines (code) | forward (code) |", "| --- | --- | --- |"]
    for name, v in m["classes"].items():
        forward = f"{v['forward']} ({v['forward_code']})" if v["forward"] else "-"
        lines.append(f"| {name} | {v['class']} ({v['class_code']}) | {forward} |")
    lines += ["", "| measure | value |", "| --- | --- |",
              f"| {MODEL_FILE} | {m['model_file']} lines |",
              f"| encoder core (BertEmbeddings .. BertPooler) | {m['encoder_core'][0]} lines, "
              f"{m['encoder_core'][1]} not blank, {m['encoder_core'][2]} code |",
              f"| names imported before the first class | {m['names_before_first_class']} |"]
    lines += [f"| {name} | {n if n is not None else '-'} lines |" for name, n in m["tokenizer_files"].items()]
    chain = m["deepest_chain"]
    lines += [f"| duplicates pairs in mini_hf_bert/ | {m['duplicate_pairs']} |",
              f"| deepest import chain | {len(chain)} modules: {' -> '.join(c.removeprefix('mini_hf_bert.') for c in chain)} |",
              f"| python -m mini_hf_bert --help | {m['help_seconds']} s (median of {HELP_RUNS}) |"]
    lines += ["", "| target (code lines) | now | at most |", "| --- | --- | --- |"]
    lines += [f"| {name} | {target_size(m, name)} | {limit} |" for name, limit in TARGET_CODE_LINES.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", default=ROOT, help="the checkout to measure (default: this one)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    args = parser.parse_args(argv)
    m = measure(os.path.abspath(args.repo))
    sys.stdout.write((json.dumps(m, indent=1) if args.json else render(m)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
