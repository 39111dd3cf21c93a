"""Fuzz the loaders by hand, at a scale CI cannot afford: mutated ``pytorch_model.bin``,
``model.safetensors``, sharded indexes and their shards (safetensors and ``.bin``; shards
replaced by pipes, directories, dangling links), hub-cache layouts (refs, snapshot links,
blobs), Google TF bundles, zips of them, and configs, each loaded with ``from_pretrained``
(and the tokenizer, for vocabularies). Every outcome must be a loaded model or an error
that names the file (or its directory); anything else is printed.

    .venv/bin/python tools/fuzz_checkpoints.py --count 10000            # ~10 minutes on 2 cores
    .venv/bin/python tools/fuzz_checkpoints.py --count 200 --kind bin   # one kind only

The last line is the report: cases, loaded, refused naming the file, and the failures
(an exception naming no file, a hang past --timeout, a crash of the interpreter).
``tests/bad_inputs/test_fuzz_checkpoints.py`` runs the same kinds of mutation, fewer of them, in CI.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import resource
import shutil
import signal
import struct
import sys
import tempfile
import time
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import torch  # noqa: E402

import mini_hf_bert  # noqa: E402
from tests.checkpoints.tf_bundle_writer import write_table  # noqa: E402

from mini_hf_bert.checkpoints.tf_bundle import read_table  # noqa: E402

GOOGLE_DIR = os.path.join(ROOT, "tests", "fixtures", "tf", "bert_pretraining")
#: A crafted file may claim exabytes; an allocation past this fails as MemoryError (a failure).
MEMORY_LIMIT_BYTES = 8 * 1024**3


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang()


def _base(root: str) -> dict[str, str]:
    """The files each mutation starts from: a small HF checkpoint in both formats, sharded
    and not, and a copy of the Google fixture."""
    torch.manual_seed(0)
    config = mini_hf_bert.BertConfig(vocab_size=99, hidden_size=32, num_attention_heads=2, num_hidden_layers=2,
                                     intermediate_size=64, max_position_embeddings=16)
    model = mini_hf_bert.BertForPreTraining(config)
    bases = {}
    for name, kwargs in (("safetensors", {}), ("bin", {"safe_serialization": False}),
                         ("index", {"max_shard_size": "20KB"})):
        directory = os.path.join(root, name)
        model.save_pretrained(directory, **kwargs)
        with open(os.path.join(directory, "vocab.txt"), "w", encoding="utf-8") as f:
            f.write("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"t{i}" for i in range(94)]) + "\n")
        bases[name] = directory
    directory = os.path.join(root, "bin-index")
    model.save_pretrained(directory, safe_serialization=False, max_shard_size="20KB")
    bases["bin-index"] = directory
    shutil.copytree(GOOGLE_DIR, os.path.join(root, "google"))
    bases["google"] = os.path.join(root, "google")
    bases["zip"] = os.path.join(root, "zip")
    os.makedirs(bases["zip"])
    with zipfile.ZipFile(os.path.join(bases["zip"], ZIP_NAME), "w", zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(os.listdir(bases["google"])):
            archive.write(os.path.join(bases["google"], name), f"uncased_L-2_H-32_A-2/{name}")
    bases["hub-cache"] = _hub_cache(os.path.join(root, "hub-cache"), bases["safetensors"])
    return bases


#: The zip and the hub repo the zip and hub-cache kinds load.
ZIP_NAME = "google.zip"
HUB_ID = "org/fuzz"
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def _hub_cache(cache: str, checkpoint: str) -> str:
    """``checkpoint`` laid out as huggingface_hub caches it: blobs named by content,
    snapshot files linking to them, refs/main naming the snapshot's commit."""
    repo = os.path.join(cache, "models--" + HUB_ID.replace("/", "--"))
    for folder in ("blobs", "refs", os.path.join("snapshots", COMMIT)):
        os.makedirs(os.path.join(repo, folder))
    for index, name in enumerate(sorted(os.listdir(checkpoint))):
        blob = f"{index:040x}"
        shutil.copy(os.path.join(checkpoint, name), os.path.join(repo, "blobs", blob))
        os.symlink(os.path.join("..", "..", "blobs", blob), os.path.join(repo, "snapshots", COMMIT, name))
    with open(os.path.join(repo, "refs", "main"), "w") as f:
        f.write(COMMIT)
    return cache


