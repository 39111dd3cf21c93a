"""Text generation for a causal LM (``BertLMHeadModel``): ``generate`` as transformers 5.x's
``GenerationMixin`` runs it, with the same tokens out for the same inputs and seed.

Three ways to pick the next token, each one model call per step with the key/value cache:

* greedy: the most likely token;
* sampling (``do_sample=True``): drawn from the distribution that ``temperature``,
  ``top_k`` and ``top_p`` reshape;
* beam search (``num_beams > 1``): the ``num_beams`` best partial sequences by summed log
  probability are kept; a sequence that ends (EOS, or the length limit) joins the finished
  ones, ranked by its score over ``length ** length_penalty``.

Before any pick, the scores pass the logits processors a config asks for (repetition
penalty, no repeated n-grams, a minimum length), in transformers' order.

transformers: ``generation/utils.py`` (``GenerationMixin``), ``generation/logits_process.py``
"""

from __future__ import annotations

import dataclasses
import logging
import math
import os
from dataclasses import dataclass
from typing import Any

import torch

from .file_utils import not_a_regular_file, read_json, write_json
from .modeling_outputs import ModelOutput

logger = logging.getLogger(__name__)

#: A score no candidate can win with (transformers' -1e9 in beam search bookkeeping).
_NEVER = -1.0e9
#: The file ``save_pretrained`` writes a generative model's settings to (transformers' name).
GENERATION_CONFIG_NAME = "generation_config.json"


@dataclass(kw_only=True)
class GenerationConfig:
    """How ``generate`` decodes; transformers' defaults. A model's comes from its config
    (``from_model_config``: the 4.x generation fields and the special tokens), and every
    field can be overridden per call.

    transformers: ``generation.GenerationConfig``
    """

    max_length: int = 20  # prompt included
    max_new_tokens: int | None = None  # generated only; wins over max_length
    min_length: int = 0  # prompt included: EOS is forbidden before it
    min_new_tokens: int | None = None
    do_sample: bool = False
    num_beams: int = 1
    temperature: float = 1.0
    top_k: int | None = 50
    top_p: float = 1.0
    repetition_penalty: float = 1.0  # > 1 makes every token already in the sequence less likely
    no_repeat_ngram_size: int = 0
    length_penalty: float = 1.0  # beam search: a finished score is divided by length ** this
    early_stopping: bool | str = False  # beam search: True, False (a heuristic) or "never"
    num_return_sequences: int = 1
    use_cache: bool = True
    output_scores: bool = False
    return_dict_in_generate: bool = False
    bos_token_id: int | None = None
    eos_token_id: int | list[int] | None = None
    pad_token_id: int | None = None

    def __post_init__(self) -> None:
        """A ValueError naming the first setting that cannot work, and why."""
        counts = {"max_length": 1, "min_length": 0, "num_beams": 1, "num_return_sequences": 1, "no_repeat_ngram_size": 0}
        optional_counts = {"max_new_tokens": 1, "min_new_tokens": 0, "top_k": 0, "bos_token_id": 0, "pad_token_id": 0}
        for name, lowest in (*counts.items(), *optional_counts.items()):
            value = getattr(self, name)
            if value is None and name in optional_counts:
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < lowest:
                raise ValueError(f"GenerationConfig.{name} must be an int >= {lowest}"
                                 f"{' or None' if name in optional_counts else ''}, got {value!r}")
        for name in ("temperature", "top_p", "repetition_penalty", "length_penalty"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"GenerationConfig.{name} must be a finite number, got {value!r}")
        for name in ("do_sample", "use_cache", "output_scores", "return_dict_in_generate"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"GenerationConfig.{name} must be true or false, got {getattr(self, name)!r}")
        if self.early_stopping not in (True, False, "never"):
            raise ValueError(f"GenerationConfig.early_stopping must be True, False or 'never', got {self.early_stopping!r}")
        if self.repetition_penalty <= 0:
            raise ValueError(f"GenerationConfig.repetition_penalty must be positive, got {self.repetition_penalty}")

    @classmethod
    def from_model_config(cls, config: Any) -> GenerationConfig:
        """The defaults a model config carries: its special tokens, and the generation
        settings transformers 4.x kept on every config (``max_length``, ``num_beams``, ...)."""
        values = {f.name: getattr(config, f.name) for f in dataclasses.fields(cls) if hasattr(config, f.name)}
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        """The settings that differ from transformers' defaults, and the special tokens."""
        default = type(self)()
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if getattr(self, f.name) != getattr(default, f.name) or f.name.endswith("_token_id")}

    def save_pretrained(self, directory: str | os.PathLike) -> str:
        """Write ``generation_config.json`` into ``directory``, whole or not at all; its path."""
        return write_json(os.path.join(os.fspath(directory), GENERATION_CONFIG_NAME), self.to_dict(), sort_keys=True)

    @classmethod
    def from_directory(cls, directory: str, config: Any) -> GenerationConfig:
        """A checkpoint's ``generation_config.json`` (written here or by transformers, whose
        keys this class lacks are left out), or, without one, ``from_model_config(config)``."""
        path = os.path.join(directory, GENERATION_CONFIG_NAME)
        if not os.path.lexists(path):
            return cls.from_model_config(config)
        problem = not_a_regular_file(path)
        if problem:  # passing over it would silently generate with other settings
            raise ValueError(f"{path}: {problem}")
        values = read_json(path, ValueError, "generation config")
        if not isinstance(values, dict):
            raise ValueError(f"{path}: a generation config must be a JSON object, got {type(values).__name__}")
        known = {f.name for f in dataclasses.fields(cls)}
        try:
            return cls.from_model_config(config).update(**{k: v for k, v in values.items() if k in known})
        except ValueError as e:
            raise ValueError(f"{path}: {e}") from None

    def update(self, **overrides: Any) -> GenerationConfig:
        """A copy with ``overrides``; an unknown name is a TypeError naming it."""
        unknown = sorted(set(overrides) - {f.name for f in dataclasses.fields(self)})
        if unknown:
            raise TypeError(f"generate() got unexpected keyword argument(s) {unknown}: not generation settings "
                            f"(see mini_hf_bert.GenerationConfig) nor model inputs")
        return dataclasses.replace(self, **overrides)


