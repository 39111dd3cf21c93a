"""``python -m mini_hf_bert``: see ``mini_hf_bert.commands.cli``."""

import sys

from .commands.cli import main

sys.exit(main())
