"""``python -m mini_hf_bert pretrain``: a small ``BertForPreTraining`` from scratch on a
plain-text corpus, with Google's data pipeline and either optimiser recipe.

    corpus --(held-out documents aside)--> vocab.txt (given, or built: characters)
           --> create_pretraining_instances (Google's, static masks) --> Trainer
           --> checkpoint-STEP/ ... and the final model in OUTPUT_DIR, loadable by transformers

The objective is BERT's: 𝓛 = CE(MLM logits at the masked positions) + CE(NSP logits), each
a mean over the global batch (every masked token, every pair).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import random
from dataclasses import dataclass

import torch
from torch import nn

from .build_vocab import build_char_vocab, train_wordpiece
from ..checkpoints.convert import tokenizer_for
from ..companion.languages import text_language
from ..configuration_bert import BertConfig
from ..modeling_bert import BertForPreTraining
from ..modeling_utils import check_attn_implementation
from .pretraining_data import (
    CORPUS_FORMAT,
    IGNORE_INDEX,
    TrainingInstance,
    collate_pretraining_batch,
    create_pretraining_instances,
    fixed_split,
    load_corpus,
    mask_tokens_dynamically,
)
from ..tokenization_bert import BertTokenizer
from ..tokenization_bert_fast import BertTokenizerFast
from .trainer import (
    TRAINING_ATTN_IMPLEMENTATION,
    Trainer,
    TrainingConfig,
    TrainingTask,
    bf16_is_native,
    output_directory,
    run_arguments,
    vocabulary_digest,
)

logger = logging.getLogger(__name__)

#: Model sizes by name: (hidden, layers, heads, intermediate). "quick" trains in seconds on
#: 2 CPU cores (CI); "small" is BERT-Tiny's shape scaled to a laptop (Google's 2 x 128 is
#: the smallest of its 24 small BERTs).
MODEL_SIZES = {"quick": (64, 2, 2, 256), "tiny": (128, 2, 2, 512), "small": (256, 4, 4, 1024)}
#: The share of documents held out for evaluation: at least two (a random next sentence
#: comes from another document), at most MAX_HELD_OUT_DOCUMENTS.
HELD_OUT_SHARE = 0.05
MIN_HELD_OUT_DOCUMENTS = 2
MAX_HELD_OUT_DOCUMENTS = 200
#: At most this many held-out instances are evaluated (the fixed Chinese split holds ~4,000):
#: ~2,000 pairs make ~25,000 [MASK] positions, a standard error under 0.003 on accuracy.
MAX_EVAL_INSTANCES = 2000
EVAL_BATCH_SIZE = 64
#: How far above the commonest-token guess MLM accuracy at [MASK] positions must be before
#: the log stops saying the model uses no context: one point. With a few thousand held-out
#: [MASK] positions, an accuracy near 0.05 has a standard error of about 0.004.
PLATEAU_MARGIN = 0.01
#: How far above the majority label NSP accuracy must be before the log stops saying the
#: model has learned nothing of next-sentence prediction: two points, since ~2,000 held-out
#: pairs give a standard error of about 0.011 near 0.5.
NSP_MARGIN = 0.02
#: Below this many held-out sentence pairs the summary says the figures are too few to
#: trust: one pair moves NSP accuracy by more than half a point.
MIN_HELD_OUT_PAIRS = 200
#: How a vocabulary is built when none is given: characters for Chinese (BERT-Chinese),
#: WordPiece for the rest; "auto" picks by the share of CJK ideographs in the text.
VOCAB_BUILDERS = ("auto", "chars", "wordpiece")
CJK_SHARE_FOR_CHARS = 0.3
DEFAULT_WORDPIECE_SIZE = 8000
#: How many of the corpus's documents decide its language (the curves' labels).
LANGUAGE_SAMPLE_DOCUMENTS = 50


def build_vocabulary(documents: list[list[str]], builder: str = "auto", vocab_size: int = DEFAULT_WORDPIECE_SIZE,
                     progress: bool = False) -> list[str]:
    """A vocabulary for ``documents``: characters (Chinese) or trained WordPiece (``builder``,
    with a bar when ``progress``).

    transformers: none
    """
    if builder not in VOCAB_BUILDERS:
        raise ValueError(f"build_vocab={builder!r}: expected one of {VOCAB_BUILDERS}")
    if builder == "auto":
        from ..tokenization_utils import is_chinese_char

        text = "".join(s for d in documents for s in d)
        cjk = sum(1 for c in text if is_chinese_char(ord(c)))
        builder = "chars" if cjk >= CJK_SHARE_FOR_CHARS * max(1, len(text.replace(" ", ""))) else "wordpiece"
    if builder == "chars":
        return build_char_vocab(documents)
    return train_wordpiece(documents, vocab_size, progress=progress)


@dataclass
class PretrainingSetup:
    """What ``prepare_pretraining`` builds: the tokenizer, model and data.

    transformers: none
    """

    tokenizer: BertTokenizer
    model: BertForPreTraining
    train_instances: list[TrainingInstance]
    eval_instances: list[TrainingInstance]
    corpus_sha256: str = ""  # the documents read (after max_documents): a changed corpus refuses --resume
    vocabulary_sha256: str = ""  # the tokens and casing: a changed vocabulary refuses --resume
    language: str = "en"  # the corpus's, "en" or "zh": the curves are labelled in it


def split_documents(documents: list[list[str]], seed: int,
                    source: str = "the corpus") -> tuple[list[list[str]], list[list[str]]]:
    """(training documents, held-out documents): a seeded shuffle, ``HELD_OUT_SHARE`` aside;
    ``source`` names the corpus in the error of one too small.

    transformers: none
    """
    order = list(range(len(documents)))
    random.Random(seed).shuffle(order)
    held_out = min(MAX_HELD_OUT_DOCUMENTS, max(MIN_HELD_OUT_DOCUMENTS, int(len(documents) * HELD_OUT_SHARE)))
    if len(documents) <= held_out:
        raise ValueError(f"{source} has {len(documents)} document(s); pre-training needs at least "
                         f"{held_out + 1}: {held_out} held out for evaluation, the rest to train on. The format is "
                         f"{CORPUS_FORMAT}")
    return [documents[i] for i in order[held_out:]], [documents[i] for i in order[:held_out]]


def prepare_pretraining(corpus: str, vocab: str | None = None, size: str = "quick",
                        max_seq_length: int = 128, dupe_factor: int = 5, masked_lm_prob: float = 0.15,
                        max_predictions_per_seq: int = 20, whole_word_mask: bool = False, seed: int = 12345,
                        max_documents: int | None = None, dropout: float = 0.1, build_vocab: str = "auto",
                        vocab_size: int = DEFAULT_WORDPIECE_SIZE, init_checkpoint: str | None = None,
                        max_position_embeddings: int | None = None,
                        attn_implementation: str = TRAINING_ATTN_IMPLEMENTATION,
                        progress: bool = False) -> PretrainingSetup:
    """Read the corpus, set the held-out documents aside, get a vocabulary, make the
    instances and a model: fresh, or ``init_checkpoint``'s (its vocabulary too, unless
    ``vocab`` is given). ``attn_implementation`` computes the model (not saved with it).
    ``progress``: bars over building the vocabulary and making the instances.
    Nothing is written.

    transformers: none (google-research/bert: ``create_pretraining_data.py`` + ``run_pretraining.py``)
    """
    if size not in MODEL_SIZES:
        raise ValueError(f"size={size!r}: expected one of {', '.join(MODEL_SIZES)}")
    check_attn_implementation(attn_implementation)
    positions = max_seq_length if max_position_embeddings is None else max_position_embeddings
    if positions < max_seq_length:
        raise ValueError(f"max_position_embeddings={positions} is less than max_seq_length={max_seq_length}: "
                         f"the model would have no position for the last tokens")
    split = fixed_split(corpus, segmented=whole_word_mask)
    if split is None:
        documents = load_corpus(corpus)
        if max_documents is not None:
            documents = documents[:max_documents]
        train_documents, eval_documents = split_documents([d for d in documents if d], seed, corpus)
    else:  # the fixed Chinese test split is held out, whatever the seed
        train_documents, eval_documents = split
        if max_documents is not None:
            train_documents = train_documents[:max_documents]
        documents = [[s if isinstance(s, str) else "".join(s) for s in d] for d in train_documents + eval_documents]
    if vocab is None and init_checkpoint is not None:
        tokenizer = tokenizer_for(init_checkpoint, BertTokenizerFast)
    elif vocab is None:  # every rank builds the same list; it is written with the first checkpoint
        tokens = build_vocabulary([[s if isinstance(s, str) else "".join(s) for s in d] for d in train_documents],
                                  build_vocab, vocab_size, progress)
        tokenizer = BertTokenizerFast(vocab={token: index for index, token in enumerate(tokens)}, do_lower_case=True)
    else:
        tokenizer = tokenizer_for(vocab, BertTokenizerFast)
    options = dict(max_seq_length=max_seq_length, masked_lm_prob=masked_lm_prob,
                   max_predictions_per_seq=max_predictions_per_seq, whole_word_mask=whole_word_mask)
    train = create_pretraining_instances(train_documents, tokenizer, dupe_factor=dupe_factor, seed=seed,
                                         source=corpus, progress=progress, **options)
    evaluation = create_pretraining_instances(eval_documents, tokenizer, dupe_factor=1, seed=seed + 1,
                                              source=f"{corpus} (its held-out documents)",
                                              **options)[:MAX_EVAL_INSTANCES]  # shuffled: a sample
    hidden, layers, heads, intermediate = MODEL_SIZES[size]
    torch.manual_seed(seed)
    if init_checkpoint is not None:
        model = _initial_model(init_checkpoint, tokenizer, max_seq_length, dropout, attn_implementation)
    else:
        config = BertConfig(vocab_size=len(tokenizer), hidden_size=hidden, num_hidden_layers=layers,
                            num_attention_heads=heads, intermediate_size=intermediate,
                            max_position_embeddings=positions, pad_token_id=tokenizer.pad_token_id,
                            hidden_dropout_prob=dropout, attention_probs_dropout_prob=dropout,
                            attn_implementation=attn_implementation)
        model = BertForPreTraining(config)
    corpus_sha256 = hashlib.sha256(json.dumps(documents, ensure_ascii=False).encode("utf-8")).hexdigest()
    sample = "".join(sentence for document in documents[:LANGUAGE_SAMPLE_DOCUMENTS] for sentence in document)
    return PretrainingSetup(tokenizer, model, train, evaluation, corpus_sha256=corpus_sha256,
                            vocabulary_sha256=vocabulary_digest(tokenizer), language=text_language(sample))


def _initial_model(init_checkpoint: str, tokenizer: BertTokenizer, max_seq_length: int,
                   dropout: float, attn_implementation: str) -> BertForPreTraining:
    """``init_checkpoint``'s BertForPreTraining, both heads included (Google's
    ``init_checkpoint``: a later phase at a longer length starts from an earlier one)."""
    model = BertForPreTraining.from_pretrained(init_checkpoint, attn_implementation=attn_implementation,
                                               hidden_dropout_prob=dropout, attention_probs_dropout_prob=dropout)
    config = model.config
    if config.vocab_size != len(tokenizer):
        raise ValueError(f"--init-checkpoint {init_checkpoint}: its vocabulary has {config.vocab_size} tokens, "
                         f"the tokenizer {len(tokenizer)}; give the checkpoint's own vocab (or none)")
    if config.max_position_embeddings < max_seq_length:
        raise ValueError(f"--init-checkpoint {init_checkpoint}: it has {config.max_position_embeddings} positions, "
                         f"fewer than max_seq_length={max_seq_length} (start the first phase with "
                         f"--max-position-embeddings {max_seq_length})")
    return model


def pretraining_task(setup: PretrainingSetup, seed: int, dynamic_masking: bool = False,
                     masked_lm_prob: float = 0.15) -> TrainingTask:
    """The pre-training objective and evaluation for ``Trainer``.

    transformers: none
    """
    tokenizer = setup.tokenizer

    def collate(instances: list[TrainingInstance], step: int, chunk: int) -> dict[str, torch.Tensor]:
        batch = collate_pretraining_batch(instances, tokenizer)
        if dynamic_masking:  # undo Google's masks, draw new ones for this step
            ids = torch.where(batch["labels"] != IGNORE_INDEX, batch["labels"], batch["input_ids"])
            generator = torch.Generator().manual_seed(seed * 7_919 + step * 104_729 + chunk)
            batch["input_ids"], batch["labels"] = mask_tokens_dynamically(ids, tokenizer, masked_lm_prob,
                                                                          generator=generator)
        return batch

    def loss_terms(forward: nn.Module, batch: dict[str, torch.Tensor]) -> list[torch.Tensor]:
        mlm_logits, labels, nsp_logits = forward(batch)
        mlm = nn.functional.cross_entropy(mlm_logits, labels, reduction="sum")  # Σ over masked tokens
        nsp = nn.functional.cross_entropy(nsp_logits, batch["next_sentence_label"], reduction="sum")
        return [mlm, nsp]

    def counts(batch: dict[str, torch.Tensor]) -> list[int]:
        return [int((batch["labels"] != IGNORE_INDEX).sum()), len(batch["next_sentence_label"])]

    def evaluate(model: nn.Module) -> dict[str, float]:
        evaluation = evaluate_pretraining(model, setup.eval_instances, tokenizer)
        for warning in verdicts(evaluation):
            logger.warning(warning)
        return evaluation

    def save_extra(directory: str) -> None:
        tokenizer.save_pretrained(directory)

    return TrainingTask(setup.train_instances, collate, loss_terms, counts, evaluate, save_extra,
                        training_module=MaskedPredictions, language=setup.language)


def masked_predictions(model: BertForPreTraining, batch: dict[str, torch.Tensor]
                       ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The MLM logits at the masked positions only, their labels, and the NSP logits.

    transformers: none (google-research/bert: ``run_pretraining.gather_indexes``)

    Google's pre-training scores the vocabulary only where a token is to be predicted, not
    at every position as ``BertForPreTraining.forward`` does: with 15% of the tokens
    masked, the (H x V) decoder costs a seventh as much, about a third of the step at
    hidden 256 and a 7,000-character vocabulary. The loss is the same.

    Returns:
        (N, V) logits and (N,) labels at the N masked positions of the batch (row-major
        order), and (B, 2) NSP logits.
    """
    out = model.bert(input_ids=batch["input_ids"], token_type_ids=batch["token_type_ids"],
                     attention_mask=batch["attention_mask"])
    masked = batch["labels"] != IGNORE_INDEX  # (B, T)
    hidden = out.last_hidden_state[masked]  # (B, T, H) -> (N, H)
    return (model.cls.predictions(hidden), batch["labels"][masked],
            model.cls.seq_relationship(out.pooler_output))


