"""Parity against transformers 4.57.6, the last 4.x release: the reference for what 5.x
dropped. `make test` runs this directory with .cache/transformers-4.57.6 first on
PYTHONPATH; anything else is a set-up error, not a reason to skip."""

from __future__ import annotations

import transformers

REFERENCE_VERSION = "4.57.6"

if transformers.__version__ != REFERENCE_VERSION:
    raise RuntimeError(
        f"tests_transformers4 needs transformers {REFERENCE_VERSION} first on the import path, found "
        f"{transformers.__version__} at {transformers.__file__}; run it through `make test`"
    )

transformers.utils.logging.set_verbosity_error()
transformers.utils.logging.disable_progress_bar()
