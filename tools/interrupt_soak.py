"""Interrupt saves at random moments, from outside, at a scale CI cannot afford.

A child process saves two models in turn (A, B: the same shapes, other weights and
``layer_norm_eps``) into one directory, one file or sharded, and two tokenizers (cased and
not, vocabularies of two lengths) into another, round after round. After a random delay
this process sends it SIGINT (or SIGTERM, ``--signal``), waits for it, and then checks:

* the child answered cleanly: exit 130 after KeyboardInterrupt (SIGTERM: killed by it);
* the model directory loads as A whole or B whole, never a mixture (weights and config
  compared); the tokenizer directory as one of the two tokenizers;
* nothing is left behind once the next save has run (no marker, no staging directory).

    .venv/bin/python tools/interrupt_soak.py --rounds 200          # ~4 minutes on 2 cores
    .venv/bin/python tools/interrupt_soak.py --rounds 50 --signal SIGTERM

The last line is the report. ``tests/core/test_interrupted_saves.py`` stops a save after
each of its renames in turn, in CI.
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import signal
import subprocess
import sys
import tempfile
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import torch  # noqa: E402

import mini_hf_bert  # noqa: E402
from mini_hf_bert.file_utils import MOVING_IN_MARKER, SAVING_NAME  # noqa: E402

SHAPE = dict(vocab_size=120, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=48,
             max_position_embeddings=24)
#: How long after the child says it is saving the signal may come, at most (seconds).
LONGEST_DELAY_S = 1.0
#: A child that has not ended this long after its signal has hung: a failure.
EXIT_TIMEOUT_S = 120

CHILD = textwrap.dedent("""
    import os, sys
    sys.path.insert(0, {root!r})
    from tools.interrupt_soak import model, tokenizers
    models, (cased, uncased) = [model(1), model(2)], tokenizers({scratch!r})
    model_dir, tokenizer_dir = sys.argv[1], sys.argv[2]
    print("saving", flush=True)
    try:
        for turn in range(10**9):
            models[turn % 2].save_pretrained(model_dir, max_shard_size="30KB" if turn % 4 >= 2 else "50GB")
            (cased if turn % 2 else uncased).save_pretrained(tokenizer_dir)
    except KeyboardInterrupt:
        sys.exit(130)
""")


def model(seed: int) -> mini_hf_bert.BertModel:
    torch.manual_seed(seed)
    return mini_hf_bert.BertModel(mini_hf_bert.BertConfig(**SHAPE, layer_norm_eps=10.0**-seed)).eval()


def tokenizers(scratch: str) -> tuple[mini_hf_bert.BertTokenizer, mini_hf_bert.BertTokenizer]:
    """A cased tokenizer with one token more than the uncased one (the Chinese model's vocabulary)."""
    source = mini_hf_bert.BertTokenizer.from_pretrained(mini_hf_bert.chinese_checkpoint_dir())
    longer = os.path.join(scratch, "longer_vocab.txt")
    with open(source.vocab_file, encoding="utf-8") as f, open(longer, "w", encoding="utf-8") as out:
        out.write(f.read() + "新词甲\n")
    return (mini_hf_bert.BertTokenizer(longer, do_lower_case=False, model_max_length=77),
            mini_hf_bert.BertTokenizer(source.vocab_file, do_lower_case=True))


def which_model(directory: str, models: list[torch.nn.Module]) -> str:
    loaded = mini_hf_bert.BertModel.from_pretrained(directory)
    weights = loaded.state_dict()
    for name, reference in zip("AB", models):
        if loaded.config.layer_norm_eps == reference.config.layer_norm_eps and all(
                torch.equal(weights[k], v) for k, v in reference.state_dict().items()):
            return name
    return "mixture"


def which_tokenizer(directory: str, cased, uncased) -> str:
    loaded = mini_hf_bert.BertTokenizer.from_pretrained(directory)
    state = (loaded.do_lower_case, loaded.model_max_length, len(loaded))
    for name, reference in (("cased", cased), ("uncased", uncased)):
        if state == (reference.do_lower_case, reference.model_max_length, len(reference)):
            return name
    return "mixture"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--signal", choices=["SIGINT", "SIGTERM"], default="SIGINT")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    number = getattr(signal, args.signal)
    expected_exit = 130 if number == signal.SIGINT else -number
    report = collections.Counter()
    with tempfile.TemporaryDirectory(prefix="interrupt_soak_") as scratch:
        models, (cased, uncased) = [model(1), model(2)], tokenizers(scratch)
        model_dir, tokenizer_dir = os.path.join(scratch, "model"), os.path.join(scratch, "tokenizer")
        models[0].save_pretrained(model_dir)
        uncased.save_pretrained(tokenizer_dir)
        child = CHILD.format(root=ROOT, scratch=scratch)
        for round_index in range(args.rounds):
            process = subprocess.Popen([sys.executable, "-c", child, model_dir, tokenizer_dir],
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            process.stdout.readline()
            try:
                process.wait(timeout=rng.uniform(0, LONGEST_DELAY_S))  # the random moment
            except subprocess.TimeoutExpired:
                pass
            process.send_signal(number)
            try:
                _, stderr = process.communicate(timeout=EXIT_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                process.kill()
                report["hung"] += 1
                continue
            if process.returncode == expected_exit:
                report["answered cleanly"] += 1
            else:
                report["not answered cleanly"] += 1
                print(f"round {round_index}: exit {process.returncode}: {stderr.strip().splitlines()[-1:]}")
            outcome = (which_model(model_dir, models), which_tokenizer(tokenizer_dir, cased, uncased))
            report[f"model {outcome[0]}"] += 1
            report[f"tokenizer {outcome[1]}"] += 1
            if "mixture" in outcome:
                print(f"round {round_index}: a mixture: {outcome}")
            models[round_index % 2].save_pretrained(model_dir)  # the next save clears what a stopped one left
            uncased.save_pretrained(tokenizer_dir)
            left = [n for d in (model_dir, tokenizer_dir) for n in os.listdir(d)
                    if n == MOVING_IN_MARKER or SAVING_NAME.fullmatch(n)]
            report["left something behind"] += bool(left)
    print(f"{args.rounds} interrupts ({args.signal}): " + ", ".join(f"{k} {v}" for k, v in sorted(report.items())))


if __name__ == "__main__":
    main()
