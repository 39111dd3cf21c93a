"""The one import the ported example scripts change (tests/examples/upstream/): where
AutoConfig, AutoTokenizer, the AutoModelFor... classes and Trainer come from.

``MINI_HF_BERT_EXAMPLES=mini_hf_bert`` (the default) gives mini_hf_bert's classes, as a user
who swaps the import gets them (Trainer is mini_hf_bert.integrations.Trainer, as
docs/ecosystem.md says); ``MINI_HF_BERT_EXAMPLES=transformers`` gives transformers' own,
for the reference run the tests compare against. Read when the module is imported:
tests/examples/runner.py imports it afresh for each run.
"""

from __future__ import annotations

import os

VARIABLE = "MINI_HF_BERT_EXAMPLES"
LIBRARY = os.environ.get(VARIABLE, "mini_hf_bert")

if LIBRARY == "transformers":
    from transformers import (
        AutoConfig,
        AutoModelForMaskedLM,
        AutoModelForMultipleChoice,
        AutoModelForQuestionAnswering,
        AutoModelForSequenceClassification,
        AutoModelForTokenClassification,
        AutoTokenizer,
        Trainer,
    )
elif LIBRARY == "mini_hf_bert":
    from mini_hf_bert import (
        AutoConfig,
        AutoModelForMaskedLM,
        AutoModelForMultipleChoice,
        AutoModelForQuestionAnswering,
        AutoModelForSequenceClassification,
        AutoModelForTokenClassification,
        AutoTokenizer,
    )
    from mini_hf_bert.integrations import Trainer
else:
    raise ValueError(f"{VARIABLE}={LIBRARY!r}: expected 'mini_hf_bert' or 'transformers'")

__all__ = [
    "AutoConfig",
    "AutoModelForMaskedLM",
    "AutoModelForMultipleChoice",
    "AutoModelForQuestionAnswering",
    "AutoModelForSequenceClassification",
    "AutoModelForTokenClassification",
    "AutoTokenizer",
    "Trainer",
]
