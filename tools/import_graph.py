"""The package's import graph, read from its source: every import, those inside
functions and ``if TYPE_CHECKING:`` blocks included (a lazy import that dodges a circle is
still a circle).

    .venv/bin/python tools/import_graph.py            # layers, circles, the deepest chain
    .venv/bin/python tools/import_graph.py --edges    # and every module's imports

``tests/layout/test_import_graph.py`` holds the package to the rules of
docs/architecture.md with these functions: no circle, and no module importing a module of
a higher layer.
"""

from __future__ import annotations

import ast
import fnmatch
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "mini_hf_bert"

#: The layers of docs/architecture.md, lowest first; a module may import only modules of
#: its own layer or a lower one. Patterns are module names relative to the package.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("shared machinery", (
        "activations", "pytorch_utils", "masking_utils", "modeling_outputs", "modeling_utils", "generation_utils", "file_utils",
        "limits", "hub_options", "cpu_capability", "wordpiece_trainer", "progress",
        "unicode_tables", "tokenization_utils", "tokenization_utils_base", "integrations.sdpa_attention", "integrations.model_forwards",
        "integrations.attention_functions",
        "checkpoints", "checkpoints.errors", "checkpoints.crc32c",
        "checkpoints.tf_bundle", "checkpoints.hdf5_weights", "checkpoints.flax_msgpack", "checkpoints.layout", "checkpoints.hf_format", "checkpoints.hub", "checkpoints.weight_map",
        "checkpoints.resolve", "checkpoints.loading", "checkpoints.saving", "checkpoints.fingerprints",
        "checkpoints.bundled",
    )),
    ("BERT", (
        "configuration_bert", "configuration_utils", "modeling_bert", "modeling_bert_extras", "modeling_bert_fast", "tokenization_bert",
        "tokenization_bert_fast", "tokenization_bert_files",
        "validation", "auto",
    )),
    ("tools", (
        "checkpoints.convert", "parity", "parity.*", "pipelines", "pipelines.*", "companion", "companion.*",
        "training", "training.*", "integrations", "integrations.trainer",
    )),
    ("public API", ("",)),  # mini_hf_bert/__init__.py: what `from mini_hf_bert import ...` offers
    ("command line", ("commands", "commands.*", "__main__")),
)
#: The longest import chain allowed, in modules (``python -m mini_hf_bert`` to the bottom
#: of the shared machinery): each module more is one more file to hold in mind when
#: following a call, and a long chain means a low module reaches far up (a plotting
#: helper that reached the checkpoint converter made 17).
MAX_CHAIN_MODULES = 10
#: Modules of the shared machinery: none may reach a BERT module, even through another.
GENERIC_LAYER = LAYERS[0][0]
MODEL_LAYER = LAYERS[1][0]


def package_modules(root: str = ROOT) -> dict[str, str]:
    """Dotted module name (``mini_hf_bert.training.trainer``) -> its file, for every module."""
    modules = {}
    for directory, subdirectories, files in os.walk(os.path.join(root, PACKAGE)):
        subdirectories[:] = sorted(d for d in subdirectories if not d.startswith((".", "__pycache__")))
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            path = os.path.join(directory, name)
            dotted = os.path.relpath(path, root)[: -len(".py")].replace(os.sep, ".")
            modules[dotted.removesuffix(".__init__")] = path
    return modules


