"""Convert any checkpoint form mini_hf_bert reads into a HuggingFace directory.

``convert(src, dst)`` loads ``src`` (a Google TF checkpoint directory / prefix / zip, or
an HF directory) into the mini_hf_bert class its weights call for -- validating every
tensor on the way -- and writes ``config.json``, ``model.safetensors`` and the
vocabulary files found beside it into ``dst``, which transformers' own
``from_pretrained`` reads. The output is written to a temporary directory next to
``dst`` and renamed into place, so an interrupted conversion leaves nothing half-written;
the source is only ever read.

``inspect_checkpoint(src)`` lists every tensor with its shape, dtype and what it maps to;
``describe_checkpoint(src)`` says which official checkpoint it is (by content fingerprint,
``checkpoints/fingerprints.py``) or, for anything else, the architecture its tensors imply.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from .bundled import default_checkpoint_dir
from .errors import CheckpointError
from .fingerprints import KnownFile, identify_file
from .hf_format import CONFIG_NAME, is_zip, read_index_file
from .resolve import (
    HUB_FORMS,
    FormEntry,
    FormReader,
    ResolvedCheckpoint,
    load_checkpoint_tensors,
    resolve_checkpoint,
)
from .tf_bundle import TFCheckpoint
from .weight_map import AS_IS, is_tf_training_state, tf_to_hf_name, transformed_shape
from .. import modeling_bert
from ..configuration_bert import BertConfig
from ..file_utils import check_destination, staged_directory  # noqa: F401  (check_destination: importable from here too)
from ..limits import Limits
from ..tokenization_bert import BertTokenizer, load_vocab
from ..tokenization_bert_files import infer_do_lower_case
from ..tokenization_utils_base import TOKENIZER_CONFIG_FILE, TokenizerFileError

logger = logging.getLogger(__name__)

VOCAB_FILES = ("vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")


def infer_architecture(names: set[str]) -> str:
    """The mini_hf_bert class whose parameters a checkpoint's (transformers) names fill."""
    if any(n.startswith("cls.predictions.") for n in names):
        return "BertForPreTraining" if any(n.startswith("cls.seq_relationship.") for n in names) else "BertForMaskedLM"
    if any(n.startswith("cls.seq_relationship.") for n in names):
        return "BertForNextSentencePrediction"
    if "qa_outputs.weight" in names:
        return "BertForQuestionAnswering"
    if "classifier.weight" in names:
        return "BertForSequenceClassification"
    return "BertModel"


@dataclass
class ConversionReport:
    source: str
    destination: str
    architecture: str
    tensors_written: int
    skipped_training_state: int
    files: list[str]
    do_lower_case: bool | None = None  # the casing recorded in tokenizer_config.json, if a vocabulary was written
    config_note: str = ""  # where the config came from, for a form that keeps no BERT config


