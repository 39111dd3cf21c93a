"""Two processes saving into one directory while a third loads from it (docs/reliability.md).

Writers A and B hold models of different shapes (so a config of one beside the weights
of the other could not load, and a mix of their tensors is visible), and save into the
same directory at the same time, round after round, in every layout save_pretrained
writes: one safetensors file, one ``pytorch_model.bin``, and both sharded (an index and
several shards), into an existing directory and into one that does not exist yet. The
reader loads the directory as fast as it can. Every load must be exactly A's model or
exactly B's, every save must succeed, and after each round the directory holds one of
the two, whole. (Before file_utils, all writers shared ``pytorch_model.bin.tmp``: 6 of 8
rounds left a file mixing both models' tensors that loaded without an error.)"""

from __future__ import annotations

import multiprocessing
import os
import traceback

import torch

ROUNDS = 20
SAVES_PER_ROUND = 3
#: (safe_serialization, max_shard_size, into a directory that does not exist yet)
LAYOUTS = [(True, "50GB", False), (False, "50GB", False), (True, "30KB", False), (False, "30KB", False),
           (True, "50GB", True), (False, "30KB", True)]
WRITERS = {"A": dict(num_hidden_layers=2, intermediate_size=64, seed=1),
           "B": dict(num_hidden_layers=3, intermediate_size=96, seed=2)}


def _model(name: str):
    import mini_hf_bert

    spec = WRITERS[name]
    torch.manual_seed(spec["seed"])
    config = mini_hf_bert.BertConfig(vocab_size=99, hidden_size=32, num_attention_heads=2, max_position_embeddings=16,
                                     num_hidden_layers=spec["num_hidden_layers"],
                                     intermediate_size=spec["intermediate_size"])
    return mini_hf_bert.BertModel(config).eval()


def _directory(root: str, round_index: int) -> str:
    """One directory per layout, saved into again each time its layout comes round (a
    ``.bin`` save keeps an earlier ``model.safetensors``, which loaders read first: that
    is said in a warning, and kept out of this test); a new one for the fresh layouts."""
    layout = round_index % len(LAYOUTS)
    return os.path.join(root, f"fresh-{round_index}" if LAYOUTS[layout][2] else f"layout-{layout}")


def _writer(name: str, root: str, barrier, done, errors) -> None:
    try:
        model = _model(name)
        for round_index in range(ROUNDS):
            safe, shard, _ = LAYOUTS[round_index % len(LAYOUTS)]
            barrier.wait()
            for _ in range(SAVES_PER_ROUND):
                model.save_pretrained(_directory(root, round_index), safe_serialization=safe, max_shard_size=shard)
            with done.get_lock():
                done.value += 1
            barrier.wait()
    except Exception:  # noqa: BLE001 - reported to the test
        errors.put(f"writer {name}: {traceback.format_exc()}")
        barrier.abort()


def _reader(root: str, barrier, done, errors, loads) -> None:
    import mini_hf_bert

    try:
        expected = {name: _model(name).state_dict() for name in WRITERS}
        for round_index in range(ROUNDS):
            directory = _directory(root, round_index)
            barrier.wait()
            while True:
                finished = done.value >= 2 * (round_index + 1)  # read before the load: one more load after both end
                if os.path.isdir(directory):
                    model = mini_hf_bert.BertModel.from_pretrained(directory)
                    state = model.state_dict()
                    matches = [name for name, want in expected.items()
                               if state.keys() == want.keys() and all(torch.equal(state[k], want[k]) for k in want)]
                    if len(matches) != 1:
                        errors.put(f"round {round_index}: a load equal to neither writer's model (a mix)")
                        barrier.abort()
                        return
                    with loads.get_lock():
                        loads.value += 1
                if finished:
                    break
            barrier.wait()
    except Exception:  # noqa: BLE001 - reported to the test
        errors.put(f"reader: {traceback.format_exc()}")
        barrier.abort()


def test_two_writers_and_a_reader_never_see_a_mix(tmp_path):
    context = multiprocessing.get_context("spawn")  # fresh interpreters: no shared state but the files
    barrier, done, loads, errors = context.Barrier(3), context.Value("i", 0), context.Value("i", 0), context.Queue()
    processes = [context.Process(target=_writer, args=(name, str(tmp_path), barrier, done, errors)) for name in WRITERS]
    processes.append(context.Process(target=_reader, args=(str(tmp_path), barrier, done, errors, loads)))
    for p in processes:
        p.start()
    for p in processes:
        p.join(600)
    problems = []
    while not errors.empty():
        problems.append(errors.get())
    assert not problems, "\n".join(problems)
    assert all(p.exitcode == 0 for p in processes)
    assert loads.value >= ROUNDS  # the reader really read while the writers wrote
    leftovers = [name for _, dirs, files in os.walk(tmp_path) for name in dirs + files
                 if name.startswith(".") or name.endswith(".tmp")]
    assert leftovers == []  # no staging directory or temporary file left behind
    for layout, (safe, shard, fresh) in enumerate(LAYOUTS):
        if not fresh:  # the last save's layout alone: earlier shards of the same format were replaced
            names = set(os.listdir(tmp_path / f"layout-{layout}"))
            weights = {n for n in names if n != "config.json"}
            stem = "model" if safe else "pytorch_model"
            if shard == "50GB":
                assert weights == {f"{stem}.safetensors" if safe else f"{stem}.bin"}, names
            else:
                assert f"{stem}.{'safetensors' if safe else 'bin'}.index.json" in weights and len(weights) > 2, names
