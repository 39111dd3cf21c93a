"""Hub model ids: the local HuggingFace cache (HF_HUB_CACHE / HF_HOME layout), revisions,
offline mode, and downloading through huggingface_hub when it is installed and allowed.

The cache below is built file by file in the layout huggingface_hub writes (blobs named
by hash, snapshots of symlinks, refs); huggingface_hub's own reader and transformers'
from_pretrained are asked to read it too, so the layout is checked, not assumed.
"""

from __future__ import annotations

import hashlib
import os
import sys

import huggingface_hub
import pytest
import torch
import transformers

import mini_hf_bert
from mini_hf_bert import BertModel, CheckpointError
from mini_hf_bert.checkpoints import hub

from ..conftest import small_config_kwargs

COMMIT = "0123456789abcdef0123456789abcdef01234567"
OTHER_COMMIT = "fedcba9876543210fedcba9876543210fedcba98"


@pytest.fixture(autouse=True)
def _clean_hub_environment(monkeypatch, tmp_path):
    """No test here may see the machine's own cache settings."""
    for variable in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))


@pytest.fixture(scope="module")
def checkpoint_files(tmp_path_factory) -> dict[str, bytes]:
    """A small saved model's files: what a repo on the hub would hold."""
    directory = tmp_path_factory.mktemp("repo")
    torch.manual_seed(0)
    BertModel(mini_hf_bert.BertConfig(**small_config_kwargs("tiny"))).save_pretrained(directory)
    (directory / "vocab.txt").write_text("[PAD]\n[UNK]\n")
    return {name: (directory / name).read_bytes() for name in os.listdir(directory)}


def write_cache(cache_dir, repo_id: str, files: dict[str, bytes], commit: str = COMMIT, refs=("main",)) -> str:
    """Lay ``files`` out as huggingface_hub caches a download of ``repo_id`` at ``commit``."""
    repo_dir = os.path.join(cache_dir, "models--" + repo_id.replace("/", "--"))
    snapshot = os.path.join(repo_dir, "snapshots", commit)
    os.makedirs(os.path.join(repo_dir, "blobs"), exist_ok=True)
    os.makedirs(snapshot, exist_ok=True)
    os.makedirs(os.path.join(repo_dir, "refs"), exist_ok=True)
    for name, data in files.items():
        blob = os.path.join(repo_dir, "blobs", hashlib.sha256(data).hexdigest())
        with open(blob, "wb") as f:
            f.write(data)
        link = os.path.join(snapshot, name)  # a name may hold folders (a SavedModel's variables/)
        os.makedirs(os.path.dirname(link), exist_ok=True)
        if os.path.lexists(link):  # downloaded again (force_download): the link is made anew
            os.unlink(link)
        os.symlink(os.path.relpath(blob, os.path.dirname(link)), link)
    for ref in refs:
        with open(os.path.join(repo_dir, "refs", ref), "w") as f:
            f.write(commit)
    return snapshot


def _same_weights(a: torch.nn.Module, b: torch.nn.Module) -> bool:
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


# ------------------------------------------------------------------ the local cache


def test_id_found_through_hf_hub_cache(tmp_path, monkeypatch, checkpoint_files):
    cache = tmp_path / "hub-cache"
    snapshot = write_cache(cache, "google-bert/bert-base-uncased", checkpoint_files)
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    model = BertModel.from_pretrained("google-bert/bert-base-uncased")
    assert _same_weights(model, BertModel.from_pretrained(snapshot))
    # huggingface_hub's own reader finds the same file in this layout,
    assert huggingface_hub.try_to_load_from_cache(
        "google-bert/bert-base-uncased", "model.safetensors", cache_dir=str(cache)
    ) == os.path.join(snapshot, "model.safetensors")
    # and transformers loads it offline from there.
    theirs = transformers.BertModel.from_pretrained(
        "google-bert/bert-base-uncased", cache_dir=str(cache), local_files_only=True, dtype=torch.float32
    )
    assert torch.equal(theirs.embeddings.word_embeddings.weight, model.embeddings.word_embeddings.weight)


def test_id_found_through_hf_home_under_its_legacy_name(tmp_path, monkeypatch, checkpoint_files):
    """HF_HOME/hub is the default cache; "bert-base-uncased" is also found cached under
    its current name google-bert/bert-base-uncased (the hub redirects the old one)."""
    write_cache(tmp_path / "hf-home" / "hub", "google-bert/bert-base-uncased", checkpoint_files)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    assert hub.hub_cache_dir() == str(tmp_path / "hf-home" / "hub")
    BertModel.from_pretrained("bert-base-uncased")


def test_default_cache_follows_xdg_cache_home(tmp_path, checkpoint_files):
    write_cache(tmp_path / "xdg" / "huggingface" / "hub", "someone/tiny-bert", checkpoint_files)
    BertModel.from_pretrained("someone/tiny-bert")


def test_hf_hub_cache_wins_over_hf_home(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "explicit"))
    assert hub.hub_cache_dir() == str(tmp_path / "explicit")


