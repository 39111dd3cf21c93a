"""Every keyword transformers' loaders and savers take, and what each does here.

Code written for transformers passes keywords about where files come from (``token``,
``force_download``, ``proxies``), transformers' own bookkeeping (``_from_auto``,
``_commit_hash``) and features this library does not have (``quantization_config``,
``tp_plan``). ``KEYWORDS`` says, for each, one of:

* honoured: it does here what it does in transformers;
* accepted, no effect: nothing here needs it (its reason says why);
* refused when set: it asks for what cannot be done here; its default is accepted, any
  other value is one error naming it.

``tests/core/test_loader_keywords.py`` reads transformers' signatures (5.x, and 4.57.6 in
``tests_transformers4``) at run time and holds this table to them, so a keyword added
upstream fails a test until it has a row.

transformers: none (its loaders take each keyword one by one)
"""

from __future__ import annotations

import logging
from typing import Any, TypedDict

logger = logging.getLogger(__name__)

HONOURED = "honoured"
NO_EFFECT = "accepted, no effect"
REFUSED_WHEN_SET = "refused when set"


class SaveOptions(TypedDict, total=False):
    """What transformers' ``save_pretrained`` methods take beyond the savers' own parameters
    here; each has no effect or is refused when set (``KEYWORDS``)."""

    save_function: Any  # 4.x: called for pytorch_model.bin; every file here is written whole instead
    save_config: bool
    create_pr: bool
    save_peft_format: bool
    save_original_format: bool
    distributed_checkpoint: bool
    ignore_metadata_errors: bool
    use_auth_token: str | bool | None
    filename_prefix: str | None
    # push_to_hub's companions, for the savers that do not upload (a model's names them itself)
    repo_id: str | None
    commit_message: str | None
    token: str | bool | None
    private: bool | None


