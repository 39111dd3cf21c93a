"""``PreTrainedModel``: ``from_pretrained`` / ``save_pretrained`` / weight initialisation,
and the attention implementations by name, as transformers' ``modeling_utils.py``.

How the files are read, checked and assigned is in ``checkpoints/`` (``resolve.py``,
``weight_map.py``, ``loading.py``), how they are written in ``checkpoints/saving.py``.
Activations are in ``activations.py``, the chunked feed-forward and head pruning in
``pytorch_utils.py``, attention and head masks in ``masking_utils.py``.

Shapes use the legend of ``modeling_bert.py``: B batch, T sequence (query), S key
sequence, H hidden, N heads, D head dim.
"""

from __future__ import annotations

import functools
import errno
import inspect
import itertools
import logging
import os
import re
import shutil
import tempfile
from collections.abc import Callable
from typing import Any, Unpack

import torch
from torch import nn

from . import cpu_capability  # noqa: F401  (imported for its fork handler: single_threaded_after_fork)
from .checkpoints.errors import CheckpointError, MetaDeviceLoadError
from .checkpoints.hf_format import check_variant
from .checkpoints.hub import upload_folder
from .checkpoints.loading import (
    checkpoint_argument,
    config_contradictions,
    model_size_problem,
    init_empty_weights,
    load_fitted_state,
    name_list,
    resolve_device_map,
    resolve_dtype,
)
from .checkpoints.resolve import CheckpointTensors, load_checkpoint_tensors, resolve_checkpoint, warn_about_activation
from .checkpoints.saving import move_weights_in, parse_size, split_into_shards, write_weights
from .checkpoints.weight_map import fit_checkpoint_keys
from .generation_utils import GenerationConfig, GenerationMixin
from .file_utils import (
    SAVING_PREFIX,
    remove_abandoned_staging,
    directory_lock,
    fsync_directory,
    make_directory_in,
    make_sibling_directory,
    naming_final_paths,
    no_remote_code,
)
from .integrations.model_forwards import ALL_MODEL_FORWARDS, ModelForwardInterface  # noqa: F401  (offered from here)
from .integrations.attention_functions import (  # noqa: F401  (offered from here, as transformers' modeling_utils)
    ALL_ATTENTION_FUNCTIONS,
    AttentionInterface,
    attention_function,
)
from .hub_options import SaveOptions, take_transformers_keywords
from .limits import Limits
from .masking_utils import get_extended_attention_mask
from .modeling_outputs import ModelOutput, with_encoder_fields
from .pytorch_utils import GradientCheckpointingLayer, checkpointed_call, keyword_names

logger = logging.getLogger(__name__)

# --------------------------------------------------------------------------------------
# Attention implementations and whole-model forwards, by name (ALL_ATTENTION_FUNCTIONS:
# integrations/attention_functions.py; ALL_MODEL_FORWARDS: integrations/model_forwards.py)
# --------------------------------------------------------------------------------------


def check_attn_implementation(name: str) -> None:
    """Refuse an ``attn_implementation`` that is neither ``"eager"`` nor registered, naming the choices.

    transformers: none (``PreTrainedModel._check_and_adjust_attn_implementation`` checks inline)
    """
    choices = sorted({"eager", *ALL_ATTENTION_FUNCTIONS, *ALL_MODEL_FORWARDS.names()})
    if name not in choices:  # transformers' words, which its upstream test matches (tests/conformance)
        raise ValueError(f'Specified `attn_implementation="{name}"` is not supported; choose one of {choices}')


# --------------------------------------------------------------------------------------
# PreTrainedModel: loading, saving, initialisation
# --------------------------------------------------------------------------------------


#: mean_resizing draws new rows from N(μ, this·Σ): transformers' factor, small enough that
#: every new row is the mean to ~1e-5, while still breaking the tie between new tokens.
MEAN_RESIZING_COVARIANCE_SCALE = 1e-9



def _rows_near_the_mean(weight: torch.Tensor, count: int) -> torch.Tensor:
    """``count`` rows drawn from N(μ, 1e-9·Σ) of ``weight``'s rows (μ alone where Σ is not
    positive definite): what transformers' ``mean_resizing`` gives new vocabulary rows."""
    rows = weight.detach().float()
    mean = rows.mean(dim=0)
    centered = rows - mean
    covariance = centered.T @ centered / rows.shape[0]  # (H, H)
    scale = MEAN_RESIZING_COVARIANCE_SCALE * covariance
    try:
        sample = torch.distributions.MultivariateNormal(mean, covariance_matrix=scale).sample((count,))
    except (ValueError, torch.linalg.LinAlgError):  # Σ not positive definite (fewer rows than dimensions): the mean
        # (ValueError where torch.distributions validates its arguments, LinAlgError from the
        # Cholesky factorisation where validation is off: a global switch other code may set)
        sample = mean.expand(count, -1)
    return sample.to(weight.dtype)




def _auto_dtype(target: torch.dtype | str, config, loaded) -> torch.dtype:
    """``from_pretrained``'s dtype: ``target``, or for ``"auto"`` the dtype the config records,
    else the checkpoint's one floating dtype, else float32 (a checkpoint of mixed dtypes).

    transformers: ``modeling_utils._get_dtype`` (5.x)
    """
    if target != "auto":
        return target
    if config.dtype is not None:
        return config.dtype
    float_dtypes = {t.dtype for t in loaded.tensors.values() if t.is_floating_point()}
    return float_dtypes.pop() if len(float_dtypes) == 1 else torch.float32

#: transformers' initializer_range when a config gives none (its PreTrainedModel._init_weights).
DEFAULT_INITIALIZER_RANGE = 0.02


