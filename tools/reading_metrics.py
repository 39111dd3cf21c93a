"""What a reader of the package meets, counted: the figures of a "does it still read as
BERT" review (lines per class and per forward, the encoder core, the model file's
plumbing share, the tokenizer a learner opens, the config class, where the first class
starts and the names imported before it, the package's lines by group, repeated code,
the deepest import chain, and how long ``python -m mini_hf_bert --help`` takes).

    .venv/bin/python tools/reading_metrics.py                   # this checkout
    .venv/bin/python tools/reading_metrics.py --before /tmp/old # another checkout beside it
    .venv/bin/python tools/reading_metrics.py --json            # machine-readable
    .venv/bin/python tools/reading_metrics.py --other 3.4.0=transformers-3.4.0-py3-none-any.whl

``--before`` takes a checkout of an earlier commit (``git worktree add /tmp/old REV``)
and prints its figures beside this checkout's, for a change's before and after. The
plumbing of the installed transformers' model file, and of any ``--other`` (3.4.0's, from
its wheel: ``pip download transformers==3.4.0 --no-deps``), is counted by the same rules
and printed below ours: the model file's share and the four core forwards' one by one.

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
import re
import shutil
import statistics
import subprocess
import sys
import time
import tokenize

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODEL_FILE = "mini_hf_bert/modeling_bert.py"
TOKENIZER_FILE = "mini_hf_bert/tokenization_bert.py"
#: The tokenizer a learner opens, the fast version beside it (where there is one), and the base.
TOKENIZER_FILES = (TOKENIZER_FILE, "mini_hf_bert/tokenization_bert_fast.py", "mini_hf_bert/tokenization_utils_base.py")
HELP_RUNS = 5
#: The most code lines each part of the lesson may grow to (tests/layout/test_reading_path.py
#: holds the model file to them; this tool's report prints each beside today's size). Each
#: leaves about five lines of headroom (the core about a tenth), so that a small fix fits
#: while a new branch or option does not pass unnoticed; comments and docstrings are never
#: counted. transformers 3.4.0's BertSelfAttention, the review's yardstick, is 76 lines.
TARGET_CODE_LINES = {"BertSelfAttention": 48, "BertSelfAttention.forward": 26, "BertModel.forward": 60,
                     "encoder core": 230}


#: What "plumbing" is, one pattern per kind, applied to every model file alike (ours and
#: transformers'): a code line that names any of them is a plumbing line, and so is every
#: line of a decorator (``DECORATOR_KIND``; a decorator may span lines). The kinds are the
#: review's: head_mask, caches, cross-attention, return_dict and output_* handling,
#: dispatch to other implementations, catch-all arguments and decorators.
PLUMBING = {
    "head_mask": r"head_mask",
    "caches": r"past_key_value|past_length|use_cache|cache_position|next_cache|\bpresent\b|\w*Cache\b|legacy_cache"
              r"|is_decoder",
    "cross-attention": r"encoder_hidden_states|encoder_attention_mask|cross_?attention|crossattention",
    "outputs": r"return_dict|output_attentions|output_hidden_states|all_hidden_states|all_(self_)?attentions"
               r"|(hidden_states|attentions)=\w*outputs\.",
    "dispatch": r"ALL_[A-Z_]+|attn_implementation|model_forward",
    "catch-all arguments and decorators": r"\*\*\w*kwargs|\*args\b|\*exported_defaults|^\s*@|Unpack\[|"
                                          r"TransformersKwargs",
}
DECORATOR_KIND = "catch-all arguments and decorators"
PLUMBING_PATTERN = re.compile("|".join(f"(?:{p})" for p in PLUMBING.values()))
#: The forwards a learner steps through first, whose plumbing share is reported one by one.
CORE_FORWARDS = ("BertSelfAttention", "BertLayer", "BertEncoder", "BertModel")
CONFIG_FILE = "mini_hf_bert/configuration_bert.py"
#: The files a learner reads as the lesson (transformers' models/bert/ three); the
#: performance group is the faster paths and the benchmarks; the library is the rest.
LESSON_FILES = (MODEL_FILE, CONFIG_FILE, "mini_hf_bert/tokenization_bert.py")
PERFORMANCE_FILES = ("mini_hf_bert/modeling_bert_fast.py", "mini_hf_bert/cpu_capability.py",
                     "mini_hf_bert/integrations/sdpa_attention.py", "mini_hf_bert/parity/speed.py",
                     "mini_hf_bert/commands/benchmark.py", "mini_hf_bert/tokenization_bert_fast.py")
#: Performance files the package held before they moved beside it (benchmarks/), so that
#: an older checkout (--before) counts them in the same group.
FORMER_PERFORMANCE_FILES = ("mini_hf_bert/parity/benchmark.py", "mini_hf_bert/parity/benchmark_gpu.py",
                            "mini_hf_bert/parity/engines.py", "mini_hf_bert/parity/ctranslate2_worker.py",
                            "mini_hf_bert/training/speed.py")


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


def first_class_line(path: str) -> int:
    """The line where the module's first class starts (its decorators included)."""
    node = next(n for n in _parse(path).body if isinstance(n, ast.ClassDef))
    return min([node.lineno] + [d.lineno for d in node.decorator_list])