def _mutate_file_bytes(path: str, rng: random.Random) -> str:
    with open(path, "rb") as f:
        data = _mutate_bytes(f.read(), rng)
    with open(path, "wb") as f:
        f.write(data)
    return path


def _mutate_shard(directory: str, rng: random.Random) -> str:
    """One shard of a sharded checkpoint: its bytes mutated, or the file replaced by what
    a reader could block on or misread (a pipe, a directory, a dangling link, nothing)."""
    shards = sorted(n for n in os.listdir(directory) if "-of-" in n)
    path = os.path.join(directory, rng.choice(shards))
    how = rng.choice(["bytes", "bytes", "pipe", "directory", "dangling", "empty", "missing"])
    if how == "bytes":
        return _mutate_file_bytes(path, rng)
    os.remove(path)
    if how == "pipe":
        os.mkfifo(path)
    elif how == "directory":
        os.mkdir(path)
    elif how == "dangling":
        os.symlink("gone-" + os.path.basename(path), path)
    elif how == "empty":
        open(path, "wb").close()
    return path


def _mutate_hub_cache(cache: str, rng: random.Random) -> str:
    """A hub cache's ref, snapshot links or blobs changed as a damaged or hostile cache has them."""
    repo = os.path.join(cache, "models--" + HUB_ID.replace("/", "--"))
    snapshot = os.path.join(repo, "snapshots", COMMIT)
    how = rng.choice(["ref bytes", "ref", "link", "blob", "snapshot link"])
    if how in ("ref bytes", "ref"):
        path = os.path.join(repo, "refs", "main")
        with open(path, "rb") as f:
            data = f.read()
        data = _mutate_bytes(data, rng) if how == "ref bytes" else rng.choice(
            [b"..", b"../..", b"", b"x" * 40, COMMIT[:-1].encode(), b"../../models--org--other/refs/main"])
        with open(path, "wb") as f:
            f.write(data)
        return path
    if how == "link":
        path = os.path.join(snapshot, rng.choice(sorted(os.listdir(snapshot))))
        os.remove(path)
        os.symlink(rng.choice(["../../blobs/missing", "/dev/zero", "../../../..", "../" + COMMIT, "/etc/passwd"]), path)
        return path
    if how == "blob":
        return _mutate_file_bytes(os.path.join(repo, "blobs", rng.choice(sorted(os.listdir(os.path.join(repo, "blobs"))))), rng)
    shutil.rmtree(snapshot)
    os.symlink(rng.choice([cache, "/", os.path.join("..", "..")]), snapshot)
    return snapshot


def _mutate_zip_directory(data: bytes, rng: random.Random) -> bytes:
    """A zip's central directory entries given other sizes, offsets or counts: what
    overlapping-entry bombs and truncated downloads look like to zipfile."""
    end = data.rfind(b"PK\x05\x06")
    if end < 0:
        return _mutate_bytes(data, rng)
    size, offset = struct.unpack("<II", data[end + 12:end + 20])
    entries = [i for i in range(offset, offset + size) if data[i:i + 4] == b"PK\x01\x02"]
    data = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        entry = rng.choice(entries)
        field = rng.choice([20, 24, 42])  # compressed size, uncompressed size, local header offset
        value = rng.choice([0, 1, 2**31, 2**32 - 1, rng.randrange(2**32), struct.unpack("<I", data[entry + 42:entry + 46])[0]])
        data[entry + field:entry + field + 4] = struct.pack("<I", value)
    return bytes(data)


def _mutate_bytes(data: bytes, rng: random.Random) -> bytes:
    data = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        kind = rng.choice(["flip", "truncate", "insert", "overwrite", "duplicate", "zero"])
        if not data:
            data = bytearray(rng.randbytes(rng.randint(1, 64)))
            continue
        i = rng.randrange(len(data))
        if kind == "flip":
            for _ in range(rng.randint(1, 20)):
                data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        elif kind == "truncate":
            del data[i:]
        elif kind == "insert":
            data[i:i] = rng.randbytes(rng.randint(1, 64))
        elif kind == "overwrite":
            n = rng.randint(1, 64)
            data[i:i + n] = rng.randbytes(n)
        elif kind == "duplicate":
            n = rng.randint(1, 256)
            data[i:i] = data[i:i + n]
        else:
            n = rng.randint(1, 256)
            data[i:i + n] = bytes(min(n, len(data) - i))
    return bytes(data)


