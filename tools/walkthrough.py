"""The numbers and pictures of the walk-throughs (docs/walkthrough.md, docs/zh/walkthrough.md).

``compute_facts`` runs a checkpoint on one walk's sentences (``WALKS``: the English one on
the packaged all-MiniLM-L6-v2, the Chinese one on the Chinese BERT shipped with
mini_hf_bert) and collects every number its document prints; ``render`` fills a template
(``docs/templates/walkthrough.{en,zh}.md``) with them; ``draw_pictures`` draws the
figures; ``number_drift`` tells a committed document from a fresh rendering, comparing
text exactly and numbers within ``parity.DOC_ATOL`` / ``DOC_RTOL``.
Run as a script, it writes the documents and their pictures:

    .venv/bin/python tools/walkthrough.py [--no-pictures]
    .venv/bin/python tools/walkthrough.py --render-only   # after editing a template's prose

``--render-only`` writes the text only, and keeps each committed number that today's run
matches within the tolerance (``keep_committed_numbers``), so a prose edit rewrites no
float whose last digit is this machine's. The test ``tests/companion/test_walkthrough.py``
regenerates the text and fails if the committed documents are stale.
"""

from __future__ import annotations

import argparse
import difflib
import inspect
import math
import os
import re
import sys
import time
from dataclasses import dataclass, field
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import torch  # noqa: E402
from torch import nn  # noqa: E402

from mini_hf_bert.companion.tokenize_explain import explain_tokenization  # noqa: E402
from mini_hf_bert.companion.trace_report import trace_texts  # noqa: E402
from mini_hf_bert.companion.tracing import run_with_cache  # noqa: E402
from mini_hf_bert.file_utils import save_png, write_text  # noqa: E402
from mini_hf_bert.modeling_bert import BertForPreTraining, BertModel  # noqa: E402
from mini_hf_bert.parity.compare import DOC_ATOL, DOC_RTOL  # noqa: E402
from mini_hf_bert.tokenization_bert import BertTokenizer  # noqa: E402
from tools.templates import render  # noqa: E402

@dataclass(frozen=True)
class Walk:
    """What one walk-through follows through its checkpoint."""

    sentence: str  # from characters to the losses
    focus_text: str  # the word of ``sentence`` whose numbers are printed, masked in section 7
    focus_token: str  # its token
    short_sentence: str  # padded beside ``sentence`` in a batch (the mask); sentence B of the true pair
    random_sentence: str  # sentence B of a random pair (next-sentence prediction)


WALKS = {
    # Accents, an apostrophe, punctuation and two words the vocabulary splits into pieces.
    "en": Walk("Ms. Müller's café serves unaffable croissants!", "café", "cafe", "The croissants were fresh.",
               "The committee adjourned until Tuesday."),
    # One token per character; with an English vocabulary, 是 and 首 are [UNK].
    "zh": Walk("北京是中国的首都。", "首", "首", "它历史悠久。", "这款手机的电池很耐用。"),
}
#: How many candidates the masked-LM step lists.
TOP_K = 5
#: The head whose scores and probabilities the attention section prints (layer 0).
FOCUS_HEAD = 3
#: Seed for pre-training heads that a checkpoint does not have (all-MiniLM-L6-v2's).
HEAD_SEED = 0
#: Values printed per vector.
SHOWN = 4

TRANSFORMERS_URL = "https://github.com/huggingface/transformers/blob/v{version}/src/transformers/models/bert/modeling_bert.py"
IMAGE_DIR = os.path.join("docs", "images", "walkthrough")


def f4(x: float) -> str:
    """A number as the documents print it: 4 decimals, or scientific for the huge ones."""
    x = float(x)
    if x == 0:
        return "0.0000"  # also -0.0, which (1 - 1) * finfo.min gives
    if abs(x) >= 1e6 or abs(x) < 1e-4:
        return f"{x:.4e}"
    return f"{x:.4f}"


def vec(values: torch.Tensor, n: int = SHOWN) -> str:
    flat = values.flatten()
    more = ", ..." if flat.numel() > n else ""
    return "[" + ", ".join(f4(v) for v in flat[:n].tolist()) + more + "]"


def _stats(x: torch.Tensor) -> str:
    x = x.double()
    return f"mean {f4(x.mean())}, std {f4(x.std())}, min {f4(x.min())}, max {f4(x.max())}"


def _shape(x: torch.Tensor) -> str:
    return "(" + ", ".join(str(s) for s in x.shape) + ")"


@dataclass
class Facts:
    """Every value the templates name, as text, plus the arrays the pictures need."""

    values: dict[str, str] = field(default_factory=dict)
    arrays: dict[str, Any] = field(default_factory=dict)

    def __setitem__(self, key: str, value: Any) -> None:
        self.values[key] = value if isinstance(value, str) else str(value)

    def __getitem__(self, key: str) -> str:
        return self.values[key]


