"""Run one of mini_hf_bert's writers into a directory with no room, and print how it
ended as one JSON line; tests/bad_inputs/test_disk_full.py runs it in a child process
whose room is bounded (``ulimit -f``, or a tiny tmpfs).

    python -m tests.bad_inputs.disk_full_writers WRITER OUT_DIR SOURCE_CHECKPOINT
"""

from __future__ import annotations

import json
import os
import sys


def _write(writer: str, out: str, source: str) -> None:
    import torch

    import mini_hf_bert
    from mini_hf_bert.__main__ import main
    from mini_hf_bert.file_utils import staged_file

    if writer == "save_pretrained":
        mini_hf_bert.BertModel.from_pretrained(source).save_pretrained(os.path.join(out, "model"))
    elif writer == "tokenizer":
        mini_hf_bert.BertTokenizer.from_pretrained(source).save_pretrained(os.path.join(out, "tokenizer"))
    elif writer == "checkpoint state":  # what pretrain's checkpoints write with torch.save
        with staged_file(os.path.join(out, "trainer_state.pt")) as staged:
            torch.save({"optimizer": torch.zeros(1 << 18)}, staged)
    elif writer in ("convert", "attention --html"):
        argv = (["convert", source, os.path.join(out, "converted")] if writer == "convert" else
                ["attention", "a short text", "--checkpoint", source, "--out", os.path.join(out, "a.png"),
                 "--html", os.path.join(out, "a.html")])
        code = main(argv)
        print(json.dumps({"exit": code}))
        return
    print(json.dumps({"exit": 0}))


if __name__ == "__main__":
    try:
        _write(*sys.argv[1:4])
    except Exception as error:  # noqa: BLE001 - reported to the test
        print(json.dumps({"error": type(error).__name__, "message": str(error),
                          "filename": getattr(error, "filename", None)}))
