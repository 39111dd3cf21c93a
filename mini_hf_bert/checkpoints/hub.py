"""Hub model ids ("bert-base-uncased", "google-bert/bert-base-uncased") -> a local directory.

The local HuggingFace cache is read directly, with no dependency: it is a plain directory
layout that huggingface_hub writes and transformers reads,

    $HF_HUB_CACHE/models--google-bert--bert-base-uncased/
        refs/main                      # a text file: the commit "main" points at
        snapshots/<commit>/config.json # symlinks into blobs/
        snapshots/<commit>/model.safetensors
        blobs/<sha256 or git hash>

where ``HF_HUB_CACHE`` defaults to ``$HF_HOME/hub``, ``HF_HOME`` to
``$XDG_CACHE_HOME/huggingface`` and that to ``~/.cache/huggingface`` (huggingface_hub's
``constants.py``; the older ``HUGGINGFACE_HUB_CACHE`` is honoured too).

An id that is not cached is downloaded with huggingface_hub, only when it is installed,
offline mode (``HF_HUB_OFFLINE=1``) is off, and ``local_files_only`` is false. Every
failure says which of these stopped it and where the cache was looked for.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable

from ..file_utils import read_file
from .errors import CheckpointError
from .layout import (
    CONFIG_NAME,
    KERAS_HUB_TASK_WEIGHTS_NAME,
    KERAS_HUB_WEIGHTS_NAME,
    OTHER_WEIGHTS_FILE_NAMES,
    WEIGHTS_FILE_NAMES,
)

logger = logging.getLogger(__name__)

#: transformers' own spelling of the rules for a repo id: "name" or "namespace/name", of
#: letters, digits, "-", "_", "."; no "--" or ".." and no leading/trailing "-" or ".".
_REPO_ID = re.compile(r"^(?:[A-Za-z0-9][\w.-]*/)?[A-Za-z0-9][\w.-]*$")
_COMMIT = re.compile(r"^[0-9a-f]{40}$")
#: A ref file holds one commit hash and a newline.
_MAX_REF_BYTES = 256


def check_revision(revision: str | None) -> str:
    """``revision`` as a name inside a repo's ``refs/``: None is "main", as transformers
    reads it; a name that could leave ``refs/`` (``..``, an absolute path) is a ValueError."""
    if revision is None:
        return "main"
    if not isinstance(revision, str):
        raise TypeError(f"revision must be a str (a branch, tag or commit), got {type(revision).__name__}")
    parts = revision.split("/")
    if not revision or "\\" in revision or "\0" in revision or any(part in ("", ".", "..") for part in parts):
        raise ValueError(f"revision={revision!r}: not a branch, tag or commit name (it would lead outside the "
                         f"repo's refs/)")
    return revision

#: The original BERT ids moved under the google-bert organisation in 2024; the hub
#: redirects the old names, and a cache may hold either spelling.
LEGACY_BERT_IDS = {
    name: "google-bert/" + name
    for name in (
        "bert-base-uncased", "bert-large-uncased", "bert-base-cased", "bert-large-cased",
        "bert-base-multilingual-uncased", "bert-base-multilingual-cased", "bert-base-chinese",
        "bert-base-german-cased", "bert-large-uncased-whole-word-masking",
        "bert-large-cased-whole-word-masking", "bert-large-uncased-whole-word-masking-finetuned-squad",
        "bert-large-cased-whole-word-masking-finetuned-squad", "bert-base-cased-finetuned-mrpc",
    )
}

#: Files fetched besides the config and the weights, when the repo has them.
TOKENIZER_FILE_NAMES = ("vocab.txt", "tokenizer_config.json", "tokenizer.json", "special_tokens_map.json")
#: What a KerasHub preset holds beside its backbone: the task's head, its configs, the vocabulary.
KERAS_HUB_PRESET_FILES = (KERAS_HUB_TASK_WEIGHTS_NAME, "task.json", "preprocessor.json", "metadata.json",
                          "assets/tokenizer/vocabulary.txt")


def looks_like_hub_id(name: str) -> bool:
    return bool(_REPO_ID.match(name)) and "--" not in name and ".." not in name and not name.endswith((".", "-"))


def _truthy(value: str | None) -> bool:
    return (value or "").strip().upper() in {"1", "ON", "YES", "TRUE"}


def hub_cache_dir() -> str:
    """Where huggingface_hub keeps downloaded repos, by the same environment variables."""
    for variable in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        if os.environ.get(variable):
            return os.path.expanduser(os.environ[variable])
    hf_home = os.environ.get("HF_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "huggingface"
    )
    return os.path.join(os.path.expanduser(hf_home), "hub")


def is_offline() -> bool:
    return _truthy(os.environ.get("HF_HUB_OFFLINE")) or _truthy(os.environ.get("TRANSFORMERS_OFFLINE"))


def _repo_ids(repo_id: str) -> list[str]:
    """The spellings a cache may hold ``repo_id`` under."""
    spellings = [repo_id]
    if repo_id in LEGACY_BERT_IDS:
        spellings.append(LEGACY_BERT_IDS[repo_id])
    elif repo_id.startswith("google-bert/") and repo_id.split("/", 1)[1] in LEGACY_BERT_IDS:
        spellings.append(repo_id.split("/", 1)[1])
    return spellings


def _has_checkpoint(directory: str) -> bool:
    """A config and a weights file (transformers' PyTorch, TF or Flax ones, or a KerasHub
    preset's), or a form that needs no config: a SavedModel, a TF checkpoint's index."""
    has_config = os.path.isfile(os.path.join(directory, CONFIG_NAME))
    if has_config and any(os.path.isfile(os.path.join(directory, name))
                          for name in WEIGHTS_FILE_NAMES + OTHER_WEIGHTS_FILE_NAMES):
        return True
    if os.path.isfile(os.path.join(directory, "saved_model.pb")):
        return os.path.isfile(os.path.join(directory, "variables", "variables.index"))
    return os.path.isdir(directory) and any(name.endswith(".index") for name in os.listdir(directory))


def _has_any(directory: str, names: tuple[str, ...]) -> bool:
    return any(os.path.isfile(os.path.join(directory, name)) for name in names)


def find_cached_snapshot(
    repo_id: str, revision: str = "main", cache_dir: str | None = None, required: tuple[str, ...] | None = None
) -> str | None:
    """The snapshot directory of ``repo_id`` at ``revision`` in the local cache, if it holds
    a config and a weights file (or, with ``required``, one of those files); else None."""
    cache_dir = cache_dir or hub_cache_dir()
    revision = check_revision(revision)
    for spelling in _repo_ids(repo_id):
        repo_dir = os.path.join(cache_dir, "models--" + spelling.replace("/", "--"))
        if not os.path.isdir(repo_dir):
            continue
        commit = revision if _COMMIT.match(revision) else None
        ref_file = os.path.join(repo_dir, "refs", revision)
        if commit is None and os.path.lexists(ref_file):
            try:
                commit = read_file(ref_file, _MAX_REF_BYTES).decode("utf-8", "replace").strip()
            except OSError as e:
                raise CheckpointError(f"{ref_file}: cannot be read as a ref ({e.strerror})") from None
            if not _COMMIT.match(commit):  # ".." would make the repo folder itself a snapshot
                raise CheckpointError(f"{ref_file}: holds {commit[:80]!r}, not a commit hash (40 hex digits); "
                                      f"the cache is damaged: delete this file, or pass revision=<commit>")
        if commit is None:
            continue
        snapshot = os.path.join(repo_dir, "snapshots", commit)
        snapshots = os.path.realpath(os.path.join(repo_dir, "snapshots"))
        if os.path.lexists(snapshot) and os.path.dirname(os.path.realpath(snapshot)) != snapshots:
            raise CheckpointError(f"{snapshot}: leads outside {snapshots} (to {os.path.realpath(snapshot)}); "
                                  f"a snapshot must be a folder of snapshots/")
        complete = _has_any(snapshot, required) if required else _has_checkpoint(snapshot)
        if os.path.basename(snapshot) == commit and complete:
            return snapshot
    return None


def resolve_hub_id(
    repo_id: str,
    revision: str = "main",
    cache_dir: str | None = None,
    local_files_only: bool = False,
    required: tuple[str, ...] | None = None,
    read_index: Callable[[str], dict[str, str]] | None = None,
    token: str | bool | None = None,
    force_download: bool = False,
) -> str:
    """A local directory holding ``repo_id``'s config and weights (or, with ``required``, one
    of those files, e.g. a tokenizer's): from the cache, or downloaded.

    ``read_index`` reads a sharded checkpoint's ``*.index.json`` into its weight map, to
    know the shards to download (``hf_format.read_index_file``, which ``resolve`` passes):
    this module reads no checkpoint format itself, so it stays below the format readers.
    ``token``: what a download authenticates with (huggingface_hub's stored one when None).
    ``force_download``: download again, over what the cache holds (transformers' meaning)."""
    if required is None and read_index is None:  # a caller's mistake: said before any lookup or download
        raise TypeError("resolve_hub_id: a whole checkpoint (no required files) needs read_index, "
                        "the reader of a sharded checkpoint's index (hf_format.read_index_file)")
    cache_dir = os.fspath(cache_dir) if cache_dir is not None else hub_cache_dir()
    revision = check_revision(revision)
    snapshot = None if force_download else find_cached_snapshot(repo_id, revision, cache_dir, required)
    if snapshot is not None:
        logger.info("%s (%s): found in the local cache at %s", repo_id, revision, snapshot)
        return snapshot
    where = (f"force_download=True asks to download {repo_id!r} (revision {revision!r}) again" if force_download else
             f"{repo_id!r} (revision {revision!r}) is not in the local HuggingFace cache ({cache_dir})")
    if local_files_only:
        raise CheckpointError(f"{where}, and local_files_only=True forbids downloading it")
    if is_offline():
        raise CheckpointError(f"{where}, and offline mode (HF_HUB_OFFLINE / TRANSFORMERS_OFFLINE) forbids downloading it")
    try:
        import huggingface_hub
    except ImportError:
        raise CheckpointError(
            f"{where}, and huggingface_hub is not installed to download it "
            f"(pip install huggingface_hub, or pass a local directory)"
        ) from None
    return _download(huggingface_hub, repo_id, revision, cache_dir, where, required, read_index, token, force_download)


def _download(huggingface_hub, repo_id: str, revision: str, cache_dir: str, where: str, required,
              read_index: Callable[[str], dict[str, str]] | None, token: str | bool | None = None,
              force_download: bool = False) -> str:
    """Fetch what a checkpoint needs -- config.json, the first weights file the repo has
    (safetensors first, as transformers) and its shards -- or, with ``required``, the first
    of those files the repo has; then the tokenizer files present. Returns the snapshot."""
    from huggingface_hub.errors import EntryNotFoundError

    asked: set[str] = set()  # each file is asked for once (every request is a round trip)

    def fetch(filename: str, optional: bool = False) -> str | None:
        asked.add(filename)
        try:
            options = {} if token is None else {"token": token}  # None: huggingface_hub's stored token
            if force_download:
                options["force_download"] = True
            return huggingface_hub.hf_hub_download(repo_id, filename, revision=revision, cache_dir=cache_dir,
                                                   **options)
        except EntryNotFoundError:
            if optional:
                return None
            raise

    def first_of(names: tuple[str, ...]) -> str:
        found = next((path for path in (fetch(n, optional=True) for n in names) if path), None)
        if found is None:
            raise CheckpointError(f"{repo_id}: the repo has none of {', '.join(names)}")
        return found

    try:
        if required:
            anchor = first_of(required)
        else:
            anchor = fetch(CONFIG_NAME)
            weights_path = first_of(WEIGHTS_FILE_NAMES + OTHER_WEIGHTS_FILE_NAMES)
            if os.path.basename(weights_path) == KERAS_HUB_WEIGHTS_NAME:  # a KerasHub preset: its head and vocabulary
                for name in KERAS_HUB_PRESET_FILES:
                    fetch(name, optional=True)
            if weights_path.endswith(".index.json"):
                for shard in sorted(set(read_index(weights_path).values())):
                    fetch(shard)
        for name in TOKENIZER_FILE_NAMES:
            if name not in asked:
                fetch(name, optional=True)
    except CheckpointError:
        raise
    except Exception as e:  # noqa: BLE001 - network, auth, missing repo: all mean "not downloadable"
        reason = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise CheckpointError(f"{where}, and downloading it failed ({type(e).__name__}: {reason})") from None
    directory = os.path.dirname(anchor)
    logger.info("%s (%s): downloaded to %s", repo_id, revision, directory)
    return directory


def upload_folder(directory: str, repo_id: str, commit_message: str | None = None, private: bool | None = None,
                  token: str | bool | None = None) -> str:
    """Upload a saved model directory to the hub repo ``repo_id`` (created if needed), with
    huggingface_hub; return the commit's URL. ``push_to_hub`` (``modeling_utils``) calls it.

    Every way this cannot happen here ends in one OSError that says which: offline mode,
    huggingface_hub missing, or the hub unreachable or refusing (with its reason).
    """
    if not isinstance(repo_id, str) or not looks_like_hub_id(repo_id):
        raise ValueError(f"push_to_hub: {repo_id!r} is not a hub repo id (\"name\" or \"namespace/name\")")
    if is_offline():
        raise OSError(f"push_to_hub({repo_id!r}): offline mode is on (HF_HUB_OFFLINE or TRANSFORMERS_OFFLINE), "
                      f"so nothing was uploaded; save_pretrained() the model and upload the directory when online")
    try:
        import huggingface_hub
    except ImportError:
        raise OSError(f"push_to_hub({repo_id!r}) needs huggingface_hub (pip install huggingface_hub); "
                      f"nothing was uploaded") from None
    api = huggingface_hub.HfApi(token=token)
    try:
        api.create_repo(repo_id, private=private, exist_ok=True)
        commit = api.upload_folder(folder_path=directory, repo_id=repo_id,
                                   commit_message=commit_message or "Upload model with mini_hf_bert")
    except Exception as e:  # noqa: BLE001 - the network library's errors (httpx, HTTP status) vary by version
        raise OSError(f"push_to_hub({repo_id!r}): the HuggingFace hub at {huggingface_hub.constants.ENDPOINT} "
                      f"could not be reached or refused the upload ({type(e).__name__}: {e}); nothing was uploaded") from None
    return str(getattr(commit, "commit_url", commit))