def _decorator_lines(tree: ast.Module) -> set[int]:
    """Every line of every decorator in the module (a decorator may span several)."""
    return {n for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            for d in node.decorator_list for n in range(d.lineno, d.end_lineno + 1)}


def _plumbing_counts(lines: list[str], code: set[int], decorators: set[int], numbers) -> dict:
    counted = [n for n in sorted(numbers) if n in code]
    hits = [n for n in counted if n in decorators or PLUMBING_PATTERN.search(lines[n - 1])]
    kinds = {kind: sum(1 for n in hits if re.search(p, lines[n - 1]) or (kind == DECORATOR_KIND and n in decorators))
             for kind, p in PLUMBING.items()}
    return {"code": len(counted), "plumbing": len(hits), "share": round(len(hits) / max(len(counted), 1), 4),
            "kinds": kinds}


def plumbing(path: str) -> dict:
    """{"code": code lines, "plumbing": code lines matching PLUMBING_PATTERN or inside a
    decorator, "share", "kinds": {kind: lines of that kind}} for a model file."""
    with open(path, encoding="utf-8") as f:
        source = f.read()
    tree = ast.parse(source)
    return _plumbing_counts(source.splitlines(), code_line_numbers(source), _decorator_lines(tree),
                            range(1, len(source.splitlines()) + 1))


def forward_plumbing(path: str, classes: tuple[str, ...] = CORE_FORWARDS) -> dict:
    """{class: plumbing counts of its ``forward`` (its decorators and signature included),
    ..., "together": the counts over all of them} by the same rules as ``plumbing``."""
    with open(path, encoding="utf-8") as f:
        source = f.read()
    tree = ast.parse(source)
    lines, code, decorators = source.splitlines(), code_line_numbers(source), _decorator_lines(tree)
    nodes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    spans = {}
    for name in classes:
        forward = next(n for n in nodes[name].body if isinstance(n, ast.FunctionDef) and n.name == "forward")
        first = min([forward.lineno] + [d.lineno for d in forward.decorator_list])
        spans[name] = range(first, forward.end_lineno + 1)
    out = {name: _plumbing_counts(lines, code, decorators, span) for name, span in spans.items()}
    out["together"] = _plumbing_counts(lines, code, decorators, {n for span in spans.values() for n in span})
    return out


def transformers_model_file() -> str | None:
    """The installed transformers' models/bert/modeling_bert.py, found without importing it."""
    import importlib.util

    spec = importlib.util.find_spec("transformers")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = os.path.join(spec.submodule_search_locations[0], "models", "bert", "modeling_bert.py")
    return path if os.path.isfile(path) else None


def config_class(path: str) -> dict[str, int]:
    """{"lines", "code"} of ``class BertConfig``, and the file's lines."""
    with open(path, encoding="utf-8") as f:
        source = f.read()
    node = next(n for n in ast.parse(source).body if isinstance(n, ast.ClassDef) and n.name == "BertConfig")
    return {"lines": _span(node), "code": _code_lines(node, code_line_numbers(source)),
            "file": len(source.splitlines())}


