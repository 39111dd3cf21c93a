"""The library used as a service uses it: from several threads at once. Each test orders its
threads with barriers (never sleeps), so what it checks happens in the order it states."""

from __future__ import annotations

import asyncio
import json
import os
import random
import subprocess
import sys
import threading

import pytest
import torch

from mini_hf_bert import modeling_bert_fast
from mini_hf_bert.modeling_bert_fast import FastLinear, FastOptions, current_options, row_bucket, using_options
from mini_hf_bert.parity.compare import BF16_MIN_COSINE, FAST_FP32_ATOL

from ..paths import ROOT
from .test_fast_path import BATCHES, make_batch, make_model, run

#: A barrier that waits longer than this is broken: the test fails instead of hanging.
BARRIER_TIMEOUT_S = 60


def _options_used(model) -> set[FastOptions]:
    """The options the fast path derived ``model``'s weights under, so far."""
    return {options for _, options in modeling_bert_fast._DERIVED.get(model, {})}


def _in_threads(*targets):
    """Run each target in a thread of its own; re-raise the first failure here."""
    failures = []

    def guarded(target):
        try:
            target()
        except BaseException as error:  # noqa: BLE001 - handed to the main thread
            failures.append(error)

    threads = [threading.Thread(target=guarded, args=(target,)) for target in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]


def test_options_set_in_one_thread_do_not_reach_another():
    model = make_model()
    batch = make_batch(BATCHES["padded"])
    expected = run(model, "fast", batch).last_hidden_state
    inside, measured = threading.Barrier(2, timeout=BARRIER_TIMEOUT_S), threading.Barrier(2, timeout=BARRIER_TIMEOUT_S)
    seen = {}

    def changes_options():
        with using_options(route="aten", unpad=False):
            inside.wait()  # the other thread now runs while this block is open
            measured.wait()
            seen["setter"] = current_options()

    def uses_defaults():
        inside.wait()
        seen["other"] = current_options()
        seen["answer"] = run(model, "fast", batch).last_hidden_state
        measured.wait()

    modeling_bert_fast._DERIVED.pop(model, None)
    _in_threads(changes_options, uses_defaults)
    assert seen["setter"] == FastOptions(route="aten", unpad=False)
    assert seen["other"] == FastOptions()
    assert _options_used(model) == {FastOptions()}  # the other thread's call ran under the defaults
    assert (seen["answer"] - expected).abs().max() <= FAST_FP32_ATOL


def test_blocks_that_end_in_crossing_order_restore_each_thread_exactly():
    """A enters, B enters, A leaves, B leaves: with one process-wide setting, A's exit would
    restore what it saw (the defaults) under B, and B's exit A's options for everyone."""
    steps = [threading.Barrier(2, timeout=BARRIER_TIMEOUT_S) for _ in range(3)]
    seen = {}

    def first():
        with using_options(route="aten"):
            steps[0].wait()  # A inside
            steps[1].wait()  # B inside
        seen["A after"] = current_options()
        steps[2].wait()  # A has left

    def second():
        steps[0].wait()
        with using_options(unpad=False):
            steps[1].wait()
            steps[2].wait()
            seen["B inside, A gone"] = current_options()
        seen["B after"] = current_options()

    _in_threads(first, second)
    assert seen["B inside, A gone"] == FastOptions(unpad=False)
    assert seen["A after"] == seen["B after"] == FastOptions()
    assert current_options() == FastOptions()


def test_nested_blocks_restore_the_outer_options():
    with using_options(route="aten"):
        with using_options(unpad=False):
            assert current_options() == FastOptions(route="aten", unpad=False)
        assert current_options() == FastOptions(route="aten")
    assert current_options() == FastOptions()


def test_an_asyncio_task_started_inside_a_block_inherits_it_and_changes_only_its_own():
    async def main():
        async def task_changes():
            with using_options(fuse_qkv=False):
                return current_options()

        with using_options(route="aten"):
            inner = await asyncio.create_task(task_changes())
            return inner, current_options()

    inner, outer = asyncio.run(main())
    assert inner == FastOptions(route="aten", fuse_qkv=False)
    assert outer == FastOptions(route="aten")
    assert current_options() == FastOptions()


# ----------------------------------------------------------------------------- memory


def test_row_buckets_are_few_per_doubling_and_pad_little():
    counts = range(1, 8 * 512 + 1)
    buckets = {row_bucket(count) for count in counts}
    assert all(row_bucket(count) >= count for count in counts)
    assert max(row_bucket(count) - count for count in range(1, 64)) <= 7
    assert max((row_bucket(count) - count) / count for count in range(64, 8 * 512 + 1)) <= 1 / 8
    assert len([b for b in buckets if b <= 128]) == 16  # multiples of 8
    for k in range(7, 12):  # then 8 per doubling
        assert len([b for b in buckets if 2**k < b <= 2**(k + 1)]) == 8
    assert all(row_bucket(b) == b for b in buckets)  # a bucket is its own
    # docs/reliability.md and row_bucket's docstring: 44 counts up to 1,536 rows (3 x 512 tokens)
    assert len({row_bucket(count) for count in range(1, 3 * 512 + 1)}) == 16 + 8 + 8 + 8 + 4 == 44