def _source_lines(facts: Facts) -> None:
    """Where the documents link into transformers' tagged file: each class and function by
    its line. Links into our own files name the class or function instead (the link's
    text), so that a line of explanation added above it moves no link."""
    import transformers
    from transformers.models.bert import modeling_bert as hf_bert

    for name, obj in vars(hf_bert).items():
        if (inspect.isclass(obj) or inspect.isfunction(obj)) and obj.__module__ == hf_bert.__name__:
            facts[f"hf.{name}"] = TRANSFORMERS_URL.format(version=transformers.__version__) + f"#L{inspect.getsourcelines(obj)[1]}"
    facts["transformers_version"] = transformers.__version__
    facts["torch_version"] = torch.__version__.split("+")[0]


def _tokenization(facts: Facts, tokenizer: BertTokenizer, text: str, key: str) -> None:
    explanation = explain_tokenization(tokenizer, text)
    rows = []
    for stage in explanation.stages:
        if stage.skipped:
            continue
        shown = repr(stage.result) if isinstance(stage.result, str) else " · ".join(stage.result)
        rows.append(f"| {{{{stage.{stage.name}}}}} | `{shown}` |")
    facts[f"{key}.stages"] = "\n".join(rows)
    pieces = [m for m in explanation.wordpieces if len(m.pieces) > 1]
    facts[f"{key}.pieces"] = "\n".join(
        f"| `{m.word}` | " + " · ".join(f"`{p}` ({n})" for p, n in zip(m.pieces, m.lookups)) + " |" for m in pieces
    ) or "| | |"
    facts[f"{key}.tokens"] = " ".join(explanation.input_tokens)
    facts[f"{key}.ids"] = " ".join(str(i) for i in explanation.input_ids)
    facts[f"{key}.T"] = len(explanation.input_ids)
    facts[f"{key}.unk"] = sum(t == tokenizer.unk_token for t in explanation.input_tokens)
    facts[f"{key}.id_table"] = "\n".join(
        f"| {i} | `{t}` | {n} |" for i, (t, n) in enumerate(zip(explanation.input_tokens, explanation.input_ids))
    )


