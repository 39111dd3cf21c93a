"""The six published forms mini_hf_bert reads without TensorFlow, Keras or JAX, each written
by its real library (tests/fixtures/formats/, made by tools/format_fixtures.py), loaded
through every way in and compared with that library's own outputs.

| fixture          | written by                                              | computes              |
| tf_model_h5      | transformers 4.57.6 TFBertForPreTraining.save_pretrained | erf GELU ("gelu")     |
| flax_msgpack     | transformers 4.57.6 FlaxBertForPreTraining              | erf GELU ("gelu")     |
| tf2_encoder      | tf-models-official's TF2 checkpoint converter (encoder) | tanh GELU ("gelu_new")|
| tf2_pretrainer   | the same, --converted_model=pretrainer (encoder + MLM)  | tanh GELU             |
| tf_hub           | tf-models-official export_tfhub, model_with_mlm         | tanh GELU             |
| keras_hub        | keras-hub BertMaskedLM.save_to_preset                   | tanh GELU; its MLM head erf, eps 1e-5 |
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys

import pytest
import torch
from safetensors.torch import load_file

import mini_hf_bert
from mini_hf_bert.checkpoints.convert import convert, format_inspection, inspect_checkpoint
from mini_hf_bert.checkpoints.resolve import FORMS
from mini_hf_bert.checkpoints.weight_map import FORM_WEIGHT_MAPS
from mini_hf_bert.parity.compare import FP32_ATOL
from ..paths import FIXTURES
from .test_hub import write_cache

FORMATS = os.path.join(FIXTURES, "formats")
FIXTURE_FORMS = ("tf_model_h5", "flax_msgpack", "tf2_encoder", "tf2_pretrainer", "tf_hub", "keras_hub")
#: The form each fixture is (resolve.FORMS), and the activation its writer's code computes.
FORM_OF = {"tf_model_h5": "tf_model_h5", "flax_msgpack": "flax_msgpack", "tf2_encoder": "tf2",
           "tf2_pretrainer": "tf2", "tf_hub": "saved_model", "keras_hub": "keras_hub"}
ACTIVATION = {"tf_model_h5": "gelu", "flax_msgpack": "gelu", "tf2_encoder": "gelu_new", "tf2_pretrainer": "gelu_new",
              "tf_hub": "gelu_new", "keras_hub": "gelu_new"}
#: The file of each fixture a user may pass instead of its directory.
FILE_OF = {"tf_model_h5": "tf_model.h5", "flax_msgpack": "flax_model.msgpack", "tf2_encoder": "bert_model-1.index",
           "tf2_pretrainer": "bert_model-1", "tf_hub": "saved_model.pb", "keras_hub": "model.weights.h5"}
#: Every model class and Auto class a checkpoint may be loaded into.
CLASSES = ("BertModel", "BertForPreTraining", "BertForMaskedLM", "BertLMHeadModel", "BertForSequenceClassification",
           "BertForTokenClassification", "BertForQuestionAnswering", "BertForMultipleChoice",
           "BertForNextSentencePrediction", "AutoModel", "AutoModelForPreTraining", "AutoModelForMaskedLM",
           "AutoModelForCausalLM", "AutoModelForSequenceClassification", "AutoModelForTokenClassification",
           "AutoModelForQuestionAnswering", "AutoModelForMultipleChoice", "AutoModelForNextSentencePrediction")


def reference(fixture: str) -> dict[str, torch.Tensor]:
    return load_file(os.path.join(FORMATS, f"{fixture}.reference.safetensors"))


def record(fixture: str) -> dict:
    with open(os.path.join(FORMATS, f"{fixture}.json"), encoding="utf-8") as f:
        return json.load(f)


def inputs(ref: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    return {k: ref[k].long() for k in ("input_ids", "attention_mask", "token_type_ids")}


def sequence_reference(ref: dict[str, torch.Tensor]) -> torch.Tensor:
    return ref["last_hidden_state"] if "last_hidden_state" in ref else ref["sequence_output"]


def masked(logits: torch.Tensor, ref: dict[str, torch.Tensor]) -> torch.Tensor:
    """The logits at the positions the TF2 / TF Hub / KerasHub heads predicted."""
    positions = ref["masked_positions"].long()
    return torch.gather(logits, 1, positions[:, :, None].expand(-1, -1, logits.shape[-1]))


def max_diff(a: torch.Tensor, b: torch.Tensor) -> float:
    return (a.double() - b.double()).abs().max().item()


def way_in(fixture: str, way: str, tmp_path, monkeypatch) -> str:
    directory = os.path.join(FORMATS, fixture)
    if way == "directory":
        return directory
    if way == "file":
        return os.path.join(directory, FILE_OF[fixture])
    # A hub-cache snapshot holding only this form (every file a link into blobs/).
    files = {}
    for root, _, names in os.walk(directory):
        for name in names:
            path = os.path.join(root, name)
            with open(path, "rb") as f:
                files[os.path.relpath(path, directory)] = f.read()
    cache = str(tmp_path / "hub-cache")
    write_cache(cache, f"org/{fixture}", files)
    monkeypatch.setenv("HF_HUB_CACHE", cache)
    return f"org/{fixture}"


@pytest.fixture(autouse=True)
def _own_hub_cache(monkeypatch):
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


# --------------------------------------------------------------------------- the fixtures


@pytest.mark.parametrize("fixture", FIXTURE_FORMS)
def test_each_fixture_was_written_by_its_library_and_checked_by_a_second_reader(fixture):
    """The fixtures are what the writers wrote, and a second reader agreed with the writer's
    outputs (tools/format_fixtures.py records both); a missed transpose moves outputs by ~1."""
    written = record(fixture)
    assert written["form"] == fixture and written["writer"] and written["versions"]
    agreement = written["second_reader"]["max_abs_difference"]
    assert agreement and all(value <= 2e-6 for value in agreement.values()), agreement
    for name in written["files"]:
        assert os.path.isfile(os.path.join(FORMATS, fixture, name)), name


# ------------------------------------------------------------------- every way in, compared


@pytest.mark.parametrize("way", ["directory", "file", "hub cache"])
@pytest.mark.parametrize("fixture", FIXTURE_FORMS)
def test_every_way_in_and_every_class_computes_what_the_writer_computed(fixture, way, tmp_path, monkeypatch):
    ref = reference(fixture)
    source = way_in(fixture, way, tmp_path, monkeypatch)
    # Every class through the directory; the other ways in lead to the same reading, so two classes each.
    for name in CLASSES if way == "directory" else ("BertModel", "AutoModelForMaskedLM"):
        cls = getattr(mini_hf_bert, name)
        model = cls.from_pretrained(source, num_labels=3) if "Classification" in name else cls.from_pretrained(source)
        assert model.config.hidden_act == ACTIVATION[fixture], (name, model.config.hidden_act)
        inputs_ = inputs(ref)
        if "MultipleChoice" in name:
            inputs_ = {k: v[:, None, :] for k, v in inputs_.items()}
        with torch.no_grad():
            out = model(**inputs_, output_hidden_states=True)
        sequence = out.hidden_states[-1].reshape(sequence_reference(ref).shape)
        assert max_diff(sequence, sequence_reference(ref)) <= FP32_ATOL, (name, way)
        if name in ("BertModel", "AutoModel") and "pooled_output" in ref:
            assert max_diff(out.pooler_output, ref["pooled_output"]) <= FP32_ATOL, (name, way)


@pytest.mark.parametrize("fixture", ["tf_model_h5", "flax_msgpack"])
def test_the_hub_forms_heads_compute_the_writers_logits(fixture):
    ref = reference(fixture)
    model, info = mini_hf_bert.BertForPreTraining.from_pretrained(os.path.join(FORMATS, fixture),
                                                                  output_loading_info=True)
    assert info["missing_keys"] == set() and info["unexpected_keys"] == set() and info["unmapped_keys"] == []
    with torch.no_grad():
        out = model(**inputs(ref))
    assert max_diff(out.prediction_logits, ref["prediction_logits"]) <= FP32_ATOL
    assert max_diff(out.seq_relationship_logits, ref["seq_relationship_logits"]) <= FP32_ATOL


@pytest.mark.parametrize("fixture", ["tf2_pretrainer", "tf_hub"])
def test_the_google_mlm_heads_compute_the_writers_logits(fixture):
    ref = reference(fixture)
    model, info = mini_hf_bert.BertForMaskedLM.from_pretrained(os.path.join(FORMATS, fixture), output_loading_info=True)
    assert info["missing_keys"] == set()
    assert {key.split("/")[0] for key in info["unexpected_keys"]} == {"pooler_transform"}  # BertForMaskedLM has no pooler
    with torch.no_grad():
        logits = model(**inputs(ref)).logits
    assert max_diff(masked(logits, ref), ref["mlm_logits"]) <= FP32_ATOL


def test_keras_hub_mlm_head_differs_only_in_its_activation_and_epsilon():
    """KerasHub's MaskedLMHead computes erf GELU and LayerNorm eps 1e-5 in its transform, where
    its backbone (and BertConfig, one setting for both) has the tanh GELU and 1e-12: a stated
    difference (docs/weight_map.md). KerasHub's head formula over the weights we loaded gives
    KerasHub's logits within FP32_ATOL, so every weight is read right; our BertForMaskedLM,
    with the backbone's settings, differs by more than that."""
    ref = reference("keras_hub")
    model = mini_hf_bert.BertForMaskedLM.from_pretrained(os.path.join(FORMATS, "keras_hub"))
    with torch.no_grad():
        out = model(**inputs(ref), output_hidden_states=True)
        head = model.cls.predictions
        x = head.transform.dense(out.hidden_states[-1])
        x = torch.nn.functional.gelu(x)  # erf: keras.activations.gelu(approximate=False)
        x = torch.nn.functional.layer_norm(x, x.shape[-1:], head.transform.LayerNorm.weight,
                                           head.transform.LayerNorm.bias, eps=1e-5)
        keras_logits = x @ model.bert.embeddings.word_embeddings.weight.T + head.bias
    assert max_diff(masked(keras_logits, ref), ref["mlm_logits"]) <= FP32_ATOL
    assert max_diff(masked(out.logits, ref), ref["mlm_logits"]) > FP32_ATOL