#: keyword -> (what it does here, why). One row per keyword of transformers 5.x's and
#: 4.57.6's from_pretrained / save_pretrained of models, configs and tokenizers and of
#: the Auto classes, read from their signatures and the keywords their bodies pop.
KEYWORDS: dict[str, tuple[str, str]] = {
    # --- where the files are
    "revision": (HONOURED, "the hub branch, tag or commit"),
    "cache_dir": (HONOURED, "the hub cache to read or fill"),
    "local_files_only": (HONOURED, "never download"),
    "subfolder": (HONOURED, "the checkpoint's folder inside the directory"),
    "token": (HONOURED, "what a download authenticates with (None: huggingface_hub's stored one); a local or "
                        "cached checkpoint needs none"),
    "use_auth_token": (HONOURED, "transformers 4.x's name for token"),
    "force_download": (HONOURED, "a hub id's files are downloaded again over the cached ones (refused offline); a "
                                 "local directory is read as it is"),
    "proxies": (NO_EFFECT, "huggingface_hub >= 1.0 takes no proxies argument; it reads HTTP(S)_PROXY"),
    "resume_download": (NO_EFFECT, "deprecated upstream: huggingface_hub always resumes"),
    "mirror": (NO_EFFECT, "removed upstream"),
    "code_revision": (NO_EFFECT, "no code from a checkpoint ever runs here"),
    "trust_remote_code": (NO_EFFECT, "no code from a checkpoint ever runs here; True draws a warning"),
    "_commit_hash": (NO_EFFECT, "transformers' bookkeeping between its own calls"),
    "_from_auto": (NO_EFFECT, "transformers' bookkeeping between its own calls"),
    "_from_pipeline": (NO_EFFECT, "transformers' bookkeeping between its own calls"),
    "_configuration_file": (NO_EFFECT, "transformers' bookkeeping: the config file is config.json"),
    "_adapter_model_path": (NO_EFFECT, "transformers' bookkeeping for peft adapters"),
    # --- which weights, how they load
    "config": (HONOURED, "the config to build instead of the checkpoint's"),
    "state_dict": (HONOURED, "these tensors instead of the files' (from_pretrained); these saved (save_pretrained)"),
    "use_safetensors": (HONOURED, "True: model.safetensors only; False: pytorch_model.bin only"),
    "variant": (HONOURED, "model.VARIANT.safetensors"),
    "from_tf": (HONOURED, "the directory's TensorFlow weights, read without TensorFlow"),
    "from_flax": (HONOURED, "the directory's flax_model.msgpack, read without JAX"),
    "ignore_mismatched_sizes": (HONOURED, "mis-shaped weights initialised anew, each named in a warning"),
    "output_loading_info": (HONOURED, "also returns missing, unexpected and mismatched keys"),
    "torch_dtype": (HONOURED, "4.x's name for dtype"),
    "dtype": (HONOURED, "the parameters' dtype, 'auto' by default as in 5.x"),
    "device_map": (HONOURED, "the one device to load onto; several devices are refused"),
    "attn_implementation": (HONOURED, "eager, sdpa or fast"),
    "generation_config": (HONOURED, "the GenerationConfig of a model that generates"),
    "weights_only": (REFUSED_WHEN_SET, "True is the only way a pickle is read here: weights_only=False is refused"),
    "low_cpu_mem_usage": (NO_EFFECT, "loading always builds on the meta device and assigns the weights"),
    "_fast_init": (NO_EFFECT, "removed upstream: nothing is initialised twice here"),
    "disable_mmap": (NO_EFFECT, "safetensors files are memory-mapped copy-on-write; the file is never written"),
    "offload_state_dict": (NO_EFFECT, "removed upstream"),
    "tqdm_class": (NO_EFFECT, "loading shows no progress bar here"),
    "key_mapping": (REFUSED_WHEN_SET, "renaming keys by pattern is not offered; weight_map.py's tables rename the "
                                      "published forms"),
    "gguf_file": (REFUSED_WHEN_SET, "GGUF files are not read here"),
    "quantization_config": (REFUSED_WHEN_SET, "no quantized loading (bitsandbytes, GPTQ); the fast path's int8 "
                                              "route is this library's own"),
    "load_in_8bit": (REFUSED_WHEN_SET, "no bitsandbytes loading"),
    "load_in_4bit": (REFUSED_WHEN_SET, "no bitsandbytes loading"),
    "max_memory": (REFUSED_WHEN_SET, "a model is put on one device here"),
    "offload_folder": (REFUSED_WHEN_SET, "a model is put on one device here"),
    "offload_buffers": (REFUSED_WHEN_SET, "a model is put on one device here"),
    "tp_plan": (REFUSED_WHEN_SET, "no tensor parallelism"),
    "tp_size": (REFUSED_WHEN_SET, "no tensor parallelism"),
    "device_mesh": (REFUSED_WHEN_SET, "no tensor parallelism"),
    "distributed_config": (REFUSED_WHEN_SET, "no tensor parallelism"),
    "adapter_kwargs": (REFUSED_WHEN_SET, "peft adapters load through peft (docs/ecosystem.md)"),
    "adapter_name": (REFUSED_WHEN_SET, "peft adapters load through peft (docs/ecosystem.md)"),
    "use_kernels": (REFUSED_WHEN_SET, "no kernels from the hub"),
    "allow_all_kernels": (REFUSED_WHEN_SET, "no kernels from the hub"),
    "kernel_config": (REFUSED_WHEN_SET, "no kernels from the hub"),
    "experts_implementation": (REFUSED_WHEN_SET, "BERT has no experts"),
    "fusion_config": (REFUSED_WHEN_SET, "no module fusion; attn_implementation='fast' is this library's"),
    # --- tokenizers
    "use_fast": (NO_EFFECT, "AutoTokenizer's to choose by; a tokenizer class keeps its class"),
    "tokenizer_type": (REFUSED_WHEN_SET, "BERT's WordPiece tokenizer only: tokenizer_type='bert' is accepted"),
    "mistral_format": (REFUSED_WHEN_SET, "BERT's WordPiece tokenizer only"),
    "legacy_format": (HONOURED, "vocab.txt, tokenizer.json or both"),
    "filename_prefix": (REFUSED_WHEN_SET, "the files keep transformers' names, which every loader looks for"),
    "save_jinja_files": (HONOURED, "a chat template goes to chat_template.jinja (True, the default)"),
    # --- saving
    "is_main_process": (HONOURED, "False writes nothing"),
    "max_shard_size": (HONOURED, "the largest weights file"),
    "safe_serialization": (HONOURED, "model.safetensors (True) or pytorch_model.bin"),
    "save_function": (NO_EFFECT, "4.x calls it for pytorch_model.bin only; here every file is written whole "
                                 "(staged, then moved in)"),
    "save_config": (NO_EFFECT, "config.json is written with the weights: every process would write the same one"),
    "push_to_hub": (HONOURED, "a model's save uploads the saved directory with huggingface_hub (refused offline); "
                              "a config's or tokenizer's save refuses it: save them into the model's directory"),
    "repo_id": (HONOURED, "the repo push_to_hub uploads to"),
    "commit_message": (HONOURED, "push_to_hub's commit message"),
    "create_pr": (REFUSED_WHEN_SET, "push_to_hub commits to the branch"),
    "save_peft_format": (NO_EFFECT, "peft adapters are saved by peft"),
    "save_original_format": (NO_EFFECT, "a model saves in transformers' format; convert writes the others' readers"),
    "distributed_checkpoint": (REFUSED_WHEN_SET, "no tensor parallelism"),
    "ignore_metadata_errors": (NO_EFFECT, "push_to_hub writes no model card"),
}

