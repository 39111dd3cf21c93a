"""mini_hf_bert's benchmarks: speed against transformers and the other engines, beside the
package rather than in it (a learner opening mini_hf_bert/ meets the model, not its
stopwatches). ``python -m mini_hf_bert benchmark`` and ``benchmark-training`` run these
where this package is installed (``pip install ./benchmarks``; the engines it times come
with ``mini_hf_bert[bench]``); without it, ``benchmark`` times mini_hf_bert's own paths
only (mini_hf_bert/parity/speed.py).

* ``inference``: inference speed of the fast path against transformers and its peers, on
  the CPU (docs/performance.md);
* ``gpu``: the same workloads on a CUDA GPU;
* ``engines``: the OpenVINO and CTranslate2 peers, and ``ctranslate2_worker``, the
  process CTranslate2 runs in;
* ``training_speed``: a pre-training step's speed on every path that computes it
  (docs/training_speed.md).
"""
