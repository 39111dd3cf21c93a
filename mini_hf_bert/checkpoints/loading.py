"""Loading into a model: built on the meta device, every checkpoint tensor checked, then
assigned as a parameter; and the checks on ``from_pretrained``'s arguments.

``PreTrainedModel.from_pretrained`` (``modeling_utils.py``) reads the files
(``resolve.py``), fits their names (``weight_map.py``) and calls these.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import torch
from torch import nn
from torch.overrides import TorchFunctionMode

from ..limits import Limits, size_text
from .errors import CheckpointError, CheckpointShapeError

logger = logging.getLogger(__name__)

_TORCH_EMPTY = torch.empty  # the function itself, whatever later rebinds the name
class _EmptyParameters(TorchFunctionMode):
    """While active: ``torch.empty`` makes meta tensors, and random fills of meta tensors
    are skipped.

    ``nn.Linear``, ``nn.Embedding`` and ``nn.LayerNorm`` create their parameters with
    ``torch.empty`` and then initialise them; on the meta device that costs nothing but
    shapes. Buffers (``position_ids = torch.arange(...)``) stay real CPU tensors with their
    values: they are not in checkpoints, and building them on meta would route ``arange``
    through a Python decomposition that imports sympy (about a second). Random fills are
    skipped because on meta they compute nothing, yet ``normal_`` takes a decomposition
    that imports torch._dynamo (seconds).
    """

    # Tensor methods, and the torch.nn.init functions over them (which dispatch here
    # themselves, before calling the method).
    RANDOM_FILLS = frozenset({
        torch.Tensor.normal_, torch.Tensor.uniform_, torch.Tensor.bernoulli_, torch.Tensor.random_,
        torch.Tensor.exponential_, torch.Tensor.log_normal_, torch.Tensor.cauchy_, torch.Tensor.geometric_,
        nn.init.normal_, nn.init.uniform_, nn.init.trunc_normal_, nn.init.kaiming_uniform_,
        nn.init.kaiming_normal_, nn.init.xavier_uniform_, nn.init.xavier_normal_, nn.init.orthogonal_,
    })

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if func is _TORCH_EMPTY and kwargs.get("device") is None:
            kwargs["device"] = "meta"
        elif func in self.RANDOM_FILLS:
            tensor = args[0] if args else kwargs.get("tensor")
            if isinstance(tensor, torch.Tensor) and tensor.is_meta:
                return tensor
        return func(*args, **kwargs)


@contextmanager
def init_empty_weights() -> Iterator[None]:
    """Build modules with their parameters on the meta device: shapes only, no memory,
    no initialisation (buffers stay on the CPU, as accelerate's ``include_buffers=False``).

    ``from_pretrained`` builds the model this way and then *assigns* the checkpoint's
    (memory-mapped) tensors as its parameters, so bert-base's 110M weights are neither
    randomly initialised nor copied. transformers 5.x builds on meta too.

    transformers 4.x: ``integrations.accelerate.init_empty_weights`` (5.x builds on the meta device itself)
    """
    with _EmptyParameters():
        yield


def resolve_device_map(device_map: Any) -> torch.device | None:
    """A single-device ``device_map`` (transformers' spellings) -> the device, checked to exist.

    transformers: none (``from_pretrained`` resolves ``device_map`` inline, through accelerate)
    """
    if device_map is None:
        return None
    value = device_map
    if isinstance(value, dict):
        devices = set(map(str, value.values()))
        if len(devices) != 1:
            raise ValueError(f"device_map={device_map!r} spreads the model over several devices; "
                             f"mini_hf_bert puts a model on one device (e.g. device_map='cuda:0')")
        value = next(iter(value.values()))
    accelerator = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else None
    if value == "auto":
        return accelerator or torch.device("cpu")
    if isinstance(value, int) and not isinstance(value, bool):  # an index: of the accelerator, CUDA's by default
        value = f"{accelerator.type if accelerator is not None else 'cuda'}:{value}"
    try:
        device = torch.device(value)  # "cpu", "cuda", "cuda:1", 1 (an accelerator index), torch.device
    except (RuntimeError, TypeError):
        raise ValueError(f"device_map={device_map!r} is not a device (e.g. 'cpu', 'cuda', 'cuda:0', 0, 'auto')") from None
    if device.type not in ("cpu", "meta"):
        module = getattr(torch, device.type, None)
        available = module is not None and hasattr(module, "is_available") and module.is_available()
        if not available:
            raise ValueError(f"device_map={device_map!r}: no {device.type} device is available on this machine")
        count = module.device_count() if hasattr(module, "device_count") else 1
        if device.index is not None and device.index >= count:
            raise ValueError(f"device_map={device_map!r}: this machine has {count} {device.type} device(s)")
    if device.type == "meta":
        raise ValueError("device_map='meta' would load no weights; build the model under init_empty_weights() instead")
    return device


def resolve_dtype(value: Any, argument: str) -> torch.dtype | str | None:
    """``torch.float16`` / ``"float16"`` / ``"auto"`` / None -> a torch.dtype, "auto" or None.

    transformers: none (``from_pretrained`` resolves ``dtype`` inline)
    """
    if value is None or value == "auto" or isinstance(value, torch.dtype):
        if isinstance(value, torch.dtype) and not value.is_floating_point:
            raise ValueError(f"{argument}={value} is not a floating dtype")
        return value
    if isinstance(value, str):
        resolved = getattr(torch, value.removeprefix("torch."), None)
        if isinstance(resolved, torch.dtype) and resolved.is_floating_point:
            return resolved
    raise ValueError(f"{argument}={value!r} is not a floating torch dtype (e.g. torch.float32, 'bfloat16', 'auto')")


def checkpoint_argument(value: Any) -> str:
    """``from_pretrained``'s first argument as a path string, or a TypeError naming it.

    transformers: none
    """
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"pretrained_model_name_or_path must be a path or a hub id (str or os.PathLike), "
                        f"got {type(value).__name__}")
    source = os.fspath(value)
    if not isinstance(source, str):
        raise TypeError(f"pretrained_model_name_or_path must be a str path, got {type(source).__name__}")
    return source


#: A checkpoint key of the encoder's layer i (with or without the heads' "bert." prefix).
_LAYER_KEY = re.compile(r"^(?:bert\.)?encoder\.layer\.(\d+)\.")


def model_size_problem(config: Any, dtype: torch.dtype, limits: Limits) -> str | None:
    """Why the model ``config`` describes is past ``limits``, or None; found before it is built.

    The estimate counts the encoder's parameters, with the largest of its three parts
    named by its fields: the word and position tables, and the layers. Task heads add at
    most a vocabulary's worth more, so a config refused here is refused for every class.
    Position and token-type ids are int64 buffers of max_position_embeddings, real even on
    the meta device (``_EmptyParameters``), so they count at 8 bytes each.

    transformers: none (it builds the model, however large the config asks)
    """
    if config.num_hidden_layers > limits.hidden_layers:
        return (f"num_hidden_layers={config.num_hidden_layers}: more layers than Limits.hidden_layers="
                f"{limits.hidden_layers} (every layer is built object by object; the deepest BERTs have 48); "
                f"if it is meant, pass limits=Limits(hidden_layers={config.num_hidden_layers})")
    width, element = config.hidden_size, torch.empty((), dtype=dtype).element_size()
    layer = 4 * width * width + 2 * width * config.intermediate_size  # Q, K, V, attention out; the FFN's two
    parts = {
        f"vocab_size={config.vocab_size} x hidden_size={width} (the word embeddings)":
            config.vocab_size * width * element,
        f"max_position_embeddings={config.max_position_embeddings} x hidden_size={width} (the position table and ids)":
            config.max_position_embeddings * (width * element + 2 * 8),
        f"num_hidden_layers={config.num_hidden_layers} layers of hidden_size={width}, "
        f"intermediate_size={config.intermediate_size}": config.num_hidden_layers * layer * element,
    }
    total = sum(parts.values())
    if total <= limits.model_bytes:
        return None
    largest = max(parts, key=parts.get)
    return (f"the model would hold at least {size_text(total)} of parameters, more than Limits.model_bytes="
            f"{size_text(limits.model_bytes)}; most of it is {largest}: {size_text(parts[largest])}; "
            f"if it is meant, pass limits=Limits(model_bytes={total})")


def config_contradictions(config: Any, shapes: dict[str, tuple[int, ...]]) -> list[str]:
    """Config sizes a BERT checkpoint's tensor shapes contradict, found before the model is
    built; [] when none. The full shape check runs after loading.

    Two sizes are checked here because their cost is paid while building, before any shape
    is compared: every layer is a Python object (a million take minutes), and position_ids
    is a real (1, max_position_embeddings) buffer (10**9 positions take 8 GB).

    transformers: none (it builds the model first)
    """
    layers = {int(m.group(1)) for name in shapes if (m := _LAYER_KEY.match(name))}
    problems = []
    if layers and config.num_hidden_layers > max(layers) + 1:
        problems.append(f"the config asks for num_hidden_layers={config.num_hidden_layers}, "
                        f"but the checkpoint holds layers 0..{max(layers)}")
    positions = shapes.get("embeddings.position_embeddings.weight") or shapes.get("bert.embeddings.position_embeddings.weight")
    if positions and positions[0] != config.max_position_embeddings:
        problems.append(f"the config asks for max_position_embeddings={config.max_position_embeddings}, "
                        f"but the checkpoint's position table has {positions[0]} rows")
    return problems


def load_fitted_state(
    model: nn.Module,
    tensors: dict[str, torch.Tensor],
    source: str,
    strict: bool,
    dtype: torch.dtype = torch.float32,
    name_in_file: Callable[[str], str] = lambda key: key,
    ignore_mismatched_sizes: bool = False,
    incomplete_form: bool = False,
) -> dict[str, Any]:
    """Check every tensor against the (meta-device) ``model``, then make them its parameters.

    Nothing is assigned until every check has passed, so a refused checkpoint never
    leaves a half-loaded model. Problems are reported under each tensor's name in the file.

    What transformers initialises anew with a warning is initialised here too: a task
    model's own weights (``head_keys``: the classifier, ``qa_outputs``, the ``cls`` heads)
    and the pooler. Weights of the encoder itself that the file lacks are an error unless
    ``strict=False``: a half-loaded encoder computes garbage, so it is never silent.
    ``ignore_mismatched_sizes=True`` re-initialises every weight whose shape differs (a
    classifier re-headed to another label count), each named in a warning, as transformers.

    transformers: none (``PreTrainedModel._load_pretrained_model`` does this inside ``from_pretrained``)
    """
    tensors = dict(tensors)
    settle_ties(model, tensors, source, name_in_file)
    expected = model.state_dict()  # shapes and dtypes; on the meta device, no data
    for tied_name, tied_to in model.tied_weights().items():
        expected.pop(tied_name, None)  # filled through the parameter it is tied to
        copy = tensors.pop(tied_name, None)
        if copy is not None and tied_to in tensors and not same_values(copy, tensors[tied_to]):
            logger.warning("%s: %s differs from %s, to which it is tied; using %s",
                           source, name_in_file(tied_name), name_in_file(tied_to), name_in_file(tied_to))
    missing = [k for k in expected if k not in tensors]
    # A tie to a missing weight is missing too (as transformers reports it): the decoder's
    # bias when the file has no cls.predictions.bias.
    missing += [t for t, s in model.tied_weights().items() if s in missing]
    unused = [k for k in tensors if k not in expected]
    unexpected = [name_in_file(k) for k in unused]
    mismatched = [
        (name_in_file(k), tuple(t.shape), tuple(expected[k].shape))
        for k, t in tensors.items()
        if k in expected and tuple(t.shape) != tuple(expected[k].shape)
    ]
    wrong_kind = [
        (name_in_file(k), t.dtype, expected[k].dtype)
        for k, t in tensors.items()
        if k in expected and t.is_floating_point() != expected[k].is_floating_point()
    ]
    new_head = head_keys(model, missing)
    init_if_missing = [k for k in missing if k.startswith(optional_prefixes(model)) or k in new_head]
    hard_missing = [k for k in missing if k not in init_if_missing]
    reinitialised = mismatched if ignore_mismatched_sizes else []

    problems = []
    if hard_missing:
        problems.append(f"{len(hard_missing)} weights missing: {name_list(hard_missing)}")
    if mismatched and not ignore_mismatched_sizes:
        details = "; ".join(f"{k} is {s} in the checkpoint, the model expects {e}" for k, s, e in mismatched[:5])
        more = f" (and {len(mismatched) - 5} more)" if len(mismatched) > 5 else ""
        problems.append(f"{len(mismatched)} weights have the wrong shape for the config: {details}{more}")
    if wrong_kind:
        k, got, want = wrong_kind[0]
        problems.append(f"{len(wrong_kind)} weights have the wrong dtype kind, e.g. {k} is {got}, the model expects {want}")
    if problems and strict:
        advice = ". Pass strict=False to load the rest and keep a fresh initialisation for these"
        if incomplete_form and hard_missing:  # a published form's weights are all there is: no advice to fill them at random
            advice = (". The file is incomplete (or not the BERT its name says); nothing was loaded, and loading "
                      "the rest around freshly initialised weights would not compute what it was trained to")
        elif mismatched:
            advice += " (or ignore_mismatched_sizes=True to re-initialise the mis-shaped ones, e.g. a classifier for another number of labels)"
        error = CheckpointShapeError if mismatched and not hard_missing and not wrong_kind else CheckpointError
        raise error(f"{source}: cannot load into {type(model).__name__}: " + "; ".join(problems) + advice + ".")
    for problem in problems:
        logger.warning("%s: loading non-strictly into %s: %s (left at their fresh initialisation)",
                       source, type(model).__name__, problem)
    if init_if_missing:
        logger.warning(
            "Some weights of %s were not initialized from the model checkpoint at %s and are newly initialized: %s. "
            "You should probably TRAIN this model on a down-stream task to be able to use it for predictions and inference.",
            type(model).__name__, source, name_list(init_if_missing),
        )
    if reinitialised:
        logger.warning(
            "Some weights of %s were not initialized from the model checkpoint at %s and are newly initialized "
            "because the shapes did not match (ignore_mismatched_sizes=True): %s. "
            "You should probably TRAIN this model on a down-stream task to be able to use it for predictions and inference.",
            type(model).__name__, source,
            "; ".join(f"{k}: found shape {s} in the checkpoint and {e} in the model instantiated "
                      f"(Reinit due to size mismatch - ckpt: {s} vs model:{e})" for k, s, e in reinitialised),
        )
    if unexpected:
        # As transformers 4.x: heads of another task left out is what starting a task model
        # from a pre-training checkpoint means, said at INFO; anything else is a warning.
        say = logger.info if _only_heads(unused) else logger.warning
        say("%s: %d checkpoint weights are not used by %s: %s (%s)", source, len(unexpected),
            type(model).__name__, name_list(unexpected), _why_unused(unused, type(model).__name__))

    skip = {k for k, _, _ in mismatched} | {k for k, _, _ in wrong_kind}
    loadable = {
        key: tensors[key].to(dtype) if tensors[key].is_floating_point() else tensors[key]
        for key in expected
        if key in tensors and name_in_file(key) not in skip
    }
    # First give real memory and a fresh init to what the checkpoint does not fill (the
    # pooler, non-strict leftovers, derived buffers such as position_ids), then assign.
    materialize_and_init(model, [k for k in expected if k not in loadable])
    with torch.no_grad():
        model.load_state_dict(loadable, strict=False, assign=True)  # keeps each requires_grad
    model.tie_weights()  # assigning replaced the Parameters that the ties pointed at
    model.to(dtype)  # the freshly initialised rest (a no-op for what was loaded)
    still_meta = [name for name, t in [*model.named_parameters(), *model.named_buffers()] if t.is_meta]
    if still_meta:  # a bug in this function, never a checkpoint problem
        raise RuntimeError(f"{type(model).__name__}: left without data after loading: {name_list(still_meta)}")
    # Sets, as transformers 5.x's loading info: membership is what callers ask.
    return {
        "missing_keys": set(missing),
        "unexpected_keys": set(unexpected),
        "mismatched_keys": set(mismatched),
        "error_msgs": [],
        "newly_initialized_keys": set(init_if_missing) | (set(hard_missing) if not strict else set())
                                  | {k for k in expected if name_in_file(k) in skip},
    }


def settle_ties(model: nn.Module, tensors: dict[str, torch.Tensor], source: str,
                name_in_file: Callable[[str], str] = lambda key: key) -> None:
    """Fit a checkpoint's tied weights to the (meta-device) ``model`` before loading, as
    transformers 5.x does:

    * a tie saved under its other end (only ``cls.predictions.decoder.weight``, no word
      embeddings) loads there, so both ends get it;
    * a tie whose two ends the checkpoint holds with different values is undone, with a
      warning: the target gets a parameter of its own (``model.untie``), and for the
      word-embedding tie ``config.tie_word_embeddings`` becomes False, so the logits are
      the checkpoint's and a save writes both. (Tying would silently replace what the
      file holds.)

    transformers: ``modeling_utils.PreTrainedModel.tie_weights`` (its ``missing_keys`` branch)
    """
    embedding = model._input_embedding_weight()
    for target, tied_to in model.tied_weights().items():
        if target not in tensors:
            continue
        if tied_to not in tensors:
            logger.info("%s: %s holds %s, to which it is tied; loading it there", source, name_in_file(target),
                        name_in_file(tied_to))
            tensors[tied_to] = tensors.pop(target)
        elif not same_values(tensors[target], tensors[tied_to]):
            to_embedding = model.get_parameter(tied_to) is embedding
            logger.warning("%s: the model ties %s to %s, but both are present in the checkpoints with different "
                           "values, so we will NOT tie them%s", source, name_in_file(target), name_in_file(tied_to),
                           " (config.tie_word_embeddings is now False)" if to_embedding else "")
            model.untie(target)
            if to_embedding:
                model.config.tie_word_embeddings = False


#: Where the weights of heads and the pooler live, by their PyTorch and TensorFlow names: a
#: checkpoint's heads that a model for another task lacks are left out on purpose.
HEAD_PREFIXES = ("cls.", "cls/", "bert.pooler.", "bert/pooler/", "pooler.")


def _only_heads(unexpected: Iterable[str]) -> bool:
    return all(key.startswith(HEAD_PREFIXES) for key in unexpected)


def _why_unused(unexpected: Iterable[str], model_name: str) -> str:
    """Why a checkpoint's weights go unused, in words: its heads (or pooler) that a model for
    another task does not have, which is expected; or anything else, which is not."""
    if _only_heads(unexpected):
        return (f"heads {model_name} does not have: expected when a model for one task starts from a checkpoint "
                f"trained for another, such as a BertForPreTraining with its masked-LM and next-sentence heads")
    return ("not expected: these are not heads of another task; check that the checkpoint is the architecture and "
            "size you meant")


def optional_prefixes(model: nn.Module) -> tuple[str, ...]:
    """Key prefixes the model may lack and initialise anew: its own
    ``_keys_to_init_if_missing`` and its encoder's, under the encoder's prefix
    (``bert.pooler.`` in a task model).

    transformers: none (``_keys_to_ignore_on_load_missing`` plays a similar part)
    """
    prefixes = tuple(model._keys_to_init_if_missing)
    prefix = getattr(model, "base_model_prefix", "")
    base = getattr(model, prefix, None) if prefix else None
    if base is not None and base is not model:
        prefixes += tuple(f"{prefix}.{p}" for p in getattr(base, "_keys_to_init_if_missing", ()))
    return prefixes


def head_keys(model: nn.Module, keys: Iterable[str]) -> set[str]:
    """Those of ``keys`` (state-dict names) that a task model adds on top of its encoder
    (``classifier.*``, ``qa_outputs.*``, ``cls.*``): everything outside
    ``model.base_model_prefix``. Empty for the encoder itself.

    transformers: none (``_load_pretrained_model`` treats every missing key alike)
    """
    prefix = getattr(model, "base_model_prefix", "")
    if not prefix or not isinstance(getattr(model, prefix, None), nn.Module):
        return set()
    return {k for k in keys if not k.startswith(prefix + ".")}

def materialize_and_init(model: nn.Module, keys: list[str]) -> None:
    """Give the modules owning ``keys``, and every module holding a buffer that is not
    saved (position_ids), real CPU memory and their ``_init_weights`` initialisation.

    transformers: none
    """
    owners = {key.rpartition(".")[0] for key in keys}
    for name, module in model.named_modules():
        meta_buffers = any(b.is_meta for b in module.buffers(recurse=False))
        if name in owners or meta_buffers:
            module.to_empty(device="cpu", recurse=False)
            model._init_weights(module)


def same_values(a: torch.Tensor, b: torch.Tensor) -> bool:
    """``torch.equal``, without reading the data when both are the same view of one storage
    (a tied weight saved once: comparing would page in 90 MB of bert-base for nothing).

    transformers: none
    """
    same_view = (
        a.dtype == b.dtype and a.shape == b.shape and a.stride() == b.stride() and a.data_ptr() == b.data_ptr()
    )
    return same_view or torch.equal(a, b)


def name_list(names: list[str], limit: int = 8) -> str:
    """``names`` joined by commas, the first ``limit`` of them, and how many more there are.

    transformers: none
    """
    shown = ", ".join(names[:limit])
    return shown + (f", ... ({len(names) - limit} more)" if len(names) > limit else "")