def _odd_value(rng: random.Random):
    return rng.choice([None, True, -1, 0, 2**63, -(2**63), 1e308, float("nan"), "x", "768", [], {}, [1, 2],
                       {"a": 1}, "\u0000", "../../etc/passwd", 10**40])


def _mutate_json(value, rng: random.Random):
    if isinstance(value, dict) and value:
        key = rng.choice(list(value))
        action = rng.choice(["replace", "delete", "recurse", "add", "nest"])
        value = dict(value)
        if action == "replace":
            value[key] = _odd_value(rng)
        elif action == "delete":
            del value[key]
        elif action == "recurse":
            value[key] = _mutate_json(value[key], rng)
        elif action == "add":
            value[f"x{rng.randrange(100)}"] = _odd_value(rng)
        else:
            nested = value[key]
            for _ in range(rng.choice([10, 1000, 100_000])):
                nested = [nested]
            value[key] = nested
        return value
    if isinstance(value, list) and value:
        value = list(value)
        value[rng.randrange(len(value))] = _odd_value(rng)
        return value
    return _odd_value(rng)


def _dump_json(value) -> bytes:
    try:
        return json.dumps(value).encode()
    except (RecursionError, ValueError):
        return b"[" * 100_000


def _mutate_safetensors_header(data: bytes, rng: random.Random) -> bytes:
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + length])
    body = data[8 + length:]
    name = rng.choice([k for k in header if k != "__metadata__"])
    entry = dict(header[name])
    field = rng.choice(["dtype", "shape", "data_offsets", "entry", "length"])
    if field == "dtype":
        entry["dtype"] = rng.choice(["F64", "F16", "BF16", "I8", "U8", "BOOL", "F8_E4M3", "Q4", "", 3])
    elif field == "shape":
        entry["shape"] = [rng.choice([0, 1, 3, 2**31, 2**62, -1]) for _ in range(rng.randint(0, 5))]
    elif field == "data_offsets":
        entry["data_offsets"] = [rng.choice([0, 4, len(body), 2**63, -4]) for _ in range(rng.choice([2, 1, 3]))]
    elif field == "entry":
        entry = _odd_value(rng)
    header[name] = entry
    raw = json.dumps(header).encode()
    claimed = len(raw) if field != "length" else rng.choice([0, 7, len(raw) + 1, 2**63, 2**64 - 1])
    return struct.pack("<Q", claimed) + raw + body


def _mutate_json_or_bytes(share_json: float):
    """Mutate a JSON file's structure (with probability ``share_json``) or its bytes."""
    def mutate(raw: bytes, rng: random.Random) -> bytes:
        return _dump_json(_mutate_json(json.loads(raw), rng)) if rng.random() < share_json else _mutate_bytes(raw, rng)
    return mutate


def _mutate_entries(path: str, rng: random.Random) -> None:
    """A TF index mutated at the protobuf level and re-sealed with valid CRCs."""
    items = list(read_table(path))
    i = rng.randrange(len(items))
    key, value = items[i]
    items[i] = (key, _mutate_bytes(value, rng))
    write_table(path, items)


#: kind -> (the base checkpoint it starts from, the file it mutates, how).
CASES = {
    "bin": ("bin", "pytorch_model.bin", _mutate_bytes),
    "safetensors": ("safetensors", "model.safetensors", _mutate_bytes),
    "safetensors-header": ("safetensors", "model.safetensors", _mutate_safetensors_header),
    "index": ("index", "model.safetensors.index.json", _mutate_json_or_bytes(0.6)),
    "config": ("safetensors", "config.json", _mutate_json_or_bytes(0.7)),
    "vocab": ("safetensors", "vocab.txt", _mutate_bytes),
    "tf-index": ("google", "bert_model.ckpt.index", _mutate_bytes),
    "tf-data": ("google", "bert_model.ckpt.data-00000-of-00001", _mutate_bytes),
    "tf-entries": ("google", "bert_model.ckpt.index", None),
    "bin-index": ("bin-index", "pytorch_model.bin.index.json", _mutate_json_or_bytes(0.6)),
    "shard": ("index", None, _mutate_shard),
    "bin-shard": ("bin-index", None, _mutate_shard),
    "hub-cache": ("hub-cache", None, _mutate_hub_cache),
    "zip": ("zip", ZIP_NAME, _mutate_bytes),
    "zip-directory": ("zip", ZIP_NAME, _mutate_zip_directory),
}


