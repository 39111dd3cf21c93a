"""Memory retained by the fast path over calls of random lengths, as a service sees them.

Each call is 1-3 sequences of 1-512 tokens on a 2-layer, 128-wide BERT (or
all-MiniLM-L6-v2 through ``pipeline("feature-extraction")``, ``--pipeline``). The resident
memory (RSS) is read after the warm-up calls and at the end; what the process holds more at
the end is what the calls retained. A service must level off: run it long, and the figure
stops growing.

    .venv/bin/python tools/memory_soak.py --calls 2000                    # ~20 s on 2 cores
    .venv/bin/python tools/memory_soak.py --calls 2000 --no-row-buckets   # the option off: what it bounds
    .venv/bin/python tools/memory_soak.py --calls 500 --dtype bf16 --route onednn
    .venv/bin/python tools/memory_soak.py --calls 320 --pipeline

Prints one line per 200 calls and a last line with the figures; ``--json`` prints them as
JSON instead. ``tests/core/test_under_load.py`` runs a shorter soak in CI.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import torch  # noqa: E402

import mini_hf_bert  # noqa: E402
from mini_hf_bert import modeling_bert_fast  # noqa: E402

SMALL = dict(vocab_size=3000, hidden_size=128, num_hidden_layers=2, num_attention_heads=2, intermediate_size=512)
#: Calls before the first reading: the model's own buffers and the first shapes settle.
WARMUP_CALLS = 100
LONGEST = 512
MOST_SEQUENCES = 3
REPORT_EVERY = 200
PAGE = os.sysconf("SC_PAGE_SIZE")


def resident_mb() -> float:
    """This process's resident memory, in MiB (Linux's /proc/self/statm)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE / 2**20


def soak(calls: int, dtype: torch.dtype = torch.float32, route: str | None = None, row_buckets: bool = True,
         pipeline: bool = False, seed: int = 0, report=None) -> dict:
    """Run ``calls`` calls of random lengths; return the resident memory after the warm-up
    and at the end (MiB), what was retained, and the distinct token counts seen."""
    rng = random.Random(seed)
    torch.manual_seed(seed)
    if pipeline:
        from mini_hf_bert.checkpoints.bundled import default_checkpoint_dir

        path = default_checkpoint_dir()
        model = mini_hf_bert.BertModel.from_pretrained(path, attn_implementation="fast", dtype=dtype).eval()
        extract = mini_hf_bert.pipeline("feature-extraction", model=model,
                                        tokenizer=mini_hf_bert.BertTokenizer.from_pretrained(path))
        words = [w for w in open(os.path.join(ROOT, "README.md"), encoding="utf-8").read().split() if w.isalpha()]
    else:
        config = mini_hf_bert.BertConfig(**SMALL, attn_implementation="fast")
        model = mini_hf_bert.BertModel(config).eval().to(dtype)
    counts, warm = set(), None
    with modeling_bert_fast.using_options(route=route, row_buckets=row_buckets), torch.no_grad():
        for call in range(calls):
            if pipeline:
                text = " ".join(rng.choice(words) for _ in range(rng.randint(1, 300)))
                extract(text, truncation=True)
                counts.add(len(text.split()))
            else:
                lengths = [rng.randint(1, LONGEST) for _ in range(rng.randint(1, MOST_SEQUENCES))]
                ids = torch.randint(1, SMALL["vocab_size"], (len(lengths), max(lengths)))
                mask = torch.zeros_like(ids)
                for row, length in enumerate(lengths):
                    mask[row, :length] = 1
                model(input_ids=ids, attention_mask=mask)
                counts.add(sum(lengths))
            if call + 1 == WARMUP_CALLS:
                warm = resident_mb()
            if report is not None and (call + 1) % REPORT_EVERY == 0:
                report(f"{call + 1} calls: {resident_mb():.1f} MiB")
    end = resident_mb()
    return {"calls": calls, "dtype": str(dtype).removeprefix("torch."), "route": route or "measured",
            "row_buckets": row_buckets, "pipeline": pipeline, "distinct_token_counts": len(counts),
            "rss_after_warmup_mb": round(warm, 1), "rss_end_mb": round(end, 1), "retained_mb": round(end - warm, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--dtype", choices=["fp32", "bf16"], default="fp32")
    parser.add_argument("--route", choices=modeling_bert_fast.ROUTES)
    parser.add_argument("--no-row-buckets", dest="row_buckets", action="store_false")
    parser.add_argument("--pipeline", action="store_true", help="all-MiniLM-L6-v2 through pipeline('feature-extraction')")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.calls <= WARMUP_CALLS:
        parser.error(f"--calls must be more than the {WARMUP_CALLS} warm-up calls")
    result = soak(args.calls, torch.bfloat16 if args.dtype == "bf16" else torch.float32, args.route, args.row_buckets,
                  args.pipeline, args.seed, report=None if args.json else print)
    if args.json:
        print(json.dumps(result))
    else:
        print(f"{result['calls']} calls ({result['dtype']}, route {result['route']}, row buckets "
              f"{'on' if result['row_buckets'] else 'off'}{', pipeline' if result['pipeline'] else ''}): "
              f"{result['distinct_token_counts']} distinct token counts; resident {result['rss_after_warmup_mb']} MiB "
              f"after warm-up, {result['rss_end_mb']} MiB at the end: {result['retained_mb']:+.1f} MiB retained")


if __name__ == "__main__":
    main()
