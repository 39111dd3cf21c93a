"""Argument types and help texts that several commands share."""

from __future__ import annotations

import argparse
import re

#: What a SRC argument accepts.
ANY_FORM = ("any form from_pretrained reads: an HF or Google directory, a prefix (.../bert_model.ckpt), a .zip, a hub id, "
            "tf_model.h5 or flax_model.msgpack, a TF2 checkpoint, a TF Hub SavedModel, a KerasHub preset; "
            "or zh, the Chinese BERT shipped with mini_hf_bert, or en, all-MiniLM-L6-v2")


def checkpoint_source(text: str) -> str:
    """A SRC argument: ``zh`` is the shipped Chinese BERT's directory; the rest as given."""
    from ..checkpoints.bundled import resolve_named_checkpoint

    try:
        return resolve_named_checkpoint(text)
    except FileNotFoundError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def boolean(text: str) -> bool:
    """``true``/``false`` (also 1/0, yes/no), as transformers' conversion script takes them."""
    value = text.strip().lower()
    if value in ("true", "1", "yes"):
        return True
    if value in ("false", "0", "no"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


def regex(text: str) -> str:
    """A regular expression, refused by argparse (one line) when it does not compile."""
    try:
        re.compile(text)
    except re.error as e:
        raise argparse.ArgumentTypeError(f"{text!r} is not a regular expression ({e})") from None
    return text


def chosen_checkpoint(given: str | None, text: str) -> str:
    """``given``, or the shipped checkpoint for ``text``, said on stdout with the reason."""
    from ..companion.languages import checkpoint_choice

    if given is not None:
        print(f"checkpoint: {given}, as given")
        return given
    path, reason = checkpoint_choice(text)
    print(f"checkpoint: {reason} ({path})")
    return path