def convert(
    src: str,
    dst: str,
    config_file: str | None = None,
    overwrite: bool = False,
    progress: bool = True,
    do_lower_case: bool | None = None,
    limits: Limits | None = None,
) -> ConversionReport:
    """Convert ``src`` into an HF directory ``dst`` (see the module docstring).

    Args:
        src: a Google checkpoint directory, prefix or ``.zip``, an HF directory, or a hub id.
        dst: the directory to write. It may not be, hold or lie inside anything ``src``
            reads (symlinks resolved): the conversion never alters its input.
        config_file: a config to use instead of the one beside the checkpoint (HF's
            script passes ``--bert_config_file`` separately).
        overwrite: replace an existing, non-empty ``dst``, only once the new one is complete.
        progress: a progress bar while reading a Google checkpoint.
        do_lower_case: the casing to record for the tokenizer. None: keep the source's
            ``tokenizer_config.json``, or, without one, infer it from Google's release
            name or from the vocabulary (``tokenization_bert_files.infer_do_lower_case``).
        limits: the bounds on the model the config describes and on a zip
            (``mini_hf_bert.Limits``; None: the defaults).
    """


    dst = os.fspath(dst)
    resolved = resolve_checkpoint(src, limits=limits)
    try:
        config_path = config_file or resolved.config_path
        if config_path is None and resolved.derived_config is None:
            raise CheckpointError(f"{src}: no config.json or bert_config.json beside this checkpoint; pass the config file")
        check_destination(dst, [os.fspath(src), *([config_path] if config_path else []), *_checkpoint_files(resolved)])
        if os.path.islink(dst) and not overwrite:
            raise FileExistsError(f"{dst}: is a symlink (to {os.readlink(dst)}), which is never written through; "
                                  f"pass overwrite=True (--overwrite) to replace the link itself")
        if os.path.lexists(dst) and not overwrite and (not os.path.isdir(dst) or os.listdir(dst)):
            raise FileExistsError(f"{dst}: exists and is not empty; pass overwrite=True (--overwrite) to replace it")
        # Built beside DST and renamed into place whole; made before the reading, so a bad DST fails fast.
        with staged_directory(dst, ".converting-", overwrite=overwrite) as staging:
            loaded = load_checkpoint_tensors(resolved, progress=progress, limits=limits)
            architecture = infer_architecture(set(loaded.tensors))
            overrides = {}
            if architecture == "BertForSequenceClassification":
                overrides["num_labels"] = int(loaded.tensors["classifier.weight"].shape[0])
            if config_path is None:  # a form that keeps no BERT config: what it holds says
                logger.info("%s", resolved.config_note)
                config = BertConfig(**{**resolved.derived_config, **overrides})
            else:
                config = BertConfig.from_json_file(config_path, check_model=True, **overrides)
            config = config.replace(architectures=[architecture])
            # Every tensor is checked against the config (strict), as from_pretrained does.
            model, _ = getattr(modeling_bert, architecture).from_checkpoint_tensors(
                loaded, config, strict=True, limits=limits, config_source=config_path or resolved.config_note)
            # A masked-LM checkpoint without a next-sentence head (TF2's pretrainer, TF Hub, KerasHub)
            # converts to BertForMaskedLM, which has no pooler: its trained pooler is written too,
            # so that BertModel (AutoModel) from the output gets it rather than a random one.
            state = model.state_dict()
            pooler = {k: t.to(model.dtype) for k, t in loaded.tensors.items()
                      if k.startswith("bert.pooler.") and k not in state and architecture != "BertModel"}
            model.save_pretrained(staging, state_dict={**state, **pooler} if pooler else None)
            if resolved.vocab_file is not None and resolved.kind == "form" and resolved.form not in HUB_FORMS:
                recorded_casing = _write_form_tokenizer(resolved, staging, do_lower_case, config.max_position_embeddings)
            else:
                vocab_dir = os.path.dirname(resolved.config_path or config_path or resolved.weights_path)
                recorded_casing = _write_tokenizer_files(vocab_dir, staging, do_lower_case,
                                                         config.max_position_embeddings)
    finally:
        resolved.cleanup()
    report = ConversionReport(
        source=os.fspath(src),
        destination=dst,
        architecture=architecture,
        tensors_written=len(model.state_dict()) - len(model.tied_weights()) + len(pooler),
        skipped_training_state=len(loaded.skipped),
        files=sorted(os.listdir(dst)),
        do_lower_case=recorded_casing,
        config_note=resolved.config_note if config_path is None else "",
    )
    logger.info("converted %s -> %s (%s, %d tensors)", src, dst, architecture, report.tensors_written)
    return report