@dataclass
class GenerateOutput(ModelOutput):
    """``return_dict_in_generate=True``: the sequences, and with ``output_scores`` the
    processed scores of each step (greedy, sampling) or each sequence's final score (beams).

    transformers: ``generation.utils.GenerateDecoderOnlyOutput`` / ``generation.utils.GenerateBeamDecoderOnlyOutput``
    """

    sequences: torch.Tensor | None = None  # (B x num_return_sequences, prompt + generated)
    scores: tuple[torch.Tensor, ...] | None = None  # per step, (B, V)
    sequences_scores: torch.Tensor | None = None  # beam search, (B x num_return_sequences,)


# --------------------------------------------------------------------------------------
# Logits processors: (sequences so far, scores of the next token) -> new scores
# --------------------------------------------------------------------------------------


def process_scores(config: GenerationConfig, sequences: torch.Tensor, scores: torch.Tensor, prompt_length: int,
                   eos: torch.Tensor | None) -> torch.Tensor:
    """The scores of the next token (N, V) after what ``config`` asks, in transformers'
    order: repetition penalty, no repeated n-grams, minimum length and minimum new tokens
    (no EOS yet), then for sampling temperature, top-k and top-p.

    transformers: ``generation.utils.GenerationMixin._get_logits_processor`` and the processors it lists
    """
    length = sequences.shape[1]
    if config.repetition_penalty != 1.0:
        seen = torch.gather(scores, 1, sequences)  # (N, L): each seen token's score
        seen = torch.where(seen < 0, seen * config.repetition_penalty, seen / config.repetition_penalty)
        scores = scores.scatter(1, sequences, seen)
    if config.no_repeat_ngram_size > 0 and length + 1 >= config.no_repeat_ngram_size:
        scores = _ban_repeated_ngrams(scores, sequences, config.no_repeat_ngram_size)
    too_short = length < config.min_length or (
        config.min_new_tokens is not None and length - prompt_length < config.min_new_tokens)
    if eos is not None and too_short:
        scores = scores.clone()
        scores[:, eos] = -float("inf")
    if config.do_sample:
        keep = 2 if config.num_beams > 1 else 1  # beam sampling keeps a continuation beside an EOS
        if eos is not None and config.num_beams > 1:
            keep = len(eos) + 1
        if config.temperature != 1.0:
            scores = scores / config.temperature
        if config.top_k:
            kth = torch.topk(scores, min(max(config.top_k, keep), scores.shape[-1])).values[..., -1, None]  # (N, 1)
            scores = scores.masked_fill(scores < kth, -float("inf"))
        if config.top_p < 1.0:
            ordered, order = torch.sort(scores, descending=False)
            mass_below = ordered.softmax(dim=-1).cumsum(dim=-1)  # (N, V), ascending
            drop = mass_below <= (1 - config.top_p)
            drop[..., -keep:] = False
            scores = scores.masked_fill(drop.scatter(1, order, drop), -float("inf"))
    return scores


