"""Pre-train the Chinese BERT on a lent GPU in one short window, and bring back a usable
model even if the window is cut: three steps, the middle one on the GPU machine.

    .venv/bin/python tools/pretrain_gpu.py pack          # here, on the CPU: corpus -> runs/gpu-pack/
    # on the GPU machine (carry runs/gpu-pack; its tree has no .git, so name the commit):
    MINI_HF_BERT_COMMIT=<sha> python3 tools/pretrain_gpu.py train --out "$OUT" --minutes 9
    .venv/bin/python tools/pretrain_gpu.py finish DEVICE_FILES runs/zh-gpu   # here: a model directory

``pack`` tokenizes the corpus once (tools/chinese_corpus.py's, with its vocabulary) into one
file of flat arrays (mini_hf_bert/training/packed_pretraining.py), the held-out text beside
it (the fixed test split, which the corpus never holds). What the GPU run needs is that file,
vocab.txt and the repository: together within the 64 MiB a device run carries.

``train`` measures, on the device, how many positions a second each candidate size computes,
then trains the largest that the window feeds with enough tokens (``choose_size``) and the
shipping bound allows; bf16 autocast, fused AdamW, SDPA attention, batches made and masked
on the GPU, ``torch.compile`` where it measures faster. Every ``--save-every`` seconds it
evaluates on the held-out text and writes the weights (fp16, in shards a device run brings
back) and ``run.json`` (its figures so far: tokens/s, MFU, wall time, the evaluations) to
``--out``; it stops itself before ``--minutes`` are up, so a run cut later still leaves its
last checkpoint whole.

``finish`` checks the checkpoint that came back and makes it a model directory: the weights
(fp16 storage; it computes in fp32), config, vocabulary and run.json.

Nothing here runs in CI on a GPU: tests/training/test_pretrain_gpu.py runs all three steps
on the CPU at a tiny size.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import torch  # noqa: E402

from mini_hf_bert import BertConfig, BertForPreTraining, BertTokenizerFast  # noqa: E402
from mini_hf_bert.file_utils import write_json  # noqa: E402
from mini_hf_bert.training.packed_pretraining import (  # noqa: E402
    PackedCorpus,
    load_pack,
    pack_documents,
    pretraining_batch,
    save_pack,
)
from mini_hf_bert.training.pretraining_data import IGNORE_INDEX, read_documents  # noqa: E402
from tools import provenance  # noqa: E402

CORPUS = "runs/chinese-corpus/corpus.txt"
VOCAB = "runs/chinese-corpus/vocab.txt"
PACK_DIR = "runs/gpu-pack"
PACK_FILE = "pack.safetensors.gz"
#: What a device run carries (its tree and carried paths) and brings back from $OUT.
DEVICE_CARRY_BYTES = 64 * 2 ** 20
DEVICE_FILE_BYTES = 16 * 2 ** 20
DEVICE_FILES = 8
#: The weights come back in shards under the per-file limit, with room for the format's header.
SHARD_BYTES = 15 * 2 ** 20
#: The shipped model's bound in the repository: at most 60 MB, weights stored as fp16.
MAX_MODEL_BYTES = 60 * 10 ** 6
STORAGE_DTYPE = torch.float16
#: The sizes train chooses among, "LxH": L layers of hidden size H, heads of 64 dimensions,
#: a feed-forward 4H wide (BERT's proportions; Turc et al. 2019's small BERTs).
#: 8x512 (59 MB in fp16) is within the shipping bound, but shipped it would leave the
#: repository too large to travel with a pack in one device run.
CANDIDATE_SIZES = ("4x256", "6x384", "8x384", "6x512")
HEAD_DIM = 64
#: A size is chosen only if the window gives it this many tokens per parameter at least:
#: the compute-optimal ratio of Hoffmann et al. (2022) for language models, as a floor.
TOKENS_PER_PARAMETER = 20
#: Rate measurement: steps run first (allocation, kernel choice), then the steps timed; no
#: further size (nor compiling, with --compile auto) is measured once this share of the
#: window has passed.
WARMUP_STEPS, TIMED_STEPS = 3, 10
MEASURING_SHARE = 0.25
#: The optimiser: AdamW as RoBERTa set it for large batches (beta2 0.98), BERT's decay
#: (none on biases and LayerNorm), warm-up over this share of the planned steps, then
#: linear decay to 0 at the planned end; gradients clipped to norm 1.
BETAS, EPS, WEIGHT_DECAY, WARMUP_SHARE, MAX_GRAD_NORM = (0.9, 0.98), 1e-6, 0.01, 0.06, 1.0
#: Bounds on train's arguments: BERT's 512 positions, a batch far beyond one GPU's memory
#: at that length, a day.
MAX_SEQ_LENGTH, MAX_BATCH_SIZE, MAX_MINUTES = 512, 65536, 24 * 60
#: --stack-layers at most: BERT-large's depth.
MAX_STACKED_LAYERS = 24
#: --steps at most: a million steps is months of CPU for the smallest size.
MAX_PLANNED_STEPS = 1_000_000
#: Time kept back at the end of the window for the last evaluation and save: this share of
#: the window, at most this many seconds.
END_RESERVE_SHARE, END_RESERVE_SECONDS = 0.1, 45
#: --seed's default. Stages 1 to 6 of the Chinese BERT all ran with it, so each drew the same
#: batches and masks as the one before; continuing with a checkpoint's own seed is refused.
DEFAULT_SEED = 12345
#: Held-out evaluation: this many batches, always the same (a fixed seed).
EVAL_BATCHES = 8
EVAL_SEED = 4321
#: Steps between the training losses run.json keeps (reading a loss waits for the GPU).
LOSS_EVERY = 50
#: Dense bf16 peak of the GPUs this may run on, from NVIDIA's data sheets (FLOP/s; the
#: H100 and H200 SXM share the chip's 989 TFLOP/s), for MFU.
PEAK_BF16_FLOPS = {"H200": 989.4e12, "H100": 989.4e12, "A100": 312e12}


# ----------------------------------------------------------------------------- sizes


def size_config(name: str, vocab_size: int, seq_length: int) -> BertConfig:
    """The BertConfig of a size "LxH" (``CANDIDATE_SIZES``)."""
    match = re.fullmatch(r"(\d+)x(\d+)", name)
    if not match:
        raise ValueError(f"--sizes: {name!r} is not LAYERSxHIDDEN, e.g. 6x384")
    layers, hidden = int(match.group(1)), int(match.group(2))
    heads = max(1, hidden // HEAD_DIM)
    if hidden % heads:
        raise ValueError(f"--sizes: {name!r}: hidden size {hidden} does not split into {heads} heads")
    return BertConfig(vocab_size=vocab_size, hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=heads,
                      intermediate_size=4 * hidden, max_position_embeddings=seq_length, attn_implementation="sdpa")


def parameter_count(config: BertConfig) -> int:
    """BertForPreTraining's parameters (the decoder's weight is the word embeddings')."""
    with torch.device("meta"):
        return sum(p.numel() for p in BertForPreTraining(config).parameters())