@pytest.mark.parametrize("fixture", FIXTURE_FORMS)
def test_the_activation_matters_at_this_tolerance(fixture):
    """The other GELU moves the outputs past FP32_ATOL: the activation each form states is
    the one its writer computed, not a guess the tolerance hides."""
    other = "gelu" if ACTIVATION[fixture] == "gelu_new" else "gelu_new"
    ref = reference(fixture)
    model = mini_hf_bert.BertModel.from_pretrained(os.path.join(FORMATS, fixture), hidden_act=other)
    with torch.no_grad():
        sequence = model(**inputs(ref)).last_hidden_state
    assert max_diff(sequence, sequence_reference(ref)) > FP32_ATOL


@pytest.mark.parametrize("fixture", FIXTURE_FORMS)
def test_a_kernel_read_untransposed_moves_the_outputs_far(fixture):
    """The fixtures' kernels are square where a transpose could be missed without a shape
    error (32 x 32): reading one as stored moves the outputs far past the tolerance."""
    ref = reference(fixture)
    model = mini_hf_bert.BertModel.from_pretrained(os.path.join(FORMATS, fixture))
    query = model.encoder.layer[0].attention.self.query
    with torch.no_grad():
        query.weight.copy_(query.weight.T.clone())
        sequence = model(**inputs(ref)).last_hidden_state
    assert max_diff(sequence, sequence_reference(ref)) > 1e-2