#: The value of each refused-when-set keyword that asks for nothing (transformers' default).
UNSET: dict[str, Any] = {"weights_only": True, "tokenizer_type": "bert", "adapter_name": "default"}


def take_transformers_keywords(kwargs: dict[str, Any], what: str, token: str | bool | None = None) -> str | bool | None:
    """Remove from a call's ``kwargs`` every keyword of ``KEYWORDS`` that the loader does not
    name itself: ``token`` / ``use_auth_token`` checked, those with no effect dropped (``proxies`` with a
    warning, as it asks for something), the refused ones accepted at their unset value
    (None, False, ``UNSET``'s) and otherwise one error naming the keyword and why. What is
    left is the loader's own (config fields, ``__init__`` arguments). ``what`` names the
    loader; ``token`` is the one it was given, and the token to use is returned (4.x's
    ``use_auth_token`` where that was given instead)."""
    legacy = kwargs.pop("use_auth_token", None)
    if token is not None and legacy is not None:
        raise ValueError(f"{what}: pass token= or use_auth_token= (transformers 4.x's name), not both")
    token = token if token is not None else legacy
    if token is not None and not isinstance(token, (str, bool)):
        raise TypeError(f"{what}: token must be a str, True or False, got {type(token).__name__}")
    if kwargs.get("proxies"):
        logger.warning("%s: proxies=%r has no effect; huggingface_hub reads HTTP_PROXY / HTTPS_PROXY", what,
                       kwargs["proxies"])
    for key in [k for k in kwargs if k in KEYWORDS and KEYWORDS[k][0] != HONOURED]:
        value = kwargs.pop(key)
        unset = value is None or value is False or (isinstance(value, (dict, list, tuple)) and not value)
        if KEYWORDS[key][0] == NO_EFFECT or unset or (key in UNSET and value == UNSET[key]):
            continue
        raise ValueError(f"{what}: {key}={value!r} cannot be honoured here: {KEYWORDS[key][1]}")
    return token


def no_upload(options: dict[str, Any], push_to_hub: bool, what: str) -> None:
    """A config's or tokenizer's ``save_pretrained``: ``push_to_hub`` and its companions
    (``repo_id``, ``commit_message``, ``token``, ``private``) are accepted while nothing is to
    be uploaded; ``push_to_hub=True`` is refused (the model's save uploads its directory)."""
    for key in ("repo_id", "commit_message", "token", "private"):
        options.pop(key, None)
    if push_to_hub:
        raise ValueError(f"{what}: push_to_hub=True is not offered for this file alone; save it into the model's "
                         f"directory and pass push_to_hub=True to the model's save_pretrained, which uploads it whole")
    take_transformers_keywords(options, what)
    if options:
        raise TypeError(f"{what}() got unexpected keyword argument(s) {sorted(options)}")
