"""Runs a ported example script's ``main()`` in this process, as transformers' own
examples tests do (tests/examples/upstream/; upstream's test_pytorch_examples.py patches
``sys.argv`` and calls ``main``), with the classes of one library.

Each run imports the script, examples_library and the scripts' helpers afresh, so the
library chosen by ``MINI_HF_BERT_EXAMPLES`` is the one the script sees; the logging
settings the scripts change (transformers', datasets') are put back afterwards.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
from pathlib import Path
from unittest import mock

HERE = Path(__file__).resolve().parent
UPSTREAM = HERE / "upstream"
#: Imported by the scripts and holding the library choice, so imported afresh each run.
FRESH_MODULES = ("examples_library", "offline_evaluate", "trainer_qa", "utils_qa")
LIBRARIES = ("transformers", "mini_hf_bert")


@contextlib.contextmanager
def _logging_put_back():
    import datasets
    import transformers

    verbosity, datasets_verbosity = transformers.logging.get_verbosity(), datasets.logging.get_verbosity()
    try:
        yield
    finally:
        transformers.logging.set_verbosity(verbosity)
        transformers.logging.reset_format()
        datasets.logging.set_verbosity(datasets_verbosity)


def run_script(script: str, arguments: list[str], library: str, datasets_cache: Path) -> None:
    """``python SCRIPT.py ARGUMENTS`` with ``library``'s classes, in this process; the
    datasets the script loads are cached under ``datasets_cache``, not the user's home."""
    import datasets

    if library not in LIBRARIES:
        raise ValueError(f"library {library!r}: expected one of {LIBRARIES}")
    path = UPSTREAM / f"{script}.py"
    with contextlib.ExitStack() as stack:
        stack.enter_context(mock.patch.object(datasets.config, "HF_DATASETS_CACHE", datasets_cache))
        stack.enter_context(mock.patch.dict(os.environ, {"MINI_HF_BERT_EXAMPLES": library, "HF_HUB_OFFLINE": "1",
                                                         "HF_DATASETS_OFFLINE": "1", "WANDB_DISABLED": "true"}))
        stack.enter_context(mock.patch.object(sys, "path", [str(UPSTREAM), str(HERE), *sys.path]))
        stack.enter_context(mock.patch.object(sys, "argv", [str(path), *arguments]))
        stack.enter_context(_logging_put_back())
        for name in (*FRESH_MODULES, script):
            sys.modules.pop(name, None)
        spec = importlib.util.spec_from_file_location(script, path)
        module = importlib.util.module_from_spec(spec)
        # Not mock.patch.dict(sys.modules): undoing it would drop every module the run imported
        # first (transformers' lazy submodules among them), and a second import makes new classes.
        sys.modules[script] = module
        try:
            spec.loader.exec_module(module)
            module.main()
        finally:
            for name in (*FRESH_MODULES, script):
                sys.modules.pop(name, None)