def test_revisions_by_tag_and_commit(tmp_path, monkeypatch, checkpoint_files):
    cache = tmp_path / "cache"
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    write_cache(cache, "someone/tiny-bert", checkpoint_files, commit=COMMIT, refs=("main",))
    torch.manual_seed(5)
    other = BertModel(mini_hf_bert.BertConfig(**small_config_kwargs("tiny")))
    other_dir = tmp_path / "other"
    other.save_pretrained(other_dir)
    files = {name: (other_dir / name).read_bytes() for name in os.listdir(other_dir)}
    write_cache(cache, "someone/tiny-bert", files, commit=OTHER_COMMIT, refs=("v2",))

    main = BertModel.from_pretrained("someone/tiny-bert")
    tagged = BertModel.from_pretrained("someone/tiny-bert", revision="v2")
    by_commit = BertModel.from_pretrained("someone/tiny-bert", revision=OTHER_COMMIT)
    assert _same_weights(tagged, other) and _same_weights(by_commit, other) and not _same_weights(main, other)


def test_cache_dir_argument(tmp_path, checkpoint_files):
    write_cache(tmp_path / "mine", "someone/tiny-bert", checkpoint_files)
    BertModel.from_pretrained("someone/tiny-bert", cache_dir=tmp_path / "mine", local_files_only=True)


def test_a_local_directory_wins_over_a_cached_id(tmp_path, monkeypatch, checkpoint_files):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
    write_cache(tmp_path / "cache", "tiny-bert", checkpoint_files)
    monkeypatch.chdir(tmp_path)
    os.makedirs("tiny-bert")  # an empty local directory of the same name is what is read
    with pytest.raises(CheckpointError, match="tiny-bert: no weights found"):
        BertModel.from_pretrained("tiny-bert")


def test_snapshot_without_weights_is_not_a_cache_hit(tmp_path, monkeypatch, checkpoint_files):
    """A cache where only config.json was fetched (e.g. AutoConfig) is not a checkpoint."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    write_cache(tmp_path / "cache", "someone/tiny-bert", {"config.json": checkpoint_files["config.json"]})
    with pytest.raises(CheckpointError, match="is not in the local HuggingFace cache"):
        BertModel.from_pretrained("someone/tiny-bert")


# ---------------------------------------------------- not cached: clear refusals


def test_offline_mode_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(CheckpointError) as excinfo:
        BertModel.from_pretrained("bert-base-uncased")
    message = str(excinfo.value)
    assert message.startswith("bert-base-uncased: no such local directory or file, and as a hub id:")
    assert str(tmp_path / "empty") in message and "offline mode" in message


def test_local_files_only_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty"))
    with pytest.raises(CheckpointError, match="local_files_only=True forbids downloading"):
        BertModel.from_pretrained("bert-base-uncased", local_files_only=True)


def test_without_huggingface_hub_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty"))
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)  # import fails as if not installed
    with pytest.raises(CheckpointError, match="huggingface_hub is not installed to download it"):
        BertModel.from_pretrained("bert-base-uncased")


def test_not_an_id_and_not_a_path():
    with pytest.raises(FileNotFoundError, match="no such directory, TensorFlow checkpoint prefix or .zip"):
        BertModel.from_pretrained("./no/such/dir")


@pytest.mark.parametrize("name", ["bert-base-uncased", "google-bert/bert-base-uncased", "a.b_c-d/e"])
def test_hub_id_shapes(name):
    assert hub.looks_like_hub_id(name)


@pytest.mark.parametrize("name", ["/abs/path", "a/b/c", "../x", "a--b", "x.", "", "a b"])
def test_not_hub_id_shapes(name):
    assert not hub.looks_like_hub_id(name)


# ------------------------------------------------------------------ downloading


class FakeHub:
    """Stands in for huggingface_hub.hf_hub_download: serves ``files`` into the cache
    layout and records what was asked for."""

    def __init__(self, files: dict[str, bytes], error: Exception | None = None):
        self.files, self.error, self.requests, self.forced = files, error, [], []

    def __call__(self, repo_id, filename, *, revision=None, cache_dir=None, force_download=False):
        self.requests.append(filename)
        self.forced.append(force_download)
        if self.error is not None:
            raise self.error
        if filename not in self.files:
            raise huggingface_hub.errors.EntryNotFoundError(f"{filename} not in {repo_id}")
        snapshot = write_cache(cache_dir, repo_id, {filename: self.files[filename]})
        return os.path.join(snapshot, filename)


def test_downloads_when_not_cached(tmp_path, monkeypatch, checkpoint_files):
    """Not cached, online, huggingface_hub installed: config, then the first weights file
    the repo has (safetensors preferred, as transformers), then the tokenizer files."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
    bin_only = {k: v for k, v in checkpoint_files.items() if k != "model.safetensors"}
    model = BertModel(mini_hf_bert.BertConfig(**small_config_kwargs("tiny")))
    model.save_pretrained(tmp_path / "bin", safe_serialization=False)
    bin_only["pytorch_model.bin"] = (tmp_path / "bin" / "pytorch_model.bin").read_bytes()
    fake = FakeHub(bin_only)
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", fake)
    loaded = BertModel.from_pretrained("someone/tiny-bert")
    assert _same_weights(loaded, model)
    assert fake.requests == [
        "config.json", "model.safetensors", "model.safetensors.index.json", "pytorch_model.bin",
        "vocab.txt", "tokenizer_config.json", "tokenizer.json", "special_tokens_map.json",
    ]
    # Now cached: a second load asks the hub for nothing.
    fake.requests.clear()
    BertModel.from_pretrained("someone/tiny-bert")
    assert fake.requests == []


