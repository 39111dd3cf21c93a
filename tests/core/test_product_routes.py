"""The fast path's matrix-product route is chosen by measurement, per dtype and class of
product, once; every mix of routes computes what eager computes; the CPU's kind is
reported as the kernels see it; bf16 on a CPU without bf16 instructions is said once.

Marked cpu_kernels: `make test` runs this file again under its AVX2 emulation, where
oneDNN cannot pack bf16 and the kind must read "AVX2 (emulated: ...)".
"""

from __future__ import annotations

import logging
import os
import time

import pytest
import torch

from mini_hf_bert import BertConfig, BertModel, cpu_capability, modeling_bert_fast
from mini_hf_bert.modeling_bert_fast import FEW_ROWS, Routes
from mini_hf_bert.parity.compare import BF16_MIN_COSINE, FAST_FP32_ATOL

pytestmark = pytest.mark.cpu_kernels

SMALL = dict(vocab_size=211, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
             max_position_embeddings=160, initializer_range=0.2)
EMULATED = os.environ.get("ONEDNN_MAX_CPU_ISA", "").upper() == "AVX2"


@pytest.fixture
def fresh_measurements(monkeypatch):
    """No route measured yet in this process (restored afterwards)."""
    monkeypatch.setattr(modeling_bert_fast, "_MEASURED", {})


def fake_timer(monkeypatch, ms_by_route_and_rows: dict[tuple[str, int], float]) -> list:
    """Replace the probe's timer: each (route, rows) takes the given ms; returns the calls made."""
    calls = []

    def timed(call):
        x = call.args[0]  # functools.partial(route's call, x)
        route = "onednn" if isinstance(call.func, modeling_bert_fast.FastLinear) else "aten"
        calls.append((route, x.shape[0]))
        return ms_by_route_and_rows[(route, x.shape[0])]
    monkeypatch.setattr(modeling_bert_fast, "_time_product", timed)
    return calls


@pytest.mark.parametrize("few_fastest, many_fastest", [("onednn", "aten"), ("aten", "onednn"), ("onednn", "onednn")])
def test_each_class_runs_the_route_measured_fastest_and_is_measured_once(monkeypatch, fresh_measurements,
                                                                          few_fastest, many_fastest):
    few, many = modeling_bert_fast.PROBE_ROWS["few"], modeling_bert_fast.PROBE_ROWS["many"]
    times = {(few_fastest, few): 1.0, ("aten" if few_fastest == "onednn" else "onednn", few): 2.0,
             (many_fastest, many): 5.0, ("aten" if many_fastest == "onednn" else "onednn", many): 9.0}
    calls = fake_timer(monkeypatch, times)
    routes = modeling_bert_fast.choose_routes(torch.float32, torch.device("cpu"), 32, 64)
    assert routes == Routes(few_fastest, many_fastest)
    assert sorted(calls) == sorted(times)  # every route timed in every class, once
    assert modeling_bert_fast.choose_routes(torch.float32, torch.device("cpu"), 32, 64) == routes
    assert len(calls) == len(times), "the choice was measured again: it must be cached"
    [measurement] = modeling_bert_fast.route_measurements()
    assert measurement.ms[("few", few_fastest)] == 1.0 and measurement.shape == (32, 64)


def test_a_route_that_cannot_pack_the_dtype_is_left_out_with_why(monkeypatch, fresh_measurements):
    def cannot_pack(weight, batch_size):
        raise RuntimeError("mkldnn_reorder_linear_weight: bf16 path needs the cpu support avx_ne_convert\nmore")
    monkeypatch.setattr(torch.ops.mkldnn, "_reorder_linear_weight", cannot_pack)
    routes = modeling_bert_fast.choose_routes(torch.bfloat16, torch.device("cpu"), 32, 64)
    assert routes == Routes("aten", "aten")
    [measurement] = modeling_bert_fast.route_measurements()
    assert measurement.unavailable == {"onednn": "mkldnn_reorder_linear_weight: bf16 path needs the cpu support "
                                                 "avx_ne_convert"}


def test_a_route_asked_for_is_not_measured(monkeypatch, fresh_measurements):
    calls = fake_timer(monkeypatch, {})
    with modeling_bert_fast.using_options(route="aten"):
        assert modeling_bert_fast.choose_routes(torch.float32, torch.device("cpu"), 32, 64) == Routes("aten", "aten")
    assert calls == [] and modeling_bert_fast.route_measurements() == []


