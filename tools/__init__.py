"""This repository's generators: the scripts that build docs/ and the studies. Not
installed (pyproject.toml packages ``mini_hf_bert*`` only). A test imports one from the
repository's root (``from tools.walkthrough import ...``); each script puts the root on
``sys.path`` itself.
"""