def _ban_repeated_ngrams(scores: torch.Tensor, sequences: torch.Tensor, n: int) -> torch.Tensor:
    """The tokens that would complete an n-gram already in the sequence get -inf.

    transformers: ``generation.logits_process.NoRepeatNGramLogitsProcessor``
    """
    scores = scores.clone()
    for row, tokens in enumerate(sequences.tolist()):
        prefix = tuple(tokens[len(tokens) - n + 1:]) if n > 1 else ()
        banned = {tokens[i + n - 1] for i in range(len(tokens) - n + 1) if tuple(tokens[i:i + n - 1]) == prefix}
        if banned:
            scores[row, sorted(banned)] = -float("inf")
    return scores


# --------------------------------------------------------------------------------------
# The mixin
# --------------------------------------------------------------------------------------


class GenerationMixin:
    """``generate`` for a model whose forward takes ``input_ids``, ``attention_mask``,
    ``past_key_values`` and ``use_cache`` and returns ``logits`` and ``past_key_values``.

    transformers: ``generation.GenerationMixin``
    """

    @property
    def generation_config(self) -> GenerationConfig:
        """The model's generation defaults, made from its config on first use."""
        if "_generation_config" not in self.__dict__:
            self.__dict__["_generation_config"] = GenerationConfig.from_model_config(self.config)
        return self.__dict__["_generation_config"]

    @generation_config.setter
    def generation_config(self, value: GenerationConfig) -> None:
        if not isinstance(value, GenerationConfig):
            raise TypeError(f"generation_config must be a mini_hf_bert GenerationConfig, got {type(value).__name__}")
        self.__dict__["_generation_config"] = value

    @torch.no_grad()
    def generate(
        self,
        input_ids: torch.Tensor | None = None,
        generation_config: GenerationConfig | None = None,
        *,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
        **settings: Any,
    ) -> torch.Tensor | GenerateOutput:
        """Continue each prompt of ``input_ids`` (B, T): the prompts followed by the tokens
        generated, (B x num_return_sequences, T + new), as transformers' ``generate``.

        Args:
            input_ids: the prompts; a batch of unequal prompts is padded on the left with
                ``attention_mask`` 0 there (a right-padded one would continue its padding).
            generation_config: the settings to start from (default ``self.generation_config``).
            attention_mask: (B, T), 1 = token, 0 = padding; default: 0 where ``input_ids`` is
                the pad token (unless that is also the EOS), as transformers.
            settings: any field of ``GenerationConfig`` for this call: ``max_new_tokens``,
                ``do_sample``, ``num_beams``, ``temperature``, ``top_k``, ``top_p``, ...

        Returns:
            The sequences; with ``return_dict_in_generate=True`` a ``GenerateOutput``.
        """
        config = (generation_config or self.generation_config).update(**settings)
        if not isinstance(input_ids, torch.Tensor) or input_ids.dim() != 2 or input_ids.dtype not in (torch.long, torch.int):
            raise ValueError(f"generate needs input_ids, a (batch, length) tensor of token ids, got "
                             f"{type(input_ids).__name__ if not isinstance(input_ids, torch.Tensor) else tuple(input_ids.shape)}")
        input_ids = input_ids.long()
        eos = _eos_tensor(config.eos_token_id, input_ids.device)
        if config.pad_token_id is None and eos is not None:
            logger.warning("Setting pad_token_id to eos_token_id:%d for open-end generation.", int(eos[0]))
            config = config.update(pad_token_id=int(eos[0]))
        attention_mask = _attention_mask(input_ids, attention_mask, config, eos)
        if config.pad_token_id is not None and input_ids.shape[0] > 1 and bool((attention_mask[:, -1] == 0).any()):
            logger.warning("A decoder-only architecture is being used, but right-padding was detected! For correct "
                           "generation results, please set padding_side='left' when initializing the tokenizer.")
        prompt_length = input_ids.shape[1]
        max_length = prompt_length + config.max_new_tokens if config.max_new_tokens is not None else config.max_length
        _check_settings(config, prompt_length, max_length)
        positions = getattr(self.config, "max_position_embeddings", None)
        if positions is not None and max_length > positions:  # beam search holds (B, beams, max_length) ids
            raise ValueError(f"generate: max_length {max_length} (the prompt and max_new_tokens) exceeds the "
                             f"{positions} positions the model has (config.max_position_embeddings)")
        # Positions count real tokens only, so a left-padded prompt starts at 0 (transformers' rule).
        position_ids = (attention_mask.cumsum(-1) - 1).masked_fill(attention_mask == 0, 0)  # (B, T)
        inputs = {"attention_mask": attention_mask, "position_ids": position_ids, "token_type_ids": token_type_ids}
        if config.num_beams > 1:
            return self._beam_search(input_ids, inputs, config, max_length, eos)
        if config.num_return_sequences > 1:  # sampling several continuations of each prompt
            input_ids = input_ids.repeat_interleave(config.num_return_sequences, dim=0)
            inputs = _repeat_rows(inputs, config.num_return_sequences)
        return self._sample(input_ids, inputs, config, max_length, eos)

    def _next_logits(self, sequences: torch.Tensor, inputs: dict, cache: Any, config: GenerationConfig,
                     ) -> tuple[torch.Tensor, Any]:
        """One model call: the next token's logits (N, V) in float32, and the new cache. With
        the cache, only the tokens not yet seen go in; without, the whole sequence."""
        seen = cache[0][0].shape[2] if cache else 0  # (N, heads, seen, D)
        token_types = inputs["token_type_ids"]
        outputs = self(
            sequences[:, seen:], attention_mask=inputs["attention_mask"], position_ids=inputs["position_ids"][:, seen:],
            token_type_ids=token_types[:, seen:] if token_types is not None else None,
            past_key_values=cache, use_cache=config.use_cache, return_dict=True,
        )
        return outputs.logits[:, -1, :].float(), outputs.past_key_values if config.use_cache else None

    def _sample(self, sequences: torch.Tensor, inputs: dict, config: GenerationConfig, max_length: int,
                eos: torch.Tensor | None) -> torch.Tensor | GenerateOutput:
        """Greedy decoding, or sampling with ``do_sample``; a sequence that produced EOS
        continues with the pad token until all have, or ``max_length`` is reached.

        transformers: ``generation.utils.GenerationMixin._sample``
        """
        prompt_length = sequences.shape[1]
        unfinished = torch.ones(sequences.shape[0], dtype=torch.bool, device=sequences.device)
        cache, scores = None, []
        while sequences.shape[1] < max_length:
            logits, cache = self._next_logits(sequences, inputs, cache, config)
            next_scores = process_scores(config, sequences, logits, prompt_length, eos)  # (N, V)
            scores.append(next_scores)
            if config.do_sample:
                next_tokens = torch.multinomial(next_scores.softmax(dim=-1), num_samples=1).squeeze(1)  # (N,)
            else:
                next_tokens = next_scores.argmax(dim=-1)  # (N,)
            if eos is not None:
                next_tokens = torch.where(unfinished, next_tokens, config.pad_token_id)
            sequences = torch.cat([sequences, next_tokens[:, None]], dim=-1)  # (N, L + 1)
            inputs = _grow_mask(inputs)
            if eos is not None:
                unfinished &= ~torch.isin(next_tokens, eos)
                if not unfinished.any():
                    break
        if config.return_dict_in_generate:
            return GenerateOutput(sequences=sequences, scores=tuple(scores) if config.output_scores else None)
        return sequences

    def _beam_search(self, input_ids: torch.Tensor, inputs: dict, config: GenerationConfig, max_length: int,
                     eos: torch.Tensor | None) -> torch.Tensor | GenerateOutput:
        """Beam search (beam sampling with ``do_sample``), as transformers 5.x's vectorised
        one: each step, the 2 x num_beams best continuations of all beams (more with several
        EOS tokens) are scored; those that end join the finished set where they beat its
        worst, the best num_beams of the others run on. Stops when no running beam can beat
        the finished ones (``early_stopping``), or at ``max_length``.

        transformers: ``generation.utils.GenerationMixin._beam_search``
        """
        beams, returned = config.num_beams, config.num_return_sequences
        batch, prompt_length = input_ids.shape
        kept = max(2, 1 + (len(eos) if eos is not None else 0)) * beams  # candidates scored per step
        fill = (config.pad_token_id or int(eos[0])) if eos is not None else -1
        device = input_ids.device
        running = torch.full((batch, beams, max_length), fill, dtype=torch.long, device=device)
        running[:, :, :prompt_length] = input_ids[:, None, :]
        finished = running.clone()
        running_scores = torch.zeros(batch, beams, device=device)
        running_scores[:, 1:] = _NEVER  # at first every beam is the prompt: only one may start
        finished_scores = torch.full((batch, beams), _NEVER, device=device)
        finished_lengths = torch.zeros(batch, beams, dtype=torch.long, device=device)  # tokens generated
        is_finished = torch.zeros(batch, beams, dtype=torch.bool, device=device)
        may_improve = torch.ones(batch, 1, dtype=torch.bool, device=device)
        hits_stop = torch.zeros(batch, beams, dtype=torch.bool, device=device)
        first_among_kept = torch.arange(kept, device=device) < beams  # (K,)
        inputs = _repeat_rows(inputs, beams)
        cache, length = None, prompt_length
        while True:
            flat = running[:, :, :length].reshape(batch * beams, length)  # (B x beams, L)
            logits, cache = self._next_logits(flat, inputs, cache, config)
            log_probs = process_scores(config, flat, logits.log_softmax(dim=-1), prompt_length, eos)  # (B x beams, V)
            vocab = log_probs.shape[-1]
            totals = (log_probs.view(batch, beams, vocab) + running_scores[:, :, None]).view(batch, beams * vocab)
            if config.do_sample:
                chosen = torch.multinomial(totals.softmax(dim=-1), num_samples=kept)  # (B, K)
                top_scores = torch.gather(totals, 1, chosen)
            else:
                top_scores, chosen = torch.topk(totals, k=kept)  # (B, K)
            source_beam = chosen // vocab  # (B, K): the beam each candidate continues
            candidates = torch.take_along_dim(running, source_beam[:, :, None], dim=1)  # (B, K, max_length)
            candidates[:, :, length] = chosen % vocab
            hits_stop = torch.full_like(top_scores, length + 1 >= max_length, dtype=torch.bool)  # (B, K)
            if eos is not None:
                hits_stop |= torch.isin(candidates[:, :, length], eos)
            # The best num_beams candidates that go on become the running beams.
            going_on = top_scores + hits_stop.float() * _NEVER
            best = torch.topk(going_on, k=beams).indices  # (B, beams)
            running = torch.take_along_dim(candidates, best[:, :, None], dim=1)
            running_scores = torch.take_along_dim(going_on, best, dim=1)
            reorder = (torch.take_along_dim(source_beam, best, dim=1) + torch.arange(batch, device=device)[:, None] * beams)
            # Candidates that end, among the num_beams best, join the finished set where they beat its worst.
            ended = hits_stop & first_among_kept[None, :]
            ended_scores = top_scores / ((length + 1 - prompt_length) ** config.length_penalty)
            full = is_finished.all(dim=-1, keepdim=True) & (config.early_stopping is True)
            for excluded in (full, ~may_improve, ~ended):  # each pushes a candidate out of reach
                ended_scores = ended_scores + excluded.float() * _NEVER
            merged_scores = torch.cat([finished_scores, ended_scores], dim=1)
            top = torch.topk(merged_scores, k=beams).indices
            finished = torch.take_along_dim(torch.cat([finished, candidates], dim=1), top[:, :, None], dim=1)
            finished_scores = torch.take_along_dim(merged_scores, top, dim=1)
            finished_lengths = torch.take_along_dim(
                torch.cat([finished_lengths, torch.full_like(chosen, length + 1 - prompt_length)], dim=1), top, dim=1)
            is_finished = torch.take_along_dim(torch.cat([is_finished, ended], dim=1), top, dim=1)
            if cache is not None:
                cache = _reorder_cache(cache, reorder.view(-1))
            inputs = _grow_mask(inputs)
            length += 1
            may_improve &= _may_improve(running_scores, finished_scores, is_finished, length, max_length,
                                        prompt_length, config)
            if not (may_improve.any() and not (is_finished.all() and config.early_stopping is True) and not hits_stop.all()):
                break
        # The returned sequences, cut after the longest of them (a beam may have ended earlier).
        end = prompt_length + int(finished_lengths[:, :returned].max())
        sequences = finished[:, :returned, :end].reshape(batch * returned, end)
        if config.return_dict_in_generate:
            return GenerateOutput(sequences=sequences, sequences_scores=finished_scores[:, :returned].reshape(-1)
                                  if config.output_scores else None)
        return sequences


