"""A corpus of bad inputs and faults for the writers and the newer surfaces: saving,
converting, the attention page and picture, training on the command line, trace and
tokenize, the tokenizer call, model inputs and pipelines. In the style of
``bad_inputs.py``: each case builds what it needs in a fresh directory, does one thing a
user (or a hostile file) could do, and says what must happen:

* ``Refuse(fragment)``: one clear error: an exception of a type a user can act on, or on
  the command line exit status 2 and one ``error:`` line, whose message holds
  ``fragment`` (which names the argument or file), and never a traceback;
* ``Accept(check)``: it succeeds, and ``check`` (if any) finds the result right.

Every case is also watched for what must never happen: **unsafe** (code run from a file:
the canary appears; markup the attention page did not make), and **data loss** (a file
under ``precious/`` or among the shared inputs changed or vanished). ``run_case`` returns
one of: clear, accepted (rightly), unclear (an unclear error, or accepted when it should
be refused), unsafe, data loss. ``test_fault_corpus.py`` runs them all and prints the
one-line report.
"""

from __future__ import annotations

import contextlib
import hashlib
import html.parser
import io
import json
import os
import shutil
import struct
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

import mini_hf_bert
from mini_hf_bert.checkpoints.errors import CheckpointError
from mini_hf_bert.__main__ import main

from ..paths import FIXTURES

ZH = os.path.join(FIXTURES, "pretraining", "corpus_zh.txt")
GOOGLE_DIR = os.path.join(FIXTURES, "tf", "bert_pretraining")
#: Exceptions a user can act on: they say what is wrong with an argument or a file.
USER_ERRORS = (ValueError, TypeError, OSError, IndexError, CheckpointError)
OUTCOMES = ("clear", "accepted", "unclear", "unsafe", "data loss")


@dataclass
class Refuse:
    fragment: str


@dataclass
class Accept:
    check: Callable | None = None  # check(ctx, result) -> None, or ("unsafe" | "unclear", why)


@dataclass
class CliResult:
    code: int
    out: str
    err: str


@dataclass
class Context:
    """What a case may use: its own directory (``precious/`` inside it is watched), the
    shared inputs (watched too), and the canary a hostile file would create."""

    directory: str
    good: str  # a small BertModel checkpoint with the uncased vocabulary
    trained: str  # a finished 2-step pretrain run: OUT with checkpoint-1 and checkpoint-2
    minilm: str
    canary: str
    notes: dict = field(default_factory=dict)
    watched: dict[str, str] = field(default_factory=dict)  # path -> content digest, as the case made it

    def path(self, *parts: str) -> str:
        return os.path.join(self.directory, *parts)

    def watch(self, path: str) -> str:
        """Record ``path`` (a file, or every file under a directory): it must not change."""
        self.watched.update(snapshot(path))
        return path

    def precious(self, name: str, content: bytes | str = b"keep me") -> str:
        """A watched file under ``precious/``."""
        path = self.path("precious", name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(content.encode() if isinstance(content, str) else content)
        return self.watch(path)

    def copy(self, source: str, name: str) -> str:
        """A copy of ``source``; watched when ``name`` is under ``precious/``."""
        target = self.path(name)
        shutil.copytree(source, target, symlinks=True)
        return self.watch(target) if name.startswith("precious") else target

    def cli(self, *argv: str) -> CliResult:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), _log_to(err):
            try:
                code = main([a.format(d=self.directory, good=self.good, trained=self.trained, minilm=self.minilm,
                                      zh=ZH, google=GOOGLE_DIR) for a in argv])
            except SystemExit as e:  # argparse's usage errors
                code = e.code
        return CliResult(code, out.getvalue(), err.getvalue())


@contextlib.contextmanager
def _log_to(stream):
    """Warnings go where the command line prints them (stderr), to be read by checks."""
    import logging

    handler = logging.StreamHandler(stream)
    handler.setLevel(logging.WARNING)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield
    finally:
        root.removeHandler(handler)


# ------------------------------------------------------------------ watching


def snapshot(*roots: str) -> dict[str, str]:
    """Every file (and symlink) at or under ``roots``, by content."""
    found = {}
    for root in roots:
        if not os.path.lexists(root):
            continue
        if os.path.islink(root) or os.path.isfile(root):
            found[root] = "-> " + os.readlink(root) if os.path.islink(root) else _digest(root)
            continue
        for directory, dirs, files in os.walk(root):
            for name in dirs + files:
                path = os.path.join(directory, name)
                if os.path.islink(path):
                    found[path] = "-> " + os.readlink(path)
                elif os.path.isfile(path):
                    found[path] = _digest(path)
    return found