def compute_facts(checkpoint: str, walk: Walk = WALKS["en"], other_vocabulary: str | None = None) -> Facts:
    """Run ``checkpoint`` on ``walk``'s sentences and collect what its document prints.
    ``other_vocabulary``: a checkpoint whose tokenizer the document compares on the same
    sentence (``other.*``: the Chinese walk shows what an English vocabulary makes of it)."""
    facts = Facts()
    _source_lines(facts)
    model = BertModel.from_pretrained(checkpoint, attn_implementation="eager")
    tokenizer = BertTokenizer.from_pretrained(checkpoint)
    config = model.config
    heads, hidden = config.num_attention_heads, config.hidden_size
    head_dim = hidden // heads
    for name, value in (("L", config.num_hidden_layers), ("H", hidden), ("N", heads), ("D", head_dim),
                        ("I", config.intermediate_size), ("V", config.vocab_size), ("P", config.max_position_embeddings),
                        ("params", f"{model.num_parameters() / 1e6:.1f}M"), ("eps", f"{config.layer_norm_eps:g}"),
                        *((f"params.{part}", f"{sum(p.numel() for p in getattr(model, part).parameters()):,}")
                          for part in ("embeddings", "encoder", "pooler")),
                        ("sentence", walk.sentence), ("short_sentence", walk.short_sentence),
                        ("random_sentence", walk.random_sentence), ("focus_text", walk.focus_text),
                        ("focus_head", FOCUS_HEAD), ("focus_head_ordinal", FOCUS_HEAD + 1), ("head_seed", HEAD_SEED)):
        facts[name] = value

    # 1-2. Tokens and ids
    _tokenization(facts, tokenizer, walk.sentence, "tok")
    if other_vocabulary is not None:
        _tokenization(facts, BertTokenizer.from_pretrained(other_vocabulary), walk.sentence, "other")
    encoded = tokenizer(walk.sentence, return_tensors="pt")
    inputs = {k: encoded[k] for k in ("input_ids", "attention_mask", "token_type_ids")}
    tokens = tokenizer.convert_ids_to_tokens(inputs["input_ids"][0].tolist())
    focus = tokens.index(walk.focus_token)
    facts["focus"], facts["focus_token"] = focus, walk.focus_token
    facts["input_shape"] = _shape(inputs["input_ids"])
    facts["attention_mask"] = str(inputs["attention_mask"][0].tolist())
    facts["token_type_ids"] = str(inputs["token_type_ids"][0].tolist())

    # 3. Embeddings
    output, t = run_with_cache(model, **inputs, output_attentions=True)
    word = t["embeddings.word_embeddings"][0]  # (T, H)
    position = t["embeddings.position_embeddings"][0]
    segment = t["embeddings.token_type_embeddings"][0]
    summed = word + segment + position  # the order BertEmbeddings adds them
    normed = t["embeddings.LayerNorm"][0]
    facts["emb.word"], facts["emb.position"], facts["emb.type"] = vec(word[focus]), vec(position[focus]), vec(segment[focus])
    facts["emb.sum"], facts["emb.ln"] = vec(summed[focus]), vec(normed[focus])
    facts["emb.sum_stats"] = f"mean {f4(summed[focus].mean())}, std {f4(summed[focus].std(unbiased=False))}"
    centred = (summed[focus] - summed[focus].mean()) / torch.sqrt(summed[focus].var(unbiased=False) + config.layer_norm_eps)
    facts["emb.centred"] = vec(centred)
    facts["emb.gamma"] = vec(model.embeddings.LayerNorm.weight.detach())
    facts["emb.beta"] = vec(model.embeddings.LayerNorm.bias.detach())
    facts["emb.shape"] = _shape(t["embeddings"])
    # 3.4.0 adds position before token type: the same numbers up to float rounding.
    legacy = (word + position + segment)
    facts["emb.order_diff"] = f4((legacy - summed).abs().max())
    facts.arrays["embeddings"] = {"tokens": tokens, "word": word, "position": position, "type": segment,
                                  "sum": summed, "layernorm": normed}

    # 4. Layer 0, opened up
    prefix = "encoder.layer.0.attention.self"
    q, k, v = t[f"{prefix}.query"], t[f"{prefix}.key"], t[f"{prefix}.value"]  # (1, T, H)
    T = q.shape[1]

    def split(x: torch.Tensor) -> torch.Tensor:
        return x.view(1, T, heads, head_dim).transpose(1, 2)  # (1, N, T, D)

    qh, kh, vh = split(q), split(k), split(v)
    scores = torch.matmul(qh, kh.transpose(-1, -2)) * head_dim**-0.5  # (1, N, T, T)
    probs = torch.softmax(scores, dim=-1)
    model_probs = t.output(prefix)[1]  # what the model computed
    assert torch.allclose(probs, model_probs, atol=1e-6), "the walk-through's recomputation left the model's path"
    divided = torch.matmul(qh, kh.transpose(-1, -2)) / math.sqrt(head_dim)  # transformers 3.4 / 4.x
    facts["q.shape"], facts["qh.shape"], facts["scores.shape"] = _shape(q), _shape(qh), _shape(scores)
    facts["q.focus"] = vec(qh[0, FOCUS_HEAD, focus])
    facts["k.focus"] = vec(kh[0, FOCUS_HEAD, focus])
    facts["scaling"] = f4(head_dim**-0.5)
    facts["scale_diff"] = f4((divided - scores).abs().max())
    row_scores, row_probs = scores[0, FOCUS_HEAD, focus], probs[0, FOCUS_HEAD, focus]
    facts["score_table"] = "\n".join(
        f"| `{tok}` | {f4(s)} | {f4(p)} |" for tok, s, p in zip(tokens, row_scores.tolist(), row_probs.tolist())
    )
    facts["prob_sum"] = f4(row_probs.sum())
    top = int(row_probs.argmax())
    facts["top_token"], facts["top_prob"] = tokens[top], f4(row_probs[top])
    context = torch.matmul(model_probs, vh)  # (1, N, T, D)
    merged = context.transpose(1, 2).reshape(1, T, hidden)
    assert torch.allclose(merged, t[prefix], atol=1e-6)
    facts["context.shape"], facts["merged.shape"] = _shape(context), _shape(merged)
    facts["merged.focus"] = vec(merged[0, focus])
    facts.arrays["attention_layer0"] = model_probs[0]
    facts.arrays["tokens"] = tokens

    # The mask, on a padded batch of two sentences
    batch = tokenizer([walk.sentence, walk.short_sentence], padding=True, return_tensors="pt")
    batch_inputs = {k: batch[k] for k in ("input_ids", "attention_mask", "token_type_ids")}
    from mini_hf_bert.masking_utils import get_extended_attention_mask

    extended = get_extended_attention_mask(batch["attention_mask"], tuple(batch["input_ids"].shape))
    facts["mask.batch_shape"] = _shape(batch["input_ids"])
    facts["mask.row"] = str(batch["attention_mask"][1].tolist())
    facts["mask.extended_shape"] = _shape(extended)
    facts["mask.min"] = f4(torch.finfo(torch.float32).min)
    keep = int((extended[1, 0, 0] == 0).sum())
    facts["mask.values"] = f"[0.0000 × {keep}, {f4(torch.finfo(torch.float32).min)} × {extended.shape[-1] - keep}]"
    short_tokens = tokenizer.convert_ids_to_tokens(batch["input_ids"][1].tolist())
    _, bt = run_with_cache(model, **batch_inputs, output_attentions=True)
    padded_probs = bt.output(prefix)[1][1]  # (N, T, T) of the short sentence
    real = int(batch["attention_mask"][1].sum())
    facts["mask.real"], facts["mask.padding"] = real, len(short_tokens) - real
    facts["mask.pad_weight"] = f4(padded_probs[:, :real, real:].abs().max())
    legacy_mask = (1.0 - batch["attention_mask"][:, None, None, :].float()) * -10000.0  # transformers 3.4
    with torch.no_grad():
        scores_b = _layer0_scores(model, bt, prefix, batch["input_ids"].shape, heads, head_dim)
        p_new = torch.softmax(scores_b + extended, dim=-1)
        p_old = torch.softmax(scores_b + legacy_mask, dim=-1)
        facts["mask.legacy_diff"] = f4((p_new - p_old).abs().max())
    facts.arrays["mask"] = {"attention_mask": batch["attention_mask"], "extended": extended[1, 0, 0],
                            "probs": padded_probs[FOCUS_HEAD], "tokens": short_tokens}

    # Add & Norm, the feed-forward
    layer = "encoder.layer.0"
    dense_out = t[f"{layer}.attention.output.dense"][0]
    add_norm1 = t[f"{layer}.attention.output.LayerNorm"][0]
    facts["attn_out.stats"] = _stats(dense_out)
    facts["addnorm1.stats"] = _stats(add_norm1)
    pre = t[f"{layer}.intermediate.dense"][0]  # (T, I)
    post = t[f"{layer}.intermediate.intermediate_act_fn"][0]
    facts["ffn.pre_shape"] = _shape(t[f"{layer}.intermediate.dense"])
    facts["ffn.negative"] = f"{100 * (pre < 0).double().mean().item():.1f}%"
    facts["ffn.pre_stats"] = _stats(pre)
    facts["ffn.post_stats"] = _stats(post)
    gelu_min = nn.functional.gelu(torch.linspace(-3, 0, 300001, dtype=torch.float64)).min()
    facts["gelu_min"] = f4(gelu_min)
    tanh_gelu = nn.functional.gelu(pre, approximate="tanh")
    facts["gelu_tanh_diff"] = f4((tanh_gelu - post).abs().max())
    facts["addnorm2.stats"] = _stats(t[f"{layer}.output.LayerNorm"][0])
    facts.arrays["ffn"] = {"pre": pre, "post": post}

    # 5. The stack
    rows = [f"| embeddings | {_stats(t['embeddings'][0])} |"]
    for i in range(config.num_hidden_layers):
        rows.append(f"| layer {i} | {_stats(t[f'encoder.layer.{i}'][0])} |")
    facts["stack_table"] = "\n".join(rows)
    facts["last.shape"] = _shape(output.last_hidden_state)
    facts["last.cls"] = vec(output.last_hidden_state[0, 0])

    # 6. Pooler and mean pooling
    facts["pooled"] = vec(output.pooler_output[0])
    facts["pooled.shape"] = _shape(output.pooler_output)
    mean_pooled = output.last_hidden_state[0].mean(0)
    facts["mean_pooled"] = vec(mean_pooled / mean_pooled.norm())

    # 7. The pre-training heads and their losses
    torch.manual_seed(HEAD_SEED)
    # A checkpoint without cls.* weights (all-MiniLM-L6-v2) keeps a seeded initialisation for them.
    pretraining, info = BertForPreTraining.from_pretrained(checkpoint, attn_implementation="eager", strict=False,
                                                           output_loading_info=True)
    facts["heads.trained"] = "yes" if not any(k.startswith("cls.") for k in info["missing_keys"]) else "no"
    masked_text = walk.sentence.replace(walk.focus_text, tokenizer.mask_token, 1)
    target = inputs["input_ids"][0, focus]
    pair = tokenizer(masked_text, walk.short_sentence, return_tensors="pt")
    random_pair = tokenizer(masked_text, walk.random_sentence, return_tensors="pt")
    assert pair["input_ids"][0, focus] == tokenizer.mask_token_id
    pair_labels = torch.full_like(pair["input_ids"], -100)
    pair_labels[0, focus] = target
    with torch.no_grad():
        out = pretraining(input_ids=pair["input_ids"], attention_mask=pair["attention_mask"],
                          token_type_ids=pair["token_type_ids"], labels=pair_labels, next_sentence_label=torch.tensor([0]))
        random_nsp = pretraining(input_ids=random_pair["input_ids"], attention_mask=random_pair["attention_mask"],
                                 token_type_ids=random_pair["token_type_ids"]).seq_relationship_logits  # (1, 2)
    mlm_logits, nsp_logits = out.prediction_logits, out.seq_relationship_logits
    mlm_loss = nn.functional.cross_entropy(mlm_logits.view(-1, config.vocab_size), pair_labels.view(-1))
    nsp_loss = nn.functional.cross_entropy(nsp_logits, torch.tensor([0]))
    assert torch.allclose(out.loss, mlm_loss + nsp_loss)
    facts["masked_text"] = masked_text
    facts["pair.tokens"] = " ".join(tokenizer.convert_ids_to_tokens(pair["input_ids"][0].tolist()))
    facts["pair.types"] = str(pair["token_type_ids"][0].tolist())
    facts["mlm.shape"], facts["nsp.shape"] = _shape(mlm_logits), _shape(nsp_logits)
    facts["mlm.loss"], facts["nsp.loss"], facts["total.loss"] = f4(mlm_loss), f4(nsp_loss), f4(out.loss)
    facts["ln_V"], facts["ln_2"] = f4(math.log(config.vocab_size)), f4(math.log(2))
    facts["nsp.logits"] = vec(nsp_logits[0], 2)
    target_rank = int((mlm_logits[0, focus] > mlm_logits[0, focus, target]).sum()) + 1
    facts["mlm.rank"] = target_rank
    # P(token at the mask) = softmax over the vocabulary of that position's logits
    probabilities = torch.softmax(mlm_logits[0, focus], dim=-1)  # (V,)
    top = probabilities.topk(TOP_K)
    facts["mlm.top"] = "\n".join(
        f"| {rank} | `{tokenizer.convert_ids_to_tokens(int(i))}` | {f4(p)} |"
        for rank, (p, i) in enumerate(zip(top.values.tolist(), top.indices.tolist()), start=1))
    facts["mlm.target_prob"] = f4(probabilities[target])
    facts["mlm.best"] = tokenizer.convert_ids_to_tokens(int(top.indices[0]))
    if facts["heads.trained"] == "yes":  # the pipeline reads the masked sentence alone, without B
        from mini_hf_bert import pipeline

        alone = pipeline("fill-mask", model=checkpoint)(masked_text, top_k=3)
        facts["mlm.alone"] = "、".join(f"`{c['token_str']}` {f4(c['score'])}" for c in alone)
    # P(IsNext) = softmax(NSP logits)[0]: label 0 means "B follows A"
    facts["nsp.true_isnext"] = f4(torch.softmax(nsp_logits[0], -1)[0])
    facts["nsp.random_isnext"] = f4(torch.softmax(random_nsp[0], -1)[0])
    facts["random.tokens"] = " ".join(tokenizer.convert_ids_to_tokens(random_pair["input_ids"][0].tolist()))

    # 8. Parity with transformers, module by module
    report = trace_texts([walk.sentence], checkpoint, compare=True)
    compared = [d for d in report.diffs if d.compared]
    facts["parity.modules"] = len(compared)
    facts["parity.max"] = f4(max(d.max_abs_diff for d in compared))
    facts["parity.ok"] = "✓" if report.ok else "✗"
    return facts