def test_the_real_measurement_chooses_among_the_routes_this_cpu_runs(fresh_measurements):
    routes = modeling_bert_fast.choose_routes(torch.float32, torch.device("cpu"), 32, 64)
    [measurement] = modeling_bert_fast.route_measurements()
    assert {routes.few, routes.many} <= {"aten", "onednn"}
    assert set(measurement.ms) == {(name, route) for name in ("few", "many") for route in ("aten", "onednn")}
    assert all(value > 0 for value in measurement.ms.values())
    assert routes.few == min(("aten", "onednn"), key=lambda route: measurement.ms[("few", route)])
    if EMULATED or not torch.cpu._is_avx512_supported():  # oneDNN packs bf16 only with AVX-512 (or AVX-NE-CONVERT)
        modeling_bert_fast.choose_routes(torch.bfloat16, torch.device("cpu"), 32, 64)
        assert "onednn" in modeling_bert_fast.route_measurements()[-1].unavailable


@pytest.mark.parametrize("routes", [Routes("onednn", "aten"), Routes("aten", "onednn")])
@pytest.mark.parametrize("lengths", [[12, 9, 5], [FEW_ROWS, FEW_ROWS, 30]])  # few rows, many rows
def test_every_mix_of_routes_equals_eager(monkeypatch, fresh_measurements, routes, lengths):
    """A batch of few rows and one of many, each through both mixes: the GELU is fused on
    the oneDNN product and applied after F.linear's, and both give eager's result."""
    key = (torch.float32, SMALL["hidden_size"], SMALL["intermediate_size"])
    modeling_bert_fast._MEASURED[key] = modeling_bert_fast.RouteMeasurement(torch.float32, key[1:], {}, {}, routes, 0.0)
    torch.manual_seed(0)
    model = BertModel(BertConfig(**SMALL)).eval()
    generator = torch.Generator().manual_seed(1)
    ids = torch.randint(1, SMALL["vocab_size"], (len(lengths), max(lengths)), generator=generator)
    mask = (torch.arange(max(lengths))[None, :] < torch.tensor(lengths)[:, None]).long()
    with torch.no_grad():
        model.config.attn_implementation = "eager"
        expected = model(ids, attention_mask=mask)
        model.config.attn_implementation = "fast"
        got = model(ids, attention_mask=mask)
    assert modeling_bert_fast.fast_weights(model).routes == routes
    real = mask.bool()
    assert (got.last_hidden_state[real] - expected.last_hidden_state[real]).abs().max() <= FAST_FP32_ATOL
    assert (got.pooler_output - expected.pooler_output).abs().max() <= FAST_FP32_ATOL


def test_cpu_kind_names_what_the_kernels_run_on():
    kind = cpu_capability.cpu_kind()
    features = cpu_capability.cpu_features()
    if EMULATED:
        assert kind.startswith("AVX2 (emulated: ") and "ONEDNN_MAX_CPU_ISA=AVX2" in kind
        assert not features["AVX-512"] and not features["AVX512-BF16"] and not features["AMX"]
        assert not cpu_capability.bf16_is_native()
    else:
        assert kind.startswith("AVX-512" if torch.cpu._is_avx512_supported() else "AVX2")
        assert features["AVX512-BF16"] == torch.cpu._is_avx512_bf16_supported()
        assert ("AVX512-BF16" in kind) == features["AVX512-BF16"]


def test_onednn_held_to_avx2_takes_bf16_and_amx_away(monkeypatch):
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "avx2")
    assert not cpu_capability.cpu_features()["AVX512-BF16"] and not cpu_capability.cpu_features()["AMX"]
    assert "(emulated: " in cpu_capability.cpu_kind() and "ONEDNN_MAX_CPU_ISA=avx2" in cpu_capability.cpu_kind()


@pytest.fixture
def no_bf16_instructions(monkeypatch):
    """A CPU without bf16 instructions, on which a bf16 product measured 5.6x slower."""
    monkeypatch.setattr(cpu_capability, "bf16_is_native", lambda: False)
    monkeypatch.setattr(cpu_capability, "bf16_slowdown", lambda: 5.6)
    monkeypatch.setattr(cpu_capability, "_WARNED", False)


