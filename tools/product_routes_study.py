"""Time the matrix-product kernels torch offers on this CPU for bert-base's products.

    .venv/bin/python tools/product_routes_study.py          # ~1 minute on 2 cores

For each dtype and number of rows, the four Linear products of a bert-base layer
(Q/K/V stacked, O, and the feed-forward pair) through each kernel: ``F.linear`` (MKL's
sgemm for fp32), oneDNN's pre-packed product (the fast path's "onednn" route) and MKL's
packed sgemm (``torch.ops.mkl._mkl_linear``, what inductor's freezing uses for fp32).
"warm" times one layer's weights again and again (they stay in the caches); "cold" runs
all twelve layers' weights once per call, as a forward pass does, so they come from
memory. The last column is the rate at which the weights were read.

"oneDNN packed, 2 MiB pages" is the same packed weight moved into transparent huge pages,
as the fast path holds it (option huge_pages; where the kernel can).

For fp32, where onnxruntime is installed, ONNX Runtime's MatMul + Add on the same weights
as initializers (which it pre-packs for MLAS, its own GEMM library), one session call for
the layer or the twelve: what ONNX Runtime's products reach, apart from its graph; and the
same as an OpenVINO model, where openvino is installed.

Then the fast path's whole W2 call (bert-base, 1 x 16 tokens, fp32) against that model's
own products alone, alternating: what the call spends beyond its products (attention,
LayerNorms, sums, views, each product's own set-up, the embeddings and the pooler).

Last, the work between a layer's products on W2's 16 rows (a LayerNorm, a residual sum,
attention), each timed alone, again and again, and right after a 16-row product whose
weights came from memory: as the call runs it, its rows no longer in the caches.

Run it with the AVX2 switches (docs/performance.md) to see an AVX2 CPU's kernels.
"""

from __future__ import annotations

import dataclasses
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from mini_hf_bert import cpu_capability, modeling_bert_fast  # noqa: E402
from mini_hf_bert import BertConfig, BertModel  # noqa: E402
from mini_hf_bert.parity import speed  # noqa: E402
from mini_hf_bert.parity.speed import BERT_BASE, SETTLE_S, WORKLOADS, make_inputs  # noqa: E402

#: bert-base's Linear products, (in, out), and its layer count.
PRODUCTS = ((768, 2304), (768, 768), (768, 3072), (3072, 768))
LAYERS = 12
ROWS = (1, 16, 64, 256)
RUNS = 10
#: Alternating rounds of the whole call against its products alone.
CALL_RUNS = 30
#: The ONNX file format version the graph is written in: one that onnxruntime reads (onnx's
#: default can be newer than the runtime installed beside it).
ONNX_IR_VERSION = 10