def _layer0_scores(model: BertModel, traced, prefix: str, shape, heads: int, head_dim: int) -> torch.Tensor:
    batch_size, seq = shape

    def split(x: torch.Tensor) -> torch.Tensor:
        return x.view(batch_size, seq, heads, head_dim).transpose(1, 2)  # (B, N, T, D)

    q, k = split(traced[f"{prefix}.query"]), split(traced[f"{prefix}.key"])
    return torch.matmul(q, k.transpose(-1, -2)) * head_dim**-0.5  # (B, N, T, T)


# --------------------------------------------------------------------------------------
# Staleness
# --------------------------------------------------------------------------------------

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[+-]?\d+)?")


def number_drift(committed: str, fresh: str, atol: float = DOC_ATOL, rtol: float = DOC_RTOL) -> list[str]:
    """Why ``committed`` is not ``fresh`` up to float noise, one sentence each; [] if current.

    The texts between numbers must be identical, and so must the count of numbers; each
    number may differ by ``atol + rtol * |fresh|``: the last printed digit of a float
    legitimately differs between machines (another GEMM kernel, another thread count).
    """
    text_a, text_b = _NUMBER.split(committed), _NUMBER.split(fresh)
    numbers_a, numbers_b = _NUMBER.findall(committed), _NUMBER.findall(fresh)
    problems = []
    if text_a != text_b or len(numbers_a) != len(numbers_b):
        for line_a, line_b in zip(_NUMBER.sub("#", committed).splitlines(), _NUMBER.sub("#", fresh).splitlines()):
            if line_a != line_b:
                problems.append(f"text differs: {line_a.strip()[:120]!r} vs {line_b.strip()[:120]!r}")
                break
        else:
            problems.append(f"{len(numbers_a)} numbers in the committed text, {len(numbers_b)} in a fresh one")
        return problems
    for a, b in zip(numbers_a, numbers_b):
        if abs(float(a) - float(b)) > atol + rtol * abs(float(b)):
            problems.append(f"{a} in the committed text, {b} now")
    return problems