def bf16_warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if "bf16 on this CPU" in r.getMessage()]


def test_bf16_on_the_fast_path_says_once_how_much_slower_it_is(no_bf16_instructions, caplog):
    torch.manual_seed(0)
    model = BertModel(BertConfig(**SMALL, attn_implementation="fast")).eval().to(torch.bfloat16)
    ids = torch.tensor([[5, 6, 7]])
    with caplog.at_level(logging.WARNING), torch.no_grad():
        first = model(ids).last_hidden_state
        model.pooler.dense.weight.data.mul_(1.0)  # a new version: the weights are derived again
        model(ids)
    [message] = bf16_warnings(caplog)
    assert message.startswith("the fast path, bf16 weights: bf16 on this CPU (")
    assert "runs 5.6x slower than fp32" in message and "Running bf16 as asked" in message
    assert first.dtype == torch.bfloat16  # it ran as asked


def test_bf16_where_it_is_native_or_faster_says_nothing(monkeypatch, caplog):
    monkeypatch.setattr(cpu_capability, "_WARNED", False)
    monkeypatch.setattr(cpu_capability, "bf16_is_native", lambda: True)
    with caplog.at_level(logging.WARNING):
        assert cpu_capability.warn_if_bf16_is_slow("the benchmark") is None
    monkeypatch.setattr(cpu_capability, "bf16_is_native", lambda: False)
    monkeypatch.setattr(cpu_capability, "bf16_slowdown", lambda: 0.8)
    with caplog.at_level(logging.WARNING):
        assert cpu_capability.warn_if_bf16_is_slow("the benchmark") is None
    assert bf16_warnings(caplog) == []


def test_pretraining_with_bf16_says_it_is_slower(no_bf16_instructions, caplog, tmp_path):
    from mini_hf_bert.training.trainer import Trainer, TrainingConfig

    class Task:
        examples = [0]
        training_module = None

    with caplog.at_level(logging.WARNING):
        Trainer(torch.nn.Linear(2, 2), Task(), TrainingConfig(output_dir=str(tmp_path), max_steps=1, batch_size=1, bf16=True))
    [message] = bf16_warnings(caplog)
    assert message.startswith("training with bf16 (--bf16): bf16 on this CPU")


def test_the_bf16_slowdown_is_measured_on_this_cpu():
    factor = cpu_capability.bf16_slowdown()
    assert factor > 0
    if not cpu_capability.bf16_is_native() and EMULATED:
        assert factor > 1.0, "bf16 emulated on AVX2 measured no slower than fp32"


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_the_routes_study_times_kernels_that_compute_the_same_product(dtype):
    """tools/product_routes_study.py compares kernels' speed: each must compute x·Wᵀ + b."""
    from tools import product_routes_study as study

    generator = torch.Generator().manual_seed(0)
    weight = (torch.randn(48, 32, generator=generator) * 0.1).to(dtype)  # (out, in)
    bias = torch.randn(48, generator=generator).to(dtype)
    for rows in (1, 16):
        x = torch.randn(rows, 32, generator=generator).to(dtype)  # (rows, in)
        expected = x.double() @ weight.double().T + bias.double()  # (rows, out)
        found = study.kernels(weight, bias, rows)
        assert "F.linear" in found and (dtype == torch.bfloat16 or "MKL packed" in found or not torch._C.has_mkl)
        for name, call in found.items():
            got = call(x).double()  # (rows, out)
            if dtype == torch.float32:
                assert (got - expected).abs().max() <= FAST_FP32_ATOL, name
            else:  # bf16 is not a parity check (compare.py): each row must point the same way
                assert torch.nn.functional.cosine_similarity(got, expected, dim=-1).min() >= BF16_MIN_COSINE, name


def test_the_routes_study_times_the_packed_weight_in_huge_pages_when_asked():
    """The "2 MiB pages" contender (the packed weight as the fast path holds it) runs when
    asked, and computes the same product."""
    from tools import product_routes_study as study

    if not torch.backends.mkldnn.is_available():
        pytest.skip("no oneDNN in this torch build")
    generator = torch.Generator().manual_seed(0)
    weight = torch.randn(1536, 1024, generator=generator) * 0.02  # (out, in): 6 MiB of fp32
    bias = torch.randn(1536, generator=generator)
    assert "oneDNN packed, 2 MiB pages" not in study.kernels(weight, bias, 4)
    found = study.kernels(weight, bias, 4, huge_pages=True)
    assert "oneDNN packed, 2 MiB pages" in found and "oneDNN packed" in found
    x = torch.randn(4, 1024, generator=generator)
    for name, call in found.items():
        assert (call(x).double() - (x.double() @ weight.double().T + bias.double())).abs().max() <= FAST_FP32_ATOL, name


