"""``python -m mini_hf_bert COMMAND``: ``mini_hf_bert/__main__.py`` builds the parser; each
command lives in the module of its purpose (``companion``, ``checkpoints``, ``training``,
``benchmark``)."""