def _imported_modules(module: str, path: str, node: ast.Import | ast.ImportFrom, modules: dict[str, str]) -> set[str]:
    """The package modules one import statement loads (``from pkg import name``: the
    submodule ``pkg.name`` where there is one, else ``pkg`` itself)."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names if alias.name in modules}
    if node.level == 0:
        base = node.module or ""
    else:
        package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
        parts = package.split(".")
        base = ".".join(parts[: len(parts) - (node.level - 1)] + ([node.module] if node.module else []))
    found = set()
    for alias in node.names:
        submodule = f"{base}.{alias.name}"
        found.add(submodule if submodule in modules else base)
    return {name for name in found if name in modules}


def _named_modules(module: str, node: ast.AST, modules: dict[str, str]) -> set[str]:
    """The package modules a module imports by name rather than by statement: the keys of
    the package root's ``EXPORTS`` table (imported on first use), and the module of an
    ``ALL_MODEL_FORWARDS.declare(name, "dotted.module", ...)`` (imported on first lookup)."""
    if (module == PACKAGE and isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
            and node.target.id == "EXPORTS" and isinstance(node.value, ast.Dict)):
        return {f"{PACKAGE}.{key.value}" for key in node.value.keys if isinstance(key, ast.Constant)} & set(modules)
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "declare"
            and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)):
        return {node.args[1].value} & set(modules)
    return set()


def import_graph(root: str = ROOT) -> dict[str, set[str]]:
    """Module -> the package modules it imports, anywhere in its source."""
    modules = package_modules(root)
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        targets: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                targets |= _imported_modules(module, path, node, modules)
            targets |= _named_modules(module, node, modules)
        graph[module] = targets - {module}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles: each strongly connected group of two or more modules (or a module importing itself)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(node: str) -> None:  # Tarjan's algorithm
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1 or node in graph.get(node, ()):
                found.append(sorted(group))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(graph) + 100))
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def deepest_chain(graph: dict[str, set[str]]) -> list[str]:
    """The longest import chain (a circle counts once). Ties go to the alphabetically first."""
    memo: dict[str, list[str]] = {}

    def longest(node: str, seen: frozenset[str]) -> list[str]:
        if node in memo:
            return memo[node]
        best = [node]
        for target in sorted(graph.get(node, ())):
            if target in seen:
                continue
            candidate = [node, *longest(target, seen | {target})]
            if len(candidate) > len(best):
                best = candidate
        memo[node] = best
        return best

    chains = [longest(node, frozenset({node})) for node in sorted(graph)]
    return max(chains, key=len) if chains else []


def layer_of(module: str) -> str | None:
    """The layer a module belongs to, or None when LAYERS does not place it."""
    relative = module.removeprefix(PACKAGE).removeprefix(".")
    for name, patterns in LAYERS:
        if any(fnmatch.fnmatchcase(relative, pattern) for pattern in patterns):
            return name
    return None


def layer_violations(graph: dict[str, set[str]]) -> list[str]:
    """Each import of a higher layer, each module without a layer, and each module
    reaching the public API (``mini_hf_bert/__init__.py``) from inside, in one line each."""
    rank = {name: number for number, (name, _) in enumerate(LAYERS)}
    problems = []
    for module in sorted(graph):
        layer = layer_of(module)
        if layer is None:
            problems.append(f"{module}: in no layer of tools/import_graph.py LAYERS (place it, and say so in docs/architecture.md)")
            continue
        for target in sorted(graph[module]):
            target_layer = layer_of(target)
            if target_layer is not None and rank[target_layer] > rank[layer]:
                problems.append(f"{module} ({layer}) imports {target} ({target_layer}), a higher layer")
    return problems


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    """Every module ``start`` imports, directly or through others."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        for target in graph.get(todo.pop(), ()):
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def main(argv: list[str]) -> int:
    graph = import_graph()
    for name, _ in LAYERS:
        members = [m for m in sorted(graph) if layer_of(m) == name]
        print(f"{name} ({len(members)}): {', '.join(m.removeprefix(PACKAGE + '.') for m in members)}")
    print(f"circles: {cycles(graph) or 'none'}")
    problems = layer_violations(graph)
    print("layer rule: " + ("kept" if not problems else "\n  " + "\n  ".join(problems)))
    chain = deepest_chain(graph)
    print(f"deepest chain ({len(chain)} modules, {len(chain) - 1} imports): {' -> '.join(chain)}")
    if "--edges" in argv:
        for module in sorted(graph):
            print(f"{module} -> {', '.join(sorted(graph[module])) or '-'}")
    return 0 if not problems and not cycles(graph) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