def test_the_products_see_only_bucketed_row_counts_and_the_answers_do_not_change(monkeypatch):
    """The rows oneDNN's products run on come from row_bucket's few counts, whatever the
    lengths; the padding changes no real token's output."""
    model = make_model()
    seen = []
    real_call = FastLinear.__call__
    monkeypatch.setattr(FastLinear, "__call__", lambda self, x: (seen.append(x.shape[0]), real_call(self, x))[1])
    rng = random.Random(0)
    for _ in range(12):
        lengths = [rng.randint(1, 40) for _ in range(rng.randint(1, 3))]
        batch = make_batch(lengths, seed=len(seen))
        seen.clear()
        bucketed = run(model, "fast", batch).last_hidden_state
        products = set(seen[:-1])  # the last product is the pooler's, on the (B, H) [CLS] rows
        assert products == {row_bucket(sum(lengths))}, (lengths, products)
        with using_options(row_buckets=False):
            plain = run(model, "fast", batch).last_hidden_state
        assert (bucketed - plain).abs().max() <= FAST_FP32_ATOL


#: The most a CI-sized soak may retain (MiB), on route "onednn" with row buckets: measured
#: +14.5 MiB over 400 calls here (335 token counts), where without buckets the same soak
#: retained +418 MiB and was still growing; a margin for allocators and machines.
SOAK_RETAINED_MB_MAX = 64
SOAK_CALLS = 300


@pytest.mark.skipif(not torch.backends.mkldnn.is_available(), reason="needs oneDNN (torch.backends.mkldnn)")
def test_memory_levels_off_over_calls_of_random_lengths():
    """tools/memory_soak.py, shortened, in a process of its own (this one's memory is the
    other tests'): a new token count on almost every call, as a service sees them."""
    code = ("import json, sys; sys.path.insert(0, sys.argv[1]); from tools.memory_soak import soak; "
            f"print(json.dumps(soak({SOAK_CALLS}, route='onednn')))")
    done = subprocess.run([sys.executable, "-c", code, ROOT], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["distinct_token_counts"] > SOAK_CALLS // 2
    assert result["retained_mb"] <= SOAK_RETAINED_MB_MAX, result


# ------------------------------------------------------------------------------- fork

_FORKING_PARENT = """
import os, select, signal, sys, torch
sys.path.insert(0, sys.argv[1])
import mini_hf_bert
torch.set_num_threads(2)  # OpenMP's pool, even where OMP_NUM_THREADS=1 (the hang needs one)
torch.manual_seed(0)
config = mini_hf_bert.BertConfig(vocab_size=3000, hidden_size=128, num_hidden_layers=2, num_attention_heads=2,
                                 intermediate_size=512, attn_implementation=sys.argv[2])
model = mini_hf_bert.BertModel(config).eval().to(torch.bfloat16)
ids = torch.randint(1, 3000, (2, 200))
with torch.no_grad():
    expected = model(input_ids=ids).last_hidden_state
read, write = os.pipe()
pid = os.fork()
if pid == 0:
    with torch.no_grad():
        answer = model(input_ids=ids).last_hidden_state
    cosine = torch.nn.functional.cosine_similarity(answer.float().flatten(), expected.float().flatten(), dim=0)
    os.write(write, f"{torch.get_num_threads()} {cosine.item()}".encode())
    os._exit(0)
os.close(write)
if not select.select([read], [], [], float(sys.argv[3]))[0]:
    os.kill(pid, signal.SIGKILL)  # hung: never left behind
    os.waitpid(pid, 0)
    sys.exit("the forked child hung")
print(os.read(read, 200).decode(), flush=True)
os.waitpid(pid, 0)
"""
#: A forked child that has not answered in this long has hung (it answers in about a second).
FORK_TIMEOUT_S = 60


@pytest.mark.parametrize("implementation", ["fast", "sdpa"])
def test_a_forked_child_runs_the_model_instead_of_hanging(implementation):
    """GNU OpenMP does not survive a fork: without cpu_capability's fork handler, every
    such child waited forever at its first parallel region (measured with bf16 models)."""
    done = subprocess.run([sys.executable, "-c", _FORKING_PARENT, ROOT, implementation, str(FORK_TIMEOUT_S)],
                          capture_output=True, text=True, timeout=4 * FORK_TIMEOUT_S)
    assert done.returncode == 0, done.stderr
    threads, cosine = done.stdout.split()
    assert threads == "1"
    assert float(cosine) >= BF16_MIN_COSINE  # the parent's answer, up to the order of its sums