@pytest.mark.parametrize("fixture, dataset, title", [
    ("tf_model_h5", "bert/tf_bert_for_pre_training/bert/encoder/layer_._1/output/dense", "the hub's TensorFlow weights"),
    ("keras_hub", "layers/transformer_encoder_1/_feedforward_output_dense", "a KerasHub preset"),
])
def test_an_incomplete_form_is_refused_naming_the_form_and_never_advising_a_random_fill(fixture, dataset, title, tmp_path):
    import h5py

    shutil.copytree(os.path.join(FORMATS, fixture), tmp_path / fixture)
    with h5py.File(tmp_path / fixture / ("tf_model.h5" if fixture == "tf_model_h5" else "model.weights.h5"), "r+") as f:
        del f[dataset]
    with pytest.raises(mini_hf_bert.CheckpointError) as refused:
        mini_hf_bert.BertModel.from_pretrained(tmp_path / fixture)
    message = str(refused.value)
    assert f"({title}): cannot load into BertModel: 2 weights missing: encoder.layer.1.output.dense.weight" in message
    assert "strict=False" not in message and "incomplete" in message


def test_a_config_passed_with_the_erf_gelu_for_a_tanh_form_is_warned_about(caplog):
    config = mini_hf_bert.BertConfig.from_pretrained(os.path.join(FORMATS, "tf2_encoder")).replace(hidden_act="gelu")
    with caplog.at_level("WARNING", logger="mini_hf_bert"):
        mini_hf_bert.BertModel.from_pretrained(os.path.join(FORMATS, "tf2_encoder"), config=config)
    assert "computes 'gelu_new'" in caplog.text


