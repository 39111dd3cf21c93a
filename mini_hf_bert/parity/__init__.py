"""Comparisons with the reference implementations.

* ``compare``: the tolerances (in one place, each with its reason), output comparison and
  tables, and transformers' BertModel loaded on the same weights.
* ``benchmark``: inference speed against transformers and its peers.
* ``testing_utils``: checkpoints written by transformers in the hub's layouts, the
  fingerprint a generated doc records of the code it measured, and the counterpart check.
"""