@pytest.mark.parametrize("engine", ["onnx_runtime_call", "openvino_call"])
def test_the_routes_study_times_the_engines_on_the_same_products(monkeypatch, engine):
    """The study's ONNX Runtime and OpenVINO contenders compute each product x·Wᵀ + b of each layer."""
    from tools import product_routes_study as study

    monkeypatch.setattr(study, "PRODUCTS", ((32, 48), (48, 32)))
    generator = torch.Generator().manual_seed(0)
    layers = [[(torch.randn(out, inner, generator=generator) * 0.1, torch.randn(out, generator=generator))
               for inner, out in study.PRODUCTS] for _ in range(2)]
    inputs = {inner: torch.randn(3, inner, generator=generator) for inner, _ in study.PRODUCTS}
    make = getattr(study, engine)
    call = make(layers, 3, torch.float32)
    assert call is not None, "onnxruntime, onnx and openvino come with the bench extra, which `make venv` installs"
    assert make(layers, 3, torch.bfloat16) is None  # timed in fp32 only
    got = list(call({f"x{inner}": x.numpy() for inner, x in inputs.items()}).values()) if engine == "openvino_call" \
        else call({f"x{inner}": x.numpy() for inner, x in inputs.items()})
    expected = [inputs[inner].double() @ weight.double().T + bias.double()
                for layer in layers for (inner, _), (weight, bias) in zip(study.PRODUCTS, layer)]
    assert len(got) == len(expected) == 4
    for out, want in zip(got, expected):
        assert (torch.from_numpy(out).double() - want).abs().max() <= FAST_FP32_ATOL


def test_the_routes_study_splits_a_call_into_its_own_products():
    """The study's "the rest" is the whole call less exactly the products that call runs: every
    derived Linear of the model once (QKV stacked: four per layer, and the pooler's), on as
    many rows as the call has real tokens (the pooler's on one per sequence)."""
    from tools import product_routes_study as study

    config = BertConfig(vocab_size=300, hidden_size=32, num_hidden_layers=3, num_attention_heads=4,
                        intermediate_size=64, max_position_embeddings=40)
    call, products, count = study.call_and_its_products(config)
    with torch.inference_mode():
        hidden = call()
        outputs = products()
    assert count == len(outputs) == 3 * 4 + 1
    assert hidden.shape == (1, 16, 32)
    widths = [3 * 32, 32, 64, 32] * 3 + [32]  # QKV, attention out, intermediate, output per layer; the pooler
    assert [out.shape[-1] for out in outputs] == widths
    assert [out.shape[0] for out in outputs] == [16] * 12 + [1]
    timed = study.alternating_medians_ms({"a": lambda: None, "b": lambda: time.sleep(0.002)}, runs=3)
    assert timed["b"] >= 2.0 > timed["a"]


def test_the_routes_study_times_each_op_alone_and_right_after_a_product():
    """The study's last table: an op timed call after call, and timed right after each
    product in turn, never with a product inside its own timing. Here an op that is slow
    only just after a product (as one whose rows a product has pushed out of the caches)."""
    from tools import product_routes_study as study

    state = {"after_product": False, "products": 0}

    def product():
        state["products"] += 1
        state["after_product"] = True

    def op():
        if state["after_product"]:
            time.sleep(0.002)
        state["after_product"] = False

    alone, after = study.alone_and_after_a_product(op, [product, product], runs=3)
    assert state["products"] == 3 * 2
    assert alone < 1000 <= 2000 <= after  # µs
    ops = study.ops_between_products(rows=16, hidden=32, heads=4)
    assert set(ops) == {"LayerNorm", "residual sum", "attention (SDPA)"}
    shapes = {name: tuple(call().shape) for name, call in ops.items()}
    assert shapes == {"LayerNorm": (16, 32), "residual sum": (16, 32), "attention (SDPA)": (1, 4, 16, 8)}
