"""The parity harness: measure how far mini_hf_bert's numbers are from transformers'.

Used by ``python -m mini_hf_bert demo`` / ``parity`` and by the test suite, so the
tolerance a user sees in the demo is the one the tests enforce.

* ``compare_outputs``: max |diff| of named model outputs.
* Module by module: ``tracing.compare_traces`` runs both models with hooks on every
  submodule; the two have the same submodule paths (``encoder.layer.3.attention.self``
  in both).

transformers is imported only by ``load_transformers_bert``; nothing here needs it otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import torch

from ..checkpoints.errors import CheckpointError
from ..checkpoints.hf_format import find_weights_file

# --------------------------------------------------------------------------------------
# Tolerances: the one place they live.
# --------------------------------------------------------------------------------------
#: fp32 on CPU, same weights, same inputs. The two implementations do the same math in a
#: slightly different order (x / sqrt(D) vs x * D**-0.5, a float additive mask vs a
#: boolean one, different fused SDPA paths), so results differ by float32 rounding:
#: a few ulps per op, which LayerNorm after every block keeps from growing. Measured
#: differences are ~1e-6 through 12 layers of bert-base; 1e-5 leaves headroom while
#: still catching any real error (a wrong eps, a missing 1/sqrt(D), a transposed weight,
#: the tanh vs erf GELU), each of which is >= 1e-4.
FP32_ATOL = 1e-5

#: bf16 vs fp32 of the same checkpoint is not a parity check: bf16 keeps 8 mantissa bits
#: (relative rounding 2**-8 ~ 4e-3 per op), so outputs move by ~1e-2. What must hold is that
#: each token vector still points the same way: cosine similarity above 0.99 (measured
#: ~0.999 on all-MiniLM-L6-v2; a broken bf16 path, e.g. an overflowing mask, gives < 0.9).
BF16_MIN_COSINE = 0.99

#: resize_token_embeddings(mean_resizing=True) draws each new row from N(μ, 1e-9·Σ), in
#: ours and in transformers alike, from different random draws: a row's spread is
#: √1e-9·σ ≈ 3e-6 for embedding values of σ ≈ 0.1, so two draws agree within 1e-4 (30 σ),
#: while a row left at random init (σ = 0.02 away from μ) or not resized is off by > 1e-2.
MEAN_RESIZING_ATOL = 1e-4


#: attn_implementation="fast" against eager, fp32, on real tokens. Its matrix products go
#: through oneDNN's pre-packed kernels (on an AVX-512 CPU), which sum each dot product in
#: another order than MKL's sgemm: measured ~5e-6 through 12 layers of bert-base, against
#: ~1e-6 for two same-order paths. 1e-4 is the issue's bound for a reordered sum, and ten
#: times below what a real error moves (>= 1e-3, see FP32_ATOL). With route "aten" the
#: products are the reference's own, and FP32_ATOL holds.
FAST_FP32_ATOL = 1e-4

#: fast_dropout's share of dropped units against the probability it states: a binomial
#: count over n units is within this many standard deviations of n·p with probability
#: 1 - 6e-7 (a fixed seed makes the test repeatable anyway), while drawing from the wrong
#: bits (a lane always positive) or a threshold off by one percent of p is out by hundreds.
DROPOUT_RATE_SIGMAS = 5.0

#: "fast" in bf16 or fp16 against eager in the same dtype: two orders of rounding at
#: 8 (or 11) mantissa bits differ by a few units in the last place of values ~1-10, so
#: there is no absolute bound worth stating. What must hold: fast is no further from the
#: fp32 result than eager in the same dtype is, up to this factor (measured ~1.0-1.3; a
#: lost mask or a wrong scale puts it 10x and more away), and every token vector keeps
#: BF16_MIN_COSINE with fp32.
LOW_PRECISION_ERROR_RATIO = 2.0

#: "fast" in bf16 / fp16 with its residual stream and LayerNorm in fp32 (option
#: fp32_stream), against fp32: a root-mean-square distance (``rms_diff``) no more than
#: this fraction of eager's in the same dtype, and less than its own with the stream in
#: the low dtype. Measured, RMS over eager's: on the test model (same rounded weights)
#: bf16 0.68-0.71 and fp16 0.72-0.81 on AVX-512 (oneDNN route, GELU fused into the
#: product), bf16 0.73-0.76 and fp16 0.75-0.81 on AVX2 (F.linear route); on
#: all-MiniLM-L6-v2 against the fp32 checkpoint 0.70 (AVX-512) and 0.76 (AVX2). The stream
#: left in bf16 gives 0.87-1.23.
#: Why RMS and not max |diff|, on every CPU: each output value carries some ten roundings
#: and the stream removes several of them, which shifts the whole distribution; the max of
#: a few hundred values is one draw from its tail. On AVX2, where the F.linear route
#: rounds each product before its GELU (one rounding more than oneDNN's fused GELU), one
#: 7-token sequence of the test model gave max 0.0201 with the stream against 0.0181
#: without it, while RMS was 0.0056 against 0.0067. Against the fp32 checkpoint the max is
#: the weights' own rounding to bf16, which every bf16 mode shares: on all-MiniLM-L6-v2
#: 0.0379 in all three modes on AVX-512, at a value that the rounded weights alone move
#: from 5.931 to 5.953.
FP32_STREAM_ERROR_RATIO = 0.9

#: Route "int8" (per-channel int8 weights, per-token int8 activations) against fp32: not a
#: parity check. Each product keeps ~1% relative error (7 bits per operand), so token
#: vectors must keep their direction: cosine >= 0.99, the issue's bound. Measured >= 0.9944
#: on the demo's sentences with all-MiniLM-L6-v2 (per-tensor activation scales: 0.9895).
#: It depends on the CPU: int8 runs only where its products sum in int32 (AVX512-VNNI,
#: AMX); elsewhere the default route runs (``modeling_bert_fast.int8_kernel_problem``),
#: because oneDNN's AVX2 kernels add pairs of products in 16 bits and saturate: measured
#: 0.9876 on the test model compiled, 0.9891 on all-MiniLM-L6-v2 (per token), and 7-bit
#: weights, which cannot saturate there, 0.9867.
INT8_MIN_COSINE = 0.99


#: Numbers printed in the generated docs (docs/walkthrough.md and its Chinese twin) against
#: a fresh run. They are printed to 4 decimals, and a fresh run on another machine differs
#: by float noise (~1e-6 relative: another GEMM kernel or thread count), which can flip
#: the last printed digit (1e-4). 1e-3 absolute, plus 1e-5 of the value for the few large
#: ones (finfo.min, a max of 194), tolerates that and nothing a code change would cause:
#: a changed formula moves the printed numbers by far more.
DOC_ATOL = 1e-3
DOC_RTOL = 1e-5

#: ONNX Runtime vs eager PyTorch on the same weights (and, in the benchmark, OpenVINO and
#: CTranslate2 in fp32). ORT runs its own kernels (MLAS GEMMs, fused LayerNorm and
#: softmax, another summation order), so outputs differ by float32 rounding accumulated
#: over the whole graph rather than per op; measured ~1e-6 on the test models. 1e-4 keeps the check tight enough to catch a dropped mask, a wrong
#: activation or a transposed weight (each >= 1e-2) across machines and ORT versions.
ONNX_ATOL = 1e-4


@dataclass
class ParityRow:
    """One compared quantity: its name, the largest absolute difference, and the verdict."""

    name: str
    max_abs_diff: float
    atol: float = FP32_ATOL
    note: str = ""

    @property
    def ok(self) -> bool:
        return math.isfinite(self.max_abs_diff) and self.max_abs_diff <= self.atol

    @property
    def status(self) -> str:
        return "within tolerance" if self.ok else "OUT OF TOLERANCE"


def _difference(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor | None:
    """a - b in float64; None when shapes differ or either side has a NaN."""
    if a.shape != b.shape:
        return None
    a64, b64 = a.detach().double(), b.detach().double()
    if torch.isnan(a64).any() or torch.isnan(b64).any():
        return None
    return a64 - b64


def max_abs_diff(a: torch.Tensor, b: torch.Tensor) -> float:
    """max |a - b| in float64; inf when shapes differ or either side has a NaN."""
    difference = _difference(a, b)
    if difference is None:
        return math.inf
    return difference.abs().max().item() if a.numel() else 0.0


def rms_diff(a: torch.Tensor, b: torch.Tensor) -> float:
    """√mean((a - b)²) in float64: how far two results are on the whole (``max_abs_diff``
    is how far at worst); inf when shapes differ or either side has a NaN."""
    difference = _difference(a, b)
    if difference is None:
        return math.inf
    return difference.pow(2).mean().sqrt().item() if a.numel() else 0.0


def compare_outputs(ours, theirs, fields: Iterable[str], atol: float = FP32_ATOL, prefix: str = "") -> list[ParityRow]:
    """Compare named fields of two model outputs; tuple fields (hidden_states, attentions)
    give one row per element, named ``field[i]``."""
    rows = []
    for name in fields:
        a, b = getattr(ours, name), getattr(theirs, name)
        if isinstance(a, torch.Tensor):
            rows.append(ParityRow(prefix + name, max_abs_diff(a, b), atol))
        else:
            if len(a) != len(b):
                rows.append(ParityRow(prefix + name, math.inf, atol, note=f"{len(a)} vs {len(b)} tensors"))
                continue
            rows.extend(ParityRow(f"{prefix}{name}[{i}]", max_abs_diff(x, y), atol) for i, (x, y) in enumerate(zip(a, b)))
    return rows


def format_table(rows: list[ParityRow], title: str = "") -> str:
    width = max([len(r.name) for r in rows] + [len("output")])
    lines = [title] if title else []
    lines.append(f"  {'output':<{width}}  {'max |diff|':>10}  {'tolerance':>9}  status")
    for r in rows:
        note = f"  ({r.note})" if r.note else ""
        lines.append(f"  {r.name:<{width}}  {r.max_abs_diff:>10.2e}  {r.atol:>9.0e}  {r.status}{note}")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------
# docs/parity.md: when the documented table no longer describes a run
# --------------------------------------------------------------------------------------


def parity_doc_problems(measured: dict[str, dict], documented: dict[str, dict]) -> list[str]:
    """Why a documented parity table is stale for a run, one sentence each; [] if current.

    Both arguments map a family name to ``{"tensors": n, "max_abs_diff": "1.2e-07", "atol": "1e-05"}``.
    A table is stale when a family was added or removed, when it compares another number of
    tensors or under another tolerance, or when a figure (documented or measured) is over
    its tolerance -- not when a figure moved within it: the last bits of float results
    legitimately differ between machines, thread counts and memory layouts (another GEMM
    kernel, another reduction split), so a figure measured on one machine is not
    reproduced bit for bit on another. Every full run measures the figures again, so a
    change to the code or the inputs that moves one shows here, with no hash of the sources.
    """
    problems = []
    for family in sorted(set(measured) | set(documented)):
        ours, doc = measured.get(family), documented.get(family)
        if doc is None:
            problems.append(f"{family}: measured by this run, missing from the doc")
        elif ours is None:
            problems.append(f"{family}: in the doc, but this run measured no such family")
        else:
            if ours["tensors"] != doc["tensors"]:
                problems.append(f"{family}: {ours['tensors']} tensors compared, the doc says {doc['tensors']}")
            if float(ours["atol"]) != float(doc["atol"]):
                problems.append(f"{family}: tolerance {ours['atol']}, the doc says {doc['atol']}")
            for who, row in (("measured", ours), ("documented", doc)):
                if not float(row["max_abs_diff"]) <= float(row["atol"]):
                    problems.append(f"{family}: {who} max |diff| {row['max_abs_diff']} is over its tolerance {row['atol']}")
    return problems


def load_transformers_bert(path: str, attn_implementation: str):
    """transformers' own BertModel from the same directory, fp32, eval mode."""
    try:
        import transformers
    except ImportError:
        raise RuntimeError(
            "the parity check needs transformers installed (pip install 'mini_hf_bert[demo]')"
        ) from None
    transformers.utils.logging.disable_progress_bar()
    verbosity = transformers.utils.logging.get_verbosity()
    # Its load report (a task checkpoint's heads are UNEXPECTED in a BertModel) repeats
    # what mini_hf_bert's own loading already said about the same file.
    transformers.utils.logging.set_verbosity_error()
    try:
        model = transformers.BertModel.from_pretrained(path, attn_implementation=attn_implementation, dtype=torch.float32)
    except Exception as e:  # noqa: BLE001 - a file mini_hf_bert read but transformers cannot: say so, naming it
        reason = str(e).strip().splitlines()[0] if str(e).strip() else ""
        try:
            named = find_weights_file(path)
        except CheckpointError:
            named = path
        raise CheckpointError(f"{named}: transformers {transformers.__version__} cannot load it for the comparison "
                              f"({type(e).__name__}: {reason})") from None
    finally:
        transformers.utils.logging.set_verbosity(verbosity)
    return model.eval()