def huge_pages_work() -> bool:
    """Whether this machine moves memory into 2 MiB pages (``into_huge_pages`` moves a 6 MiB probe)."""
    return modeling_bert_fast.into_huge_pages(torch.zeros(3 * modeling_bert_fast.HUGE_PAGE // 4)) > 0


def kernels(weight: torch.Tensor, bias: torch.Tensor, rows: int, huge_pages: bool = False) -> dict:
    """Kernel name -> a call x -> x·Wᵀ + b, for those that run this dtype here; with
    ``huge_pages``, oneDNN's packed weight also as the fast path holds it (whatever whole
    2 MiB pages it has inside moved into huge pages)."""
    found = {"F.linear": lambda x: F.linear(x, weight, bias)}
    try:
        packed = torch.ops.mkldnn._reorder_linear_weight(weight, None)
        found["oneDNN packed"] = lambda x: torch.ops.mkldnn._linear_pointwise(x, packed, bias, "none", [], "")
        if huge_pages:
            huge = torch.ops.mkldnn._reorder_linear_weight(weight, None)
            modeling_bert_fast.into_huge_pages(huge)
            found["oneDNN packed, 2 MiB pages"] = lambda x: torch.ops.mkldnn._linear_pointwise(
                x, huge, bias, "none", [], "")
    except RuntimeError:
        pass
    if weight.dtype == torch.float32 and torch._C.has_mkl:
        mkl = torch.ops.mkl._mkl_reorder_linear_weight(weight, rows)
        found["MKL packed"] = lambda x: torch.ops.mkl._mkl_linear(x, mkl, weight, bias, rows)
    return found


def onnx_runtime_call(layers: list, rows: int, dtype: torch.dtype):
    """One ONNX Runtime session holding ``layers`` (lists of (weight, bias) per product) as
    MatMul + Add on initializers, every product an output (so none is pruned): a call ->
    all the products of those layers. None where onnxruntime or onnx is missing, or not fp32."""
    if dtype != torch.float32:
        return None
    try:
        import onnxruntime
        from onnx import TensorProto, helper, numpy_helper
    except ImportError:
        return None
    widths = sorted({inner for inner, _ in PRODUCTS})
    nodes, initializers, outputs = [], [], []
    for index, layer in enumerate(layers):
        for (inner, out), (weight, bias) in zip(PRODUCTS, layer):
            name = f"l{index}_{inner}x{out}"
            initializers.append(numpy_helper.from_array(weight.T.contiguous().numpy(), f"{name}_w"))  # (in, out)
            initializers.append(numpy_helper.from_array(bias.numpy(), f"{name}_b"))
            nodes.append(helper.make_node("MatMul", [f"x{inner}", f"{name}_w"], [f"{name}_p"]))
            nodes.append(helper.make_node("Add", [f"{name}_p", f"{name}_b"], [f"{name}_y"]))
            outputs.append(helper.make_tensor_value_info(f"{name}_y", TensorProto.FLOAT, [rows, out]))
    inputs = [helper.make_tensor_value_info(f"x{width}", TensorProto.FLOAT, [rows, width]) for width in widths]
    graph = helper.make_graph(nodes, "products", inputs, outputs, initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              ir_version=ONNX_IR_VERSION)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = torch.get_num_threads()
    session = onnxruntime.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return lambda feeds: session.run(None, feeds)


def openvino_call(layers: list, rows: int, dtype: torch.dtype):
    """The same products as ``onnx_runtime_call``, as one OpenVINO model (MatMul + Add on
    constants, compiled for this CPU in fp32, latency mode): a call -> all the products.
    None where openvino is missing, or not fp32."""
    if dtype != torch.float32:
        return None
    try:
        import openvino
        import openvino.opset13 as ops
    except ImportError:
        return None
    inputs = {inner: ops.parameter([rows, inner], openvino.Type.f32, name=f"x{inner}")
              for inner in sorted({inner for inner, _ in PRODUCTS})}
    outputs = [ops.add(ops.matmul(inputs[inner], ops.constant(weight.numpy()), False, True),  # x·Wᵀ
                       ops.constant(bias.numpy()))
               for layer in layers for (inner, _), (weight, bias) in zip(PRODUCTS, layer)]
    compiled = openvino.Core().compile_model(
        openvino.Model(outputs, list(inputs.values())), "CPU",
        {"INFERENCE_NUM_THREADS": torch.get_num_threads(), "INFERENCE_PRECISION_HINT": "f32",
         "PERFORMANCE_HINT": "LATENCY"})
    request = compiled.create_infer_request()
    return lambda feeds: request.infer(feeds)


def call_and_its_products(config: BertConfig, workload: str = "W2"):
    """A seeded model of ``config`` on ``workload``'s tokens through the fast path (fp32),
    and that model's own products alone: every derived Linear once, on rows of its width,
    as the call runs them (the pooler's on one row). -> (call, products, the products' count).
    What the call takes beyond its products is everything else it runs."""
    torch.manual_seed(0)
    model = BertModel(dataclasses.replace(config, attn_implementation="fast")).eval().requires_grad_(False)
    ids, mask = make_inputs(WORKLOADS[workload], config.vocab_size)
    weights = modeling_bert_fast.fast_weights(model)
    rows = int(mask.sum())
    linears = [(linear, rows) for layer in weights.layers
               for linear in [*layer.qkv, layer.attention_out, layer.intermediate, layer.output]]
    linears += [] if weights.pooler is None else [(weights.pooler, ids.shape[0])]
    inputs: dict[tuple[int, int], torch.Tensor] = {}  # (rows, width) -> one input shared by its products
    calls = []
    for linear, count in linears:
        width = (linear.packed if linear.packed is not None else linear.weight).shape[1]  # (out, in)
        calls.append((linear, inputs.setdefault((count, width), torch.randn(count, width))))
    return (lambda: model(ids, attention_mask=mask).last_hidden_state), \
        (lambda: [linear(x) for linear, x in calls]), len(calls)


def ops_between_products(rows: int, hidden: int = 768, heads: int = 12) -> dict:
    """The work between a layer's products on ``rows`` tokens of one sequence, each op a
    call on tensors of its own: name -> call."""
    generator = torch.Generator().manual_seed(0)
    h = torch.randn(rows, hidden, generator=generator)  # (M, H)
    scale, shift = torch.ones(hidden), torch.zeros(hidden)
    q = torch.randn(1, heads, rows, hidden // heads, generator=generator)  # (1, N, L, D)
    return {"LayerNorm": lambda: F.layer_norm(h, (hidden,), scale, shift),
            "residual sum": lambda: h + h,
            "attention (SDPA)": lambda: F.scaled_dot_product_attention(q, q, q)}


def alone_and_after_a_product(op, products: list, runs: int = RUNS) -> tuple[float, float]:
    """``op``'s median µs timed alone, call after call (its rows stay in the caches), and
    timed right after each of ``products`` in turn (each product's weights, read from
    memory, have pushed the op's rows out): (alone, after a product)."""
    op()
    alone = speed.median_ms(op, runs * len(products)) * 1000
    after = []
    for _ in range(runs):
        for product in products:
            product()
            start = time.perf_counter()
            op()
            after.append(time.perf_counter() - start)
    return alone, statistics.median(after) * 1e6


def alternating_medians_ms(calls: dict, runs: int = RUNS) -> dict:
    """Each call's median ms over ``runs`` rounds, the calls alternating, ``SETTLE_S`` of quiet
    before each (as the benchmark times whole calls)."""
    times = {name: [] for name in calls}
    for _ in range(runs):
        for name, call in calls.items():
            time.sleep(SETTLE_S)
            start = time.perf_counter()
            call()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) * 1000 for name, values in times.items()}


def median_ms(call) -> float:
    """The median of ``RUNS`` timed calls, after ``SETTLE_S`` of quiet and one untimed call
    (the kernel sets itself up). The quiet first: the thread pool of the kernel timed before
    (torch's, ONNX Runtime's) spins a while after its last call and would take a core from
    this one (measured: ONNX Runtime's 16-row products 1.5x slower right after torch's).
    Not before every call: a pool woken from sleep each time slows calls of a millisecond."""
    time.sleep(SETTLE_S)
    call()
    return speed.median_ms(call, RUNS)


def main() -> int:
    print(f"CPU kind: {cpu_capability.cpu_kind()}, {torch.get_num_threads()} threads\n")
    print("| dtype | rows | kernel | warm: one layer, ms | cold: 12 layers, ms | cold: weights read, GB/s |")
    print("|---|---:|---|---:|---:|---:|")
    generator = torch.Generator().manual_seed(0)
    huge_pages = huge_pages_work()
    with torch.inference_mode():
        for dtype in (torch.float32, torch.bfloat16):
            weights = [[((torch.randn(out, inner, generator=generator) * 0.02).to(dtype), torch.zeros(out, dtype=dtype))
                        for inner, out in PRODUCTS] for _ in range(LAYERS)]
            nbytes = sum(w.numel() * w.element_size() for layer in weights for w, _ in layer)
            for rows in ROWS:
                inputs = {inner: torch.randn(rows, inner, generator=generator).to(dtype) for inner, _ in PRODUCTS}
                per_layer = [[kernels(w, b, rows, huge_pages) for w, b in layer] for layer in weights]
                for name in per_layer[0][0]:
                    def layer_call(index: int, name: str = name) -> None:
                        for (inner, _), found in zip(PRODUCTS, per_layer[index]):
                            found[name](inputs[inner])
                    warm = median_ms(lambda: layer_call(0))
                    cold = median_ms(lambda: [layer_call(index) for index in range(LAYERS)])
                    print(f"| {str(dtype).removeprefix('torch.')} | {rows} | {name} | {warm:.3f} | {cold:.1f} | "
                          f"{nbytes / (cold / 1000) / 1e9:.1f} |", flush=True)
                for engine, make in (("ONNX Runtime MatMul (MLAS, pre-packed)", onnx_runtime_call),
                                     ("OpenVINO MatMul", openvino_call)):
                    one, twelve = make(weights[:1], rows, dtype), make(weights, rows, dtype)
                    if one is None:
                        continue
                    feeds = {f"x{inner}": x.numpy() for inner, x in inputs.items()}
                    warm, cold = median_ms(lambda: one(feeds)), median_ms(lambda: twelve(feeds))
                    print(f"| {str(dtype).removeprefix('torch.')} | {rows} | {engine} | "
                          f"{warm:.3f} | {cold:.1f} | {nbytes / (cold / 1000) / 1e9:.1f} |", flush=True)
        call, products, count = call_and_its_products(BertConfig(**BERT_BASE))
        call(), products()
        measured = alternating_medians_ms({"call": call, "products": products}, runs=CALL_RUNS)
    print(f"\n| W2 fp32, the fast path | whole call, ms | its {count} products alone, ms | the rest, ms |")
    print("|---|---:|---:|---:|")
    print(f"| bert-base, 1 x 16 tokens | {measured['call']:.1f} | {measured['products']:.1f} | "
          f"{measured['call'] - measured['products']:.1f} |")
    rows = WORKLOADS["W2"].seq_length
    inner, out = PRODUCTS[-1]  # the second feed-forward product, one per layer
    with torch.inference_mode():
        x = torch.randn(rows, inner, generator=generator)
        feed_forward = []  # one per layer, oneDNN's packed product where this torch has it
        for _ in range(LAYERS):
            found = kernels(torch.randn(out, inner, generator=generator) * 0.02, torch.zeros(out), rows)
            product = found.get("oneDNN packed", found["F.linear"])
            feed_forward.append(lambda product=product: product(x))
        print(f"\n| an op between products, {rows} rows | alone, µs | right after a {inner} -> {out} product, µs |")
        print("|---|---:|---:|")
        for name, op in ops_between_products(rows).items():
            alone, after = alone_and_after_a_product(op, feed_forward)
            print(f"| {name} | {alone:.1f} | {after:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