def _write_tokenizer_files(
    vocab_dir: str, staging: str, do_lower_case: bool | None, model_max_length: int
) -> bool | None:
    """Put the source's tokenizer beside the converted weights, every setting recorded.

    A source with a ``tokenizer_config.json`` (an HF directory) is copied as it is, unless
    ``do_lower_case`` overrides its casing. A Google release has only ``vocab.txt``, and
    its casing lives in its name; without a ``tokenizer_config.json`` transformers (and
    we) would tokenize a cased model lower-cased, so one is written. Returns the casing
    the output records, or None when the source has no vocabulary.
    """
    for name in VOCAB_FILES:
        path = os.path.join(vocab_dir, name)
        if os.path.lexists(path) and not os.path.isfile(path):
            raise TokenizerFileError(f"{path}: is not a regular file")
    present = [f for f in VOCAB_FILES if os.path.isfile(os.path.join(vocab_dir, f))]
    if not present:
        logger.warning("%s: no vocab.txt or tokenizer.json beside the checkpoint; the output has no tokenizer", vocab_dir)
        return None
    # Settings already recorded (a tokenizer_config.json, or a tokenizer.json's normalizer): copied as they are.
    if do_lower_case is None and (TOKENIZER_CONFIG_FILE in present or "vocab.txt" not in present):
        for name in present:
            shutil.copyfile(os.path.join(vocab_dir, name), os.path.join(staging, name))
        tokenizer = BertTokenizer.from_pretrained(staging)
        tokenizer.require_special_tokens_in_vocabulary()
        return tokenizer.do_lower_case
    if do_lower_case is None:
        do_lower_case, reason = infer_do_lower_case(vocab_dir, load_vocab(os.path.join(vocab_dir, "vocab.txt")))
        logger.info("%s: no tokenizer_config.json; recording do_lower_case=%s, from %s (--do_lower_case overrides it)",
                    vocab_dir, do_lower_case, reason)
    # A tokenizer.json carries its own lower-casing switch, which would contradict the
    # override: the tokenizer is written anew from the vocabulary instead.
    tokenizer = BertTokenizer.from_pretrained(vocab_dir, do_lower_case=do_lower_case, model_max_length=model_max_length)
    tokenizer.require_special_tokens_in_vocabulary()
    tokenizer.save_pretrained(staging)
    return tokenizer.do_lower_case


def _write_form_tokenizer(resolved: ResolvedCheckpoint, staging: str, do_lower_case: bool | None,
                          model_max_length: int) -> bool:
    """The tokenizer of a form that keeps its vocabulary its own way (a SavedModel's
    assets/vocab.txt, KerasHub's assets/tokenizer/vocabulary.txt), with the casing it
    records, written as an HF tokenizer."""
    casing, reason = do_lower_case, "--do_lower_case"
    if casing is None and resolved.do_lower_case is not None:
        casing, reason = resolved.do_lower_case, f"the casing {resolved.form} records"
    if casing is None:
        casing, reason = infer_do_lower_case(os.path.dirname(resolved.vocab_file), load_vocab(resolved.vocab_file))
    logger.info("%s: the tokenizer from %s, do_lower_case=%s (%s)", resolved.source, resolved.vocab_file, casing, reason)
    tokenizer = BertTokenizer(resolved.vocab_file, do_lower_case=casing, model_max_length=model_max_length)
    tokenizer.require_special_tokens_in_vocabulary()
    tokenizer.save_pretrained(staging)
    return tokenizer.do_lower_case


@contextmanager
def as_hf_directory(src: str | os.PathLike) -> Iterator[str]:
    """An HF-format directory (``config.json``, weights, tokenizer files) holding ``src``, in
    any form ``from_pretrained`` reads: ``src`` itself when it already is one, else a
    converted copy in a temporary directory, removed on exit. For what only reads HF
    directories: transformers' ``from_pretrained``, and the tokenizer files of a ``.zip``."""
    if not (os.path.isfile(src) and is_zip(src)):  # a zip always converts: no extraction to tell
        resolved = resolve_checkpoint(src)
        if resolved.kind == "hf" and os.path.basename(resolved.config_path or "") == CONFIG_NAME:
            yield os.path.dirname(resolved.weights_path)
            return
    with tempfile.TemporaryDirectory(prefix="mini_hf_bert_hf_") as tmp:
        directory = os.path.join(tmp, "checkpoint")
        logger.info("%s: converting to an HF directory for transformers (%s)", src, directory)
        convert(src, directory, progress=False)
        yield directory