def flops_per_position(config: BertConfig, seq_length: int) -> float:
    """Training FLOPs per input position (forward and backward, 3x the forward): 6 per
    weight of every matrix product at every position (the embeddings are looked up, not
    multiplied, but the MLM decoder multiplies by them), the pooler and NSP head once a
    sequence, and attention's two products, QKᵀ and PV, 2·T·H each per position and layer.
    What torch's FlopCounterMode counts (a test compares the two)."""
    h, i, v, layers, t = (config.hidden_size, config.intermediate_size, config.vocab_size, config.num_hidden_layers,
                          seq_length)
    per_layer = 4 * h * h + 2 * h * i  # Q, K, V, O; the feed-forward's two
    mlm = h * h + h * v  # transform, decoder
    per_sequence = h * h + 2 * h  # pooler, NSP, at [CLS] only
    attention = layers * 2 * 2 * t * h
    return 6 * (layers * per_layer + mlm + per_sequence / t) + 3 * attention


def stack_layers(model: BertForPreTraining, layers: int) -> BertForPreTraining:
    """A deeper model whose layer ``j`` starts as ``model``'s layer ``j mod L``: the trained
    stack repeated on top of itself (Gong et al. 2019, "Efficient Training of BERT by
    Progressively Stacking"), so depth is bought without starting from random weights.
    Everything outside the layers (embeddings, pooler, heads) is copied as it is."""
    trained = model.config.num_hidden_layers
    if layers <= trained or layers % trained:
        raise ValueError(f"--stack-layers {layers}: expected a multiple of the checkpoint's {trained} layers, "
                         f"larger than it")
    config = BertConfig.from_dict(model.config.to_dict(), num_hidden_layers=layers)
    deeper = BertForPreTraining(config)
    prefix = "bert.encoder.layer."
    state = {}
    for name in deeper.state_dict():
        if name.startswith(prefix):
            index, rest = name[len(prefix):].split(".", 1)
            name_from = f"{prefix}{int(index) % trained}.{rest}"
        else:
            name_from = name
        state[name] = model.state_dict()[name_from]
    deeper.load_state_dict(state, strict=True)
    return deeper


