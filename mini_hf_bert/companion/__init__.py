"""The reading companion: see numbers flow through BERT.

* ``tracing``: hooks that record every module's output (``trace``, ``run_with_cache``) and compare two traces.
* ``trace_report``: ``trace`` / ``parity`` as library calls: a checkpoint traced, optionally beside transformers.
* ``tokenize_explain``: how a text becomes tokens, stage by stage.
* ``languages``: which shipped checkpoint suits a text (Chinese text: the Chinese BERT).
* ``visualize``: attention maps as a PNG and as an offline HTML page.
* ``demo``: ``python -m mini_hf_bert demo``, a real checkpoint beside transformers.
"""