# --------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------


def _eos_tensor(eos_token_id: int | list[int] | None, device: torch.device) -> torch.Tensor | None:
    if eos_token_id is None:
        return None
    ids = [eos_token_id] if isinstance(eos_token_id, int) else list(eos_token_id)
    if not ids or not all(isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in ids):
        raise ValueError(f"eos_token_id must be a token id or a list of them, got {eos_token_id!r}")
    return torch.tensor(ids, device=device)


def _attention_mask(input_ids: torch.Tensor, attention_mask: torch.Tensor | None, config: GenerationConfig,
                    eos: torch.Tensor | None) -> torch.Tensor:
    """The mask given, checked; else 0 at pad tokens (unless the pad token is also an EOS).

    transformers: ``generation.utils.GenerationMixin._prepare_attention_mask_for_generation``
    """
    if attention_mask is not None:
        if not isinstance(attention_mask, torch.Tensor) or attention_mask.shape != input_ids.shape:
            raise ValueError(f"attention_mask must be a tensor of input_ids' shape {tuple(input_ids.shape)}, got "
                             f"{tuple(attention_mask.shape) if isinstance(attention_mask, torch.Tensor) else attention_mask!r}")
        return attention_mask.long()
    pad = config.pad_token_id
    if pad is not None and bool((input_ids == pad).any()) and (eos is None or pad not in eos.tolist()):
        return (input_ids != pad).long()
    return torch.ones_like(input_ids)