class MaskedPredictions(nn.Module):
    """``masked_predictions`` as a module, so that DistributedDataParallel wraps it.

    transformers: none
    """

    def __init__(self, model: BertForPreTraining) -> None:
        super().__init__()
        self.model = model

    def forward(self, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return masked_predictions(self.model, batch)


def evaluate_pretraining(model: nn.Module, instances: list[TrainingInstance], tokenizer: BertTokenizer) -> dict[str, float]:
    """What pre-training has learned, on held-out instances, beside what a model that
    learned only frequencies would score.

    transformers: none

    Returns:
        ``mlm_accuracy``: top-1 at every predicted position (Google's figure). It mixes in the
        10% of positions that keep their own token: once a model copies the token it sees
        (learned early, before any context) it reads about 0.1 + 0.8 x (the frequency
        guess) with no use of context; before that, the guess.
        ``mlm_mask_accuracy``: top-1 at the positions replaced by [MASK] only: the honest
        figure. ``mlm_most_frequent_token_accuracy``: always guessing the commonest
        masked token, at those same [MASK] positions. ``nsp_accuracy``, and
        ``nsp_majority_accuracy``: always answering the commoner next-sentence label.
        ``held_out_pairs`` and ``held_out_mask_positions``: how many each figure counts.
    """
    device = next(model.parameters()).device
    correct_mlm = total_mlm = correct_mask = total_mask = correct_nsp = random_next = 0
    mask_label_counts: dict[int, int] = {}
    for start in range(0, len(instances), EVAL_BATCH_SIZE):
        batch = collate_pretraining_batch(instances[start:start + EVAL_BATCH_SIZE], tokenizer)
        batch = {k: v.to(device) for k, v in batch.items()}
        mlm_logits, labels, nsp_logits = masked_predictions(model, batch)
        hit = mlm_logits.argmax(-1) == labels  # (N,)
        at_mask = batch["input_ids"][batch["labels"] != IGNORE_INDEX] == tokenizer.mask_token_id  # (N,)
        correct_mlm += int(hit.sum())
        total_mlm += len(labels)
        correct_mask += int(hit[at_mask].sum())
        total_mask += int(at_mask.sum())
        for label in labels[at_mask].tolist():
            mask_label_counts[label] = mask_label_counts.get(label, 0) + 1
        correct_nsp += int((nsp_logits.argmax(-1) == batch["next_sentence_label"]).sum())
        random_next += int(batch["next_sentence_label"].sum())
    pairs = max(len(instances), 1)
    return {"mlm_accuracy": correct_mlm / max(total_mlm, 1), "mlm_mask_accuracy": correct_mask / max(total_mask, 1),
            "mlm_most_frequent_token_accuracy": max(mask_label_counts.values(), default=0) / max(total_mask, 1),
            "nsp_accuracy": correct_nsp / pairs, "nsp_majority_accuracy": max(random_next, pairs - random_next) / pairs,
            "held_out_pairs": len(instances), "held_out_mask_positions": total_mask}


def plateau_warning(evaluation: dict[str, float]) -> str | None:
    """A sentence for the log when MLM accuracy at [MASK] positions is no better than the
    commonest-token guess: the model has not yet learned to use the context.

    transformers: none
    """
    accuracy, guess = evaluation["mlm_mask_accuracy"], evaluation["mlm_most_frequent_token_accuracy"]
    if accuracy > guess + PLATEAU_MARGIN:
        return None
    return (f"MLM accuracy at [MASK] positions ({accuracy:.3f}) is no better than always guessing the commonest "
            f"token ({guess:.3f}) by the margin this check asks for, {PLATEAU_MARGIN:.2f} (more than the noise of a "
            f"few thousand held-out positions): the model has not learned to use the context yet (the mixed "
            f"mlm_accuracy {evaluation['mlm_accuracy']:.3f} counts the 10% of positions that keep their own token)")


def nsp_warning(evaluation: dict[str, float]) -> str | None:
    """A sentence for the log when NSP accuracy is no better than always answering the
    commoner label: the model has learned nothing of which sentence follows which.

    transformers: none
    """
    accuracy, majority = evaluation["nsp_accuracy"], evaluation["nsp_majority_accuracy"]
    if accuracy > majority + NSP_MARGIN:
        return None
    return (f"NSP accuracy ({accuracy:.3f}) is no better than always answering the majority label ({majority:.3f}) "
            f"by the margin this check asks for, {NSP_MARGIN:.2f} (about twice the noise of 2,000 held-out pairs): "
            f"the model has not learned next-sentence prediction yet")


def few_pairs_warning(evaluation: dict[str, float]) -> str | None:
    """A sentence for the log when the held-out pairs are too few for the figures to mean
    much (a small corpus holds out little).

    transformers: none
    """
    pairs = evaluation.get("held_out_pairs")
    if pairs is None or pairs >= MIN_HELD_OUT_PAIRS:
        return None
    return (f"only {pairs} held-out sentence pairs: one pair moves NSP accuracy by {1 / max(pairs, 1):.3f}, so these "
            f"figures are rough; a larger corpus holds out more")


def verdicts(evaluation: dict[str, float]) -> list[str]:
    """Every warning an evaluation earns (``plateau_warning``, ``nsp_warning``,
    ``few_pairs_warning``): logged as it is made, and repeated by the final summary.

    transformers: none
    """
    return [warning for warning in (plateau_warning(evaluation), nsp_warning(evaluation),
                                    few_pairs_warning(evaluation)) if warning]


def pretrain(corpus: str, output_dir: str, *, vocab: str | None = None, size: str = "quick", max_seq_length: int = 128,
             max_steps: int = 1000, batch_size: int = 32, gradient_accumulation_steps: int = 1,
             learning_rate: float = 1e-3, warmup_steps: int | None = None, optimizer: str = "adamw",
             dupe_factor: int = 5, masked_lm_prob: float = 0.15, whole_word_mask: bool = False,
             dynamic_masking: bool = False, eval_every: int = 100, save_every: int = 100, seed: int = 12345,
             resume: bool = False, progress: bool = True, max_documents: int | None = None,
             dropout: float = 0.1, build_vocab: str = "auto", vocab_size: int = DEFAULT_WORDPIECE_SIZE,
             bf16: bool | None = None, init_checkpoint: str | None = None,
             max_position_embeddings: int | None = None,
             attn_implementation: str = TRAINING_ATTN_IMPLEMENTATION) -> Trainer:
    """Pre-train a small BERT on ``corpus`` into ``output_dir``; returns the trainer (its
    ``history`` holds the losses and evaluations). ``bf16``: autocast to bfloat16; None
    (the default) turns it on where the hardware computes it (``bf16_is_native``).

    transformers: none (google-research/bert: ``run_pretraining.py``)
    """
    if size not in MODEL_SIZES:
        raise ValueError(f"size={size!r}: expected one of {', '.join(MODEL_SIZES)}")
    if whole_word_mask and dynamic_masking:
        raise ValueError("whole_word_mask and dynamic_masking together: dynamic masking draws each token on its own, "
                         "so it cannot keep a word's characters together; whole-word masking uses Google's static "
                         "instances (raise dupe_factor for more masks)")
    config = TrainingConfig(output_dir=output_dir, max_steps=max_steps, batch_size=batch_size,
                            gradient_accumulation_steps=gradient_accumulation_steps, learning_rate=learning_rate,
                            warmup_steps=max_steps // 10 if warmup_steps is None else warmup_steps,
                            optimizer=optimizer, eval_every=eval_every, save_every=save_every, seed=seed,
                            progress=progress, bf16=bf16_is_native() if bf16 is None else bf16)
    config.check(int(os.environ.get("WORLD_SIZE", "1")))  # every argument checked before anything is written
    check_attn_implementation(attn_implementation)
    arguments = dict(command="pretrain", corpus=os.path.abspath(corpus) if os.path.exists(corpus) else corpus,
                     vocab=None if vocab is None else os.path.abspath(vocab), size=size, max_seq_length=max_seq_length,
                     dupe_factor=dupe_factor, masked_lm_prob=masked_lm_prob, whole_word_mask=whole_word_mask,
                     dynamic_masking=dynamic_masking, max_documents=max_documents, dropout=dropout,
                     build_vocab=build_vocab, vocab_size=vocab_size,
                     init_checkpoint=None if init_checkpoint is None else os.path.abspath(init_checkpoint),
                     max_position_embeddings=max_position_embeddings, attn_implementation=attn_implementation)
    with output_directory(output_dir, [corpus if os.path.exists(corpus) else None, vocab, init_checkpoint], resume,
                          run_arguments(config, arguments)):
        setup = prepare_pretraining(corpus, vocab, size, max_seq_length, dupe_factor, masked_lm_prob,
                                    whole_word_mask=whole_word_mask, seed=seed, max_documents=max_documents,
                                    dropout=dropout, build_vocab=build_vocab, vocab_size=vocab_size,
                                    init_checkpoint=init_checkpoint, max_position_embeddings=max_position_embeddings,
                                    attn_implementation=attn_implementation, progress=progress)
        arguments.update(corpus_sha256=setup.corpus_sha256, vocabulary_sha256=setup.vocabulary_sha256)
        trainer = Trainer(setup.model, pretraining_task(setup, seed, dynamic_masking, masked_lm_prob), config, arguments)
        if resume:
            trainer.resume_latest()
        trainer.train()
    return trainer