@pytest.mark.parametrize("fixture", ["tf2_encoder", "tf_hub", "keras_hub"])
def test_a_form_without_a_bert_config_says_where_its_config_came_from(fixture, caplog):
    with caplog.at_level("INFO", logger="mini_hf_bert"):
        config = mini_hf_bert.AutoConfig.from_pretrained(os.path.join(FORMATS, fixture))
    sizes = record(fixture)["config"]
    for key in ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
                "max_position_embeddings", "type_vocab_size"):
        assert getattr(config, key) == sizes[key], key
    assert config.hidden_act == "gelu_new" and "gelu_new" in caplog.text and ("derived" in caplog.text or "KerasHub" in caplog.text)


@pytest.mark.parametrize("fixture", ["tf_hub", "keras_hub", "tf_model_h5", "flax_msgpack"])
def test_the_tokenizer_a_form_ships_is_read_with_its_casing(fixture):
    tokenizer = mini_hf_bert.AutoTokenizer.from_pretrained(os.path.join(FORMATS, fixture))
    assert tokenizer.do_lower_case is True  # every writer was told to lower-case
    assert tokenizer("The cat SAT")["input_ids"] == [4, 7, 9, 11, 5]  # the fixtures' vocabulary


# ---------------------------------------------------------------------- convert, inspect


@pytest.mark.parametrize("fixture", FIXTURE_FORMS)
def test_convert_gives_a_directory_transformers_5_loads_with_equal_outputs(fixture, tmp_path):
    import transformers

    report = convert(os.path.join(FORMATS, fixture), str(tmp_path / "out"), progress=False)
    ref = reference(fixture)
    theirs = getattr(transformers, report.architecture).from_pretrained(str(tmp_path / "out")).eval()
    assert theirs.config.hidden_act == ACTIVATION[fixture]
    with torch.no_grad():
        out = theirs(**inputs(ref), output_hidden_states=True)
    assert max_diff(out.hidden_states[-1], sequence_reference(ref)) <= FP32_ATOL
    if report.architecture == "BertForPreTraining":
        assert max_diff(out.prediction_logits, ref["prediction_logits"]) <= FP32_ATOL
    elif report.architecture == "BertForMaskedLM" and fixture != "keras_hub":  # KerasHub's head: see above
        assert max_diff(masked(out.logits, ref), ref["mlm_logits"]) <= FP32_ATOL
    if "pooled_output" in ref:  # the pooler is written even beside a masked-LM head, which has none
        pooled = transformers.BertModel.from_pretrained(str(tmp_path / "out")).eval()
        with torch.no_grad():
            assert max_diff(pooled(**inputs(ref)).pooler_output, ref["pooled_output"]) <= FP32_ATOL
    if fixture != "tf2_encoder" and fixture != "tf2_pretrainer":  # the converter writes no vocabulary
        tokenizer = transformers.AutoTokenizer.from_pretrained(str(tmp_path / "out"))
        assert tokenizer("The cat SAT")["input_ids"] == [4, 7, 9, 11, 5]


@pytest.mark.parametrize("fixture", FIXTURE_FORMS)
def test_inspect_lists_every_tensor_with_where_it_maps(fixture):
    rows = inspect_checkpoint(os.path.join(FORMATS, fixture))
    table = FORM_WEIGHT_MAPS[FORM_OF[fixture]]
    mapped = [r for r in rows if r.maps_to not in ("not mapped", "skipped (training state)")]
    assert len(mapped) >= len({ours.replace("{}", "0") for ours, _, _ in table} & {r.maps_to.split(" ")[0] for r in mapped})
    assert not [r for r in rows if r.maps_to == "not mapped"], format_inspection(rows)
    query = next(r for r in rows if r.maps_to.startswith("bert.encoder.layer.0.attention.self.query.weight"))
    assert ("merge heads" in query.maps_to) == (FORM_OF[fixture] in ("tf2", "saved_model", "keras_hub"))
    assert "transpose" in query.maps_to


def test_every_form_has_a_table_and_a_description():
    assert set(FORM_WEIGHT_MAPS) == set(FORMS)
    for form, table in FORM_WEIGHT_MAPS.items():
        assert len({theirs for _, theirs, _ in table}) == len(table), form  # no name twice
        assert len({ours for ours, _, _ in table}) == len(table), form