def choose_size(rates: dict[str, float], parameters: dict[str, int], seconds: float,
                max_parameters: int) -> str:
    """The largest size whose measured rate (positions a second) gives it at least
    ``TOKENS_PER_PARAMETER`` tokens per parameter in ``seconds``, among those within
    ``max_parameters``; the smallest within the bound when none does."""
    allowed = sorted((n for n in rates if parameters[n] <= max_parameters), key=lambda n: parameters[n])
    if not allowed:
        raise ValueError(f"no candidate size is within the shipping bound ({max_parameters:,} parameters)")
    fed = [n for n in allowed if rates[n] * seconds >= TOKENS_PER_PARAMETER * parameters[n]]
    return fed[-1] if fed else allowed[0]


# ----------------------------------------------------------------------------- pack


def pack(corpus: str, vocab: str, out: str, heldout_documents: int | None, progress: bool) -> dict:
    """Tokenize ``corpus`` into ``out``/pack.safetensors, with vocab.txt and
    tokenizer_config.json; held out: the fixed Chinese test split, or the corpus's last
    ``heldout_documents`` documents. Returns what it wrote, with the sizes."""
    tokenizer = BertTokenizerFast(vocab)
    documents = read_documents(corpus)
    if heldout_documents is not None:
        if not 2 <= heldout_documents < len(documents) - 1:
            raise ValueError(f"--heldout-documents {heldout_documents}: {corpus} has {len(documents)} documents; "
                             f"hold out at least 2 and leave 2")
        documents, heldout = documents[:-heldout_documents], documents[-heldout_documents:]
        heldout_source = f"the last {heldout_documents} documents of {corpus}"
    else:
        from mini_hf_bert.training import corpora

        heldout = corpora.chinese_documents("test")
        heldout_source = "the fixed test split (People's Daily's test articles, the reviews' test half)"
    parts = {"train": pack_documents(documents, tokenizer, progress, corpus),
             "heldout": pack_documents(heldout, tokenizer, progress, "the held-out text")}
    os.makedirs(out, exist_ok=True)
    path = save_pack(os.path.join(out, PACK_FILE), parts, len(tokenizer),
                     {"corpus": corpus, "heldout": heldout_source})
    tokenizer.save_pretrained(out)
    summary = {"pack": path, "bytes": os.path.getsize(path),
               **{f"{name}_tokens": len(part.tokens) for name, part in parts.items()},
               **{f"{name}_documents": part.num_documents for name, part in parts.items()}}
    write_json(os.path.join(out, "pack.json"), summary)
    return summary


def tracked_sizes(root: str = ROOT) -> dict[str, int]:
    """The bytes of each of the repository's tracked files present in the working tree: what
    a device run carries besides the pack (it copies the working tree, so a tracked folder
    removed there, such as a committed training stage, stays behind)."""
    names = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True).stdout.split(b"\0")
    return {n.decode(): os.path.getsize(os.path.join(root, n.decode())) for n in names
            if n and os.path.isfile(os.path.join(root, n.decode()))}


