"""Where the suite's files are, for tests in any folder."""

import os

#: The repository root.
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: Committed inputs: Google-format checkpoints (fixtures/tf) and pre-training data (fixtures/pretraining).
FIXTURES = os.path.join(ROOT, "tests", "fixtures")
