"""Convert any checkpoint form mini_hf_bert reads into a HuggingFace directory.

``convert(src, dst)`` loads ``src`` (a Google TF checkpoint directory / prefix / zip, or
an HF directory) into the mini_hf_bert class its weights call for -- validating every
tensor on the way -- and writes ``config.json``, ``model.safetensors`` and the
vocabulary files found beside it into ``dst``, which transformers' own
``from_pretrained`` reads. The output is written to a temporary directory next to
``dst`` and renamed into place, so an interrupted conversion leaves nothing half-written;
the source is only ever read.

``inspect_checkpoint(src)`` lists every tensor with its shape, dtype and what it maps to.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import shutil
import tempfile
from dataclasses import dataclass

from .checkpoints.errors import CheckpointError
from .checkpoints.resolve import load_checkpoint_tensors, resolve_checkpoint
from .checkpoints.tf_bundle import TFCheckpoint
from .checkpoints.weight_map import is_tf_training_state, tf_to_hf_name
from .configuration_bert import BertConfig

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


def convert(
    src: str, dst: str, config_file: str | None = None, overwrite: bool = False, progress: bool = True
) -> ConversionReport:
    """Convert ``src`` into an HF directory ``dst`` (see the module docstring).

    ``config_file`` overrides the config found beside the checkpoint (HF's script passes
    ``--bert_config_file`` separately).
    """
    import mini_hf_bert

    dst = os.fspath(dst)
    if os.path.exists(dst) and not overwrite and (not os.path.isdir(dst) or os.listdir(dst)):
        raise FileExistsError(f"{dst}: exists and is not empty; pass overwrite=True (--overwrite) to replace it")
    resolved = resolve_checkpoint(src)
    try:
        config_path = config_file or resolved.config_path
        if config_path is None:
            raise CheckpointError(f"{src}: no config.json or bert_config.json beside this checkpoint; pass the config file")
        loaded = load_checkpoint_tensors(resolved, progress=progress)
        architecture = infer_architecture(set(loaded.tensors))
        overrides = {}
        if architecture == "BertForSequenceClassification":
            overrides["num_labels"] = int(loaded.tensors["classifier.weight"].shape[0])
        config = BertConfig.from_json_file(config_path, **overrides)
        config = dataclasses.replace(config, architectures=[architecture])
        vocab_dir = os.path.dirname(resolved.config_path or config_path)
        vocab_files = [f for f in VOCAB_FILES if os.path.isfile(os.path.join(vocab_dir, f))]
        # Every tensor is checked against the config (strict), as from_pretrained does.
        model, _ = getattr(mini_hf_bert, architecture).from_checkpoint_tensors(loaded, config, strict=True)
        parent = os.path.dirname(os.path.abspath(dst)) or "."
        os.makedirs(parent, exist_ok=True)
        staging = tempfile.mkdtemp(prefix=".converting-", dir=parent)
        try:
            model.save_pretrained(staging)
            for name in vocab_files:
                shutil.copy(os.path.join(vocab_dir, name), os.path.join(staging, name))
            if os.path.exists(dst):
                shutil.rmtree(dst) if os.path.isdir(dst) else os.remove(dst)
            os.replace(staging, dst)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    finally:
        resolved.cleanup()
    report = ConversionReport(
        source=os.fspath(src),
        destination=dst,
        architecture=architecture,
        tensors_written=len(model.state_dict()) - len(model.tied_weights()),
        skipped_training_state=len(loaded.skipped),
        files=sorted(os.listdir(dst)),
    )
    logger.info("converted %s -> %s (%s, %d tensors)", src, dst, architecture, report.tensors_written)
    return report


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
        loaded = load_checkpoint_tensors(resolved)
        return [InspectedTensor(n, tuple(t.shape), str(t.dtype).removeprefix("torch."), n) for n, t in loaded.tensors.items()]
    finally:
        resolved.cleanup()


def format_inspection(rows: list[InspectedTensor]) -> str:
    width = max([len(r.name) for r in rows] + [4])
    lines = [f"{'name':<{width}}  {'shape':<16}  {'dtype':<9}  maps to"]
    for r in rows:
        lines.append(f"{r.name:<{width}}  {str(list(r.shape)):<16}  {r.dtype:<9}  {r.maps_to}")
    return "\n".join(lines)