def test_no_tensorflow_keras_or_jax_is_imported_to_read_any_form(tmp_path):
    """In a process where importing TensorFlow, Keras, JAX or Flax fails, every form loads."""
    script = tmp_path / "no_tf.py"
    script.write_text(
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('tensorflow', 'tf_keras', 'keras', 'keras_hub', 'jax', 'jaxlib', 'flax'):\n"
        "            raise ImportError(f'{name} is blocked here')\n"
        "sys.meta_path.insert(0, Block())\n"
        "import mini_hf_bert\n"
        f"for fixture in {list(FIXTURE_FORMS)!r}:\n"
        f"    mini_hf_bert.AutoModel.from_pretrained({FORMATS!r} + '/' + fixture)\n"
        "print('loaded all')\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "loaded all" in done.stdout, done.stderr[-2000:]
    assert importlib.util.find_spec("mini_hf_bert") is not None


@pytest.mark.parametrize("fixture, module, file_name", [("tf_model_h5", "h5py", "tf_model.h5"),
                                                        ("keras_hub", "h5py", "model.weights.h5"),
                                                        ("flax_msgpack", "msgpack", "flax_model.msgpack")])
def test_a_missing_reader_is_named_in_one_line_with_the_extra(fixture, module, file_name, monkeypatch, capsys):
    from mini_hf_bert.__main__ import main

    monkeypatch.setitem(sys.modules, module, None)  # `import h5py` now fails, as where it is not installed
    with pytest.raises(mini_hf_bert.CheckpointError, match=rf"{file_name}: .*needs (h5py|the msgpack package): "
                                                           r"pip install 'mini_hf_bert\[formats\]'"):
        mini_hf_bert.BertModel.from_pretrained(os.path.join(FORMATS, fixture))
    assert main(["inspect", os.path.join(FORMATS, fixture)]) == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "mini_hf_bert[formats]" in errors[0]


def test_a_tf2_directory_of_several_checkpoints_loads_the_one_its_checkpoint_file_names(tmp_path):
    """tf.train.CheckpointManager keeps ckpt-9 and ckpt-10 (ckpt-9 last by name) and names the latest."""
    ref = reference("tf2_encoder")
    source = os.path.join(FORMATS, "tf2_encoder")
    for number in (9, 10):
        for suffix in (".index", ".data-00000-of-00001"):
            shutil.copy(os.path.join(source, "bert_model-1" + suffix), tmp_path / f"ckpt-{number}{suffix}")
    data = tmp_path / "ckpt-9.data-00000-of-00001"
    data.write_bytes(b"\0" * data.stat().st_size)  # ckpt-9's values are not the writer's (nor read)
    (tmp_path / "checkpoint").write_text('model_checkpoint_path: "ckpt-10"\nall_model_checkpoint_paths: "ckpt-9"\n'
                                         'all_model_checkpoint_paths: "ckpt-10"\n')
    model = mini_hf_bert.BertModel.from_pretrained(tmp_path)
    with torch.no_grad():
        assert max_diff(model(**inputs(ref)).last_hidden_state, ref["sequence_output"]) <= FP32_ATOL


def test_from_tf_and_from_flax_read_those_weights_where_pytorch_weights_sit_beside_them(tmp_path):
    """A hub repo holds pytorch_model.bin or model.safetensors beside tf_model.h5 and
    flax_model.msgpack; transformers 4.x's from_tf / from_flax pick the other one."""
    directory = tmp_path / "repo"
    shutil.copytree(os.path.join(FORMATS, "tf_model_h5"), directory)
    shutil.copy(os.path.join(FORMATS, "flax_msgpack", "flax_model.msgpack"), directory)
    torch.manual_seed(0)
    mini_hf_bert.BertForPreTraining(mini_hf_bert.BertConfig.from_pretrained(directory)).save_pretrained(directory)
    for kwargs, fixture in (({}, None), ({"from_tf": True}, "tf_model_h5"), ({"from_flax": True}, "flax_msgpack")):
        model = mini_hf_bert.BertModel.from_pretrained(directory, **kwargs)
        if fixture is None:  # the PyTorch weights first, as transformers
            assert os.path.isfile(directory / "model.safetensors")
            continue
        ref = reference(fixture)
        with torch.no_grad():
            assert max_diff(model(**inputs(ref)).last_hidden_state, ref["last_hidden_state"]) <= FP32_ATOL, kwargs
    with pytest.raises(mini_hf_bert.CheckpointError, match="from_flax=True, but it holds no flax_model.msgpack"):
        mini_hf_bert.BertModel.from_pretrained(os.path.join(FORMATS, "tf_model_h5"), from_flax=True)
    with pytest.raises(ValueError, match="not both"):
        mini_hf_bert.BertModel.from_pretrained(directory, from_tf=True, from_flax=True)


@pytest.mark.parametrize("fixture, said", [("tf2_encoder", "config derived from the weights"),
                                           ("keras_hub", "config from KerasHub's"), ("tf_model_h5", None)])
def test_the_convert_command_says_where_a_form_s_config_came_from(fixture, said, tmp_path, capsys):
    from mini_hf_bert.__main__ import main

    assert main(["convert", os.path.join(FORMATS, fixture), str(tmp_path / "out"), "--no-progress"]) == 0
    out = capsys.readouterr().out
    if said is None:  # config.json beside it: nothing to say
        assert "config derived" not in out and "config from" not in out
    else:
        assert said in out and "hidden_act='gelu_new'" in out


@pytest.mark.parametrize("fixture", ["tf_model_h5", "flax_msgpack", "keras_hub"])
def test_a_hub_repo_holding_only_this_form_is_downloaded_and_loaded(fixture, tmp_path, monkeypatch):
    """Not cached: config.json, then the first weights file the repo has (the PyTorch ones
    asked for first, as transformers), and a KerasHub preset's head and vocabulary."""
    import huggingface_hub

    from .test_hub import FakeHub

    directory = os.path.join(FORMATS, fixture)
    files = {os.path.relpath(os.path.join(root, name), directory): open(os.path.join(root, name), "rb").read()
             for root, _, names in os.walk(directory) for name in names}
    fake = FakeHub(files)
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", fake)
    model = mini_hf_bert.BertModel.from_pretrained(f"someone/{fixture}")
    assert fake.requests[:5] == ["config.json", "model.safetensors", "model.safetensors.index.json",
                                 "pytorch_model.bin", "pytorch_model.bin.index.json"]
    if fixture == "keras_hub":
        assert {"task.weights.h5", "assets/tokenizer/vocabulary.txt"} <= set(fake.requests)
    ref = reference(fixture)
    with torch.no_grad():
        assert max_diff(model(**inputs(ref)).last_hidden_state, sequence_reference(ref)) <= FP32_ATOL


def test_a_token_given_to_any_loader_reaches_the_download(tmp_path, monkeypatch):
    """token= (and 4.x's use_auth_token=) is what huggingface_hub downloads with."""
    import huggingface_hub

    from .test_hub import FakeHub

    class RecordingHub(FakeHub):
        def __call__(self, repo_id, filename, *, revision=None, cache_dir=None, token=None):
            self.tokens = getattr(self, "tokens", set()) | {token}
            from .test_hub import COMMIT
            cached = os.path.join(cache_dir, "models--" + repo_id.replace("/", "--"), "snapshots", COMMIT, filename)
            if os.path.lexists(cached):  # fetched before (AutoModel reads the config, then the model)
                return cached
            return super().__call__(repo_id, filename, revision=revision, cache_dir=cache_dir)

    directory = os.path.join(FORMATS, "tf_model_h5")
    files = {name: open(os.path.join(directory, name), "rb").read() for name in os.listdir(directory)}
    monkeypatch.delenv("HF_HUB_OFFLINE")
    for number, load in enumerate((
            lambda repo: mini_hf_bert.BertModel.from_pretrained(repo, token="hf_secret"),
            lambda repo: mini_hf_bert.AutoModel.from_pretrained(repo, use_auth_token="hf_secret"),
            lambda repo: mini_hf_bert.AutoConfig.from_pretrained(repo, token="hf_secret"),
            lambda repo: mini_hf_bert.BertConfig.from_pretrained(repo, use_auth_token="hf_secret"),
            lambda repo: mini_hf_bert.AutoTokenizer.from_pretrained(repo, use_auth_token="hf_secret"),
            lambda repo: mini_hf_bert.BertTokenizer.from_pretrained(repo, token="hf_secret"))):
        fake = RecordingHub(files)
        monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / f"cache{number}"))  # each load downloads
        monkeypatch.setattr(huggingface_hub, "hf_hub_download", fake)
        load(f"someone/private-{number}")
        assert fake.tokens == {"hf_secret"}, number
    with pytest.raises(ValueError, match="not both"):
        mini_hf_bert.BertModel.from_pretrained("someone/x", token="a", use_auth_token="b")