def _make_case(kind: str, bases: dict[str, str], directory: str, rng: random.Random) -> tuple[str, str]:
    """Write one mutated checkpoint into ``directory``; return (what to load, the mutated file)."""
    base, name, mutate = CASES[kind]
    target = os.path.join(directory, "ckpt")
    shutil.copytree(bases[base], target, symlinks=True)
    if name is None:  # the mutation picks its file (a shard, a part of the cache) and changes it in place
        return target, mutate(target, rng)
    path = os.path.join(target, name)
    if mutate is None:
        _mutate_entries(path, rng)
        return target, path
    with open(path, "rb") as f:
        data = mutate(f.read(), rng)
    with open(path, "wb") as f:
        f.write(data)
    return target, path


def _load(kind: str, target: str) -> None:
    if kind == "vocab":
        mini_hf_bert.BertTokenizer.from_pretrained(target)
    elif kind == "hub-cache":
        mini_hf_bert.BertForPreTraining.from_pretrained(HUB_ID, cache_dir=target, local_files_only=True)
    elif kind.startswith("zip"):
        mini_hf_bert.BertForPreTraining.from_pretrained(os.path.join(target, ZIP_NAME))
    else:
        mini_hf_bert.BertForPreTraining.from_pretrained(target)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--kind", action="append", choices=list(CASES), help="repeatable (default: all, in turn)")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds a case may take before it counts as a hang")
    args = parser.parse_args()
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT_BYTES, MEMORY_LIMIT_BYTES))
    signal.signal(signal.SIGALRM, _alarm)
    import logging

    logging.disable(logging.WARNING)  # loading warnings of the non-strict kind are not the subject
    kinds = args.kind or list(CASES)
    rng = random.Random(args.seed)
    counts: collections.Counter = collections.Counter()
    failures: list[str] = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="mini_hf_bert-fuzz-") as root:
        bases = _base(os.path.join(root, "bases"))
        for trial in range(args.count):
            kind = kinds[trial % len(kinds)]
            directory = os.path.join(root, "case")
            os.makedirs(directory)
            target, mutated = _make_case(kind, bases, directory, rng)
            signal.setitimer(signal.ITIMER_REAL, args.timeout)
            try:
                _load(kind, target)
                counts["loaded"] += 1
            except Hang:
                failures.append(f"{kind} #{trial}: no answer within {args.timeout} s")
                counts["hang"] += 1
            except Exception as e:  # noqa: BLE001 - what is being counted
                message = str(e)
                if target in message:  # names the file or its directory
                    counts["refused naming the file"] += 1
                else:
                    counts["no file named"] += 1
                    failures.append(f"{kind} #{trial}: {type(e).__name__}: {message[:300]}")
                    shutil.copytree(target, os.path.join(ROOT, ".fuzz-failures", f"{kind}-{trial}"), symlinks=True,
                                    dirs_exist_ok=True)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            shutil.rmtree(directory)
            if (trial + 1) % 500 == 0:
                print(f"{trial + 1} cases, {dict(counts)}", file=sys.stderr, flush=True)
    for line in failures[:50]:
        print(line)
    print(f"fuzz: {args.count} mutated files ({', '.join(kinds)}) in {(time.perf_counter() - started) / 60:.1f} min: "
          f"{counts['loaded']} loaded, {counts['refused naming the file']} refused naming the file, "
          f"{counts['no file named']} exceptions naming no file, {counts['hang']} hangs")
    return 0 if not failures else 1


if __name__ == "__main__":
    raise SystemExit(main())
