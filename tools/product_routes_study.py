"""Time the matrix-product kernels torch offers on this CPU for bert-base's products.

    .venv/bin/python tools/product_routes_study.py          # ~1 minute on 2 cores

For each dtype and number of rows, the four Linear products of a bert-base layer
(Q/K/V stacked, O, and the feed-forward pair) through each kernel: ``F.linear`` (MKL's
sgemm for fp32), oneDNN's pre-packed product (the fast path's "onednn" route) and MKL's
packed sgemm (``torch.ops.mkl._mkl_linear``, what inductor's freezing uses for fp32).
"warm" times one layer's weights again and again (they stay in the caches); "cold" runs
all twelve layers' weights once per call, as a forward pass does, so they come from
memory. The last column is the rate at which the weights were read.

Run it with the AVX2 switches (docs/performance.md) to see an AVX2 CPU's kernels.
"""

from __future__ import annotations

import os
import sys

import torch
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from mini_hf_bert import cpu_capability  # noqa: E402
from mini_hf_bert.parity.benchmark import _median_ms  # noqa: E402

#: bert-base's Linear products, (in, out), and its layer count.
PRODUCTS = ((768, 2304), (768, 768), (768, 3072), (3072, 768))
LAYERS = 12
ROWS = (1, 16, 64, 256)
RUNS = 10


def kernels(weight: torch.Tensor, bias: torch.Tensor, rows: int) -> dict:
    """Kernel name -> a call x -> x·Wᵀ + b, for those that run this dtype here."""
    found = {"F.linear": lambda x: F.linear(x, weight, bias)}
    try:
        packed = torch.ops.mkldnn._reorder_linear_weight(weight, None)
        found["oneDNN packed"] = lambda x: torch.ops.mkldnn._linear_pointwise(x, packed, bias, "none", [], "")
    except RuntimeError:
        pass
    if weight.dtype == torch.float32 and torch._C.has_mkl:
        mkl = torch.ops.mkl._mkl_reorder_linear_weight(weight, rows)
        found["MKL packed"] = lambda x: torch.ops.mkl._mkl_linear(x, mkl, weight, bias, rows)
    return found


def median_ms(call) -> float:
    """The median of ``RUNS`` timed calls, after one untimed call (the kernel sets itself up)."""
    call()
    return _median_ms(call, RUNS)


def main() -> int:
    print(f"CPU kind: {cpu_capability.cpu_kind()}, {torch.get_num_threads()} threads\n")
    print("| dtype | rows | kernel | warm: one layer, ms | cold: 12 layers, ms | cold: weights read, GB/s |")
    print("|---|---:|---|---:|---:|---:|")
    generator = torch.Generator().manual_seed(0)
    with torch.inference_mode():
        for dtype in (torch.float32, torch.bfloat16):
            weights = [[((torch.randn(out, inner, generator=generator) * 0.02).to(dtype), torch.zeros(out, dtype=dtype))
                        for inner, out in PRODUCTS] for _ in range(LAYERS)]
            nbytes = sum(w.numel() * w.element_size() for layer in weights for w, _ in layer)
            for rows in ROWS:
                inputs = {inner: torch.randn(rows, inner, generator=generator).to(dtype) for inner, _ in PRODUCTS}
                per_layer = [[kernels(w, b, rows) for w, b in layer] for layer in weights]
                for name in per_layer[0][0]:
                    def layer_call(index: int, name: str = name) -> None:
                        for (inner, _), found in zip(PRODUCTS, per_layer[index]):
                            found[name](inputs[inner])
                    warm = median_ms(lambda: layer_call(0))
                    cold = median_ms(lambda: [layer_call(index) for index in range(LAYERS)])
                    print(f"| {str(dtype).removeprefix('torch.')} | {rows} | {name} | {warm:.3f} | {cold:.1f} | "
                          f"{nbytes / (cold / 1000) / 1e9:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
