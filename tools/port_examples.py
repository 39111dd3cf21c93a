"""Port transformers' example scripts into tests/examples/upstream/, changing only what
must change to run them here, each change named in the header it writes.

    .venv/bin/python tools/port_examples.py GIT_DIR [--commit SHA]

GIT_DIR is a git directory of huggingface/transformers (a clone, or the bare snapshot that
the ``fetch`` tool brings); the files are read from COMMIT with ``git show``, so the port
is the same whatever is checked out. The changes are mechanical and each one is checked
to apply exactly as often as expected, so a script that changed upstream fails here
instead of being ported half-way:

- the import swap: ``AutoConfig``, ``AutoTokenizer``, ``AutoModelFor...`` and ``Trainer``
  come from ``examples_library`` (mini_hf_bert, or transformers for the reference run),
  not from ``transformers``: what a user changes to run the script on mini_hf_bert;
- offline metrics: ``import evaluate`` becomes ``import offline_evaluate as evaluate``
  (``evaluate.load`` fetches each metric's code from the hub, which tests cannot reach);
- where upstream's script no longer runs on the accelerate pinned here, the one name that
  changed (``DistributedType.TPU``, ``XLA`` since accelerate 1.0), in any library's run.

Everything else, license and comments included, is upstream's text.
"""

from __future__ import annotations

import argparse
import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "tests" / "examples" / "upstream"
#: huggingface/transformers main on 2025-12-23 (5.0.0.dev0): the newest upstream state this
#: machine can read (the repository's snapshot is over the fetch tool's size limit; the
#: feisenyu/transformers_4573 snapshot carries upstream's history to this commit).
DEFAULT_COMMIT = "d6a6c82680cba9c51decdacac6dd6315ea4a766a"
#: script -> its path under examples/pytorch/
SCRIPTS = {
    "run_glue.py": "text-classification/run_glue.py",
    "run_glue_no_trainer.py": "text-classification/run_glue_no_trainer.py",
    "run_mlm.py": "language-modeling/run_mlm.py",
    "run_mlm_no_trainer.py": "language-modeling/run_mlm_no_trainer.py",
    "run_ner.py": "token-classification/run_ner.py",
    "run_qa.py": "question-answering/run_qa.py",
    "trainer_qa.py": "question-answering/trainer_qa.py",
    "utils_qa.py": "question-answering/utils_qa.py",
    "run_swag.py": "multiple-choice/run_swag.py",
}
#: The names examples_library provides: the classes mini_hf_bert has of its own.
SWAPPED = re.compile(r"^(AutoConfig|AutoTokenizer|AutoModelFor\w+|Trainer)$")
EVALUATE = "import evaluate\n"
#: (old, new, why): names that changed under upstream's scripts in the libraries pinned here.
RENAMES = (("DistributedType.TPU", "DistributedType.XLA", "accelerate 1.0 renamed DistributedType.TPU to XLA"),)


def _swap_imports(text: str, name: str) -> tuple[str, list[str]]:
    """Move the swapped names out of the ``from transformers import ...`` statement into
    ``from examples_library import ...`` right after it. Returns the text and the names."""
    block = re.search(r"^from transformers import (\((?P<many>[^)]*)\)|(?P<one>[^\n(]+))\n", text, re.M)
    if block is None:
        raise SystemExit(f"{name}: no 'from transformers import' statement to swap")
    listed = block.group("many") if block.group("many") is not None else block.group("one")
    names = [part.strip() for part in listed.replace("\n", " ").split(",") if part.strip()]
    swapped = [n for n in names if SWAPPED.match(n)]
    kept = [n for n in names if not SWAPPED.match(n)]
    if not swapped:
        raise SystemExit(f"{name}: its transformers import names none of the swapped classes")
    lines = []
    if kept:
        lines.append("from transformers import (\n" + "".join(f"    {n},\n" for n in kept) + ")\n")
    lines.append(f"from examples_library import {', '.join(swapped)}  # ported: the import swap\n")
    return text[: block.start()] + "".join(lines) + text[block.end():], swapped


def port(source: str, name: str, upstream_path: str, commit: str) -> str:
    """One script's port: the header, then upstream's text with the changes applied."""
    changes = []
    text = source
    if re.search(r"^from transformers import", text, re.M):
        text, swapped = _swap_imports(text, name)
        changes.append(f"the import swap: {', '.join(swapped)} from examples_library, not transformers")
    if text.count(EVALUATE) > 1:
        raise SystemExit(f"{name}: imports evaluate more than once")
    if EVALUATE in text:
        text = text.replace(EVALUATE, "import offline_evaluate as evaluate  # ported: metrics offline\n")
        changes.append("offline metrics: offline_evaluate in place of evaluate (evaluate.load reads the hub)")
    for old, new, why in RENAMES:
        if old in text:
            text = text.replace(old, new)
            changes.append(f"{old} -> {new} ({why})")
    header = [
        "# Ported from huggingface/transformers (Apache-2.0), examples/pytorch/" + upstream_path,
        f"# at commit {commit} by tools/port_examples.py.",
    ]
    header += [f"# Change: {change}." for change in changes] or ["# Change: none (imported by a ported script)."]
    # After the shebang and license comments, so upstream's opening lines stay its own.
    lines = text.splitlines(keepends=True)
    cut = 0
    while cut < len(lines) and lines[cut].startswith("#"):
        cut += 1
    return "".join(lines[:cut]) + "#\n" + "".join(line + "\n" for line in header) + "".join(lines[cut:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("git_dir", type=Path, help="a git directory of huggingface/transformers")
    parser.add_argument("--commit", default=DEFAULT_COMMIT, help="the commit to port from")
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    for name, upstream_path in SCRIPTS.items():
        source = subprocess.run(
            ["git", "--git-dir", str(args.git_dir), "show", f"{args.commit}:examples/pytorch/{upstream_path}"],
            check=True, capture_output=True, text=True,
        ).stdout
        (OUT / name).write_text(port(source, name, upstream_path, args.commit), encoding="utf-8")
    print(f"ported {len(SCRIPTS)} files from {args.commit[:12]} into {OUT.relative_to(REPO)}")


if __name__ == "__main__":
    main()