class PreTrainedModel(nn.Module):
    """Base class: HF-style ``from_pretrained`` / ``save_pretrained`` and weight init.

    transformers' ``PreTrainedModel`` does this for every architecture with a great deal
    of machinery (hub download, device maps, quantisation); this one does what a BERT
    user needs, with every refusal explained.

    Subclasses set ``config_class`` and ``base_model_prefix``, and may define ``_init_weights``.

    transformers: ``modeling_utils.PreTrainedModel``
    """

    config_class: type = None  # set by subclasses (BertConfig)
    base_model_prefix = ""
    #: Key prefixes a checkpoint may lack; their modules are initialised anew with a
    #: warning (e.g. the pooler, absent from checkpoints saved by a masked-LM model).
    _keys_to_init_if_missing: tuple[str, ...] = ()
    #: Tied parameters, target name -> source name (transformers 5.x's declaration): the
    #: target *is* the source Parameter, so files store the source only.
    _tied_weights_keys: dict[str, str] = {}
    #: The argument that carries the model's main input (transformers' attribute; Trainer,
    #: peft and ``activation_checkpointing_enable`` read it).
    main_input_name = "input_ids"
    supports_gradient_checkpointing = True

    def __init__(self, config) -> None:
        super().__init__()
        if not isinstance(config, self.config_class):
            raise TypeError(f"{type(self).__name__} needs a {self.config_class.__name__}, got {type(config).__name__}")
        config.validate_for_model()  # a config may have been edited since it was built
        check_attn_implementation(config.attn_implementation)
        self.config = config
        # An attribute, not a property, as in transformers: peft reads it from the
        # instance's __dict__ to record base_model_name_or_path.
        self.name_or_path = config.name_or_path

    def _return(self, output: ModelOutput, return_dict: bool | None, encoded: ModelOutput | None = None,
                ) -> ModelOutput | tuple:
        """``output``, or the tuple of its non-None fields where ``return_dict`` (default
        ``config.use_return_dict``) is false: every model's last line, as transformers' ``return_dict``.
        With ``encoded`` (the encoder's output, under BertModel's or a task model's), its hidden
        states and attentions (and a decoder's cache and cross-attentions) go into ``output`` unchanged."""
        if encoded is not None:
            output = with_encoder_fields(output, encoded)
        return_dict = self.config.use_return_dict if return_dict is None else return_dict
        return output if return_dict else output.to_tuple()

    # ------------------------------------------------------------------ init
    def post_init(self) -> None:
        """Initialise every weight not yet initialised, then tie; called at the end of each
        subclass ``__init__``. A module once initialised (or resized) keeps its values when
        this runs again, as in transformers."""
        self.apply(self._initialize_weights)
        self.tie_weights()
        # transformers' legacy switch: a config that asks for it turns checkpointing on.
        if self.supports_gradient_checkpointing and getattr(self.config, "gradient_checkpointing", False):
            self.activation_checkpointing_enable()

    def _initialize_weights(self, module: nn.Module) -> None:
        """``_init_weights(module)`` once: the module is marked, and later calls skip it
        (transformers' method and flag, ``_is_hf_initialized``)."""
        if getattr(module, "_is_hf_initialized", False):
            return
        self._init_weights(module)
        module._is_hf_initialized = True

    def init_weights(self) -> None:
        """Initialise every weight and buffer anew, then tie: e.g. after building the model
        on the meta device and ``to_empty``. As transformers' method."""
        for module in self.modules():
            module.__dict__.pop("_is_hf_initialized", None)
        self.post_init()

    # ------------------------------------------------------ attention implementation
    def set_attn_implementation(self, attn_implementation: str) -> None:
        """Switch a built model between ``"eager"``, ``"sdpa"`` and ``"fast"``: every layer
        reads the one config, so the next call uses it. As transformers 5.x's method."""
        check_attn_implementation(attn_implementation)
        self.config._attn_implementation = attn_implementation

    # ----------------------------------------------------- gradient checkpointing
    def activation_checkpointing_enable(
        self,
        activation_checkpointing_kwargs: dict[str, Any] | None = None,
        every_n_layers: int = 1,
        offload: bool = False,
    ) -> None:
        """Recompute layer activations during backward (less memory, ~30% more compute).

        transformers 5.23's name and arguments (its Trainer calls this one).

        Args:
            activation_checkpointing_kwargs: passed to ``torch.utils.checkpoint.checkpoint``;
                default ``{"use_reentrant": False}`` (transformers' default too).
            every_n_layers: checkpoint layers 0, n, 2n, ...; the others keep their
                activations (memory traded back for speed). 1 checkpoints every layer.
            offload: keep what the recomputation needs in (pinned) host memory
                (``torch.autograd.graph.save_on_cpu``): frees accelerator memory, costs two
                copies per layer; on a CPU-only model nothing moves.

        Also makes the embeddings' output require grad (``enable_input_require_grads``), as
        transformers does, so that a frozen encoder under peft still passes gradients.
        """
        kwargs = {"use_reentrant": False} if activation_checkpointing_kwargs is None else activation_checkpointing_kwargs
        if not isinstance(kwargs, dict):
            raise TypeError(f"gradient_checkpointing_kwargs must be a dict, got {type(kwargs).__name__}")
        unknown = sorted(set(kwargs) - _CHECKPOINT_ARGUMENTS)
        if unknown:  # torch would pass them on to the layer itself, to fail there
            raise TypeError(f"gradient_checkpointing_kwargs: torch.utils.checkpoint.checkpoint takes no {unknown}; "
                            f"it takes {sorted(_CHECKPOINT_ARGUMENTS)}")
        if isinstance(every_n_layers, bool) or not isinstance(every_n_layers, int) or every_n_layers < 1:
            raise ValueError(f"every_n_layers must be a positive int, got {every_n_layers!r}")
        self._set_gradient_checkpointing(True, dict(kwargs), every_n_layers, bool(offload))
        if self.main_input_name == "input_ids":
            self.enable_input_require_grads()

    def activation_checkpointing_disable(self) -> None:
        self._set_gradient_checkpointing(False)
        self.disable_input_require_grads()

    @property
    def is_activation_checkpointing(self) -> bool:
        return any(getattr(m, "gradient_checkpointing", False) for m in self.modules())

    def _set_gradient_checkpointing(
        self, enable: bool, checkpoint_kwargs: dict[str, Any] | None = None, every_n_layers: int = 1,
        offload: bool = False,
    ) -> None:
        """Set ``gradient_checkpointing`` on every module that has the flag; the layers
        (``GradientCheckpointingLayer``) also get the function that checkpoints them, and only
        layers 0, n, 2n, ... are checkpointed."""
        function = functools.partial(checkpointed_call, offload=offload, **(checkpoint_kwargs or {}))
        layers = [m for m in self.modules() if isinstance(m, GradientCheckpointingLayer)]
        if not layers:
            raise ValueError(f"{type(self).__name__} has no layer that supports gradient checkpointing")
        for module in self.modules():
            if hasattr(module, "gradient_checkpointing") and not isinstance(module, GradientCheckpointingLayer):
                module.gradient_checkpointing = enable
        for index, layer in enumerate(layers):
            layer.gradient_checkpointing = enable and index % every_n_layers == 0
            layer._gradient_checkpointing_func = function

    def enable_input_require_grads(self) -> None:
        """Make the word embeddings' output require grad, whether or not their weights do:
        with a frozen encoder (peft, adapters) gradients then still reach the trained
        parts through a checkpointed layer. As transformers' method of the same name."""
        self.disable_input_require_grads()
        embeddings = self.get_input_embeddings()
        self._require_grads_hook = embeddings.register_forward_hook(_output_requires_grad)

    def disable_input_require_grads(self) -> None:
        hook = self.__dict__.pop("_require_grads_hook", None)
        if hook is not None:
            hook.remove()

    def get_memory_footprint(self, return_buffers: bool = True) -> int:
        """Bytes held by the parameters (each tied one once), and the buffers unless
        ``return_buffers=False``: transformers' method."""
        total = sum(p.nelement() * p.element_size() for p in self.parameters())
        if return_buffers:
            total += sum(b.nelement() * b.element_size() for b in self.buffers())
        return total

    # --------------------------------------------------------------- pruning
    def prune_heads(self, heads_to_prune: dict[int, list[int]]) -> None:
        """Remove attention heads for good, {layer: [head indices]}: the Q/K/V and output
        matrices shrink. Indices count the layer's original heads; pruning one twice is a
        no-op. A negative layer counts from the end (-1 is the last), as transformers 4.x
        indexes its layer list. Recorded in ``config.pruned_heads`` under the layer's own
        index, so a saved model rebuilds its shapes."""
        config = self.config
        layers = config.num_hidden_layers
        if isinstance(heads_to_prune, dict):
            heads_to_prune = {layer + layers if isinstance(layer, int) and -layers <= layer < 0 else layer: heads
                              for layer, heads in heads_to_prune.items()}
        for layer, heads in heads_to_prune.items():
            if not isinstance(layer, int) or not 0 <= layer < config.num_hidden_layers:
                raise ValueError(f"prune_heads: layer {layer!r} does not exist; the model has layers 0..{config.num_hidden_layers - 1}")
            bad = [h for h in heads if not isinstance(h, int) or not 0 <= h < config.num_attention_heads]
            if bad:
                raise ValueError(f"prune_heads: head {bad[0]!r} of layer {layer} does not exist; heads are 0..{config.num_attention_heads - 1}")
        for layer, heads in heads_to_prune.items():
            config.pruned_heads[layer] = sorted(set(config.pruned_heads.get(layer, [])) | set(heads))
        getattr(self, self.base_model_prefix, self)._prune_heads(heads_to_prune)

    # ------------------------------------------------------------------ ties
    def get_input_embeddings(self) -> nn.Embedding:
        base = getattr(self, self.base_model_prefix, None)
        if base is None:
            raise NotImplementedError(f"{type(self).__name__} has no input embeddings")
        return base.get_input_embeddings()

    def set_input_embeddings(self, value: nn.Embedding) -> None:
        """Replace the word embeddings (of the encoder a task model wraps)."""
        base = getattr(self, self.base_model_prefix, None)
        if base is None:
            raise NotImplementedError(f"{type(self).__name__} has no input embeddings")
        base.set_input_embeddings(value)

    def get_output_embeddings(self) -> nn.Linear | None:
        """The vocabulary projection of an LM head, or None for models without one."""
        return None

    def _input_embedding_weight(self) -> nn.Parameter | None:
        """The word-embedding matrix, or None for a model that has none (a user's own model)."""
        try:
            return self.get_input_embeddings().weight
        except NotImplementedError:
            return None

    def _declared_ties(self) -> dict[str, str]:
        """``_tied_weights_keys`` with each key and value a parameter name, as transformers
        5.x expands them: a name that is not a parameter's is a pattern matched from the
        start of the parameter names (a module name stands for its parameters), and the
        sources are dealt out over the targets in order."""
        ties = dict(self._tied_weights_keys)
        names = sorted({n for n, _ in self.named_parameters(remove_duplicate=False)}
                       | {n for n, _ in self.named_buffers(remove_duplicate=False)})
        if all(k in names for k in (*ties, *ties.values())):
            return ties
        expanded: dict[str, str] = {}
        for target, source in ties.items():
            sources = [n for n in names if re.match(source, n)]
            targets = [n for n in names if re.match(target, n)]
            if not sources or not targets or len(targets) % len(sources):
                raise ValueError(f"{type(self).__name__}._tied_weights_keys ties {target!r} to {source!r}, which name "
                                 f"the parameters {targets} and {sources}: each target needs a source")
            expanded.update(zip(targets, itertools.cycle(sources)))
        return expanded

    def tied_weights(self) -> dict[str, str]:
        """The ties in force, target -> source parameter name, each source a parameter that no
        tie targets: ``_tied_weights_keys`` (expanded by ``_declared_ties``) of this model and
        of each ``PreTrainedModel`` inside it, under its name. With ``config.tie_word_embeddings``
        false, the ties to the word embeddings are dropped (every tie of a model that has
        none, as transformers 5.x; BERT's decoder bias stays tied to ``cls.predictions.bias``).
        A tie that a checkpoint undid (``untie``) is dropped too."""
        ties: dict[str, str] = {}
        for prefix, module in self.named_modules():
            if isinstance(module, PreTrainedModel) and module._tied_weights_keys:
                dot = prefix + "." if prefix else ""
                ties.update({dot + t: dot + s for t, s in module._declared_ties().items()})
        if not getattr(self.config, "tie_word_embeddings", False):
            embedding = self._input_embedding_weight()
            ties = {t: s for t, s in ties.items() if embedding is not None and self.get_parameter(s) is not embedding}
        undone = getattr(self, "_undone_ties", set())
        resolved = {}
        for target, source in ties.items():
            seen = {target}
            while source in ties and source not in seen:  # a tie to a target is a tie to its source
                seen.add(source)
                source = ties[source]
            if target not in undone:
                resolved[target] = source
        return resolved

    def untie(self, target: str) -> None:
        """Give the tied parameter ``target`` a Parameter of its own (uninitialised) and stop
        tying it: a checkpoint that holds both ends of a tie with different values
        (``checkpoints.loading.settle_ties``), as transformers 5.x drops such a tie."""
        source = self.get_parameter(self.tied_weights()[target])
        self._undone_ties = getattr(self, "_undone_ties", set()) | {target}
        module_name, _, attr = target.rpartition(".")
        setattr(self.get_submodule(module_name), attr,
                nn.Parameter(torch.empty(source.shape, dtype=source.dtype, device=source.device)))

    def tie_weights(self) -> None:
        """Make each tied target the very same Parameter as its source."""
        for target, source in self.tied_weights().items():
            module_name, _, attr = target.rpartition(".")
            setattr(self.get_submodule(module_name), attr, self.get_parameter(source))

    def resize_token_embeddings(
        self, new_num_tokens: int | None = None, pad_to_multiple_of: int | None = None, mean_resizing: bool = True
    ) -> nn.Embedding:
        """Grow or shrink the vocabulary to ``new_num_tokens`` rows, keeping the first rows'
        values, initialising new ones, and keeping the LM head's ties (weight and bias).

        Args:
            new_num_tokens: the new vocabulary size; None keeps the current one (then only
                ``pad_to_multiple_of`` can change it). With neither, nothing changes.
            pad_to_multiple_of: round the size up to a multiple of this (64 or 128 suits
                tensor cores), as transformers does.
            mean_resizing: new rows start at the mean of the old ones (drawn from
                N(μ, 1e-9·Σ), as transformers), so a new token's logit starts near the average
                rather than at random (Hewitt 2021); False: ``_init_weights``' normal init.

        Returns:
            The input embedding module. New entries of the LM head's bias start at 0.
        """
        current = self.get_input_embeddings()
        if new_num_tokens is None and pad_to_multiple_of is None:
            return current
        if new_num_tokens is None:
            new_num_tokens = current.num_embeddings
        if isinstance(new_num_tokens, bool) or not isinstance(new_num_tokens, int) or new_num_tokens <= 0:
            raise ValueError(f"new_num_tokens must be a positive int, got {new_num_tokens!r}")
        if pad_to_multiple_of is not None:
            if isinstance(pad_to_multiple_of, bool) or not isinstance(pad_to_multiple_of, int) or pad_to_multiple_of <= 0:
                raise ValueError(self._PAD_TO_MULTIPLE_ERROR.format(pad_to_multiple_of))
            new_num_tokens = -(-new_num_tokens // pad_to_multiple_of) * pad_to_multiple_of  # ceil to a multiple
        pad = self.config.pad_token_id
        if pad is not None and pad >= new_num_tokens:
            raise ValueError(f"new_num_tokens={new_num_tokens} would drop the padding row (pad_token_id={pad})")
        old = self.get_input_embeddings()
        new = nn.Embedding(new_num_tokens, old.embedding_dim, padding_idx=old.padding_idx,
                           device=old.weight.device, dtype=old.weight.dtype)
        self._initialize_weights(new)
        keep = min(old.num_embeddings, new_num_tokens)
        with torch.no_grad():
            new.weight[:keep] = old.weight[:keep]
            if mean_resizing and new_num_tokens > keep:
                new.weight[keep:] = _rows_near_the_mean(old.weight, new_num_tokens - keep)
        getattr(self, self.base_model_prefix, self).set_input_embeddings(new)
        head = self.get_output_embeddings()
        if head is not None:
            head_name = next(name for name, module in self.named_modules() if module is head)  # cls.predictions.decoder
            decoder = nn.Linear(head.in_features, new_num_tokens, device=head.weight.device, dtype=head.weight.dtype)
            decoder._is_hf_initialized = True  # a later post_init must not re-initialise it
            if head_name + ".weight" not in self.tied_weights():  # an untied head keeps its own rows
                self._init_weights(decoder)
                with torch.no_grad():
                    decoder.weight[:keep] = head.weight[:keep]
                    if mean_resizing and new_num_tokens > keep:
                        decoder.weight[keep:] = _rows_near_the_mean(head.weight, new_num_tokens - keep)
            parent, _, attr = head_name.rpartition(".")
            setattr(self.get_submodule(parent), attr, decoder)  # a tied weight is re-tied below
            bias_source = self._tied_weights_keys.get(head_name + ".bias")  # cls.predictions.bias
            if bias_source is not None:
                old_bias = self.get_parameter(bias_source)
                bias = nn.Parameter(torch.zeros(new_num_tokens, device=old_bias.device, dtype=old_bias.dtype))
                with torch.no_grad():
                    bias[:keep] = old_bias[:keep]
                parent, _, attr = bias_source.rpartition(".")
                setattr(self.get_submodule(parent), attr, bias)
        self.config.vocab_size = new_num_tokens
        self.vocab_size = new_num_tokens  # transformers sets the attribute too; code reads either
        self.tie_weights()
        return new

    @torch.no_grad()
    def _init_weights(self, module: nn.Module) -> None:
        """The initialisation of a subclass that defines none (a user's own model), as
        transformers 5.x's default: Linear and Embedding weights ~ N(0, initializer_range),
        biases and a padding row 0, LayerNorm scale 1 and shift 0. ``BertPreTrainedModel``
        defines BERT's own."""
        std = getattr(self.config, "initializer_range", DEFAULT_INITIALIZER_RANGE)
        if isinstance(module, (nn.Linear, nn.Embedding)):
            module.weight.normal_(mean=0.0, std=std)
        if isinstance(module, nn.Linear) and module.bias is not None:
            module.bias.zero_()
        elif isinstance(module, nn.Embedding) and module.padding_idx is not None:
            module.weight[module.padding_idx].zero_()
        elif isinstance(module, nn.LayerNorm) and module.elementwise_affine:
            module.weight.fill_(1.0)
            if module.bias is not None:
                module.bias.zero_()

    # ------------------------------------------------------------ properties
    @property
    def device(self) -> torch.device:
        return next(self.parameters()).device

    @property
    def dtype(self) -> torch.dtype:
        return next(p.dtype for p in self.parameters() if p.is_floating_point())

    @property
    def base_model(self) -> nn.Module:
        """The encoder a task model wraps (``self.bert``), or the model itself (transformers' ``base_model``)."""
        return getattr(self, self.base_model_prefix, self)

    def num_parameters(self, only_trainable: bool = False, exclude_embeddings: bool = False) -> int:
        """The number of parameters, each tied one counted once (as transformers counts).

        Args:
            only_trainable: only those with ``requires_grad``.
            exclude_embeddings: leave out every ``nn.Embedding``'s table (words, positions,
                segment types), as transformers does.
        """
        embedding_tables = {id(m.weight) for m in self.modules() if isinstance(m, nn.Embedding)} if exclude_embeddings else set()
        return sum(
            p.numel() for p in self.parameters()
            if id(p) not in embedding_tables and (p.requires_grad or not only_trainable)
        )

    # ---------------------------------------------------------------- saving
    def save_pretrained(
        self,
        save_directory: str | os.PathLike,
        safe_serialization: bool = True,
        max_shard_size: int | str = "50GB",
        state_dict: dict[str, torch.Tensor] | None = None,
        is_main_process: bool = True,
        push_to_hub: bool = False,
        repo_id: str | None = None,
        commit_message: str | None = None,
        private: bool | None = None,
        token: str | bool | None = None,
        variant: str | None = None,
        **options: Unpack[SaveOptions],
    ) -> None:
        """Write ``config.json`` and the weights to a directory that both mini_hf_bert's and
        transformers' ``from_pretrained`` read.

        Args:
            save_directory: created if needed.
            safe_serialization: ``model.safetensors`` (default) or ``pytorch_model.bin``.
            max_shard_size: the largest weights file, in bytes or as "5GB" / "500MB" / "2GiB"
                (transformers' spelling and default). A larger model is split, in state-dict
                order, into ``model-00001-of-0000N.safetensors`` ... plus
                ``model.safetensors.index.json``; a single tensor larger than the limit gets a
                shard of its own.
            state_dict: save these tensors instead of the model's own (Trainer and
                accelerate pass a gathered or unwrapped one); tied copies are left out as
                for the model's own.
            is_main_process: False writes nothing: in a distributed run only the main
                process saves (the others would write the same files).
            push_to_hub: after saving, upload the directory to ``repo_id`` (default: the
                directory's name) with huggingface_hub (``push_to_hub``).
            repo_id / commit_message / private / token: for ``push_to_hub``.
            variant: name the weight files for this variant, as transformers does
                (``model.fp16.safetensors``, ``model.safetensors.index.fp16.json``); read them
                back with ``from_pretrained(..., variant="fp16")``. Other variants' files
                in the directory are left alone.

        Every file is written whole, under a unique name, then renamed into place
        (``file_utils``): a kill or an error leaves the earlier save's files, never a part of
        one. A new directory is built beside its final name and appears whole. In an
        existing one, all files are written into a hidden staging directory first and then
        renamed in, config.json last, under the directory's lock: saves into one directory
        from several processes run one after the other (the last complete one wins), and
        ``from_pretrained`` never reads half of one and half of another. This save's own earlier weight files (the
        single file, shards and index of the format it writes) are replaced; weights of the
        other format are kept, with a warning.
        """
        take_transformers_keywords(options, f"{type(self).__name__}.save_pretrained")  # save_function=, ...
        if options:
            raise TypeError(f"{type(self).__name__}.save_pretrained() got unexpected keyword argument(s) {sorted(options)}")
        save_directory = os.fspath(save_directory)
        if not is_main_process:
            return
        if os.path.isfile(save_directory):
            raise ValueError(f"save_directory {save_directory} is a file; expected a directory")
        limit = parse_size(max_shard_size, "max_shard_size")
        check_variant(variant)
        if state_dict is None:
            state_dict = self.state_dict()
        elif not isinstance(state_dict, dict) or not all(isinstance(v, torch.Tensor) for v in state_dict.values()):
            raise TypeError("save_pretrained: state_dict must map names to tensors")
        tied = self.tied_weights()  # stored once, under the source's name
        ignored = set(self._keys_to_ignore_on_save or ())
        state_dict = {k: v.detach().contiguous() for k, v in state_dict.items() if k not in tied and k not in ignored}
        shards = split_into_shards(state_dict, limit)
        # The parameters' dtype is recorded, as transformers does (from_pretrained(dtype="auto") reads it).
        config = self.config.replace(architectures=[type(self).__name__], dtype=self.dtype)
        generation = self.generation_config if self.can_generate() else None  # generation_config.json, as transformers
        if not os.path.isdir(save_directory):  # a new directory: built beside its name, renamed into place whole
            staging = make_sibling_directory(save_directory, SAVING_PREFIX)
            try:
                with naming_final_paths(staging, save_directory):
                    names = write_weights(staging, config, shards, state_dict, safe_serialization, variant, generation)
                fsync_directory(staging)
                try:
                    os.rename(staging, save_directory)
                    staging = None
                    fsync_directory(os.path.dirname(os.path.abspath(save_directory)))
                except OSError as e:  # another save created it meanwhile: move in as into any existing one
                    if e.errno not in (errno.EEXIST, errno.ENOTEMPTY) or not os.path.isdir(save_directory):
                        raise
                    with directory_lock(save_directory, exclusive=True), naming_final_paths(staging, save_directory):
                        move_weights_in(staging, save_directory, names, safe_serialization, variant)
            finally:
                if staging is not None:
                    shutil.rmtree(staging, ignore_errors=True)
        else:  # an existing one: every file written first, inside it, then renamed into place (config.json last)
            with directory_lock(save_directory, exclusive=True):
                remove_abandoned_staging(save_directory)
                staging = make_directory_in(save_directory, SAVING_PREFIX)
                try:
                    with naming_final_paths(staging, save_directory):  # the moving-in marker too
                        names = write_weights(staging, config, shards, state_dict, safe_serialization, variant, generation)
                        move_weights_in(staging, save_directory, names, safe_serialization, variant)
                finally:
                    shutil.rmtree(staging, ignore_errors=True)
        logger.info("saved %s (%d tensors, %d file(s)) to %s", type(self).__name__, len(state_dict), len(shards), save_directory)
        if push_to_hub:
            upload_folder(save_directory, repo_id or os.path.basename(os.path.abspath(save_directory)),
                          commit_message, private, token)

    def push_to_hub(self, repo_id: str, commit_message: str | None = None, private: bool | None = None,
                    token: str | bool | None = None, safe_serialization: bool = True,
                    max_shard_size: int | str = "5GB") -> str:
        """Save the model to a temporary directory and upload it to the hub repo ``repo_id``
        with huggingface_hub, as transformers' method; return the commit URL. Offline, or
        without huggingface_hub, or with the hub unreachable, an OSError says which and
        nothing is uploaded."""
        with tempfile.TemporaryDirectory(prefix="mini_hf_bert_push_") as directory:
            self.save_pretrained(directory, safe_serialization=safe_serialization, max_shard_size=max_shard_size)
            return upload_folder(directory, repo_id, commit_message, private, token)

    # --------------------------------------------------------------- loading
    @classmethod
    def from_pretrained(
        cls,
        pretrained_model_name_or_path: str | os.PathLike | None,
        *,
        config=None,
        state_dict: dict[str, torch.Tensor] | None = None,
        attn_implementation: str | None = None,
        torch_dtype: Any = None,
        dtype: Any = None,
        strict: bool = True,
        output_loading_info: bool = False,
        revision: str = "main",
        cache_dir: str | os.PathLike | None = None,
        local_files_only: bool = False,
        device_map: str | int | torch.device | dict[str, Any] | None = None,
        ignore_mismatched_sizes: bool = False,
        use_safetensors: bool | None = None,
        low_cpu_mem_usage: bool | None = None,
        trust_remote_code: bool = False,
        subfolder: str = "",
        variant: str | None = None,
        from_tf: bool = False,
        from_flax: bool = False,
        token: str | bool | None = None,
        force_download: bool = False,
        limits: Limits | None = None,
        **kwargs: Any,
    ):
        """Build the model from a HuggingFace-format directory and load its weights.

        Args:
            pretrained_model_name_or_path: one of (see ``checkpoints/resolve.py``)
                - a directory with ``config.json`` and one of ``model.safetensors``,
                  ``model.safetensors.index.json``, ``pytorch_model.bin``,
                  ``pytorch_model.bin.index.json``;
                - a Google checkpoint directory (``bert_config.json`` + ``bert_model.ckpt.*``),
                  a checkpoint prefix (``.../bert_model.ckpt``) or its ``.index`` file;
                - Google's released ``.zip``;
                - the other published forms: ``tf_model.h5`` or ``flax_model.msgpack``
                  (with ``config.json``), a TF2 checkpoint, a TF Hub SavedModel, a
                  KerasHub preset (a directory, or its file);
                - a hub id (``"bert-base-uncased"``), read from the local HuggingFace
                  cache or downloaded with huggingface_hub if installed and allowed.
                ``None`` with ``config=`` and ``state_dict=``: no files at all.
            config: use this config instead of the directory's.
            state_dict: load these tensors (transformers' names) instead of the checkpoint's
                files, as transformers.
            attn_implementation: ``"eager"``, ``"sdpa"`` (default) or ``"fast"`` (modeling_bert_fast.py).
            torch_dtype / dtype: the parameters' dtype (transformers 4.x / 5.x spelling):
                a torch dtype, its name, or ``"auto"`` (the default, as transformers 5.x;
                4.x's was float32): the dtype the config records, else that of the
                checkpoint's floating tensors, else float32 when they mix dtypes.
            strict: weights of the encoder that are missing or mis-shaped are an error
                (default): a half-loaded encoder is never silent. With ``strict=False`` they
                are reported and keep their fresh initialisation. A task model's own weights
                (classifier, ``qa_outputs``, the ``cls`` heads) and the pooler, when the
                checkpoint lacks them, are newly initialised with transformers' warning
                naming them, whatever ``strict`` is.
            output_loading_info: also return a dict of missing / unexpected / mismatched keys.
            revision / cache_dir / local_files_only / token / force_download: for hub ids, as in
                transformers: the branch, tag or commit; the cache to use instead of
                ``$HF_HUB_CACHE``; never download; what a download authenticates with
                (``use_auth_token``, 4.x's name, too); download again over the cached files.
            device_map: the one device to put the model on: ``"cpu"``, ``"cuda"``,
                ``"cuda:1"``, ``1``, a ``torch.device``, ``{"": device}``, or ``"auto"`` (the
                accelerator if there is one, else the CPU). Splitting a model over several
                devices (accelerate's device maps) is not supported.
            ignore_mismatched_sizes: re-initialise, with a warning naming them, the weights
                whose shapes differ from the checkpoint's, as transformers (a classifier for
                another ``num_labels``); otherwise a mismatch is an error.
            use_safetensors: True reads ``model.safetensors`` only, False ``pytorch_model.bin``
                only, None (default) safetensors if present, as transformers.
            subfolder: the checkpoint is in this folder of the directory (transformers'
                argument; a local directory only: no hub download here takes a subfolder).
            variant: read the weight files ``save_pretrained(variant=...)`` wrote
                (``model.fp16.safetensors``) instead of the plain ones (a local directory only).
            from_tf / from_flax: transformers 4.x's switches: read the directory's TensorFlow
                weights (``tf_model.h5``, or a TF checkpoint's index) or its
                ``flax_model.msgpack``, even where PyTorch weights sit beside them; an error
                naming the directory where it holds none. Neither needs TensorFlow or JAX
                here. (5.x accepts and ignores them.)
            low_cpu_mem_usage: accepted for transformers code; loading here always builds
                on the meta device and assigns the checkpoint's tensors, which is what
                transformers does when it is True.
            trust_remote_code: accepted for transformers code; no code is ever loaded from
                a checkpoint here, so True only draws a warning saying so.
            limits: the bounds on what a config may ask to build and a zip may unpack to
                (``mini_hf_bert.Limits``; None: the defaults). A config past them is refused
                before anything is built, whatever ``strict`` and ``ignore_mismatched_sizes`` are.
            **kwargs: arguments of the class's ``__init__`` (``add_pooling_layer=False``),
                config fields to override (``hidden_dropout_prob=0.0``), and the other
                keywords transformers' ``from_pretrained`` takes (``token``,
                ``generation_config``, ``quantization_config``, ...), each honoured, accepted
                with no effect or refused as ``hub_options.KEYWORDS`` says. Anything else is
                a TypeError, so a typo never passes silently.

        Returns:
            The model, in eval mode (like transformers); with ``output_loading_info``,
            ``(model, info)``.
        """
        generation_config = kwargs.pop("generation_config", None)
        token = take_transformers_keywords(kwargs, f"{cls.__name__}.from_pretrained", token)  # _from_auto=, ... (hub_options.py)
        init_params = set(inspect.signature(cls.__init__).parameters) - {"self", "config"}
        init_kwargs = {k: v for k, v in kwargs.items() if k in init_params}
        config_overrides = {k: v for k, v in kwargs.items() if k not in init_params}
        if dtype is not None and torch_dtype is not None and dtype != torch_dtype:
            raise ValueError(f"pass one of dtype={dtype!r} or torch_dtype={torch_dtype!r}, not both")
        target_dtype = resolve_dtype(dtype if dtype is not None else torch_dtype, "dtype") or "auto"
        device = resolve_device_map(device_map)
        unknown = [k for k in config_overrides if k not in cls.config_class.field_names()]
        if unknown:
            raise TypeError(
                f"{cls.__name__}.from_pretrained() got unexpected keyword argument(s) {unknown}: "
                f"neither {cls.__name__}.__init__ arguments nor {cls.config_class.__name__} fields"
            )

        if from_tf and from_flax:
            raise ValueError("pass one of from_tf=True or from_flax=True, not both")
        if use_safetensors not in (None, True, False):
            raise ValueError(f"use_safetensors must be True, False or None, got {use_safetensors!r}")
        check_variant(variant)
        if not isinstance(subfolder, str) or os.path.isabs(subfolder) or ".." in subfolder.replace("\\", "/").split("/"):
            raise ValueError(f"subfolder={subfolder!r}: expected a folder name inside the checkpoint directory")
        no_remote_code(trust_remote_code, cls.__name__)
        del low_cpu_mem_usage  # always true here (the docstring says why)
        limits = Limits.given(limits)
        if torch.get_default_device().type == "meta":
            raise MetaDeviceLoadError(
                "You are using `from_pretrained` with a meta device context manager or "
                "`torch.set_default_device('meta')`: from_pretrained loads existing weights. To build an "
                f"empty model on the meta device, call {cls.__name__}(config) under that context instead."
            )
        if pretrained_model_name_or_path is None:
            if config is None or state_dict is None:
                raise ValueError(f"{cls.__name__}.from_pretrained: pretrained_model_name_or_path must be a path or "
                                 f"a hub id, got None (None needs config= and state_dict=: nothing else to load)")
            if attn_implementation is not None:
                config = config.replace(attn_implementation=attn_implementation)
            loaded = CheckpointTensors(tensors=_checked_state_dict(state_dict), path="state_dict")
            config = config.replace(**config_overrides)
            model, info = cls.from_checkpoint_tensors(
                loaded, config, strict=strict, dtype=_auto_dtype(target_dtype, config, loaded),
                ignore_mismatched_sizes=ignore_mismatched_sizes, limits=limits, config_source="config=", **init_kwargs,
            )
            if device is not None:
                model.to(device)
            model.eval()
            return (model, info) if output_loading_info else model
        source = checkpoint_argument(pretrained_model_name_or_path)
        # A directory is read under its shared lock: a save running there finishes first.
        with directory_lock(os.path.join(source, subfolder) if subfolder else source, exclusive=False):
            resolved = resolve_checkpoint(pretrained_model_name_or_path, revision, cache_dir, local_files_only,
                                          use_safetensors, variant, subfolder, limits,
                                          framework="tf" if from_tf else "flax" if from_flax else None, token=token,
                                          force_download=force_download)
            try:
                config_source = "config=" if config is not None else resolved.config_path or resolved.config_note
                if config is None and resolved.derived_config is not None:  # a form that keeps no BERT config
                    logger.info("%s", resolved.config_note)
                    config = cls.config_class(**{**resolved.derived_config, **config_overrides})
                elif config is not None and resolved.derived_config is not None:
                    warn_about_activation(config, resolved)
                if config is None:
                    if resolved.config_path is None:
                        raise CheckpointError(
                            f"{resolved.source}: no config.json or bert_config.json beside this checkpoint; pass config="
                        )
                    config = cls.config_class.from_json_file(resolved.config_path, check_model=True, **config_overrides)
                elif config_overrides:
                    config = config.replace(**config_overrides)
                if attn_implementation is not None:
                    config = config.replace(attn_implementation=attn_implementation)
                config = config.replace(name_or_path=os.fspath(pretrained_model_name_or_path))
                _warn_about_quantization(config)

                if state_dict is None:
                    loaded = load_checkpoint_tensors(resolved, limits=limits)
                else:  # the caller's tensors replace the files': those are never read
                    loaded = CheckpointTensors(tensors=_checked_state_dict(state_dict), path="state_dict")
                model, info = cls.from_checkpoint_tensors(
                    loaded, config, strict=strict, dtype=_auto_dtype(target_dtype, config, loaded),
                    ignore_mismatched_sizes=ignore_mismatched_sizes, limits=limits, config_source=config_source,
                    **init_kwargs
                )
                if model.can_generate() and resolved.config_path is not None:  # its generation_config.json, if any
                    model.generation_config = GenerationConfig.from_directory(os.path.dirname(resolved.config_path),
                                                                              model.config)
            finally:
                resolved.cleanup()

        if device is not None:
            model.to(device)
        if generation_config is not None:
            if not model.can_generate():
                raise ValueError(f"{cls.__name__}.from_pretrained: generation_config= is for a model that generates "
                                 f"(BertLMHeadModel); {cls.__name__} does not")
            model.generation_config = generation_config
        model.eval()
        return (model, info) if output_loading_info else model

    @classmethod
    def from_checkpoint_tensors(
        cls, loaded, config, strict: bool = True, dtype: torch.dtype = torch.float32,
        ignore_mismatched_sizes: bool = False, limits: Limits | None = None, config_source: str = "config",
        **init_kwargs: Any
    ):
        """Build ``cls(config)`` and fill it from already-read checkpoint tensors
        (``checkpoints.resolve.CheckpointTensors``); return ``(model, loading info)``.

        The part of ``from_pretrained`` after the files are read; ``convert`` uses it to
        avoid reading a checkpoint twice. The model is built on the meta device (no memory,
        no random init) and the checkpoint's tensors become its parameters: memory-mapped
        ones stay memory-mapped (copy-on-write, so the file is never written), and only
        floating tensors not already in ``dtype`` are converted.

        A config past ``limits`` (``limits.Limits``) is refused before anything is built,
        naming ``config_source`` (its file) and the field, whatever ``strict`` and
        ``ignore_mismatched_sizes`` are.
        """
        if strict and not ignore_mismatched_sizes:  # the checkpoint's own word first, where it has one
            contradictions = config_contradictions(config, {k: tuple(t.shape) for k, t in loaded.tensors.items()})
            if contradictions:  # before building: a config's sizes can cost minutes or gigabytes to build
                raise CheckpointError(f"{loaded.path}: cannot load into {cls.__name__}: " + "; ".join(contradictions))
        too_large = model_size_problem(config, dtype, Limits.given(limits))
        if too_large:
            raise CheckpointError(f"{config_source}: {too_large}")
        config.dtype = dtype  # the config says what the weights are, as transformers' from_pretrained
        with init_empty_weights():
            model = cls(config, **init_kwargs)
        try:
            fitted = fit_checkpoint_keys(loaded.tensors, model.state_dict().keys(), cls.base_model_prefix)
        except ValueError as e:
            raise CheckpointError(f"{loaded.path}: {e}") from None

        def name_in_file(key: str) -> str:  # model name -> transformers name -> the file's own name
            hf_name = fitted.name_in_file(key)
            return loaded.file_names.get(hf_name, hf_name)

        info = load_fitted_state(model, fitted.tensors, source=loaded.path, strict=strict, dtype=dtype,
                                 name_in_file=name_in_file, ignore_mismatched_sizes=ignore_mismatched_sizes,
                                 incomplete_form=getattr(loaded, "form", None) is not None)
        if loaded.unmapped:
            logger.warning("%s: %d variables match no row of the weight map and were not loaded: %s",
                           loaded.path, len(loaded.unmapped), name_list(loaded.unmapped))
        for old, new in fitted.renamed:
            logger.debug("%s: %s -> %s", loaded.path, old, new)
        if fitted.dropped_buffers:
            logger.debug("%s: dropped derived buffers %s", loaded.path, fitted.dropped_buffers)
        info["renamed_keys"] = fitted.renamed
        info["dropped_buffers"] = fitted.dropped_buffers
        info["skipped_training_state"] = loaded.skipped
        info["unmapped_keys"] = loaded.unmapped
        return model, info

    # ------------------------------------------------------ transformers' names and flags
    # Members this library does not call itself: transformers' Trainer and pipelines, peft,
    # accelerate, sentence-transformers and the upstream tests in tests/conformance read
    # them, under transformers' names. Each says who.

    #: State-dict keys ``save_pretrained`` leaves out: none for BERT (Trainer's resume reads it).
    _keys_to_ignore_on_save: set[str] | None = None
    #: "sdpa" is available (transformers' attention dispatch and its upstream tests read it).
    _supports_sdpa = True
    #: No key is expected missing or unexpected when loading a BERT checkpoint (sentence-transformers
    #: and the upstream tests read these).
    _keys_to_ignore_on_load_missing: list[str] | None = None
    _keys_to_ignore_on_load_unexpected: list[str] | None = None
    #: resize_token_embeddings' refusal of a pad_to_multiple_of that is no positive int, in
    #: transformers' words, its typo ("not and integer") included: the ported upstream
    #: test_resize_tokens_embeddings matches them.
    _PAD_TO_MULTIPLE_ERROR = ("Asking to pad the embedding matrix to a multiple of `{}`, which is not and integer. "
                              "Please make sure to pass an integer (pad_to_multiple_of must be a positive int)")

    @property
    def accepts_loss_kwargs(self) -> bool:
        """Whether ``forward`` takes ``num_items_in_batch`` (the per-token heads), by name or
        in its ``**kwargs`` group: transformers' Trainer reads this to pass it, and then leaves
        the averaging over accumulated micro-batches to the model instead of dividing each
        micro-batch's loss itself."""
        return "num_items_in_batch" in keyword_names(self.forward)

    @property
    def loss_type(self) -> str | None:
        """transformers' name of the loss (its ``LOSS_MAPPING`` key), as transformers derives it
        from the class name; ``"ForCausalLM"`` for the left-to-right LM head, so that Trainer
        counts the predicted tokens of a batch without each row's first (the shift drops it)."""
        name = type(self).__name__
        if name.endswith("LMHeadModel"):
            return "ForCausalLM"
        return next((kind for kind in _LOSS_TYPES if kind in name), None)

    @classmethod
    def can_generate(cls) -> bool:
        """Whether the model has ``generate``: it takes ``generation_utils.GenerationMixin``,
        as BertLMHeadModel does. Read by transformers' tools, and by ``save_pretrained``, which
        then writes ``generation_config.json``."""
        return issubclass(cls, GenerationMixin)

    @classmethod
    def _from_config(cls, config, attn_implementation: str | None = None, dtype: Any = None, torch_dtype: Any = None,
                     **init_kwargs: Any):
        """``cls(config, **init_kwargs)`` with an attention implementation and a dtype, both
        set on ``config`` as transformers 5.x does: its ``_from_config``. The dtype defaults
        to ``config.dtype`` (float32 when that is None)."""
        if attn_implementation is not None:
            check_attn_implementation(attn_implementation)
            config.attn_implementation = attn_implementation
        target = resolve_dtype(dtype if dtype is not None else torch_dtype, "dtype")
        target = config.dtype if target in (None, "auto") else target
        model = cls(config, **init_kwargs)
        if target is not None:
            config.dtype = target
            model.to(target)
        return model

    @classmethod
    def _can_set_attn_implementation(cls) -> bool:
        """True: ``set_attn_implementation`` switches a built model (transformers' check)."""
        return True

    def gradient_checkpointing_enable(
        self,
        gradient_checkpointing_kwargs: dict[str, Any] | None = None,
        every_n_layers: int = 1,
        offload: bool = False,
    ) -> None:
        """``activation_checkpointing_enable`` under its transformers 4.x name (5.23 keeps it
        as a deprecated alias)."""
        self.activation_checkpointing_enable(gradient_checkpointing_kwargs, every_n_layers, offload)

    gradient_checkpointing_disable = activation_checkpointing_disable

    is_gradient_checkpointing = is_activation_checkpointing  # transformers 4.x's name

    def get_extended_attention_mask(
        self,
        attention_mask: torch.Tensor,
        input_shape: tuple[int, int],
        device: torch.device | None = None,
        dtype: torch.dtype | None = None,
    ) -> torch.Tensor:
        """transformers 3.x/4.x's method form of ``get_extended_attention_mask`` (5.x dropped it):
        the model's dtype and ``config.is_decoder`` fill in the arguments."""
        mask = get_extended_attention_mask(
            attention_mask, tuple(input_shape), dtype=dtype or self.dtype, is_decoder=self.config.is_decoder
        )
        return mask if device is None else mask.to(device)


def _warn_about_quantization(config) -> None:
    """A config.json with a ``quantization_config``: nothing here quantizes, so say so in
    transformers' words for a method it does not know, and load the weights as they are
    (a quantized checkpoint's packed tensors then fail the shape and dtype checks, by name)."""
    quantization = config.extra.get("quantization_config")
    if quantization is not None:
        method = quantization.get("quant_method") if isinstance(quantization, dict) else quantization
        logger.warning("Unknown quantization type, got %s - supported types are: [] (mini_hf_bert quantizes "
                       "nothing); loading %s's weights as they are", method, config.name_or_path)


#: The loss names of transformers' ``LOSS_MAPPING`` that the heads here compute (``loss_type``).
_LOSS_TYPES = ("ForMaskedLM", "ForTokenClassification", "ForSequenceClassification", "ForQuestionAnswering")


def _checked_state_dict(state_dict: Any) -> dict[str, torch.Tensor]:
    """``from_pretrained(state_dict=)``'s argument, refused unless it maps names to tensors."""
    if not isinstance(state_dict, dict) or not all(
            isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in state_dict.items()):
        raise TypeError(f"state_dict must map parameter names to tensors, got {type(state_dict).__name__}")
    return dict(state_dict)


def _output_requires_grad(module: nn.Module, inputs: Any, output: torch.Tensor) -> None:
    output.requires_grad_(True)


#: What torch.utils.checkpoint.checkpoint takes besides the function and its inputs.
_CHECKPOINT_ARGUMENTS = frozenset(
    {"use_reentrant", "preserve_rng_state", "context_fn", "determinism_check", "debug", "early_stop"}
)