def _within(committed: str, fresh: str, atol: float = DOC_ATOL, rtol: float = DOC_RTOL) -> bool:
    return abs(float(committed) - float(fresh)) <= atol + rtol * abs(float(fresh))


def keep_committed_numbers(committed: str, fresh: str) -> str:
    """``fresh`` with each of its numbers that stands where ``committed`` has one within the
    tolerance replaced by the committed one. Where a number stands is found by the text
    around it: the texts between numbers are aligned (``difflib``), and each number follows
    its text, so an edited sentence moves no number elsewhere."""
    text_a, text_b = _NUMBER.split(committed), _NUMBER.split(fresh)
    numbers_a, numbers_b = _NUMBER.findall(committed), _NUMBER.findall(fresh)
    kept = list(numbers_b)
    matcher = difflib.SequenceMatcher(a=text_a, b=text_b, autojunk=False)
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag == "equal" or (tag == "replace" and a1 - a0 == b1 - b0):  # the number after text i is number i
            for i, j in zip(range(a0, a1), range(b0, b1)):
                if i < len(numbers_a) and j < len(numbers_b) and _within(numbers_a[i], numbers_b[j]):
                    kept[j] = numbers_a[i]
    return "".join(part for pair in zip(text_b, kept + [""]) for part in pair)