def largest_folders(sizes: dict[str, int], count: int = 3) -> list[tuple[str, int]]:
    """The ``count`` folders (two levels deep at most) whose tracked files weigh most."""
    folders: dict[str, int] = {}
    for name, size in sizes.items():
        folder = "/".join(name.split("/")[:-1][:2]) or "."
        folders[folder] = folders.get(folder, 0) + size
    return sorted(folders.items(), key=lambda item: -item[1])[:count]


# ----------------------------------------------------------------------------- train


def _optimizer(model: torch.nn.Module, learning_rate: float, fused: bool) -> torch.optim.Optimizer:
    decay = [p for n, p in model.named_parameters() if p.ndim >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.ndim < 2]  # biases, LayerNorm
    return torch.optim.AdamW([{"params": decay, "weight_decay": WEIGHT_DECAY},
                              {"params": no_decay, "weight_decay": 0.0}],
                             lr=learning_rate, betas=BETAS, eps=EPS, fused=fused)


class Run:
    """One model in training on the device: its step, and the batches it reads."""

    def __init__(self, config: BertConfig, corpus: PackedCorpus, tokenizer: BertTokenizerFast, args: argparse.Namespace,
                 device: torch.device, init_checkpoint: str | None = None) -> None:
        torch.manual_seed(args.seed)
        if init_checkpoint:
            self.model = BertForPreTraining.from_pretrained(init_checkpoint, attn_implementation="sdpa")
            if args.stack_layers:
                self.model = stack_layers(self.model, args.stack_layers)
        else:
            self.model = BertForPreTraining(config)
        self.model.to(device).train()
        self.config = self.model.config
        self.forward = self.model
        self.optimizer = _optimizer(self.model, args.learning_rate, fused=device.type == "cuda")
        self.corpus, self.tokenizer, self.args, self.device = corpus, tokenizer, args, device
        self.generator = torch.Generator(device=device).manual_seed(args.seed)
        self.autocast = torch.autocast(device.type, dtype=torch.bfloat16, enabled=args.bf16)
        self.step = 0
        self.real_tokens = torch.zeros((), dtype=torch.long, device=device)  # summed on the device: no waiting

    def train_step(self) -> torch.Tensor:
        batch = pretraining_batch(self.corpus, self.args.batch_size, self.args.seq_length, self.tokenizer,
                                  self.generator)
        with self.autocast:
            loss = self.forward(**batch).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), MAX_GRAD_NORM)
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.real_tokens += batch["attention_mask"].sum()
        self.step += 1
        return loss.detach()

    def positions_per_second(self, steps: int) -> float:
        """Run ``steps`` steps at learning rate 0 (the weights stay as they are; the
        measurement must not train a model before its warm-up) and time them, after the
        device finished what was queued."""
        rates = [group["lr"] for group in self.optimizer.param_groups]
        for group in self.optimizer.param_groups:
            group["lr"] = 0.0
        _synchronize(self.device)
        start = time.perf_counter()
        for _ in range(steps):
            self.train_step()
        _synchronize(self.device)
        seconds = time.perf_counter() - start
        for group, rate in zip(self.optimizer.param_groups, rates):
            group["lr"] = rate
        self.step = 0
        return steps * self.args.batch_size * self.args.seq_length / seconds


def _synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def evaluate(model: BertForPreTraining, heldout: PackedCorpus, tokenizer: BertTokenizerFast, args: argparse.Namespace,
             device: torch.device) -> dict[str, float]:
    """MLM accuracy (at [MASK] and at every predicted position) and NSP accuracy on the
    same ``EVAL_BATCHES`` held-out batches every time."""
    generator = torch.Generator(device=device).manual_seed(EVAL_SEED)
    model.eval()
    hits = {"mask": 0, "mlm": 0, "nsp": 0}
    counts = {"mask": 0, "mlm": 0, "nsp": 0}
    with torch.no_grad(), torch.autocast(device.type, dtype=torch.bfloat16, enabled=args.bf16):
        for _ in range(EVAL_BATCHES):
            batch = pretraining_batch(heldout, args.batch_size, args.seq_length, tokenizer, generator)
            out = model(input_ids=batch["input_ids"], token_type_ids=batch["token_type_ids"],
                        attention_mask=batch["attention_mask"])
            predicted = batch["labels"] != IGNORE_INDEX
            right = (out.prediction_logits.argmax(-1) == batch["labels"]) & predicted
            at_mask = predicted & (batch["input_ids"] == tokenizer.mask_token_id)
            hits["mlm"] += int(right.sum())
            counts["mlm"] += int(predicted.sum())
            hits["mask"] += int((right & at_mask).sum())
            counts["mask"] += int(at_mask.sum())
            hits["nsp"] += int((out.seq_relationship_logits.argmax(-1) == batch["next_sentence_label"]).sum())
            counts["nsp"] += len(batch["next_sentence_label"])
    model.train()
    return {"mlm_mask_accuracy": hits["mask"] / max(counts["mask"], 1),
            "mlm_accuracy": hits["mlm"] / max(counts["mlm"], 1), "nsp_accuracy": hits["nsp"] / counts["nsp"]}


