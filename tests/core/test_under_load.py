"""The library used as a service uses it: from several threads at once. Each test orders its
threads with barriers (never sleeps), so what it checks happens in the order it states."""

from __future__ import annotations

import asyncio
import threading

import torch

from mini_hf_bert import modeling_bert_fast
from mini_hf_bert.modeling_bert_fast import FastOptions, current_options, using_options
from mini_hf_bert.parity.compare import FAST_FP32_ATOL

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