def _digest(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def run_case(case, ctx: Context) -> tuple[str, str]:
    """(outcome, detail) of one case."""
    action, expect = case
    ctx.watch(ctx.good)
    ctx.watch(ctx.trained)
    result, error = None, None
    try:
        result = action(ctx)
    except Exception as e:  # noqa: BLE001 - classified below
        error = e
    now = snapshot(*ctx.watched)
    lost = sorted(p for p, digest in ctx.watched.items() if now.get(p) != digest)
    if os.path.exists(ctx.canary):
        return "unsafe", "code ran: the canary file was created"
    if lost:
        return "data loss", f"changed or removed: {lost[:3]}"
    if error is not None:
        message = f"{type(error).__name__}: {error}"
        if not isinstance(expect, Refuse):
            return "unclear", f"should succeed, raised {message}"
        if isinstance(error, USER_ERRORS) and expect.fragment in str(error):
            return "clear", message
        return "unclear", message
    if isinstance(result, CliResult) and result.code != 0:
        errors = [line for line in result.err.splitlines()
                  if line.startswith("error:") or line.startswith("python -m mini_hf_bert")]
        text = errors[-1] if errors else result.err[-300:]
        if not isinstance(expect, Refuse):
            return "unclear", f"should succeed, exit {result.code}: {text}"
        one_line = len([line for line in result.err.splitlines() if line.startswith("error:")]) <= 1
        if result.code == 2 and errors and one_line and expect.fragment in text and "Traceback" not in result.err \
                and "(unexpected" not in text:
            return "clear", text
        return "unclear", f"exit {result.code}: {text}"
    if isinstance(expect, Refuse):
        return "unclear", f"accepted, but should be refused with {expect.fragment!r}"
    if expect.check is not None:
        problem = expect.check(ctx, result)
        if problem is not None:
            return problem
    return "accepted", ""


def summary_line(outcomes: dict[str, str]) -> str:
    counts = {kind: sum(1 for o in outcomes.values() if o == kind) for kind in OUTCOMES}
    return (f"fault corpus: {len(outcomes)} cases tried / {counts['clear']} clear / {counts['accepted']} rightly "
            f"accepted / {counts['unclear']} unclear / {counts['unsafe']} unsafe / {counts['data loss']} data loss")


# ------------------------------------------------------------------ helpers for cases


TINY = dict(vocab_size=50, hidden_size=16, num_attention_heads=2, num_hidden_layers=1, intermediate_size=32,
            max_position_embeddings=20)


def _tiny(impl: str = "eager"):
    torch.manual_seed(0)
    return mini_hf_bert.BertModel(mini_hf_bert.BertConfig(**TINY, attn_implementation=impl)).eval()


IDS = torch.tensor([[1, 2, 3]])


def _set(obj, name, value):
    setattr(obj, name, value)
    return obj


def _under_meta(call):
    with torch.device("meta"):
        return call()


def _tokenizer(ctx):
    return mini_hf_bert.BertTokenizer.from_pretrained(ctx.minilm)


def _save_into(ctx, directory, **kwargs):
    _tiny().save_pretrained(directory, **kwargs)


def _kept(relative: str, content: bytes = b"keep me"):
    """A check: the file at ``relative`` (under the case directory) still holds ``content``."""
    def check(ctx, result):
        path = ctx.path(relative)
        if os.path.islink(path) or not os.path.isfile(path) or open(path, "rb").read() != content:
            return "data loss", f"{relative} was changed or removed"
        return None
    return check


def _other_model_bin(ctx) -> str:
    """A directory holding another model's pytorch_model.bin (BertForPreTraining), watched."""
    directory = ctx.path("precious", "model")
    torch.manual_seed(1)
    config = mini_hf_bert.BertConfig(vocab_size=50, hidden_size=16, num_attention_heads=2, num_hidden_layers=1,
                                     intermediate_size=32, max_position_embeddings=20)
    mini_hf_bert.BertForPreTraining(config).save_pretrained(directory, safe_serialization=False)
    ctx.watch(os.path.join(directory, "pytorch_model.bin"))  # its config.json is the next save's to replace
    return directory


def _save_beside_other_bin(ctx):
    _save_into(ctx, _other_model_bin(ctx))


def _symlinked(ctx, directory_name: str, file_name: str) -> str:
    """A directory whose ``file_name`` is a symlink to a watched file."""
    directory = ctx.path(directory_name)
    os.makedirs(directory, exist_ok=True)
    os.symlink(ctx.precious("target.bin"), os.path.join(directory, file_name))
    return directory


def _multi_disk_zip(ctx) -> str:
    """A pytorch_model.bin whose zip end record is preceded by a ZIP64 locator claiming 2
    disks: ``zipfile.is_zipfile`` raises BadZipFile on it (it used to escape)."""
    directory = ctx.copy(ctx.good, "multidisk")
    from safetensors.torch import load_file

    state = load_file(os.path.join(directory, "model.safetensors"))
    os.remove(os.path.join(directory, "model.safetensors"))
    buffer = io.BytesIO()
    torch.save(state, buffer)
    data = buffer.getvalue()
    end = data.rfind(b"PK\x05\x06")
    locator = struct.pack("<4sLQL", b"PK\x06\x07", 0, 0, 2)
    with open(os.path.join(directory, "pytorch_model.bin"), "wb") as f:
        f.write(data[:end] + locator + data[end:])
    return directory


class _Call:
    def __init__(self, function, args):
        self.function, self.args = function, args

    def __reduce__(self):
        return (self.function, self.args)


def _trained_copy(ctx, damage: Callable[[str], None]) -> str:
    """The finished run without its final files and checkpoint-2, checkpoint-1 damaged."""
    out = ctx.copy(ctx.trained, "run")
    shutil.rmtree(os.path.join(out, "checkpoint-2"))
    damage(os.path.join(out, "checkpoint-1"))
    return out


def _reseal(checkpoint: str) -> None:
    from mini_hf_bert.training.trainer import COMPLETE_MARKER

    path = os.path.join(checkpoint, COMPLETE_MARKER)
    marker = json.load(open(path))
    marker["files"] = {n: os.path.getsize(os.path.join(checkpoint, n)) for n in marker["files"]}
    json.dump(marker, open(path, "w"))


def _edit_state(**changes):
    def damage(checkpoint):
        path = os.path.join(checkpoint, "trainer_state.pt")
        state = torch.load(path, weights_only=True)
        state.update(changes)
        for key in [k for k, v in changes.items() if v is None]:
            del state[key]
        torch.save(state, path)
        _reseal(checkpoint)
    return damage


def _hostile_state(ctx):
    def damage(checkpoint):
        torch.save({"step": 1, "x": _Call(os.system, (f"touch {ctx.canary}",))},
                   os.path.join(checkpoint, "trainer_state.pt"))
        _reseal(checkpoint)
    return damage


def _truncated_weights(checkpoint):
    path = os.path.join(checkpoint, "model.safetensors")
    with open(path, "r+b") as f:
        f.truncate(1000)
    _reseal(checkpoint)


def _resume_run(damage_factory):
    def action(ctx):
        damage = damage_factory(ctx) if damage_factory is _hostile_state else damage_factory
        out = _trained_copy(ctx, damage)
        return ctx.cli("pretrain", "{zh}", out, *TRAIN_ARGS, "--resume")
    return action


#: The arguments the shared trained run was made with (test_fault_corpus.py).
TRAIN_ARGS = ("--no-progress", "--max-seq-length", "32", "--dupe-factor", "1", "--batch-size", "4",
              "--max-steps", "2", "--save-every", "1", "--eval-every", "100")


# ------------------------------------------------------------------ the attention page


#: Tokens a vocabulary can hold (kept whole by do_basic_tokenize=false) that are markup.
HOSTILE_TOKENS = ["<img/src/onerror=alert(1)>", "<!--<script>", "</script><script>alert(2)</script>",
                  "__DATA__", "__TITLE__", "&lt;b&gt;", "\u2028", "<svg/onload=alert(3)>"]


def _hostile_checkpoint(ctx) -> str:
    """all-MiniLM-L6-v2's weights with a vocabulary whose first unused entries are markup,
    and a tokenizer that keeps whole whitespace-separated tokens."""
    directory = ctx.path("hostile")
    os.makedirs(directory)
    for name in ("config.json", "model.safetensors"):
        os.symlink(os.path.join(ctx.minilm, name), os.path.join(directory, name))
    vocab = open(os.path.join(ctx.minilm, "vocab.txt"), encoding="utf-8").read().split("\n")
    for index, token in enumerate(HOSTILE_TOKENS):
        vocab[1 + index] = token  # [unused0].. : ids 1..
    with open(os.path.join(directory, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(vocab))
    with open(os.path.join(directory, "tokenizer_config.json"), "w") as f:
        json.dump({"do_lower_case": False, "do_basic_tokenize": False}, f)
    return directory


class _Markup(html.parser.HTMLParser):
    """Every element and attribute name an HTML parser finds, and the text of the data script."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: set[tuple[str, tuple[str, ...]]] = set()
        self.in_data, self.data = False, ""

    def handle_starttag(self, tag, attrs):
        self.tags.add((tag, tuple(sorted(name for name, _ in attrs))))
        self.in_data = dict(attrs).get("id") == "attention-data"

    def handle_data(self, data):
        if self.in_data:
            self.data += data

    def handle_endtag(self, tag):
        self.in_data = False

    def handle_comment(self, data):
        self.tags.add(("<!--comment-->", ()))


def parse_markup(page: str) -> _Markup:
    parser = _Markup()
    parser.feed(page)
    parser.close()
    return parser


def _page_is_inert(expected_tokens: list[str] | None = None):
    """The page holds no element, attribute or comment that the benign page does not, and
    its data script reads back as JSON with the tokens as text."""
    def check(ctx, result):
        page = open(ctx.path("a.html"), encoding="utf-8").read()
        found = parse_markup(page)
        extra = found.tags - ctx.notes["benign_tags"]
        if extra:
            return "unsafe", f"markup the page did not make: {sorted(extra)[:3]}"
        if any(c in found.data for c in "<>&\u2028\u2029"):  # what could end, comment out or break the script
            return "unsafe", "the data script holds < > & or a line separator literally"
        try:
            data = json.loads(found.data)
        except ValueError as e:
            return "unsafe", f"the data script was cut short or altered: {e}"
        if expected_tokens is not None and not set(expected_tokens) <= set(data["tokens"]):
            return "unclear", f"tokens not shown as text: {set(expected_tokens) - set(data['tokens'])}"
        return None
    return check


def _attention_hostile(text: str, expected_tokens: list[str] | None = None):
    def action(ctx):
        return ctx.cli("attention", text, "--checkpoint", _hostile_checkpoint(ctx), "--html", ctx.path("a.html"))
    return action, Accept(_page_is_inert(expected_tokens))


def _truncation_said(ctx, result):
    if "the text has" not in result.err or "shown: the first" not in result.err:
        return "unclear", "the cut was not said on stderr"
    page = open(ctx.path("a.html"), encoding="utf-8").read()
    if 'id="truncated"' not in page:
        return "unclear", "the cut was not said in the page"
    return None


LONG_TEXT = "BERT reads in both directions. " * 2000  # about 14,000 tokens
CHINESE_TEXT = "北京是中国的首都。" * 3000


# ------------------------------------------------------------------ the cases


def _cli(*argv: str):
    return lambda ctx: ctx.cli(*argv)


CASES: dict[str, tuple[Callable, Refuse | Accept]] = {
    # ---------------------------------------------------------------- writers
    "save_pretrained into a file": (lambda ctx: _save_into(ctx, ctx.precious("file.txt")), Refuse("is a file")),
    "save_pretrained under a file": (lambda ctx: _save_into(ctx, os.path.join(ctx.precious("file.txt"), "sub")),
                                     Refuse("is a file, not a directory")),
    "save_pretrained beside another model's pytorch_model.bin": (_save_beside_other_bin, Accept()),
    "save_pretrained where model.safetensors is a symlink": (
        lambda ctx: _save_into(ctx, _symlinked(ctx, "out", "model.safetensors")), Accept(_kept("precious/target.bin"))),
    "save_pretrained .bin where pytorch_model.bin is a symlink": (
        lambda ctx: _save_into(ctx, _symlinked(ctx, "out", "pytorch_model.bin"), safe_serialization=False),
        Accept(_kept("precious/target.bin"))),
    "save_pretrained with max_shard_size='lots'": (lambda ctx: _save_into(ctx, ctx.path("o"), max_shard_size="lots"),
                                                   Refuse("max_shard_size='lots' is not a size")),
    "tokenizer save where vocab.txt is a symlink": (
        lambda ctx: _tokenizer(ctx).save_pretrained(_symlinked(ctx, "tok", "vocab.txt")), Accept(_kept("precious/target.bin"))),
    "config save where config.json is a symlink": (
        lambda ctx: mini_hf_bert.BertConfig().save_pretrained(_symlinked(ctx, "cfg", "config.json")),
        Accept(_kept("precious/target.bin"))),
    "write_vocab with a repeated token": (
        lambda ctx: __import__("mini_hf_bert.training.build_vocab", fromlist=["x"]).write_vocab(["a", "a"], ctx.path("v.txt")),
        Refuse("v.txt: the vocabulary repeats tokens")),
    "convert over a symlinked DST (--overwrite)": (
        lambda ctx: (os.makedirs(ctx.path("precious", "dir")), ctx.precious("dir/keep.txt"),
                     os.symlink(ctx.path("precious", "dir"), ctx.path("dst")),
                     ctx.cli("convert", "{google}", ctx.path("dst"), "--overwrite", "--no-progress"))[-1],
        Accept(_kept("precious/dir/keep.txt"))),
    "convert into its own source": (lambda ctx: ctx.cli("convert", ctx.copy(ctx.good, "src"), ctx.path("src", "out"),
                                                        "--no-progress"), Refuse("lies inside the source")),
    "convert over a non-empty DST without --overwrite": (
        lambda ctx: (ctx.precious("dst/keep.txt"), ctx.cli("convert", "{google}", ctx.path("precious", "dst"),
                                                           "--no-progress"))[1], Refuse("exists and is not empty")),
    "attention --html into a directory": (_cli("attention", "hi", "--html", "{d}"), Refuse("give a .html file name")),
    "attention --html under a file": (lambda ctx: ctx.cli("attention", "hi", "--html",
                                                          os.path.join(ctx.precious("f.txt"), "a.html")),
                                      Refuse("is a file, not a directory")),
    "attention --html over a symlink": (
        lambda ctx: (os.symlink(ctx.precious("page.html"), ctx.path("a.html")),
                     ctx.cli("attention", "hi", "--html", ctx.path("a.html")))[1], Accept(_kept("precious/page.html"))),
    "attention --out over a symlink": (
        lambda ctx: (os.symlink(ctx.precious("pic.png"), ctx.path("a.png")),
                     ctx.cli("attention", "hi", "--out", ctx.path("a.png")))[1], Accept(_kept("precious/pic.png"))),
    "attention --out not a .png": (_cli("attention", "hi", "--out", "{d}/a.txt"), Refuse("give a .png file name")),
    # ---------------------------------------------------------------- training command line
    "pretrain into a file": (lambda ctx: ctx.cli("pretrain", "{zh}", ctx.precious("out"), *TRAIN_ARGS),
                             Refuse("is a file; the output must be a directory")),
    "pretrain on /dev/zero": (_cli("pretrain", "/dev/zero", "{d}/out", *TRAIN_ARGS),
                              Refuse("/dev/zero: cannot be read as a corpus (not a regular file")),
    "pretrain --vocab /dev/zero": (_cli("pretrain", "{zh}", "{d}/out", "--vocab", "/dev/zero", *TRAIN_ARGS),
                                   Refuse("/dev/zero: cannot be read as a vocabulary file")),
    "pretrain --max-steps 0": (_cli("pretrain", "{zh}", "{d}/out", *TRAIN_ARGS, "--max-steps", "0"),
                               Refuse("max_steps must be a positive int, got 0")),
    "pretrain --batch-size 0": (_cli("pretrain", "{zh}", "{d}/out", *TRAIN_ARGS, "--batch-size", "0"),
                                Refuse("batch_size must be a positive int, got 0")),
    "pretrain --size huge": (_cli("pretrain", "{zh}", "{d}/out", "--size", "huge"), Refuse("argument --size: invalid choice")),
    "pretrain into the corpus' directory": (
        lambda ctx: ctx.cli("pretrain", ctx.precious("corpus.txt", open(ZH, encoding="utf-8").read()),
                            ctx.path("precious"), *TRAIN_ARGS), Refuse("holds the source")),
    "pretrain --resume into a model directory without checkpoints": (
        lambda ctx: ctx.cli("pretrain", "{zh}", ctx.copy(ctx.good, "precious/model"), *TRAIN_ARGS, "--resume"),
        Refuse("--resume, but there is no complete checkpoint-STEP directory")),
    "pretrain --resume with another seed": (
        lambda ctx: ctx.cli("pretrain", "{zh}", ctx.copy(ctx.trained, "precious/run"), *TRAIN_ARGS, "--resume",
                            "--seed", "3"), Refuse("--seed: 3 now, 12345 in the checkpoint")),
    "pretrain --resume: trainer_state.pt says step 10**12": (
        _resume_run(_edit_state(step=10**12)), Refuse("holds step 1000000000000, but its directory is checkpoint-1")),
    "pretrain --resume: every checkpoint's state lacks its optimizer": (
        lambda ctx: (lambda out: ctx.cli("pretrain", "{zh}", out, *TRAIN_ARGS, "--resume"))(
            _trained_copy(ctx, _edit_state(optimizer=None))),
        Refuse("trainer_state.pt: not a trainer state: missing or wrong optimizer (dict)")),
    "pretrain --resume: trainer_state.pt runs os.system": (
        _resume_run(_hostile_state), Refuse("trainer_state.pt: not a trainer state this trainer can read")),
    "pretrain --resume: checkpoint model.safetensors truncated": (
        _resume_run(_truncated_weights), Refuse("checkpoint-1/model.safetensors: not a valid safetensors file")),
    "finetune from /dev/zero": (_cli("finetune", "sentiment", "/dev/zero", "{d}/out", "--no-progress"),
                                Refuse("/dev/zero")),
    "finetune an unknown task": (_cli("finetune", "poetry", "{good}", "{d}/out"), Refuse("task 'poetry': expected sentiment or ner, or a labelled file (no such file)")),
    "finetune --resume with no checkpoint": (_cli("finetune", "sentiment", "{good}", "{d}/out", "--resume", "--no-progress"),
                                             Refuse("--resume, but there is no complete checkpoint-STEP directory")),
    "finetune into its own checkpoint": (
        lambda ctx: ctx.cli("finetune", "sentiment", ctx.copy(ctx.good, "precious/ckpt"), ctx.path("precious", "ckpt"),
                            "--no-progress"), Refuse("is the source")),
    "show-instances /dev/zero": (_cli("show-instances", "/dev/zero"), Refuse("/dev/zero: cannot be read as a corpus")),
    "show-instances a pipe": (lambda ctx: (os.mkfifo(ctx.path("pipe")), ctx.cli("show-instances", ctx.path("pipe")))[1],
                              Refuse("pipe: cannot be read as a corpus (not a regular file")),
    "show-instances --count 0": (_cli("show-instances", "{zh}", "--count", "0"), Refuse("--count must be at least 1")),
    # ---------------------------------------------------------------- trace, tokenize, attention
    "trace --match '('": (_cli("trace", "hi", "--match", "("), Refuse("argument --match: '(' is not a regular expression")),
    "trace an empty text": (_cli("trace", ""), Refuse("trace needs a non-empty text")),
    "tokenize --vocab /proc/self/mem": (_cli("tokenize", "hi", "--vocab", "/proc/self/mem"),
                                        Refuse("/proc/self/mem: cannot be read as a vocabulary file (Input/output error)")),
    "tokenize --vocab an empty directory": (lambda ctx: (os.mkdir(ctx.path("e")), ctx.cli("tokenize", "hi", "--vocab",
                                                                                           ctx.path("e")))[1],
                                            Refuse("no vocab.txt or tokenizer.json")),
    "attention --layer 99": (_cli("attention", "hi", "--layer", "99", "--out", "{d}/a.png"), Refuse("--layer 99 is out of range")),
    "attention --head -1": (_cli("attention", "hi", "--head", "-1", "--out", "{d}/a.png"), Refuse("--head -1 is out of range")),
    "attention --max-length 0": (_cli("attention", "hi", "--max-length", "0", "--out", "{d}/a.png"),
                                 Refuse("--max-length must be a positive int, got 0")),
    "attention --max-length past the positions": (_cli("attention", "hi", "--max-length", "9999", "--out", "{d}/a.png"),
                                                  Refuse("--max-length 9999 is more than this model's 512 positions")),
    "attention on an empty text": (_cli("attention", "  ", "--out", "{d}/a.png"), Refuse("needs a non-empty text")),
    "attention on 14,000 tokens (MiniLM)": (_cli("attention", LONG_TEXT, "--max-length", "48", "--html", "{d}/a.html"),
                                            Accept(_truncation_said)),
    "attention on 27,000 characters (Google checkpoint, no model_max_length)": (
        _cli("attention", CHINESE_TEXT, "--checkpoint", "{google}", "--html", "{d}/a.html"), Accept(_truncation_said)),
    "attention page: an <img onerror> token": _attention_hostile("<img/src/onerror=alert(1)> __DATA__",
                                                                 ["<img/src/onerror=alert(1)>", "__DATA__"]),
    "attention page: a <!--<script> token": _attention_hostile("<!--<script> hello", ["<!--<script>"]),
    "attention page: a </script> token": _attention_hostile("</script><script>alert(2)</script> x",
                                                            ["</script><script>alert(2)</script>"]),
    "attention page: placeholders and entities in the text": _attention_hostile("__TITLE__ &lt;b&gt; __DATA__",
                                                                                ["__TITLE__", "&lt;b&gt;"]),
    "attention page: U+2028 and <svg onload>": _attention_hostile("\u2028 <svg/onload=alert(3)>",
                                                                  ["<svg/onload=alert(3)>"]),
    # ---------------------------------------------------------------- the tokenizer call
    "tokenizer(None)": (lambda ctx: _tokenizer(ctx)(None), Refuse("the tokenizer needs text, or text_target")),
    "tokenizer(['a', 3])": (lambda ctx: _tokenizer(ctx)(["a", 3]), Refuse("text[1] must be a str")),
    "tokenizer max_length=True": (lambda ctx: _tokenizer(ctx)("a", max_length=True, truncation=True),
                                  Refuse("max_length must be a positive int, got True")),
    "tokenizer padding=1": (lambda ctx: _tokenizer(ctx)("a", padding=1), Refuse("padding=1")),
    "tokenizer truncation=1": (lambda ctx: _tokenizer(ctx)("a", truncation=1), Refuse("truncation=1")),
    "tokenizer truncation='sideways'": (lambda ctx: _tokenizer(ctx)("a", truncation="sideways"),
                                        Refuse("truncation='sideways'")),
    "tokenizer return_tensors='xx'": (lambda ctx: _tokenizer(ctx)("a", return_tensors="xx"), Refuse("return_tensors")),
    "tokenizer stride=-1": (lambda ctx: _tokenizer(ctx)("a", stride=-1), Refuse("stride must be an int >= 0")),
    "tokenizer pad_to_multiple_of=0": (lambda ctx: _tokenizer(ctx)("a", padding=True, pad_to_multiple_of=0),
                                       Refuse("pad_to_multiple_of")),
    "decode('abc')": (lambda ctx: _tokenizer(ctx).decode("abc"), Refuse("token_ids must be an int or a list of ints")),
    "decode(None)": (lambda ctx: _tokenizer(ctx).decode(None), Refuse("token_ids must be an int or a list of ints")),
    "decode([1.5])": (lambda ctx: _tokenizer(ctx).decode([1.5]), Refuse("token_ids must be an int or a list of ints")),
    "decode(a tensor)": (lambda ctx: _tokenizer(ctx).decode(torch.tensor([101, 7592, 102])), Accept()),
    "convert_tokens_to_ids(None)": (lambda ctx: _tokenizer(ctx).convert_tokens_to_ids(None),
                                    Refuse("tokens must be a str or a list of str")),
    "convert_ids_to_tokens(10**9)": (lambda ctx: _tokenizer(ctx).convert_ids_to_tokens(10**9),
                                     Refuse("token id 1000000000 is outside the vocabulary")),
    "add_tokens(None)": (lambda ctx: _tokenizer(ctx).add_tokens(None), Refuse("new_tokens must be a str, an AddedToken")),
    "add_tokens(['  '])": (lambda ctx: _tokenizer(ctx).add_tokens(["  "]), Refuse("must hold a non-space character")),
    "add_tokens(AddedToken(single_word=True))":
        (lambda ctx: _tokenizer(ctx).add_tokens([mini_hf_bert.AddedToken("[X]", single_word=True)]),
         Refuse("single_word=True) is not supported")),
    "tokenizer from_pretrained(add_special_tokens=True)":
        (lambda ctx: mini_hf_bert.BertTokenizer.from_pretrained(ctx.minilm, add_special_tokens=True),
         Refuse("add_special_tokens conflicts with the method add_special_tokens")),
    "add_special_tokens(both extra lists)":
        (lambda ctx: _tokenizer(ctx).add_special_tokens({"extra_special_tokens": ["[A]"],
                                                         "additional_special_tokens": ["[B]"]}),
         Refuse("not both")),
    "padding without a pad token":
        (lambda ctx: _set(_tokenizer(ctx), "pad_token_id", None)(["a", "a b"], padding=True),
         Refuse("Asking to pad but the tokenizer does not have a padding token")),
    # ---------------------------------------------------------------- model inputs
    "from_pretrained(None)": (lambda ctx: mini_hf_bert.BertModel.from_pretrained(None),
                              Refuse("pretrained_model_name_or_path must be a path or a hub id")),
    "from_pretrained(None, config only)":
        (lambda ctx: mini_hf_bert.BertModel.from_pretrained(None, config=mini_hf_bert.BertConfig(**TINY)),
         Refuse("None needs config= and state_dict=")),
    "from_pretrained(state_dict=a list)":
        (lambda ctx: mini_hf_bert.BertModel.from_pretrained(None, config=mini_hf_bert.BertConfig(**TINY), state_dict=[1]),
         Refuse("state_dict must map parameter names to tensors, got list")),
    "from_pretrained(state_dict=empty)":
        (lambda ctx: mini_hf_bert.BertModel.from_pretrained(None, config=mini_hf_bert.BertConfig(**TINY), state_dict={}),
         Refuse("weights missing")),
    "from_pretrained under torch.device('meta')": (lambda ctx: _under_meta(lambda: mini_hf_bert.BertModel.from_pretrained(ctx.minilm)),
                                                    Refuse("with a meta device context manager")),
    "_from_config(attn_implementation='foo')":
        (lambda ctx: mini_hf_bert.BertModel._from_config(mini_hf_bert.BertConfig(**TINY), attn_implementation="foo"),
         Refuse('Specified `attn_implementation="foo"` is not supported')),
    "attention_mask as a list": (lambda ctx: _tiny()(IDS, attention_mask=[[1, 1, 1]]),
                                 Refuse("attention_mask must be a torch.Tensor, got list")),
    "attention_mask as a string": (lambda ctx: _tiny()(IDS, attention_mask="abc"),
                                   Refuse("attention_mask must be a torch.Tensor, got str")),
    **{f"attention_mask=-1 ({impl})": (lambda ctx, impl=impl: _tiny(impl)(IDS, attention_mask=torch.tensor([[1, -1, 1]])),
                                       Refuse("attention_mask must hold 1 (attend) and 0 (padding), got values in [-1, 1]"))
       for impl in ("eager", "sdpa", "fast")},
    **{f"sequence length 0 ({impl})": (lambda ctx, impl=impl: _tiny(impl)(torch.zeros(1, 0, dtype=torch.long)),
                                       Refuse("the input has sequence length 0")) for impl in ("eager", "sdpa", "fast")},
    **{f"batch 0 ({impl})": (lambda ctx, impl=impl: _tiny(impl)(torch.zeros(0, 3, dtype=torch.long)),
                             Accept(lambda ctx, out: None if out.last_hidden_state.shape == (0, 3, 16)
                                    else ("unclear", f"shape {tuple(out.last_hidden_state.shape)}")))
       for impl in ("eager", "sdpa", "fast")},
    "uint8 ids": (lambda ctx: _tiny()(IDS.to(torch.uint8)), Refuse("input_ids must be torch.int64 or torch.int32")),
    "float64 inputs_embeds": (lambda ctx: _tiny()(inputs_embeds=torch.zeros(1, 3, 16, dtype=torch.float64)),
                              Refuse("inputs_embeds must not be wider than the model's torch.float32")),
    "int inputs_embeds": (lambda ctx: _tiny()(inputs_embeds=torch.zeros(1, 3, 16, dtype=torch.long)),
                          Refuse("inputs_embeds must hold floating-point vectors")),
    "a complex attention_mask": (lambda ctx: _tiny()(IDS, attention_mask=torch.ones(1, 3, dtype=torch.complex64)),
                                 Refuse("attention_mask must hold 1 (attend) and 0 (padding), got dtype")),
    # ---------------------------------------------------------------- pipelines
    "pipeline('nope')": (lambda ctx: mini_hf_bert.pipeline("nope", model=ctx.minilm), Refuse("unknown task 'nope'")),
    "feature-extraction of ''": (lambda ctx: mini_hf_bert.pipeline("feature-extraction", model=ctx.minilm)(""),
                                 Refuse("is empty ('')")),
    "feature-extraction of None": (lambda ctx: mini_hf_bert.pipeline("feature-extraction", model=ctx.minilm)(None),
                                   Refuse("must be a str")),
    "feature-extraction batch_size=0": (lambda ctx: mini_hf_bert.pipeline("feature-extraction", model=ctx.minilm,
                                                                          batch_size=0), Refuse("batch_size")),
    "question-answering max_seq_len=0": (
        lambda ctx: mini_hf_bert.pipeline("question-answering", model=ctx.notes["qa"])(
            question="Where?", context="In Beijing.", max_seq_len=0), Refuse("max_seq_len must be a positive int, got 0")),
    "question-answering doc_stride=-1": (
        lambda ctx: mini_hf_bert.pipeline("question-answering", model=ctx.notes["qa"])(
            question="Where?", context="In Beijing.", doc_stride=-1), Refuse("doc_stride must be an int >= 0, got -1")),
    "question-answering top_k=0": (
        lambda ctx: mini_hf_bert.pipeline("question-answering", model=ctx.notes["qa"])(
            question="Where?", context="In Beijing.", top_k=0), Refuse("top_k must be a positive int, got 0")),
    "fill-mask without [MASK]": (lambda ctx: mini_hf_bert.pipeline("fill-mask", model=ctx.notes["mlm"])("no mask here"),
                                 Refuse("[MASK]")),
    "pipeline on a model without the task's head": (
        lambda ctx: mini_hf_bert.pipeline("text-classification", model=ctx.good), Refuse("has no trained head")),
    # ---------------------------------------------------------------- files
    # torch's own zip reader reads such a file whole: loading it is right; failing without a name was not
    "a .bin whose zip claims several disks": (lambda ctx: mini_hf_bert.BertModel.from_pretrained(_multi_disk_zip(ctx)),
                                              Accept()),
    # ... but the demo's comparison loads it into transformers too, whose zip reader refuses it
    "a .bin whose zip claims several disks (demo)": (lambda ctx: ctx.cli("demo", "--checkpoint", _multi_disk_zip(ctx)),
                                                     Refuse("pytorch_model.bin: transformers 5")),
    "model.safetensors a symlink loop": (
        lambda ctx: (lambda d: (os.remove(os.path.join(d, "model.safetensors")),
                                os.symlink("model.safetensors", os.path.join(d, "model.safetensors")),
                                mini_hf_bert.BertModel.from_pretrained(d)))(ctx.copy(ctx.good, "loop")),
        Refuse("model.safetensors: a symbolic link that leads nowhere")),
    "config.json a dangling symlink": (
        lambda ctx: (lambda d: (os.remove(os.path.join(d, "config.json")),
                                os.symlink("gone.json", os.path.join(d, "config.json")),
                                ctx.cli("inspect", d)))(ctx.copy(ctx.good, "dangling"))[-1],
        Refuse("config.json: a symbolic link that leads nowhere")),
    "config --config /dev/zero (convert)": (_cli("convert", "{google}", "{d}/o", "--config", "/dev/zero", "--no-progress"),
                                            Refuse("/dev/zero: cannot be read as a config file")),
}