def save_checkpoint(model: BertForPreTraining, out: str, record: dict) -> None:
    """The weights as fp16 shards in ``out``/model (save_pretrained: each file written whole,
    config.json last), then ``out``/run.json."""
    state = {k: v.detach().to(STORAGE_DTYPE).cpu() for k, v in model.state_dict().items()}
    model.save_pretrained(os.path.join(out, "model"), state_dict=state, max_shard_size=SHARD_BYTES)
    write_json(os.path.join(out, "run.json"), record)


def train(args: argparse.Namespace) -> dict:
    """The GPU run (the module docstring); returns the final run.json record."""
    started = time.monotonic()
    deadline = started + args.minutes * 60
    reserve = min(END_RESERVE_SECONDS, END_RESERVE_SHARE * args.minutes * 60)
    record: dict = {"provenance": provenance.collect([os.path.abspath(__file__), *args.argv]),
                    "complete": False}
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    if device.type == "cuda":
        torch.set_float32_matmul_precision("high")
        record["gpu"] = torch.cuda.get_device_name(device)
    parts, metadata = load_pack(os.path.join(args.pack, PACK_FILE), device)
    tokenizer = BertTokenizerFast(os.path.join(args.pack, "vocab.txt"))
    if len(tokenizer) != int(metadata["vocab_size"]):
        raise ValueError(f"{args.pack}: vocab.txt has {len(tokenizer)} tokens, the pack was made with "
                         f"{metadata['vocab_size']}")
    train_part, heldout = parts["train"], parts["heldout"]
    record.update(device=str(device), batch_size=args.batch_size, seq_length=args.seq_length,
                  learning_rate=args.learning_rate, bf16=args.bf16, pack={k: metadata[k] for k in ("corpus", "heldout")},
                  train_tokens=len(train_part.tokens))

    # Measure each candidate, then choose the size the window feeds.
    if args.init_checkpoint:
        chosen = None
    else:
        rates, parameters = {}, {}
        for name in args.sizes:
            config = size_config(name, len(tokenizer), args.seq_length)
            parameters[name] = parameter_count(config)
            if parameters[name] * torch.finfo(STORAGE_DTYPE).bits // 8 > args.max_model_bytes:
                continue
            if rates and time.monotonic() > started + MEASURING_SHARE * (deadline - started):
                break  # measuring must leave the window to training: the sizes measured so far compete
            trial = Run(config, train_part, tokenizer, args, device)
            trial.positions_per_second(WARMUP_STEPS)
            rates[name] = trial.positions_per_second(TIMED_STEPS)
            del trial
        left = deadline - time.monotonic() - reserve
        chosen = choose_size(rates, parameters, left, args.max_model_bytes // (torch.finfo(STORAGE_DTYPE).bits // 8))
        record["rates"] = {n: {"positions_per_second": rates[n], "parameters": parameters[n]} for n in rates}
        record["size"] = chosen
    config = size_config(chosen, len(tokenizer), args.seq_length) if chosen else None
    run = Run(config, train_part, tokenizer, args, device, args.init_checkpoint)
    record["config"] = {k: getattr(run.config, k) for k in ("hidden_size", "num_hidden_layers", "num_attention_heads",
                                                             "intermediate_size", "vocab_size",
                                                             "max_position_embeddings")}
    record["parameters"] = sum(p.numel() for p in run.model.parameters())
    run.positions_per_second(WARMUP_STEPS)
    rate = run.positions_per_second(TIMED_STEPS)
    record["compile"] = {"asked": args.compile, "eager_positions_per_second": rate, "used": False}
    if args.compile == "on" or (args.compile == "auto" and
                                time.monotonic() < started + MEASURING_SHARE * (deadline - started)):
        try:
            compiled = torch.compile(run.model)
            run.forward = compiled
            began = time.monotonic()
            run.positions_per_second(WARMUP_STEPS)  # compiles
            record["compile"]["seconds"] = time.monotonic() - began
            compiled_rate = run.positions_per_second(TIMED_STEPS)
            record["compile"]["compiled_positions_per_second"] = compiled_rate
            if compiled_rate > rate or args.compile == "on":
                rate, record["compile"]["used"] = compiled_rate, True
            else:
                run.forward = run.model
        except Exception as e:  # noqa: BLE001 - a compiler that fails here leaves the eager model, said in run.json
            run.forward = run.model
            record["compile"]["error"] = f"{type(e).__name__}: {e}"[:500]

    # The schedule is planned for the steps the measured rate fits into what is left.
    left = deadline - time.monotonic() - reserve
    planned = max(1, int(left * rate / (args.batch_size * args.seq_length)))
    if args.max_steps is not None:
        planned = min(planned, args.max_steps)
    if args.steps is not None:  # the caller's plan: a run beside other work is not as fast as its first steps
        planned = args.steps
    warmup = max(1, int(WARMUP_SHARE * planned))
    schedule = torch.optim.lr_scheduler.LambdaLR(
        run.optimizer, lambda s: min((s + 1) / warmup, max(0.0, (planned - s) / max(1, planned - warmup))))
    record.update(planned_steps=planned, warmup_steps=warmup, evaluations=[], losses=[])
    flops = flops_per_position(run.config, args.seq_length)
    peak = next((v for k, v in PEAK_BF16_FLOPS.items() if k in record.get("gpu", "")), None)
    training_started = time.monotonic()
    last_save = training_started
    step = 0
    stopped = "planned steps done"

    def checkpoint(final: bool) -> None:
        _synchronize(device)
        seconds = time.monotonic() - training_started
        positions = step * args.batch_size * args.seq_length
        evaluation = {"step": step, **evaluate(run.model, heldout, tokenizer, args, device)}
        record["evaluations"].append(evaluation)
        record.update(steps=step, positions=positions, real_tokens=int(run.real_tokens),
                      training_seconds=seconds, wall_seconds=time.monotonic() - started,
                      positions_per_second=positions / seconds if seconds else None,
                      real_tokens_per_second=int(run.real_tokens) / seconds if seconds else None,
                      flops_per_position=flops, peak_flops=peak,
                      mfu=(positions / seconds * flops / peak) if peak and seconds else None,
                      complete=final, stopped_because=stopped if final else None)
        save_checkpoint(run.model, args.out, record)
        print(f"step {step}: held-out [MASK] accuracy {evaluation['mlm_mask_accuracy']:.3f}, NSP "
              f"{evaluation['nsp_accuracy']:.3f}; {positions / max(seconds, 1e-9):,.0f} positions/s", flush=True)

    run.real_tokens.zero_()
    # SIGTERM or Ctrl-C ends the run after the step in progress, with a last checkpoint and
    # a complete run.json saying why: a session's end keeps all the run has done.
    asked_to_stop: list[str] = []
    handlers = {number: signal.signal(number, lambda received, _: asked_to_stop.append(signal.Signals(received).name))
                for number in (signal.SIGTERM, signal.SIGINT)}
    try:
        while step < planned:
            if asked_to_stop:
                stopped = f"{asked_to_stop[0]}, from outside"
                break
            if time.monotonic() > deadline - reserve:
                stopped = "the window's time"
                break
            loss = run.train_step()
            schedule.step()
            step += 1
            if step % LOSS_EVERY == 0:
                record["losses"].append([step, float(loss)])
            if time.monotonic() - last_save >= args.save_every:
                checkpoint(final=False)
                last_save = time.monotonic()
        checkpoint(final=True)
    finally:
        for number, handler in handlers.items():
            signal.signal(number, handler)
    return record


# ----------------------------------------------------------------------------- finish


def finish(files: str, out: str, pack_dir: str) -> dict:
    """The checkpoint a device run brought back (``files``: its model/ and run.json) as a
    model directory: weights, config, the pack's vocabulary, run.json. Refuses one whose
    run.json or weights are missing or unreadable."""
    model_dir, run_json = os.path.join(files, "model"), os.path.join(files, "run.json")
    inside = os.path.commonpath([os.path.realpath(files), os.path.realpath(out)]) == os.path.realpath(files)
    if inside:  # the model directory would replace the shards it is read from
        raise ValueError(f"{out}: is or lies inside {files}, what finish reads; give another directory")
    for path in (model_dir, run_json):
        if not os.path.exists(path):
            raise FileNotFoundError(f"{path}: missing; a device run's $OUT holds model/ and run.json")
    with open(run_json, encoding="utf-8") as f:
        record = json.load(f)
    model = BertForPreTraining.from_pretrained(model_dir)  # checks every shard against the index
    tokenizer = BertTokenizerFast(os.path.join(pack_dir, "vocab.txt"))
    if len(tokenizer) != model.config.vocab_size:
        raise ValueError(f"{pack_dir}/vocab.txt has {len(tokenizer)} tokens; the model {model.config.vocab_size}")
    state = {k: v.detach().to(STORAGE_DTYPE) for k, v in model.state_dict().items()}
    model.save_pretrained(out, state_dict=state)
    tokenizer.save_pretrained(out)
    write_json(os.path.join(out, "run.json"), record)
    return record


# ----------------------------------------------------------------------------- command line


def previous_seed(checkpoint: str) -> int | None:
    """The --seed of the run that trained ``checkpoint``, from its run.json (None without one)."""
    path = os.path.join(checkpoint, "run.json")
    if not os.path.isfile(path):
        return None
    try:
        with open(path, encoding="utf-8") as f:
            command = json.load(f)["provenance"]["command"].split()
        return int(command[command.index("--seed") + 1]) if "--seed" in command[:-1] else DEFAULT_SEED
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise ValueError(f"{path}: not the run.json train writes, so its --seed is unknown ({type(e).__name__}: {e})"
                         ) from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    steps = parser.add_subparsers(dest="step", required=True)
    p = steps.add_parser("pack", help="here: tokenize the corpus into runs/gpu-pack")
    p.add_argument("--corpus", default=CORPUS)
    p.add_argument("--vocab", default=VOCAB)
    p.add_argument("--out", default=PACK_DIR)
    p.add_argument("--heldout-documents", type=int, metavar="N",
                   help="hold out the corpus's last N documents (default: the fixed Chinese test split)")
    p.add_argument("--no-progress", action="store_true")
    t = steps.add_parser("train", help="on the GPU machine: train for --minutes, checkpoints to --out")
    t.add_argument("--pack", default=PACK_DIR)
    t.add_argument("--out", default=os.environ.get("OUT"), help="where checkpoints go (default: $OUT)")
    t.add_argument("--minutes", type=float, default=9.0, help="the whole run, start-up included (default 9)")
    t.add_argument("--save-every", type=float, default=90.0, metavar="SECONDS", help="(default 90)")
    t.add_argument("--sizes", nargs="+", default=list(CANDIDATE_SIZES), metavar="LxH")
    t.add_argument("--max-model-bytes", type=int, default=MAX_MODEL_BYTES)
    t.add_argument("--init-checkpoint", metavar="DIR", help="continue from these weights (its size)")
    t.add_argument("--stack-layers", type=int, metavar="N",
                   help="with --init-checkpoint: start N layers deep, its layers repeated (a multiple of its depth)")
    t.add_argument("--batch-size", type=int, default=256)
    t.add_argument("--seq-length", type=int, default=128)
    t.add_argument("--learning-rate", type=float, default=5e-4)
    t.add_argument("--max-steps", type=int, help="at most this many steps (default: what the window fits)")
    t.add_argument("--steps", type=int, help="plan the schedule for this many steps, whatever the measured rate "
                   "fits (a run under nice, beside other work); the window's end still stops it")
    t.add_argument("--seed", type=int, default=DEFAULT_SEED,
                   help="draws the batches and masks: each stage continued from another needs its own")
    t.add_argument("--compile", choices=("auto", "on", "off"), default="auto")
    t.add_argument("--bf16", action=argparse.BooleanOptionalAction, default=None,
                   help="bf16 autocast (default: on a GPU)")
    t.add_argument("--device", help="cuda or cpu (default: cuda where there is one)")
    f = steps.add_parser("finish", help="here: the checkpoint a device run brought back -> a model directory")
    f.add_argument("files", help="the device run's files (its $OUT): model/ and run.json")
    f.add_argument("out")
    f.add_argument("--pack", default=PACK_DIR)
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if args.step == "pack":
            summary = pack(args.corpus, args.vocab, args.out, args.heldout_documents, not args.no_progress)
            sizes = tracked_sizes()
            tree = sum(sizes.values())
            print(f"wrote {summary['pack']}: {summary['bytes']:,} bytes, {summary['train_tokens']:,} training tokens; "
                  f"with the repository's tracked files ({tree:,} bytes) a device run carries "
                  f"{tree + summary['bytes']:,} of its {DEVICE_CARRY_BYTES:,}")
            if tree + summary["bytes"] > DEVICE_CARRY_BYTES:
                heaviest = ", ".join(f"{folder}/ ({size:,} bytes)" for folder, size in largest_folders(sizes))
                print(f"error: too much for one device run; the heaviest tracked folders are {heaviest}. A device run "
                      "copies the working tree: remove from it what the run does not read (stages/, say; "
                      "'git checkout -- stages' brings it back) and pack again", file=sys.stderr)
                return 1
        elif args.step == "train":
            for name, value, low, high in (("--seq-length", args.seq_length, 5, MAX_SEQ_LENGTH),
                                           ("--batch-size", args.batch_size, 1, MAX_BATCH_SIZE),
                                           ("--minutes", args.minutes, 0.01, MAX_MINUTES),
                                           ("--save-every", args.save_every, 1, MAX_MINUTES * 60)):
                if not low <= value <= high:
                    raise ValueError(f"{name} {value}: expected {low} to {high}")
            if args.steps is not None and not 1 <= args.steps <= MAX_PLANNED_STEPS:
                raise ValueError(f"--steps {args.steps}: expected 1 to {MAX_PLANNED_STEPS}")
            if args.steps is not None and args.max_steps is not None:
                raise ValueError("--steps and --max-steps: give one (--steps is the plan, --max-steps caps the "
                                 "window's)")
            if args.stack_layers is not None and not 1 <= args.stack_layers <= MAX_STACKED_LAYERS:
                raise ValueError(f"--stack-layers {args.stack_layers}: expected 1 to {MAX_STACKED_LAYERS}")
            if args.stack_layers is not None and not args.init_checkpoint:
                raise ValueError("--stack-layers: needs --init-checkpoint (the layers to repeat)")
            if not args.out:
                raise ValueError("--out: give a directory (or run where $OUT is set)")
            if args.init_checkpoint and previous_seed(args.init_checkpoint) == args.seed:
                raise ValueError(f"--seed {args.seed}: {args.init_checkpoint} was trained with this seed, and the same "
                                 f"seed draws the same batches and masks again; give the next stage another --seed")
            if args.bf16 is None:
                args.bf16 = (args.device or ("cuda" if torch.cuda.is_available() else "cpu")).startswith("cuda")
            record = train(args)
            print(json.dumps({k: record.get(k) for k in ("size", "steps", "positions_per_second",
                                                          "real_tokens_per_second", "mfu", "wall_seconds",
                                                          "stopped_because")}))
        else:
            record = finish(args.files, args.out, args.pack)
            print(f"wrote {args.out}: {record.get('size') or 'continued'} after {record.get('steps')} steps")
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