def package_groups(repo: str) -> dict[str, dict[str, int]]:
    """{group: {"files", "lines", "code"}} over mini_hf_bert/'s .py files: the lesson, the
    performance group, and the library (the rest)."""
    groups = {g: {"files": 0, "lines": 0, "code": 0} for g in ("lesson", "library", "performance")}
    package = os.path.join(repo, "mini_hf_bert")
    for folder, _, names in os.walk(package):
        for name in names:
            if not name.endswith(".py"):
                continue
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, repo).replace(os.sep, "/")
            group = ("lesson" if rel in LESSON_FILES else
                     "performance" if rel in PERFORMANCE_FILES + FORMER_PERFORMANCE_FILES else "library")
            with open(path, encoding="utf-8") as f:
                source = f.read()
            groups[group]["files"] += 1
            groups[group]["lines"] += len(source.splitlines())
            groups[group]["code"] += len(code_line_numbers(source))
    return groups


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
        "first_class_line": first_class_line(model),
        "names_before_first_class": names_before_first_class(model),
        "plumbing": plumbing(model),
        "forward_plumbing": forward_plumbing(model),
        "config": config_class(os.path.join(repo, CONFIG_FILE)),
        "tokenizer_files": {name: file_lines(os.path.join(repo, name)) for name in TOKENIZER_FILES},
        "package": package_groups(repo),
        "duplicate_pairs": duplicate_pairs(os.path.join(repo, "mini_hf_bert")),
        "deepest_chain": deepest_chain(repo),
        "help_seconds": round(help_seconds(repo), 3),
    }


def summary_rows(m: dict) -> list[tuple[str, str]]:
    """(measure, value) for the summary table, in the review's order."""
    share = m["plumbing"]
    chain = m["deepest_chain"]
    t = m.get("transformers_plumbing")
    bound = f"; transformers' {t['share']:.1%}" if t else ""
    rows = [(MODEL_FILE, f"{m['model_file']} lines, {share['code']} code"),
            ("plumbing share of the model's code", f"{share['share']:.1%} ({share['plumbing']} lines{bound})")]
    if "forward_plumbing" in m:  # older checkouts are measured by this tool too
        rows += [(_forward_label(name), f"{f['share']:.1%} ({f['plumbing']} of {f['code']} code lines)")
                 for name, f in m["forward_plumbing"].items()]
    rows += [("encoder core (BertEmbeddings .. BertPooler)",
              f"{m['encoder_core'][0]} lines, {m['encoder_core'][1]} not blank, {m['encoder_core'][2]} code"),
             ("first class at line", str(m["first_class_line"])),
             ("names imported before the first class", str(m["names_before_first_class"])),
             ("BertConfig class", f"{m['config']['lines']} lines, {m['config']['code']} code "
                                  f"({m['config']['file']} in its file)")]
    rows += [(name, f"{n} lines" if n is not None else "-") for name, n in m["tokenizer_files"].items()]
    rows += [(f"package: {group}", f"{g['lines']} lines, {g['code']} code in {g['files']} files")
             for group, g in m["package"].items()]
    rows += [("duplicates pairs in mini_hf_bert/", str(m["duplicate_pairs"])),
             ("deepest import chain", f"{len(chain)} modules: "
                                      f"{' -> '.join(c.removeprefix('mini_hf_bert.') for c in chain)}"),
             ("python -m mini_hf_bert --help", f"{m['help_seconds']} s (median of {HELP_RUNS})")]
    for label, other in m.get("others", {}).items():
        rows += other_rows(label, other)
    return rows


def other_rows(label: str, other: dict) -> list[tuple[str, str]]:
    """The summary rows of another model file (``other_model_file``), each led by ``label``."""
    rows = [(f"{label}: modeling_bert.py, same rules",
             f"{other['plumbing']['share']:.1%} plumbing ({other['plumbing']['plumbing']} of "
             f"{other['plumbing']['code']} code lines)")]
    rows += [(f"{label}: {_forward_label(name)}", f"{f['share']:.1%} ({f['plumbing']} of {f['code']})")
             for name, f in other["forward_plumbing"].items()]
    return rows + [(f"{label}: names imported before the first class", str(other["names_before_first_class"]))]


def _forward_label(name: str) -> str:
    return "plumbing in the four forwards together" if name == "together" else f"plumbing in {name}.forward"