def test_download_failure_says_why(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
    fake = FakeHub({}, error=OSError("[Errno 111] Connection refused"))
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", fake)
    with pytest.raises(CheckpointError) as excinfo:
        BertModel.from_pretrained("someone/tiny-bert")
    message = str(excinfo.value)
    assert "is not in the local HuggingFace cache" in message
    assert "downloading it failed (OSError: [Errno 111] Connection refused)" in message


def test_repo_without_weights_says_so(tmp_path, monkeypatch, checkpoint_files):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", FakeHub({"config.json": checkpoint_files["config.json"]}))
    with pytest.raises(CheckpointError, match="the repo has none of model.safetensors"):
        BertModel.from_pretrained("someone/tiny-bert")


def test_transformers_offline_variable_is_honoured_too(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty"))
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    with pytest.raises(CheckpointError, match="offline mode"):
        BertModel.from_pretrained("google-bert/bert-base-uncased")


def test_force_download_downloads_again_over_the_cache(tmp_path, monkeypatch, checkpoint_files, minilm_dir):
    """force_download=True (transformers' keyword): a cached hub id is downloaded again, each
    file asked with huggingface_hub's force_download; model, config and tokenizer alike."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
    files = dict(checkpoint_files)
    files.update({n: open(os.path.join(minilm_dir, n), "rb").read() for n in ("vocab.txt", "tokenizer_config.json")})
    fake = FakeHub(files)
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", fake)
    BertModel.from_pretrained("someone/tiny-bert")
    assert not any(fake.forced)
    for load in (lambda: BertModel.from_pretrained("someone/tiny-bert", force_download=True),
                 lambda: mini_hf_bert.AutoModel.from_pretrained("someone/tiny-bert", force_download=True),
                 lambda: mini_hf_bert.BertConfig.from_pretrained("someone/tiny-bert", force_download=True),
                 lambda: mini_hf_bert.AutoConfig.from_pretrained("someone/tiny-bert", force_download=True),
                 lambda: mini_hf_bert.BertTokenizer.from_pretrained("someone/tiny-bert", force_download=True)):
        fake.requests.clear()
        fake.forced.clear()
        load()
        assert "config.json" in fake.requests or "vocab.txt" in fake.requests
        assert all(fake.forced)
    fake.requests.clear()
    BertModel.from_pretrained("someone/tiny-bert")  # without it, the cache serves again
    assert fake.requests == []


@pytest.mark.parametrize("setting", ["local_files_only", "offline"])
def test_force_download_where_nothing_may_be_downloaded_is_refused_naming_both(setting, tmp_path, monkeypatch,
                                                                              checkpoint_files):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
    write_cache(str(tmp_path / "cache"), "someone/tiny-bert", checkpoint_files)
    options = {"force_download": True}
    if setting == "offline":
        monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    else:
        options["local_files_only"] = True
    forbids = "local_files_only=True" if setting == "local_files_only" else "offline mode"
    with pytest.raises(OSError, match=f"force_download=True asks to download 'someone/tiny-bert'.*{forbids}"):
        BertModel.from_pretrained("someone/tiny-bert", **options)


def test_tokenizer_files_download_when_not_cached(tmp_path, monkeypatch, minilm_dir):
    """A tokenizer needs vocab.txt or tokenizer.json, not weights: the first one the repo has."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
    files = {n: open(os.path.join(minilm_dir, n), "rb").read() for n in ("vocab.txt", "tokenizer_config.json")}
    fake = FakeHub(files)
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", fake)
    tokenizer = mini_hf_bert.BertTokenizer.from_pretrained("someone/tiny-bert")
    assert tokenizer("hello")["input_ids"] == [101, 7592, 102]
    assert fake.requests[0] == "vocab.txt" and "config.json" not in fake.requests
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", FakeHub({"config.json": b"{}"}))
    with pytest.raises(FileNotFoundError, match="the repo has none of vocab.txt, tokenizer.json"):
        mini_hf_bert.BertTokenizer.from_pretrained("someone/other-bert")


def test_a_whole_checkpoint_needs_the_index_reader_before_anything_is_looked_up(tmp_path):
    """hub reads no checkpoint format (so it stays below the format readers): resolve passes
    the index reader; a caller that forgets it is told at once, not after a download."""
    from mini_hf_bert.checkpoints.hub import resolve_hub_id

    with pytest.raises(TypeError, match="needs read_index"):
        resolve_hub_id("google-bert/bert-base-uncased", cache_dir=str(tmp_path))
    assert os.listdir(tmp_path) == []