# --------------------------------------------------------------------------------------
# Pictures
# --------------------------------------------------------------------------------------


#: The pictures' own words, by document language.
PICTURE_WORDS = {
    "en": {"range": "colour range", "dims": "first {n} of H dimensions",
           "embeddings": "BertEmbeddings: three table rows per token, summed, then LayerNorm (red > 0 > blue)",
           "sum": "= sum", "mask.keys": "attention_mask (B, S): black 1 = token, white 0 = padding",
           "mask.rows": ("sentence 0", "sentence 1"), "mask.key": "key position",
           "mask.additive": "additive mask of sentence 1, broadcast over queries:\nwhite = 0 (keep), red = finfo(float32).min",
           "mask.softmax": "layer 0, head {h}: softmax(scores + mask)\npadding columns get weight 0",
           "gelu.hist": "layer 0: intermediate.dense outputs", "gelu.relu": "ReLU, for comparison",
           "gelu.density": "density of x", "gelu.activation": "activation",
           "gelu.title": "The feed-forward's activation: most inputs are negative and leave as ~0"},
    "zh": {"range": "颜色范围", "dims": "H 维中的前 {n} 维",
           "embeddings": "BertEmbeddings：每个 token 查三张表、相加，再做 LayerNorm（红 > 0 > 蓝）",
           "sum": "= 三者之和", "mask.keys": "attention_mask (B, S)：黑 1 = token，白 0 = 填充",
           "mask.rows": ("第 0 句", "第 1 句"), "mask.key": "key 的位置",
           "mask.additive": "第 1 句的加性 mask，在 query 上广播：\n白 = 0（保留），红 = finfo(float32).min",
           "mask.softmax": "第 0 层 {h} 号头：softmax(分数 + mask)\n填充列的权重为 0",
           "gelu.hist": "第 0 层 intermediate.dense 的输出", "gelu.relu": "ReLU（作对比）",
           "gelu.density": "x 的分布密度", "gelu.activation": "激活值",
           "gelu.title": "前馈层的激活：大多数输入是负数，出来约等于 0"},
}


#: The walk-through's pictures are drawn smaller than the package's (PNG_DPI): they sit in a page.
WALKTHROUGH_DPI = 90