def other_model_file(path: str) -> dict:
    """Another BERT model file (transformers' installed one, or 3.4.0's from its wheel),
    counted by the same rules as ours: its plumbing, its core forwards', and the names it
    imports before its first class. (Not its package's import chain: transformers' imports
    form circles, resolved lazily, where a deepest chain is not defined.)"""
    return {"plumbing": plumbing(path), "forward_plumbing": forward_plumbing(path),
            "names_before_first_class": names_before_first_class(path)}


def _model_file_from(path: str) -> str:
    """``path`` itself, or a transformers wheel's ``models/bert/modeling_bert.py`` (or 3.x's
    ``modeling_bert.py``) unpacked into a temporary file."""
    import tempfile
    import zipfile

    if not path.endswith(".whl"):
        return path
    with zipfile.ZipFile(path) as wheel:
        name = next(n for n in ("transformers/models/bert/modeling_bert.py", "transformers/modeling_bert.py")
                    if n in wheel.namelist())
        handle, out = tempfile.mkstemp(suffix="_modeling_bert.py")
        with os.fdopen(handle, "wb") as f:
            f.write(wheel.read(name))
    return out


def render(m: dict, before: dict | None = None) -> str:
    lines = ["| class | lines (code) | forward (code) |", "| --- | --- | --- |"]
    for name, v in m["classes"].items():
        forward = f"{v['forward']} ({v['forward_code']})" if v["forward"] else "-"
        lines.append(f"| {name} | {v['class']} ({v['class_code']}) | {forward} |")
    now = summary_rows(m)
    if before is None:
        lines += ["", "| measure | value |", "| --- | --- |"] + [f"| {k} | {v} |" for k, v in now]
    else:
        then = dict(summary_rows(before))
        lines += ["", "| measure | before | now |", "| --- | --- | --- |"]
        lines += [f"| {k} | {then.get(k, '-')} | {v} |" for k, v in now]
    lines += ["", "| plumbing kind (code lines) | now |", "| --- | --- |"]
    lines += [f"| {kind} | {n} |" for kind, n in m["plumbing"]["kinds"].items()]
    lines += ["", "| target (code lines) | now | at most |", "| --- | --- | --- |"]
    lines += [f"| {name} | {target_size(m, name)} | {limit} |" for name, limit in TARGET_CODE_LINES.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", default=ROOT, help="the checkout to measure (default: this one)")
    parser.add_argument("--before", metavar="REPO",
                        help="an earlier checkout, measured too and printed beside this one")
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.add_argument("--other", action="append", default=[], metavar="LABEL=PATH",
                        help="another BERT model file (or a transformers wheel) counted by the same rules, e.g. "
                             "3.4.0=transformers-3.4.0-py3-none-any.whl (pip download transformers==3.4.0 --no-deps)")
    args = parser.parse_args(argv)
    for repo in filter(None, (args.repo, args.before)):
        if not os.path.isfile(os.path.join(repo, MODEL_FILE)):
            parser.error(f"{repo} is not a mini_hf_bert checkout (no {MODEL_FILE})")
    m = measure(os.path.abspath(args.repo))
    anchor = transformers_model_file()
    m["transformers_plumbing"] = plumbing(anchor) if anchor else None
    m["others"] = {}
    if anchor:
        import importlib.metadata

        m["others"][f"transformers {importlib.metadata.version('transformers')}"] = other_model_file(anchor)
    for given in args.other:
        label, _, path = given.partition("=")
        if not path or not os.path.isfile(path):
            parser.error(f"--other {given!r}: expected LABEL=PATH to a modeling_bert.py or a transformers wheel")
        model_file = _model_file_from(path)
        m["others"][f"transformers {label}"] = other_model_file(model_file)
        if model_file != path:  # unpacked from the wheel for this count
            os.unlink(model_file)
    before = measure(os.path.abspath(args.before)) if args.before else None
    if before:
        before["transformers_plumbing"] = m["transformers_plumbing"]
    if args.json:
        sys.stdout.write(json.dumps({"now": m, "before": before} if before else m, indent=1) + "\n")
    else:
        sys.stdout.write(render(m, before) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