# ------------------------------------------------------------ writing safely


@dataclass
class InspectedTensor:
    name: str
    shape: tuple[int, ...]
    dtype: str
    maps_to: str  # the transformers name, "skipped (training state)", or "not mapped"


def inspect_checkpoint(src: str) -> list[InspectedTensor]:
    """Every tensor in ``src`` with its shape, dtype and where from_pretrained puts it."""
    resolved = resolve_checkpoint(src)
    try:
        if resolved.kind == "tf":
            checkpoint = TFCheckpoint(resolved.tf_prefix)
            rows = []
            for name, entry in checkpoint.entries.items():
                if is_tf_training_state(name):
                    target = "skipped (training state)"
                else:
                    mapped = tf_to_hf_name(name)
                    target = "not mapped" if mapped is None else mapped[0] + (" (transposed)" if mapped[1] else "")
                rows.append(InspectedTensor(name, entry.shape, entry.dtype_name, target))
            return rows
        if resolved.kind == "form":  # from the files' headers, before any tensor is read
            with FormReader(resolved.form, resolved.weights_path) as reader:
                return [InspectedTensor(_form_name(e), e.shape, e.dtype, _form_target(e)) for e in reader.entries]
        loaded = load_checkpoint_tensors(resolved)
        return [InspectedTensor(n, tuple(t.shape), str(t.dtype).removeprefix("torch."), n) for n, t in loaded.tensors.items()]
    finally:
        resolved.cleanup()


def _form_name(entry: FormEntry) -> str:
    """A TF2 variable's own name, and its checkpoint key where that says something else
    (a SavedModel keys its variables by position)."""
    key = entry.key.removesuffix("/.ATTRIBUTES/VARIABLE_VALUE")
    return entry.name if not key or key == entry.name or "/" not in entry.key else f"{entry.name} ({key})"


def _form_target(entry: FormEntry) -> str:
    if entry.training_state:
        return "skipped (not a weight: training state, a counter, the casing)"
    if entry.maps_to is None:
        return "not mapped"
    return entry.maps_to + ("" if entry.transform in (None, AS_IS) else f" ({entry.transform})")


def format_inspection(rows: list[InspectedTensor]) -> str:
    width = max([len(r.name) for r in rows] + [4])
    lines = [f"{'name':<{width}}  {'shape':<16}  {'dtype':<9}  maps to"]
    for r in rows:
        lines.append(f"{r.name:<{width}}  {str(list(r.shape)):<16}  {r.dtype:<9}  {r.maps_to}")
    return "\n".join(lines)


# ------------------------------------------------------------------ describing


@dataclass
class CheckpointDescription:
    """What a checkpoint is: recognised official files, and the architecture its tensors imply."""

    source: str
    recognised: list[tuple[str, KnownFile]] = field(default_factory=list)  # (file name, what it is)
    architecture: str = "BertModel"  # the mini_hf_bert class its weights fill
    num_hidden_layers: int = 0
    hidden_size: int = 0
    num_attention_heads: int | None = None  # not fixed by a 2-D kernel: from the config, if any
    heads_from_weights: bool = False  # a kernel per head ([hidden, heads, head_dim]) fixed it
    intermediate_size: int = 0
    vocab_size: int = 0
    max_position_embeddings: int = 0
    type_vocab_size: int = 0
    heads: list[str] = field(default_factory=list)


