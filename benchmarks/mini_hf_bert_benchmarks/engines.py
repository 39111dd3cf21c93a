"""The CPU inference engines the benchmark times beside ours: OpenVINO and CTranslate2.

Each is used as its documentation recommends for CPU latency, on the benchmark's weights:

- **OpenVINO**: ``openvino.convert_model`` on the fp32 model (SDPA attention) with dynamic
  batch and length, compiled for the CPU with the LATENCY hint, the run's thread count and
  an explicit inference precision ("f32" or "bf16": left alone, OpenVINO picks bf16 on a CPU
  that has it, so an "fp32" row would time bf16).
- **CTranslate2**: the model saved in transformers' layout, converted by
  ``ctranslate2.converters.TransformersConverter`` and run by ``ctranslate2.Encoder`` with
  ``intra_threads`` set to the run's threads, in "float32" or "int8" (weights quantized
  when loaded). It runs in **a worker process of its own**: its OpenMP runtime binds to
  the libgomp torch loaded, after which torch runs 25-65% slower in the same process. The
  worker (``ctranslate2_worker.py``, run by path so that it imports neither torch nor
  this package) times its calls as the benchmark does and sends back times and outputs.

A peer whose package is missing, or that fails to convert or run, is left out with a note.

transformers: none
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable

import torch
from torch import nn

from mini_hf_bert.modeling_bert import BertModel

#: OpenVINO's names for the benchmark's dtypes.
OPENVINO_PRECISIONS = {"fp32": "f32", "bf16": "bf16"}
#: CTranslate2 compute types: the benchmark's label -> CTranslate2's name.
CTRANSLATE2_COMPUTE_TYPES = {"fp32": "float32", "int8": "int8"}
WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ctranslate2_worker.py")


class LastHiddenState(nn.Module):
    """BertModel -> its last hidden state alone, the one output a converter must keep.

    transformers: none
    """

    def __init__(self, model: BertModel) -> None:
        super().__init__()
        self.model = model

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """(B, T), (B, T) -> (B, T, H)."""
        return self.model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state


def openvino_model(model: BertModel, example: tuple[torch.Tensor, torch.Tensor]):
    """The fp32 ``model`` (any attention but "fast") converted to an OpenVINO model with
    dynamic batch and length; None when OpenVINO is not installed.

    transformers: none
    """
    try:
        import openvino
    except ImportError:
        return None
    ids, mask = example
    dynamic = [("input_ids", [-1, -1], openvino.Type.i64), ("attention_mask", [-1, -1], openvino.Type.i64)]
    with torch.no_grad():
        return openvino.convert_model(LastHiddenState(model).eval(), example_input=dict(input_ids=ids, attention_mask=mask),
                                      input=dynamic)


def openvino_call(converted, dtype_name: str, threads: int) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
    """A converted model compiled for this CPU in ``dtype_name``: (ids, mask) -> (B, T, H) fp32.

    transformers: none
    """
    import openvino

    compiled = openvino.Core().compile_model(converted, "CPU", {
        "PERFORMANCE_HINT": "LATENCY", "INFERENCE_NUM_THREADS": threads,
        "INFERENCE_PRECISION_HINT": OPENVINO_PRECISIONS[dtype_name],
    })
    request = compiled.create_infer_request()

    def call(ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        request.infer({"input_ids": ids.numpy(), "attention_mask": mask.numpy()})
        return torch.from_numpy(request.get_output_tensor(0).data.copy())
    return call


def ctranslate2_available() -> bool:
    """Whether CTranslate2 is installed (looked up without importing it into this process).

    transformers: none
    """
    import importlib.util

    return importlib.util.find_spec("ctranslate2") is not None


def ctranslate2_convert(model: BertModel, directory: str) -> str:
    """``model`` (fp32) saved in transformers' layout and converted by CTranslate2's own
    converter, in a process of its own; returns the converted directory.

    Raises RuntimeError with the converter's last line when it fails.

    transformers: none
    """
    source, target = os.path.join(directory, "hf"), os.path.join(directory, "ct2")
    model.save_pretrained(source)
    # Written by our save_pretrained and asserted on by the converter, which transformers 5
    # no longer writes: "absolute" is what our config says for this model.
    script = ("import sys, ctranslate2.converters as c\n"
              "c.TransformersConverter(sys.argv[1]).convert(sys.argv[2], force=True)\n")
    done = subprocess.run([sys.executable, "-c", script, source, target], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError((done.stderr.strip().splitlines() or ["no message"])[-1])
    return target


def ctranslate2_time(converted: str, ids: torch.Tensor, mask: torch.Tensor, compute_type: str, threads: int,
                     runs: int, warmup: int, settle_s: float, directory: str) -> tuple[list[float], torch.Tensor]:
    """Time CTranslate2's Encoder in its worker: (the seconds of each timed call, its last
    hidden state (B, T, H) as fp32).

    Raises RuntimeError with the worker's last line when it fails.

    transformers: none
    """
    import numpy

    inputs, outputs = os.path.join(directory, "inputs.npz"), os.path.join(directory, "outputs.npy")
    numpy.savez(inputs, ids=ids.numpy(), mask=mask.numpy())
    request = dict(model=converted, inputs=inputs, outputs=outputs, compute_type=CTRANSLATE2_COMPUTE_TYPES[compute_type],
                   threads=threads, runs=runs, warmup=warmup, settle_s=settle_s)
    done = subprocess.run([sys.executable, WORKER, json.dumps(request)], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError((done.stderr.strip().splitlines() or ["no message"])[-1])
    times = json.loads(done.stdout.strip().splitlines()[-1])["seconds"]
    return times, torch.from_numpy(numpy.load(outputs))