def draw_pictures(facts: Facts, checkpoint: str, out_dir: str, walk: Walk = WALKS["en"],
                  language: str = "en") -> list[str]:
    """The figures of one document, labelled in ``language``; returns the files written."""
    from mini_hf_bert.companion.visualize import attention_for_text, figure_fonts, plot_attention, write_attention_html

    words = PICTURE_WORDS[language]
    os.makedirs(out_dir, exist_ok=True)
    written = []
    emb = facts.arrays["embeddings"]
    mask = facts.arrays["mask"]
    tokens = emb["tokens"]
    labels = "".join(str(w) for w in words.values()) + "".join(tokens) + "".join(mask["tokens"])
    with figure_fonts(labels) as plt:
        # The embedding sum: five (T, 48) slices side by side.
        fig, axes = plt.subplots(1, 5, figsize=(17, 4.6), sharey=True)
        panels = [("word_embeddings[x]", emb["word"]), ("+ token_type_embeddings[s]", emb["type"]),
                  ("+ position_embeddings[p]", emb["position"]), (words["sum"], emb["sum"]),
                  ("LayerNorm(sum)", emb["layernorm"])]
        dims = 48
        for ax, (title, values) in zip(axes, panels):
            data = values[:, :dims].numpy()
            limit = float(abs(data).max()) or 1.0
            ax.imshow(data, cmap="RdBu_r", vmin=-limit, vmax=limit, aspect="auto")
            ax.set_title(f"{title}\n({words['range']} ±{limit:.2f})", fontsize=9)
            ax.set_xlabel(words["dims"].format(n=dims), fontsize=8)
            ax.set_yticks(range(len(tokens)), tokens, fontsize=8)
        fig.suptitle(words["embeddings"], fontsize=11)
        fig.tight_layout(rect=(0, 0, 1, 0.94))
        written.append(save_png(fig, os.path.join(out_dir, "embeddings.png"), dpi=WALKTHROUGH_DPI))

        # The mask: which keys each sequence may attend, the additive mask, what softmax makes of it.
        fig, axes = plt.subplots(1, 3, figsize=(16, 5), gridspec_kw={"width_ratios": [1.2, 1.2, 1.2]})
        m = mask["attention_mask"].numpy()
        axes[0].imshow(m, cmap="Greys", vmin=0, vmax=1, aspect="auto")
        axes[0].set_title(words["mask.keys"], fontsize=9)
        axes[0].set_yticks(range(m.shape[0]), words["mask.rows"], fontsize=8)
        axes[0].set_xlabel(words["mask.key"], fontsize=8)
        extended = mask["extended"].numpy()
        short = mask["tokens"]
        axes[1].imshow((extended[None, :] < 0).repeat(len(short), 0), cmap="Reds", vmin=0, vmax=1, aspect="auto")
        axes[1].set_title(words["mask.additive"], fontsize=9)
        axes[2].imshow(mask["probs"].numpy(), cmap="Blues", vmin=0, vmax=1, aspect="auto")
        axes[2].set_title(words["mask.softmax"].format(h=FOCUS_HEAD), fontsize=9)
        for ax in axes[1:]:
            ax.set_yticks(range(len(short)), short, fontsize=8)
            ax.set_xticks(range(len(short)), short, rotation=90, fontsize=8)
        fig.tight_layout()
        written.append(save_png(fig, os.path.join(out_dir, "mask.png"), dpi=WALKTHROUGH_DPI))

        # The feed-forward's GELU: where the pre-activations lie on the curve.
        ffn = facts.arrays["ffn"]
        fig, ax = plt.subplots(figsize=(7, 4.2))
        x = torch.linspace(-5, 5, 500)
        ax.hist(ffn["pre"].flatten().numpy(), bins=120, range=(-5, 5), density=True, color="#9ecae1",
                label=words["gelu.hist"])
        ax2 = ax.twinx()
        ax2.plot(x.numpy(), nn.functional.gelu(x).numpy(), color="#d62728", label="GELU(x) = x·Φ(x)")
        ax2.plot(x.numpy(), torch.relu(x).numpy(), color="#555555", linestyle=":", label=words["gelu.relu"])
        ax.set_xlabel("x")
        ax.set_ylabel(words["gelu.density"])
        ax2.set_ylabel(words["gelu.activation"])
        lines = ax.get_legend_handles_labels()
        lines2 = ax2.get_legend_handles_labels()
        ax.legend(lines[0] + lines2[0], lines[1] + lines2[1], loc="upper left", fontsize=8)
        ax.set_title(words["gelu.title"], fontsize=10)
        fig.tight_layout()
        written.append(save_png(fig, os.path.join(out_dir, "gelu.png"), dpi=WALKTHROUGH_DPI))

    # Attention maps of layer 0: every head, and the interactive page.
    model = BertModel.from_pretrained(checkpoint)
    tokenizer = BertTokenizer.from_pretrained(checkpoint)
    maps = attention_for_text(model, tokenizer, walk.sentence)
    written.append(plot_attention(maps, 0, None, os.path.join(out_dir, "attention-layer0.png"), language=language))
    written.append(write_attention_html(maps, walk.sentence, os.path.join(out_dir, "attention.html"), layer=0,
                                        language=language))
    return written


# --------------------------------------------------------------------------------------
# The two documents
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Document:
    template: str  # relative to the repository root
    output: str
    root: str  # from the output's folder back to the repository root
    images: str  # from the output's folder to its pictures
    image_dir: str  # its pictures, relative to the repository root