def _hf_shapes(resolved: ResolvedCheckpoint) -> dict[str, tuple[int, ...]]:
    """transformers name (``bert.`` prefix removed, legacy gamma/beta kept) -> shape."""
    if resolved.kind == "tf":
        shapes = {}
        for name, entry in TFCheckpoint(resolved.tf_prefix).entries.items():
            mapped = None if is_tf_training_state(name) else tf_to_hf_name(name)
            if mapped is not None:
                hf_name, transpose = mapped
                shapes[hf_name] = tuple(reversed(entry.shape)) if transpose else tuple(entry.shape)
    elif resolved.kind == "form":  # from the files' headers
        with FormReader(resolved.form, resolved.weights_path) as reader:
            shapes = {e.maps_to: transformed_shape(e.shape, e.transform) for e in reader.entries if e.maps_to}
    else:  # memory-mapped: reading shapes touches no weight data
        shapes = {name: tuple(t.shape) for name, t in load_checkpoint_tensors(resolved).tensors.items()}
    return {name.removeprefix("bert."): shape for name, shape in shapes.items() if shape is not None}


def _checkpoint_files(resolved: ResolvedCheckpoint) -> list[str]:
    """The files that hold ``resolved``'s weights and vocabulary (what can be fingerprinted)."""
    if resolved.kind == "form" and resolved.form in ("saved_model", "keras_hub"):  # a directory of its own
        root = resolved.weights_path if resolved.form == "keras_hub" else \
            os.path.dirname(os.path.dirname(resolved.weights_path))
        return [os.path.join(d, f) for d, _, names in sorted(os.walk(root)) for f in sorted(names)]
    if resolved.kind == "tf" or resolved.form == "tf2":
        prefix = resolved.tf_prefix or resolved.weights_path
        directory = os.path.dirname(prefix) or "."
        stem = os.path.basename(prefix)
        files = [os.path.join(directory, f) for f in sorted(os.listdir(directory)) if f.startswith(stem + ".")]
    else:
        directory = os.path.dirname(resolved.weights_path)
        files = [resolved.weights_path]
        if resolved.weights_path.endswith(".index.json"):
            files += [os.path.join(directory, s) for s in sorted(set(read_index_file(resolved.weights_path).values()))]
    files += [os.path.join(directory, name) for name in VOCAB_FILES if os.path.isfile(os.path.join(directory, name))]
    return files


def describe_checkpoint(src: str, progress: bool = False) -> CheckpointDescription:
    """Recognise ``src``'s files by fingerprint and infer its architecture from its tensors."""
    resolved = resolve_checkpoint(src)
    try:
        description = CheckpointDescription(source=os.fspath(src))
        if os.path.isfile(os.fspath(src)) and not os.fspath(src).endswith(".index"):  # a .zip: the archive itself too
            candidates = [os.fspath(src), *_checkpoint_files(resolved)]
        else:
            candidates = _checkpoint_files(resolved)
        for path in candidates:
            known = identify_file(path, progress=progress)
            if known is not None:
                description.recognised.append((os.path.basename(path), known))
        shapes = _hf_shapes(resolved)
        # The weights do not fix the number of heads; the config does (validated like any read).
        config_heads = resolved.derived_config.get("num_attention_heads") if resolved.derived_config else None
        description.heads_from_weights = resolved.form in ("tf2", "saved_model")
        if resolved.config_path is not None:
            config_heads = BertConfig.from_json_file(resolved.config_path, check_model=True).num_attention_heads
    finally:
        resolved.cleanup()

    def dim(name: str, axis: int) -> int:
        return shapes[name][axis] if name in shapes and len(shapes[name]) > axis else 0

    layers = {int(m.group(1)) for n in shapes if (m := re.match(r"encoder\.layer\.(\d+)\.", n))}
    description.architecture = infer_architecture(set(shapes))
    description.num_hidden_layers = max(layers) + 1 if layers else 0
    description.vocab_size = dim("embeddings.word_embeddings.weight", 0)
    description.hidden_size = dim("embeddings.word_embeddings.weight", 1)
    description.max_position_embeddings = dim("embeddings.position_embeddings.weight", 0)
    description.type_vocab_size = dim("embeddings.token_type_embeddings.weight", 0)
    description.intermediate_size = dim("encoder.layer.0.intermediate.dense.weight", 0)
    description.num_attention_heads = config_heads if isinstance(config_heads, int) else None
    if "pooler.dense.weight" in shapes:
        description.heads.append("pooler")
    if any(n.startswith("cls.predictions.") for n in shapes):
        description.heads.append("masked-LM head (cls.predictions)")
    if any(n.startswith("cls.seq_relationship.") for n in shapes):
        description.heads.append("next-sentence head (cls.seq_relationship)")
    if "classifier.weight" in shapes:
        description.heads.append(f"classifier ({dim('classifier.weight', 0)} labels)")
    if "qa_outputs.weight" in shapes:
        description.heads.append("span head (qa_outputs)")
    return description


