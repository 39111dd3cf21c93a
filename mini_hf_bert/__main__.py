"""``python -m mini_hf_bert``: see ``mini_hf_bert.cli``."""

import sys

from .cli import main

sys.exit(main())
