"""The GPU pre-training command (tools/pretrain_gpu.py), all three steps on the CPU at a
tiny size: the pairs it cuts on the device follow Google's rules, the masks BERT's, the
size it chooses the measured rate, its FLOP count torch's, and a run (whole, or killed
after a checkpoint) brings back a model both mini_hf_bert and transformers load."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest
import torch
import transformers
from torch.utils.flop_counter import FlopCounterMode

from mini_hf_bert import BertConfig, BertForPreTraining, BertTokenizer, chinese_checkpoint_dir
from mini_hf_bert.parity.compare import FP32_ATOL
from mini_hf_bert.training.packed_pretraining import (
    NUM_SPECIAL_TOKENS,
    load_pack,
    pack_documents,
    pretraining_batch,
    sample_pairs,
    save_pack,
)
from mini_hf_bert.training.pretraining_data import IGNORE_INDEX, read_documents
from tools import pretrain_gpu
from tools.provenance import problems

from ..paths import FIXTURES, ROOT

CORPUS = os.path.join(FIXTURES, "pretraining", "corpus_zh.txt")
VOCAB = os.path.join(chinese_checkpoint_dir(), "vocab.txt")
ENV = dict(os.environ, OMP_NUM_THREADS="1")


@pytest.fixture(scope="module")
def tokenizer():
    return BertTokenizer(VOCAB)


@pytest.fixture(scope="module")
def documents():
    return read_documents(CORPUS)


@pytest.fixture(scope="module")
def corpus(documents, tokenizer):
    return pack_documents(documents, tokenizer)


def _sentence_ids(documents, tokenizer):
    """Each sentence's ids and its document's number, from the documents themselves."""
    sentences = []
    for number, document in enumerate(documents):
        for sentence in document:
            ids = tokenizer.convert_tokens_to_ids(tokenizer.tokenize(sentence))
            if ids:
                sentences.append((number, ids))
    return sentences


def _locate(sentences, span):
    """Every (document, sentence index, offset) where ``span`` starts in the running text of
    a document (a span may cross sentences, never documents)."""
    found = []
    for i, (doc, ids) in enumerate(sentences):
        text = [t for d, s in sentences[i:] if d == doc for t in s]  # from sentence i to its document's end
        for offset in range(len(ids)):
            if text[offset:offset + len(span)] == span:
                found.append((doc, i, offset))
    return found


def test_pairs_follow_googles_rules(documents, tokenizer, corpus):
    sentences = _sentence_ids(documents, tokenizer)
    batch = sample_pairs(corpus, 64, 48, tokenizer, torch.Generator().manual_seed(3))
    assert batch.input_ids.shape == (64, 48)
    labels = batch.next_sentence_label.tolist()
    assert 0 < sum(labels) < 64
    for row in range(64):
        ids = batch.input_ids[row].tolist()
        length = int(batch.attention_mask[row].sum())
        seps = [j for j in range(length) if ids[j] == tokenizer.sep_token_id]
        assert ids[0] == tokenizer.cls_token_id and len(seps) == 2 and seps[1] == length - 1
        assert all(t == tokenizer.pad_token_id for t in ids[length:])
        assert batch.token_type_ids[row].tolist() == [0] * (seps[0] + 1) + [1] * (length - seps[0] - 1) + \
            [0] * (48 - length)
        a, b = ids[1:seps[0]], ids[seps[0] + 1:length - 1]
        assert a and b and length <= 48
        a_places, b_places = _locate(sentences, a), _locate(sentences, b)
        assert a_places and b_places, row  # both are the corpus's own running text
        if labels[row] == 0:  # B is what follows A in the same document
            assert any(_locate(sentences, a + b)), row
        else:  # B comes from another document
            assert {d for d, _, _ in b_places} - {d for d, _, _ in a_places}, row


def test_a_pair_aims_at_the_full_length_mostly(corpus, tokenizer):
    batch = sample_pairs(corpus, 2000, 64, tokenizer, torch.Generator().manual_seed(4))
    lengths = batch.attention_mask.sum(1)
    assert int(lengths.max()) == 64 and int(lengths.min()) >= NUM_SPECIAL_TOKENS + 2
    assert 0.6 < float((lengths >= 60).float().mean()) < 1.0  # short targets and document ends make the rest


def test_masks_choose_15_percent_of_the_text_then_80_10_10(corpus, tokenizer):
    batch = pretraining_batch(corpus, 1024, 64, tokenizer, torch.Generator().manual_seed(5))
    pairs = sample_pairs(corpus, 1024, 64, tokenizer, torch.Generator().manual_seed(5))
    assert torch.equal(batch["token_type_ids"], pairs.token_type_ids)  # the same pairs, then masked
    chosen = batch["labels"] != IGNORE_INDEX
    text = ~pairs.special_tokens_mask
    assert not (chosen & ~text).any()  # never [CLS], [SEP] or padding
    assert torch.equal(batch["labels"][chosen], pairs.input_ids[chosen])
    share = float(chosen.sum() / text.sum())
    assert abs(share - 0.15) < 0.01, share
    masked = batch["input_ids"][chosen] == tokenizer.mask_token_id
    kept = batch["input_ids"][chosen] == pairs.input_ids[chosen]
    assert abs(float(masked.float().mean()) - 0.8) < 0.02 and abs(float(kept.float().mean()) - 0.1) < 0.02


def test_a_pack_reads_back_as_it_was_written(corpus, tmp_path):
    path = save_pack(tmp_path / "p.safetensors.gz", {"train": corpus, "heldout": corpus}, 7529, {"note": "x"})
    parts, metadata = load_pack(path)
    assert metadata["note"] == "x" and set(parts) == {"train", "heldout"}
    for field in ("tokens", "sentence_starts", "document_starts", "document_ends"):
        assert torch.equal(getattr(parts["train"], field), getattr(corpus, field))
    import gzip

    from safetensors.torch import load

    assert load(gzip.decompress(open(path, "rb").read()))["train.tokens"].dtype == torch.int16  # two bytes a character
    big = save_pack(tmp_path / "big.safetensors.gz", {"train": corpus}, 40_000)  # a vocabulary int16 cannot hold
    assert load(gzip.decompress(open(big, "rb").read()))["train.tokens"].dtype == torch.int32
    assert torch.equal(load_pack(big)[0]["train"].tokens, corpus.tokens)


def test_the_size_chosen_is_the_largest_the_window_feeds():
    parameters = {"a": 1_000, "b": 10_000, "c": 100_000}
    rates = {"a": 1_000.0, "b": 500.0, "c": 100.0}  # positions a second
    # 1,000 s: a sees 1e6 (>= 20 x 1e3), b 5e5 (>= 2e5), c 1e5 (< 2e6): b
    assert pretrain_gpu.choose_size(rates, parameters, 1_000, 10 ** 9) == "b"
    assert pretrain_gpu.choose_size(rates, parameters, 100_000, 10 ** 9) == "c"
    assert pretrain_gpu.choose_size(rates, parameters, 100_000, 50_000) == "b"  # c is over the bound
    assert pretrain_gpu.choose_size(rates, parameters, 1, 10 ** 9) == "a"  # none fed: the smallest
    with pytest.raises(ValueError, match="within the shipping bound"):
        pretrain_gpu.choose_size(rates, parameters, 1, 10)


@pytest.mark.parametrize("name", ["2x64", "3x128"])
def test_the_flop_count_is_what_torch_counts(name):
    config = pretrain_gpu.size_config(name, 500, 32)
    config.attn_implementation = "eager"  # FlopCounterMode counts its matrix products one by one
    model = BertForPreTraining(config)
    ids = torch.randint(5, 500, (3, 32))
    with FlopCounterMode(display=False) as counter:
        model(input_ids=ids, labels=ids, next_sentence_label=torch.tensor([0, 1, 0])).loss.backward()
    assert pretrain_gpu.flops_per_position(config, 32) == pytest.approx(counter.get_total_flops() / ids.numel(),
                                                                        rel=1e-9)
    assert pretrain_gpu.parameter_count(config) == sum(p.numel() for p in model.parameters())


def test_sizes_are_layers_by_hidden():
    config = pretrain_gpu.size_config("6x384", 7529, 128)
    assert (config.num_hidden_layers, config.hidden_size, config.num_attention_heads, config.intermediate_size) == \
        (6, 384, 6, 1536)
    with pytest.raises(ValueError, match="'6-384' is not LAYERSxHIDDEN"):
        pretrain_gpu.size_config("6-384", 7529, 128)


@pytest.fixture(scope="module")
def pack_dir(tmp_path_factory):
    """The library's pack: the CLI step also weighs the repository against a device run's
    carry, which the runs here (on the CPU) do not need (that step: the test below)."""
    out = tmp_path_factory.mktemp("gpu") / "pack"
    pretrain_gpu.pack(CORPUS, VOCAB, str(out), heldout_documents=3, progress=False)
    return out


TRAIN = ["--minutes", "0.3", "--save-every", "4", "--sizes", "1x32", "2x64", "--batch-size", "8",
         "--seq-length", "48", "--compile", "off", "--device", "cpu"]


@pytest.mark.parametrize("signal_name", ["SIGTERM", "SIGINT"])
def test_a_run_stopped_from_outside_keeps_its_last_step(pack_dir, tmp_path, monkeypatch, signal_name):
    """SIGTERM (a session's end) or Ctrl-C ends a run after the step in progress, with a last
    checkpoint and a complete run.json that says why. The signal is sent by the run to
    itself at its first checkpoint, so it lands mid-run, at a known step."""
    import signal

    saves = []

    def save_and_signal_once(model, out, record):
        saves.append(record["steps"])
        if len(saves) == 1:
            os.kill(os.getpid(), getattr(signal, signal_name))
        return saved(model, out, record)

    saved = pretrain_gpu.save_checkpoint
    monkeypatch.setattr(pretrain_gpu, "save_checkpoint", save_and_signal_once)
    out = tmp_path / "out"
    window = ["--minutes", "5", "--save-every", "1", "--sizes", "1x32", "--batch-size", "8", "--seq-length", "48",
              "--compile", "off", "--device", "cpu"]
    threads, before = torch.get_num_threads(), signal.getsignal(getattr(signal, signal_name))
    torch.set_num_threads(1)
    try:
        assert pretrain_gpu.main(["train", "--pack", str(pack_dir), "--out", str(out), *window]) == 0
    finally:
        torch.set_num_threads(threads)
    record = json.loads((out / "run.json").read_text())
    # the last checkpoint is at the step of the first: no step ran after the signal
    assert len(saves) == 2 and saves[0] == saves[1] == record["steps"] < record["planned_steps"]
    assert record["complete"] and record["stopped_because"] == f"{signal_name}, from outside"
    assert signal.getsignal(getattr(signal, signal_name)) is before  # the handler was put back
    assert BertForPreTraining.from_pretrained(out / "model") is not None


def test_steps_plan_the_schedule_whatever_the_first_steps_measured(pack_dir, tmp_path, monkeypatch):
    """A run under nice beside other work measures its first steps at a fraction of the rate
    it later gets (a CPU stage measured 300 positions/s beside a test run and planned 36
    steps for 100 minutes). A rate measured that low plans one step; --steps plans its own."""
    monkeypatch.setattr(pretrain_gpu.Run, "positions_per_second", lambda self, steps: 1e-3)
    window = ["--minutes", "5", "--save-every", "300", "--init-checkpoint", str(tmp_path / "stage"), "--seed", "1",
              "--batch-size", "4", "--seq-length", "16", "--compile", "off", "--device", "cpu"]
    model = BertForPreTraining(BertConfig(vocab_size=7529, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                                          intermediate_size=37, max_position_embeddings=64))
    model.save_pretrained(tmp_path / "stage")
    records = {}
    for name, extra in (("measured", []), ("planned", ["--steps", "3"])):
        out = tmp_path / name
        assert pretrain_gpu.main(["train", "--pack", str(pack_dir), "--out", str(out), *window, *extra]) == 0
        records[name] = json.loads((out / "run.json").read_text())
    assert records["measured"]["planned_steps"] == records["measured"]["steps"] == 1
    assert records["planned"]["planned_steps"] == records["planned"]["steps"] == 3
    assert records["planned"]["stopped_because"] == "planned steps done"


def test_a_pack_too_large_to_travel_names_the_heaviest_folders(tmp_path, monkeypatch, capsys):
    sizes = {"stages/chinese_bert/phase1/model.safetensors": 500, "stages/chinese_bert/phase1/vocab.txt": 20,
             "mini_hf_bert/checkpoints/chinese_bert/model.safetensors": 400, "docs/a.md": 30, "docs/b.md": 40,
             "README.md": 5}
    assert pretrain_gpu.largest_folders(sizes) == [("stages/chinese_bert", 520), ("mini_hf_bert/checkpoints", 400),
                                                   ("docs", 70)]
    assert pretrain_gpu.largest_folders({"README.md": 5}) == [(".", 5)]
    monkeypatch.setattr(pretrain_gpu, "tracked_sizes", lambda: sizes)
    monkeypatch.setattr(pretrain_gpu, "DEVICE_CARRY_BYTES", 995 + 10**6)
    assert pretrain_gpu.main(["pack", "--corpus", CORPUS, "--vocab", VOCAB, "--out", str(tmp_path / "p"),
                              "--heldout-documents", "3", "--no-progress"]) == 0
    assert "with the repository's tracked files (995 bytes) a device run carries " in capsys.readouterr().out
    monkeypatch.setattr(pretrain_gpu, "DEVICE_CARRY_BYTES", 1)
    assert pretrain_gpu.main(["pack", "--corpus", CORPUS, "--vocab", VOCAB, "--out", str(tmp_path / "p"),
                              "--heldout-documents", "3", "--no-progress"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: too much for one device run; the heaviest tracked folders are stages/chinese_bert/ "
                          "(520 bytes), mini_hf_bert/checkpoints/ (400 bytes), docs/ (70 bytes)")
    assert len(err.splitlines()) == 1 and "'git checkout -- stages' brings it back" in err


def test_a_run_on_the_cpu_brings_back_a_model_both_libraries_load(pack_dir, tmp_path, monkeypatch):
    monkeypatch.setattr(pretrain_gpu, "SHARD_BYTES", 200_000)  # shards, as a GPU-sized model has them
    out = tmp_path / "out"
    started = time.monotonic()
    # One thread: on a loaded machine, two threads' hand-offs make these tiny steps so slow
    # that measuring alone can fill the 18-s window (it did, at a load of 4).
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        assert pretrain_gpu.main(["train", "--pack", str(pack_dir), "--out", str(out), *TRAIN]) == 0
    finally:
        torch.set_num_threads(threads)
    # it keeps to its window: 18 s, and a margin for loading and the last save on a loaded machine
    assert time.monotonic() - started < 0.3 * 60 + 20
    record = json.loads((out / "run.json").read_text())
    assert problems(record["provenance"]) == [] and record["complete"]
    assert record["provenance"]["command"].startswith(".venv/bin/python tools/pretrain_gpu.py train --pack ")
    # measured in order, the second only while a quarter of the window is left to measuring
    assert "1x32" in record["rates"] and set(record["rates"]) <= {"1x32", "2x64"} and record["size"] in record["rates"]
    assert record["evaluations"][-1]["step"] == record["steps"] > 0 and record["positions_per_second"] > 0
    assert record["flops_per_position"] == pretrain_gpu.flops_per_position(
        pretrain_gpu.size_config(record["size"], 7529, 48), 48)
    files = [p for p in out.rglob("*") if p.is_file()]
    assert len(files) <= pretrain_gpu.DEVICE_FILES
    assert all(p.stat().st_size <= pretrain_gpu.DEVICE_FILE_BYTES for p in files)
    assert len(list((out / "model").glob("model-*-of-*.safetensors"))) >= 2  # sharded
    final = tmp_path / "final"
    assert pretrain_gpu.main(["finish", str(out), str(final), "--pack", str(pack_dir)]) == 0
    from safetensors import safe_open

    with safe_open(final / "model.safetensors", framework="pt") as f:
        assert {f.get_tensor(k).dtype for k in f.keys()} == {torch.float16}  # stored small
    ours = BertForPreTraining.from_pretrained(final)
    theirs = transformers.BertForPreTraining.from_pretrained(final)
    assert ours.dtype == theirs.dtype == torch.float32  # computed in fp32 on the CPU
    encoded = BertTokenizer.from_pretrained(final)("北京是中国的首都。", return_tensors="pt")
    with torch.no_grad():
        torch.testing.assert_close(ours(**encoded).prediction_logits, theirs(**encoded).prediction_logits,
                                   atol=FP32_ATOL, rtol=0)


def test_a_run_killed_after_a_checkpoint_still_brings_one_back(pack_dir, tmp_path):
    out = tmp_path / "out"
    # a window far longer than the test: the first checkpoint (after 4 s of training) comes
    # long before the end, however loaded the machine, and the kill lands after it
    window = [*TRAIN[:TRAIN.index("--minutes")], "--minutes", "10", *TRAIN[TRAIN.index("--minutes") + 2:]]
    with open(tmp_path / "stderr", "w") as stderr:
        process = subprocess.Popen([sys.executable, "tools/pretrain_gpu.py", "train", "--pack", str(pack_dir),
                                    "--out", str(out), *window], cwd=ROOT, env=dict(ENV, PYTHONUNBUFFERED="1"),
                                   stdout=subprocess.PIPE, stderr=stderr, text=True)
        said = process.stdout.readline()  # the handshake: train prints this line once a checkpoint is written
        process.send_signal(signal.SIGKILL)  # as a device run's time limit does
        process.wait()
        process.stdout.close()
        assert said.startswith("step ") and (out / "run.json").exists(), said + (tmp_path / "stderr").read_text()[-2000:]
    record = json.loads((out / "run.json").read_text())
    assert not record["complete"] and record["evaluations"]
    assert pretrain_gpu.main(["finish", str(out), str(tmp_path / "final"), "--pack", str(pack_dir)]) == 0
    assert BertForPreTraining.from_pretrained(tmp_path / "final").config.hidden_size in (32, 64)


@pytest.mark.parametrize("argv,message", [
    (["pack", "--corpus", "{tmp}/none.txt", "--vocab", VOCAB, "--out", "{tmp}/p"], "{tmp}/none.txt"),
    (["pack", "--corpus", "{tmp}/one.txt", "--vocab", VOCAB, "--out", "{tmp}/p", "--heldout-documents", "2"],
     "has 1 documents; hold out at least 2 and leave 2"),
    (["train", "--pack", "{tmp}", "--out", "{tmp}/o", "--device", "cpu"],
     "{tmp}/pack.safetensors.gz: no such pack file"),
    (["train", "--pack", "{tmp}/notpack", "--out", "{tmp}/o", "--device", "cpu"],
     "not a readable pack (gzipped safetensors) file"),
    (["finish", "{tmp}", "{tmp}/../f"], "{tmp}/model: missing; a device run's $OUT holds model/ and run.json"),
    (["train", "--pack", "{tmp}", "--out", "{tmp}/o", "--batch-size", "1000000000"],
     "--batch-size 1000000000: expected 1 to 65536"),
    (["train", "--pack", "{tmp}", "--out", "{tmp}/o", "--seq-length", "1000000000"],
     "--seq-length 1000000000: expected 5 to 512"),
    (["train", "--pack", "{tmp}", "--out", "{tmp}/o", "--stack-layers", "1000000000", "--init-checkpoint", "{tmp}"],
     "--stack-layers 1000000000: expected 1 to 24"),
    (["train", "--pack", "{tmp}", "--out", "{tmp}/o", "--stack-layers", "8"],
     "--stack-layers: needs --init-checkpoint (the layers to repeat)"),
    (["train", "--pack", "{tmp}", "--out", "{tmp}/o", "--init-checkpoint", "{tmp}/stage"],
     "--seed 12345: {tmp}/stage was trained with this seed, and the same seed draws the same batches and masks "
     "again; give the next stage another --seed"),
    (["train", "--pack", "{tmp}", "--out", "{tmp}/o", "--init-checkpoint", "{tmp}/stage7", "--seed", "7"],
     "--seed 7: {tmp}/stage7 was trained with this seed"),
    (["train", "--pack", "{tmp}", "--out", "{tmp}/o", "--init-checkpoint", "{tmp}/broken", "--seed", "7"],
     "{tmp}/broken/run.json: not the run.json train writes, so its --seed is unknown"),
    (["train", "--pack", "{tmp}", "--out", "{tmp}/o", "--steps", "0"], "--steps 0: expected 1 to 1000000"),
    (["train", "--pack", "{tmp}", "--out", "{tmp}/o", "--steps", "9", "--max-steps", "9"],
     "--steps and --max-steps: give one"),
    (["finish", "{tmp}", "{tmp}/model"], "{tmp}/model: is or lies inside {tmp}, what finish reads"),
    (["finish", "{tmp}", "{tmp}"], "{tmp}: is or lies inside {tmp}, what finish reads"),
])
def test_mistakes_are_one_line(argv, message, tmp_path, capsys):
    (tmp_path / "one.txt").write_text("只有一篇。\n就是这样。\n", encoding="utf-8")
    (tmp_path / "notpack").mkdir()
    (tmp_path / "notpack" / "pack.safetensors.gz").write_bytes(b"not a safetensors file")
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "run.json").write_text("{not json")
    for stage, seed in (("stage", ""), ("stage7", " --seed 7")):  # run.json as train writes it
        (tmp_path / stage).mkdir()
        (tmp_path / stage / "run.json").write_text(json.dumps({"provenance": {
            "command": f".venv/bin/python tools/pretrain_gpu.py train --device cpu --out o{seed}"}}))
    assert pretrain_gpu.main([a.format(tmp=tmp_path) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message.format(tmp=tmp_path) in err and len(err.strip().splitlines()) == 1


def test_a_stacked_model_computes_the_checkpoints_layers_twice_over():
    """Progressive stacking: 8 layers from 4, layer j starting as layer j mod 4, so the deeper
    model's output is the original's embeddings put through its layers 0..3, 0..3."""
    shallow = BertForPreTraining.from_pretrained(chinese_checkpoint_dir()).eval()
    deep = pretrain_gpu.stack_layers(shallow, 8).eval()
    assert deep.config.num_hidden_layers == 8 and shallow.config.num_hidden_layers == 4
    ids = torch.tensor([[2, 100, 200, 300, 3]])
    with torch.no_grad():
        hidden = shallow.bert.embeddings(input_ids=ids)
        for j in range(8):
            hidden = shallow.bert.encoder.layer[j % 4](hidden)[0]
        got = deep.bert(input_ids=ids).last_hidden_state
    torch.testing.assert_close(got, hidden, rtol=0, atol=FP32_ATOL)
    # the copies are the deeper model's own: training it leaves the checkpoint as it was
    before = shallow.bert.encoder.layer[1].output.dense.weight.clone()
    with torch.no_grad():
        deep.bert.encoder.layer[5].output.dense.weight.add_(1.0)
    assert torch.equal(shallow.bert.encoder.layer[1].output.dense.weight, before)
    assert deep.cls.predictions.decoder.weight is deep.bert.embeddings.word_embeddings.weight
    for layers in (4, 6):
        with pytest.raises(ValueError, match=f"--stack-layers {layers}: expected a multiple of the checkpoint's 4"):
            pretrain_gpu.stack_layers(shallow, layers)


def test_damaged_and_foreign_packs_are_refused_by_name(corpus, tmp_path):
    import gzip

    from safetensors.torch import save

    good = open(save_pack(tmp_path / "good.safetensors.gz", {"train": corpus}, 7529), "rb").read()
    cases = {"truncated": good[:len(good) // 2],
             "gzipped garbage": gzip.compress(b"\xff" * 100),
             "a foreign safetensors": gzip.compress(save({"x": torch.zeros(2)}, metadata={"format": "other"}))}
    for name, data in cases.items():
        path = tmp_path / f"{name}.gz"
        path.write_bytes(data)
        with pytest.raises(ValueError, match=re.escape(str(path)) + ": not a (readable pack|packed corpus)"):
            load_pack(path)


def test_a_corpus_without_two_documents_is_refused(tokenizer):
    with pytest.raises(ValueError, match="two at least are needed"):
        pack_documents([["只有一篇。", "两句话。"]], tokenizer, what="one.txt")
    with pytest.raises(ValueError, match="every document is one sentence long"):
        pack_documents([["一句。"], ["又一句。"]], tokenizer, what="two.txt")