def format_description(d: CheckpointDescription) -> str:
    lines = []
    for filename, known in d.recognised:
        lines.append(f"recognised {filename}: {known.name} [sha256 {known.sha256[:16]}..., {known.size} bytes]")
    if not any(known.filename != "vocab.txt" for _, known in d.recognised):
        lines.append("weights: not a checkpoint this tool knows by fingerprint; architecture inferred from the tensors:")
    heads = ("from config" if not d.heads_from_weights else "from the weights") if d.num_attention_heads is not None \
        else "unknown: the weights do not fix it"
    lines.append(
        f"  {d.architecture}: {d.num_hidden_layers} layers, hidden {d.hidden_size}, "
        f"heads {d.num_attention_heads if d.num_attention_heads is not None else '?'} ({heads}), "
        f"intermediate {d.intermediate_size}, vocab {d.vocab_size}, positions {d.max_position_embeddings}, "
        f"segment types {d.type_vocab_size}"
    )
    lines.append(f"  heads present: {', '.join(d.heads) if d.heads else 'none (encoder only)'}")
    return "\n".join(lines)


def load_tokenizer(path: str, source: str | None = None,
                   tokenizer_class: type[BertTokenizer] = BertTokenizer) -> BertTokenizer:
    """The tokenizer (a ``tokenizer_class``: training passes ``BertTokenizerFast``) of an HF directory, or an error naming it when it has no vocabulary
    or its vocabulary lacks a special token (the commands run it with a model). ``source``:
    what the user named, when ``path`` is its temporary conversion (``as_hf_directory``)."""
    if not any(os.path.isfile(os.path.join(path, f)) for f in ("vocab.txt", "tokenizer.json")):
        raise FileNotFoundError(f"{source or path}: no vocab.txt or tokenizer.json, so the text cannot be tokenized")
    tokenizer = tokenizer_class.from_pretrained(path)
    tokenizer.require_special_tokens_in_vocabulary()
    return tokenizer


def tokenizer_for(source: str | None, tokenizer_class: type[BertTokenizer] = BertTokenizer) -> BertTokenizer:
    """The tokenizer (a ``tokenizer_class``) of ``source``: a vocab.txt file, a directory with
    vocab.txt or tokenizer.json, or any checkpoint form; default all-MiniLM-L6-v2's. Its vocabulary
    must hold the special tokens (a model is built or run on it)."""
    if source is None:
        return load_tokenizer(default_checkpoint_dir(), tokenizer_class=tokenizer_class)
    if os.path.exists(source) and not os.path.isdir(source) and not source.endswith(".zip"):
        tokenizer = tokenizer_class(source)  # a vocabulary file (anything else is refused by its reader, named)
        tokenizer.require_special_tokens_in_vocabulary()
        return tokenizer
    if os.path.isdir(source) and any(os.path.isfile(os.path.join(source, f)) for f in ("vocab.txt", "tokenizer.json")):
        return load_tokenizer(source, tokenizer_class=tokenizer_class)  # a tokenizer directory needs no weights
    if os.path.isdir(source) and not os.path.isfile(os.path.join(source, "bert_config.json")) and \
            not any(name.endswith(".index") for name in os.listdir(source)):
        raise FileNotFoundError(f"{source}: no vocab.txt or tokenizer.json, so the text cannot be tokenized")
    with as_hf_directory(source) as hf_dir:
        return load_tokenizer(hf_dir, source, tokenizer_class)
