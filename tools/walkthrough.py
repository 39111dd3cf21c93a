"""Write the walk-throughs, docs/walkthrough.md and docs/zh/walkthrough.md, and their pictures.

    .venv/bin/python tools/walkthrough.py [--no-pictures]

Every number comes from running a packaged checkpoint
(``mini_hf_bert.companion.walkthrough.compute_facts``): the English walk on all-MiniLM-L6-v2,
the Chinese walk on the Chinese BERT shipped with mini_hf_bert. The prose is in docs/templates/. The test
``tests/companion/test_walkthrough.py`` regenerates the text and fails if the committed documents
are stale (numbers compared within ``parity.DOC_ATOL``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from mini_hf_bert.file_utils import write_text  # noqa: E402

from mini_hf_bert.companion.walkthrough import (  # noqa: E402
    DOCUMENTS,
    WALKS,
    all_facts,
    draw_pictures,
    render_documents,
    walk_checkpoints,
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--no-pictures", action="store_true", help="rewrite the text only")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    facts = all_facts()
    for path, text in render_documents(ROOT, facts).items():
        full = os.path.join(ROOT, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        write_text(full, text)
        print(f"wrote {path}")
    if not args.no_pictures:
        for language, (checkpoint, _) in walk_checkpoints().items():
            out_dir = os.path.join(ROOT, DOCUMENTS[language].image_dir)
            for path in draw_pictures(facts[language], checkpoint, out_dir, WALKS[language], language):
                print(f"wrote {os.path.relpath(path, ROOT)}")
    print(f"done in {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
