"""CTranslate2's Encoder timed in a process of its own (see engines.py for why).

    python ctranslate2_worker.py '{"model": DIR, "inputs": NPZ, "outputs": NPY,
                                   "compute_type": "float32", "threads": 2, "runs": 10,
                                   "warmup": 2, "settle_s": 0.06}'

Reads ids and mask (B, T) from NPZ, runs each sequence on its real tokens only (CTranslate2
takes a list of unpadded sequences), writes the last hidden state (B, T, H) as fp32 to NPY,
zero at padding, and prints {"seconds": [...]} (one per timed call). Imports neither torch
nor mini_hf_bert: run it by path.

transformers: none
"""

from __future__ import annotations

import json
import sys
import time


def main(argv: list[str]) -> int:
    import ctranslate2
    import numpy

    request = json.loads(argv[1])
    arrays = numpy.load(request["inputs"])
    ids, mask = arrays["ids"], arrays["mask"]
    sequences = [row[: int(length)].tolist() for row, length in zip(ids, mask.sum(axis=1))]
    encoder = ctranslate2.Encoder(request["model"], device="cpu", compute_type=request["compute_type"],
                                  intra_threads=request["threads"])

    def call():
        return encoder.forward_batch(sequences)

    for _ in range(request["warmup"]):
        output = call()
    seconds = []
    for _ in range(request["runs"]):
        time.sleep(request["settle_s"])  # let the previous call's spinning threads go idle
        start = time.perf_counter()
        output = call()
        seconds.append(time.perf_counter() - start)
    hidden = numpy.array(output.last_hidden_state, dtype=numpy.float32)  # (B, T_max, H)
    result = numpy.zeros((*ids.shape, hidden.shape[-1]), dtype=numpy.float32)  # (B, T, H)
    result[:, : hidden.shape[1]] = hidden
    result[mask == 0] = 0
    numpy.save(request["outputs"], result)
    print(json.dumps({"seconds": seconds}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