def _check_settings(config: GenerationConfig, prompt_length: int, max_length: int) -> None:
    if max_length <= prompt_length:
        raise ValueError(f"nothing to generate: the prompt has {prompt_length} tokens and max_length is {max_length}; "
                         f"pass max_new_tokens=")
    if config.num_beams < 1 or config.num_return_sequences < 1:
        raise ValueError(f"num_beams ({config.num_beams}) and num_return_sequences ({config.num_return_sequences}) "
                         f"must be at least 1")
    if config.num_beams > 1 and config.num_return_sequences > config.num_beams:
        raise ValueError(f"num_return_sequences ({config.num_return_sequences}) cannot exceed num_beams ({config.num_beams})")
    if config.num_beams == 1 and not config.do_sample and config.num_return_sequences > 1:
        raise ValueError("Greedy methods without beam search do not support num_return_sequences different than 1 "
                         f"(got {config.num_return_sequences}): sample (do_sample=True) or search beams (num_beams=)")
    if config.do_sample and config.temperature <= 0:
        raise ValueError(f"temperature must be positive when sampling, got {config.temperature}")
    if not 0.0 <= config.top_p <= 1.0:
        raise ValueError(f"top_p must be in [0, 1], got {config.top_p}")


def _repeat_rows(inputs: dict, times: int) -> dict:
    return {k: v.repeat_interleave(times, dim=0) if v is not None else None for k, v in inputs.items()}


