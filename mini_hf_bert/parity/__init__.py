"""Comparisons with the reference implementations.

* ``compare``: the tolerances (in one place, each with its reason), output comparison and
  tables, and transformers' BertModel loaded on the same weights.
* ``benchmark``: inference speed against transformers and its peers.

The helpers only this repository's tests and tools use (checkpoints written by transformers
in the hub's layouts) are in ``tools/testing_utils.py``, outside the package; where a
generated doc's numbers come from is ``tools/provenance.py``'s.
"""