DOCUMENTS = {
    "en": Document("docs/templates/walkthrough.en.md", "docs/walkthrough.md", "../", "images/walkthrough", IMAGE_DIR),
    "zh": Document("docs/templates/walkthrough.zh.md", "docs/zh/walkthrough.md", "../../", "../images/walkthrough/zh",
                   os.path.join(IMAGE_DIR, "zh")),
}


def walk_checkpoints() -> dict[str, tuple[str, str | None]]:
    """Each document's checkpoint, and the one whose vocabulary it compares: the English walk
    on all-MiniLM-L6-v2, the Chinese walk on the Chinese BERT (beside MiniLM's vocabulary)."""
    from mini_hf_bert.checkpoints.bundled import chinese_checkpoint_dir, default_checkpoint_dir

    return {"en": (default_checkpoint_dir(), None), "zh": (chinese_checkpoint_dir(), default_checkpoint_dir())}


def all_facts() -> dict[str, Facts]:
    """``compute_facts`` of every document, on its checkpoint."""
    return {language: compute_facts(checkpoint, WALKS[language], other)
            for language, (checkpoint, other) in walk_checkpoints().items()}


#: The tokenizer's stage names as each document prints them.
STAGE_NAMES = {
    "en": {"special tokens": "special tokens kept whole", "clean-up": "clean-up", "CJK split": "CJK split",
           "whitespace split": "whitespace split", "accent stripping": "accent stripping",
           "lower-casing": "lower-casing", "punctuation split": "punctuation split", "WordPiece": "WordPiece"},
    "zh": {"special tokens": "特殊符号保持完整", "clean-up": "清洗（clean-up）", "CJK split": "汉字切分（CJK split）",
           "whitespace split": "按空白切分", "accent stripping": "去重音（strip accents）",
           "lower-casing": "小写化（lower case）", "punctuation split": "标点切分", "WordPiece": "WordPiece"},
}


def mlm_verdict(language: str, values: dict[str, Any]) -> str:
    """What the page says of the model's fill-mask answer on its own sentence: right, or
    wrong, with what it put first (the reason is the template's prose)."""
    rank, best, answer = values["mlm.rank"], values["mlm.best"], values["focus_token"]
    if language == "zh":
        return (f"模型猜对了：“{answer}”排在第一位。" if rank == 1 else
                f"模型猜错了：它排在第一位的是“{best}”，正确答案“{answer}”排第 {rank} 位。")
    return (f"The model is right: `{answer}` comes first." if rank == 1 else
            f"The model is wrong: it puts `{best}` first, and the right `{answer}` ranks {rank}.")


def render_documents(root: str, facts: dict[str, Facts]) -> dict[str, str]:
    """Output path (relative to ``root``) -> the document's text, from each language's facts."""
    documents = {}
    for language, doc in DOCUMENTS.items():
        with open(os.path.join(root, doc.template), encoding="utf-8") as f:
            template = f.read()
        header = (f"<!-- generated by tools/walkthrough.py from {doc.template}: edit the template, then run "
                  f"`.venv/bin/python tools/walkthrough.py --render-only` -->")
        extra = {"header": header, "root": doc.root, "images": doc.images, "SHOWN": str(SHOWN), "TOP_K": str(TOP_K),
                 "mlm.verdict": mlm_verdict(language, facts[language].values)}
        extra.update({f"stage.{name}": shown for name, shown in STAGE_NAMES[language].items()})
        documents[doc.output] = render(template, {**facts[language].values, **extra}, doc.template)
    return documents


def image_references(text: str) -> list[str]:
    """The local files a document links to as pictures or pages: ![...](path), [...](x.html)."""
    return re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", text) + re.findall(r"\]\(([^)\s]+\.html)\)", text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--no-pictures", action="store_true", help="rewrite the text only")
    parser.add_argument("--render-only", action="store_true",
                        help="rewrite the text only, keeping the committed numbers that today's match within tolerance")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    facts = all_facts()
    for path, text in render_documents(ROOT, facts).items():
        full = os.path.join(ROOT, path)
        if args.render_only and os.path.isfile(full):
            with open(full, encoding="utf-8") as f:
                text = keep_committed_numbers(f.read(), text)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        write_text(full, text)
        print(f"wrote {path}")
    if not (args.no_pictures or args.render_only):
        for language, (checkpoint, _) in walk_checkpoints().items():
            out_dir = os.path.join(ROOT, DOCUMENTS[language].image_dir)
            for path in draw_pictures(facts[language], checkpoint, out_dir, WALKS[language], language):
                print(f"wrote {os.path.relpath(path, ROOT)}")
    print(f"done in {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