def _grow_mask(inputs: dict) -> dict:
    """The inputs one token longer: the token just generated is attended to, at the next
    position, in the last token's segment.

    transformers: ``generation.utils.GenerationMixin._update_model_kwargs_for_generation``
    """
    mask, positions, token_types = inputs["attention_mask"], inputs["position_ids"], inputs["token_type_ids"]
    return {
        "attention_mask": torch.cat([mask, mask.new_ones(mask.shape[0], 1)], dim=-1),
        "position_ids": torch.cat([positions, positions[:, -1:] + 1], dim=-1),
        "token_type_ids": torch.cat([token_types, token_types[:, -1:]], dim=-1) if token_types is not None else None,
    }


def _reorder_cache(cache: tuple, rows: torch.Tensor) -> tuple:
    """Each layer's cached tensors, rows taken as the beams now running came from."""
    return tuple(tuple(t.index_select(0, rows) for t in layer) for layer in cache)


def _may_improve(running_scores: torch.Tensor, finished_scores: torch.Tensor, is_finished: torch.Tensor, length: int,
                 max_length: int, prompt_length: int, config: GenerationConfig) -> torch.Tensor:
    """(B, 1): whether the best running beam could still beat the worst finished one.

    transformers: ``generation.utils.GenerationMixin._check_early_stop_heuristic``
    """
    if config.early_stopping == "never" and config.length_penalty > 0.0:
        best_length = max_length - prompt_length
    else:
        best_length = length - prompt_length
    best_running = running_scores[:, :1] / (best_length ** config.length_penalty)
    worst_finished = torch.where(is_finished, finished_scores.min(dim=1, keepdim=True).values, _NEVER)
    return (best_running > worst_finished).any(dim=-1, keepdim=True)

