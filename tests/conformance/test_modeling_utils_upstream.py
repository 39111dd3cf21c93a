"""transformers' ``tests/utils/test_modeling_utils.py``: its save/load tests of BERT
(``ModelUtilsTest``), run against the library under test's ``BertModel``.

Source: huggingface/transformers ``tests/utils/test_modeling_utils.py``, read from the
evalstate/transformers mirror at commit 755aeff4fb33034bc3b69afc4483f253e8bebec8
(transformers' own repository is too large to bring here, and its sdists do not ship
``tests/utils``). Every check and expectation is the authors'. Mechanical changes:

* ``BertConfig``, ``BertModel`` and ``BertForMaskedLM`` are the library under test's
  (``upstream.library``); ``CaptureLogger`` and ``assertLogs`` read its logger
  (``upstream.LOGGER_NAME``); ``compare_state_dicts`` is ported into ``upstream.py``.
* Hub checkpoints become local equivalents, built once per session by ``_local``, where the
  expectations do not depend on the hub's weights:

  - ``hf-internal-testing/tiny-random-bert``: a seeded random ``BertModel`` with that repo's
    config (vocabulary 1124, hidden 32, 5 layers, 4 heads, intermediate 37, 512 positions,
    16 token types): 87,929 parameters, the count ``test_explicit_transformers_weights``
    expects of it, and the shard counts the sharding tests expect (5 at 50 kB);
  - ``...-safetensors`` is that model's ``model.safetensors``; ``tiny-random-bert`` read
    beside it, and ``tiny-bert-pt-only``, are the same weights as ``pytorch_model.bin`` only
    (those repos hold ``.bin`` files); ``...-sharded`` / ``...-sharded-safetensors`` the
    same, sharded at 100 kB;
  - ``tiny-random-bert-variant``: the same weights as ``pytorch_model.v2.bin`` only;
  - ``explicit_transformers_weight_in_config`` (``_sharded``): the same weights in a file
    (an index and its shards) whose name only ``config.json``'s ``transformers_weights`` gives.

  ``cache_dir=`` (where the hub's files would be cached) is passed on unchanged.
* ``force_serialization_as_bin_files()``, transformers' test switch that makes
  ``save_pretrained`` write ``.bin`` files, is ``safe_serialization=False`` here.
* The tied-weights tests use ``BertForMaskedLM`` (its decoder weight tied to the word
  embeddings) where upstream builds a toy two-layer model with ``linear_2.weight`` tied to
  ``linear.weight``: ``linear`` is the word embeddings (``SOURCE``) and ``linear_2`` the
  decoder (``TARGET``), in a tiny config with ``tie_word_embeddings=True``. BERT's decoder
  bias is tied as well, and safetensors refuses to save tensors that share memory, so
  ``test_tied_weights_can_load_symmetrically`` clones the tensors it saves (the other two
  tied-weights tests clone them themselves).
* ``@require_torch`` dropped; ``TestCasePlus`` is ``unittest.TestCase``.
* Out of scope, each with its reason (``OUT_OF_SCOPE`` at the end): the tests that need the
  hub or an accelerator, those of other architectures (T5, Mistral, Llava, GPT-2, ...) and
  of transformers' own machinery on toy ``PreTrainedModel`` classes, and the classes of the
  file that are not about saving and loading.
"""

from __future__ import annotations

import json
import os
import tempfile
import unittest

import torch
from safetensors.torch import load_file
from safetensors.torch import save_file as safe_save_file

from .upstream import LOGGER_NAME, CaptureLogger, compare_state_dicts, library, stand_in_directory

BertConfig = library.BertConfig
BertModel = library.BertModel
BertForMaskedLM = library.BertForMaskedLM

SAFE_WEIGHTS_NAME = "model.safetensors"
SAFE_WEIGHTS_INDEX_NAME = "model.safetensors.index.json"
WEIGHTS_NAME = "pytorch_model.bin"
WEIGHTS_INDEX_NAME = "pytorch_model.bin.index.json"
EnvironmentError = OSError  # noqa: A001 (upstream's spelling)

#: The tie the tied-weights tests exercise: upstream's ``linear.weight`` (source) and
#: ``linear_2.weight`` (target), BERT's word embeddings and masked-LM decoder.
SOURCE = "bert.embeddings.word_embeddings.weight"
TARGET = "cls.predictions.decoder.weight"


def _logger(name):
    """The library's logger in place of transformers' ``logging.get_logger(name)``."""
    import logging

    return logging.getLogger(LOGGER_NAME)


def _save_bin(model, directory, **kwargs):
    """``with force_serialization_as_bin_files(): model.save_pretrained(directory, **kwargs)``."""
    if library.__name__ == "transformers":
        from transformers.testing_utils import force_serialization_as_bin_files

        with force_serialization_as_bin_files():
            model.save_pretrained(directory, **kwargs)
    else:
        model.save_pretrained(directory, safe_serialization=False, **kwargs)




def _local(repo):
    """The local stand-in for hub repo ``repo`` (see the header), built on first use."""
    directory, built = stand_in_directory(repo)
    if built:
        return directory
    torch.manual_seed(0)
    config = BertConfig(vocab_size=1124, hidden_size=32, num_hidden_layers=5, num_attention_heads=4,
                        intermediate_size=37, max_position_embeddings=512, type_vocab_size=16)
    model = BertModel(config)
    name = repo.split("/")[-1]
    if name == "tiny-random-bert-safetensors":
        model.save_pretrained(directory)
    elif name in ("tiny-random-bert", "tiny-bert-pt-only"):
        _save_bin(model, directory)
    elif name == "tiny-random-bert-sharded-safetensors":
        model.save_pretrained(directory, max_shard_size="100kB")
    elif name == "tiny-random-bert-sharded":
        _save_bin(model, directory, max_shard_size="100kB")
    elif name == "tiny-random-bert-variant":
        _save_bin(model, directory)
        os.rename(os.path.join(directory, WEIGHTS_NAME), os.path.join(directory, "pytorch_model.v2.bin"))
    elif name.startswith("explicit_transformers_weight_in_config"):
        model.save_pretrained(directory, max_shard_size="100kB" if name.endswith("_sharded") else "50GB")
        explicit = "explicit_weights.safetensors"
        if name.endswith("_sharded"):
            os.rename(os.path.join(directory, SAFE_WEIGHTS_INDEX_NAME),
                      os.path.join(directory, explicit + ".index.json"))
            explicit += ".index.json"
        else:
            os.rename(os.path.join(directory, SAFE_WEIGHTS_NAME), os.path.join(directory, explicit))
        with open(os.path.join(directory, "config.json"), encoding="utf-8") as f:
            values = json.load(f)
        values["transformers_weights"] = explicit
        with open(os.path.join(directory, "config.json"), "w", encoding="utf-8") as f:
            json.dump(values, f)
    else:
        raise KeyError(f"no local stand-in for {repo}")
    return directory


def check_models_equal(model1, model2):
    models_are_equal = True
    for model1_p, model2_p in zip(model1.parameters(), model2.parameters()):
        if model1_p.data.ne(model2_p.data).sum() > 0:
            models_are_equal = False

    return models_are_equal


def _tied_model():
    """Upstream's ``BaseModelWithTiedWeights(PreTrainedConfig(tie_word_embeddings=True))``."""
    return BertForMaskedLM(BertConfig(vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                      intermediate_size=37, tie_word_embeddings=True))


def _source(model):
    return model.get_parameter(SOURCE)


def _target(model):
    return model.get_parameter(TARGET)


class ModelUtilsTest(unittest.TestCase):
    def setUp(self):
        self.old_dtype = torch.get_default_dtype()
        super().setUp()

    def tearDown(self):
        torch.set_default_dtype(self.old_dtype)
        super().tearDown()

    def test_model_from_pretrained_subfolder(self):
        config = BertConfig.from_pretrained(_local("hf-internal-testing/tiny-random-bert"))
        model = BertModel(config)

        subfolder = "bert"
        with tempfile.TemporaryDirectory() as tmp_dir:
            model.save_pretrained(os.path.join(tmp_dir, subfolder))

            with self.assertRaises(OSError):
                _ = BertModel.from_pretrained(tmp_dir)

            model_loaded = BertModel.from_pretrained(tmp_dir, subfolder=subfolder)

        self.assertTrue(check_models_equal(model, model_loaded))

    def test_model_manually_shared_disjointed_tensors_optimum(self):
        config = BertConfig.from_pretrained(_local("hf-internal-testing/tiny-random-bert"))
        model = BertModel(config)

        # Let's fuse qkv
        attn = model.encoder.layer[0].attention.self
        q = attn.query.weight
        k = attn.key.weight
        v = attn.value.weight
        # Force some shared storage
        qkv = torch.stack([q, k, v], dim=0)
        attn.query.weight = torch.nn.Parameter(qkv[0])
        attn.key.weight = torch.nn.Parameter(qkv[1])
        attn.value.weight = torch.nn.Parameter(qkv[2])
        with tempfile.TemporaryDirectory() as tmp_dir:
            model.save_pretrained(tmp_dir)
            model_loaded = BertModel.from_pretrained(tmp_dir)

        self.assertTrue(check_models_equal(model, model_loaded))

    def test_model_from_pretrained_subfolder_sharded(self):
        config = BertConfig.from_pretrained(_local("hf-internal-testing/tiny-random-bert"))
        model = BertModel(config)

        subfolder = "bert"
        with tempfile.TemporaryDirectory() as tmp_dir:
            model.save_pretrained(os.path.join(tmp_dir, subfolder), max_shard_size="10KB")

            with self.assertRaises(OSError):
                _ = BertModel.from_pretrained(tmp_dir)

            model_loaded = BertModel.from_pretrained(tmp_dir, subfolder=subfolder)

        self.assertTrue(check_models_equal(model, model_loaded))

    def test_checkpoint_sharding_local(self):
        model = BertModel.from_pretrained(_local("hf-internal-testing/tiny-random-bert"))

        with tempfile.TemporaryDirectory() as tmp_dir:
            # We use the same folder for various sizes to make sure a new save erases the old checkpoint.
            for max_size in ["50kB", "100kB", "200kB"]:
                model.save_pretrained(tmp_dir, max_shard_size=max_size)

                # Get each shard file and its size
                shard_to_size = {}
                for shard in os.listdir(tmp_dir):
                    if shard.endswith(".safetensors"):
                        shard_file = os.path.join(tmp_dir, shard)
                        shard_to_size[shard_file] = os.path.getsize(shard_file)

                index_file = os.path.join(tmp_dir, SAFE_WEIGHTS_INDEX_NAME)
                # Check there is an index but no regular weight file
                self.assertTrue(os.path.isfile(index_file))
                self.assertFalse(os.path.isfile(os.path.join(tmp_dir, SAFE_WEIGHTS_NAME)))

                # Check a file is bigger than max_size only when it has a single weight
                for shard_file, size in shard_to_size.items():
                    max_size_int = int(max_size[:-2]) * 10**3
                    # Note: the file can end up being slightly bigger than the size asked for (since we count parameters)
                    if size >= max_size_int + 50000:
                        state_dict = load_file(shard_file)
                        self.assertEqual(len(state_dict), 1)

                # Check the index and the shard files found match
                with open(index_file, encoding="utf-8") as f:
                    index = json.loads(f.read())

                all_shards = set(index["weight_map"].values())
                shards_found = {f for f in os.listdir(tmp_dir) if f.endswith(".safetensors")}
                self.assertSetEqual(all_shards, shards_found)

                # Finally, check the model can be reloaded
                new_model = BertModel.from_pretrained(tmp_dir)
                for p1, p2 in zip(model.parameters(), new_model.parameters()):
                    torch.testing.assert_close(p1, p2)

    def test_checkpoint_variant_local(self):
        model = BertModel.from_pretrained(_local("hf-internal-testing/tiny-random-bert"))

        with tempfile.TemporaryDirectory() as tmp_dir:
            model.save_pretrained(tmp_dir, variant="v2")

            weights_name = ".".join(SAFE_WEIGHTS_NAME.split(".")[:-1] + ["v2"] + ["safetensors"])

            weights_file = os.path.join(tmp_dir, weights_name)
            self.assertTrue(os.path.isfile(weights_file))
            self.assertFalse(os.path.isfile(os.path.join(tmp_dir, SAFE_WEIGHTS_NAME)))

            with self.assertRaises(EnvironmentError):
                _ = BertModel.from_pretrained(tmp_dir)

            new_model = BertModel.from_pretrained(tmp_dir, variant="v2")

        for p1, p2 in zip(model.parameters(), new_model.parameters()):
            torch.testing.assert_close(p1, p2)

    def test_checkpoint_variant_local_sharded(self):
        model = BertModel.from_pretrained(_local("hf-internal-testing/tiny-random-bert"))

        with tempfile.TemporaryDirectory() as tmp_dir:
            model.save_pretrained(tmp_dir, variant="v2", max_shard_size="50kB")

            weights_index_name = ".".join(SAFE_WEIGHTS_INDEX_NAME.split(".")[:-1] + ["v2"] + ["json"])
            weights_index_file = os.path.join(tmp_dir, weights_index_name)
            self.assertTrue(os.path.isfile(weights_index_file))
            self.assertFalse(os.path.isfile(os.path.join(tmp_dir, SAFE_WEIGHTS_INDEX_NAME)))

            for i in range(1, 5):
                weights_name = ".".join(SAFE_WEIGHTS_NAME.split(".")[:-1] + [f"v2-0000{i}-of-00005"] + ["safetensors"])
                weights_name_file = os.path.join(tmp_dir, weights_name)
                self.assertTrue(os.path.isfile(weights_name_file))

            with self.assertRaises(EnvironmentError):
                _ = BertModel.from_pretrained(tmp_dir)

            new_model = BertModel.from_pretrained(tmp_dir, variant="v2")

        for p1, p2 in zip(model.parameters(), new_model.parameters()):
            torch.testing.assert_close(p1, p2)

    def test_checkpoint_loading_only_safetensors_available(self):
        # Test that the loading behaviour is as expected when only safetensor checkpoints are available
        # - We can load the model with use_safetensors=True
        # - We can load the model without specifying use_safetensors i.e. we search for the available checkpoint,
        #   preferring safetensors
        # - We cannot load the model with use_safetensors=False
        model = BertModel.from_pretrained(_local("hf-internal-testing/tiny-random-bert"))

        with tempfile.TemporaryDirectory() as tmp_dir:
            model.save_pretrained(tmp_dir, max_shard_size="50kB")

            weights_index_name = ".".join(SAFE_WEIGHTS_INDEX_NAME.split(".")[:-1] + ["json"])
            weights_index_file = os.path.join(tmp_dir, weights_index_name)
            self.assertTrue(os.path.isfile(weights_index_file))

            for i in range(1, 5):
                weights_name = f"model-0000{i}-of-00005" + ".safetensors"
                weights_name_file = os.path.join(tmp_dir, weights_name)
                self.assertTrue(os.path.isfile(weights_name_file))

            # Setting use_safetensors=False should raise an error as the checkpoint was saved in safetensors
            with self.assertRaises(OSError):
                _ = BertModel.from_pretrained(tmp_dir, use_safetensors=False)

            # We can load the model with use_safetensors=True
            new_model = BertModel.from_pretrained(tmp_dir, use_safetensors=True)

            # We can load the model without specifying use_safetensors
            new_model = BertModel.from_pretrained(tmp_dir)

        for p1, p2 in zip(model.parameters(), new_model.parameters()):
            torch.testing.assert_close(p1, p2)

    def test_checkpoint_loading_only_pytorch_bin_available(self):
        # Test that the loading behaviour is as expected when only pytorch checkpoints are available
        # - We can load the model with use_safetensors=False
        # - We can load the model without specifying use_safetensors i.e. we search for the available checkpoint,
        #   preferring safetensors but falling back to pytorch
        # - We cannot load the model with use_safetensors=True
        model = BertModel.from_pretrained(_local("hf-internal-testing/tiny-random-bert"))

        with tempfile.TemporaryDirectory() as tmp_dir:
            # Since we don't support saving with bins files anymore, but still support loading we use this context
            # to easily create the bins files and try to load them
            _save_bin(model, tmp_dir, max_shard_size="50kB")

            weights_index_file = os.path.join(tmp_dir, WEIGHTS_INDEX_NAME)
            self.assertTrue(os.path.isfile(weights_index_file))

            for i in range(1, 5):
                weights_name = WEIGHTS_NAME.split(".")[0].split("_")[0] + f"_model-0000{i}-of-00005" + ".bin"
                weights_name_file = os.path.join(tmp_dir, weights_name)
                self.assertTrue(os.path.isfile(weights_name_file))

            # Setting use_safetensors=True should raise an error as the checkpoint was saved with safetensors=False
            with self.assertRaises(OSError):
                _ = BertModel.from_pretrained(tmp_dir, use_safetensors=True)

            # We can load the model with use_safetensors=False
            _ = BertModel.from_pretrained(tmp_dir, use_safetensors=False)

            # We can load the model without specifying use_safetensors
            new_model = BertModel.from_pretrained(tmp_dir)

            for p1, p2 in zip(model.parameters(), new_model.parameters()):
                torch.testing.assert_close(p1, p2)

    def test_checkpoint_variant_save_load(self):
        with tempfile.TemporaryDirectory() as tmp_dir:
            model = BertModel.from_pretrained(
                _local("hf-internal-testing/tiny-random-bert-variant"),
                cache_dir=tmp_dir,
                variant="v2",
                use_safetensors=False,
            )
            weights_name = ".".join(SAFE_WEIGHTS_NAME.split(".")[:-1] + ["v2"] + ["safetensors"])

            model.save_pretrained(tmp_dir, variant="v2")
            # saving will create a variant checkpoint
            self.assertTrue(os.path.isfile(os.path.join(tmp_dir, weights_name)))

            model.save_pretrained(tmp_dir)
            # saving shouldn't delete variant checkpoints
            weights_name = ".".join(SAFE_WEIGHTS_NAME.split(".")[:-1] + ["v2"] + ["safetensors"])
            self.assertTrue(os.path.isfile(os.path.join(tmp_dir, weights_name)))

            # there should be a normal checkpoint
            self.assertTrue(os.path.isfile(os.path.join(tmp_dir, SAFE_WEIGHTS_NAME)))

        self.assertIsNotNone(model)

    def test_safetensors_save_and_load(self):
        model = BertModel.from_pretrained(_local("hf-internal-testing/tiny-random-bert"))
        with tempfile.TemporaryDirectory() as tmp_dir:
            model.save_pretrained(tmp_dir)
            # No pytorch_model.bin file, only a model.safetensors
            self.assertTrue(os.path.isfile(os.path.join(tmp_dir, SAFE_WEIGHTS_NAME)))
            self.assertFalse(os.path.isfile(os.path.join(tmp_dir, WEIGHTS_NAME)))

            new_model = BertModel.from_pretrained(tmp_dir)

            # Check models are equal
            for p1, p2 in zip(model.parameters(), new_model.parameters()):
                torch.testing.assert_close(p1, p2)

    def test_safetensors_load_from_hub(self):
        safetensors_model = BertModel.from_pretrained(_local("hf-internal-testing/tiny-random-bert-safetensors"))
        pytorch_model = BertModel.from_pretrained(_local("hf-internal-testing/tiny-random-bert"))

        # Check models are equal
        for p1, p2 in zip(safetensors_model.parameters(), pytorch_model.parameters()):
            torch.testing.assert_close(p1, p2)

    def test_safetensors_save_and_load_sharded(self):
        model = BertModel.from_pretrained(_local("hf-internal-testing/tiny-random-bert"))
        with tempfile.TemporaryDirectory() as tmp_dir:
            model.save_pretrained(tmp_dir, max_shard_size="100kB")
            # No pytorch_model.bin index file, only a model.safetensors index
            self.assertFalse(os.path.isfile(os.path.join(tmp_dir, WEIGHTS_INDEX_NAME)))
            self.assertTrue(os.path.isfile(os.path.join(tmp_dir, SAFE_WEIGHTS_INDEX_NAME)))
            # No regular weights file
            self.assertFalse(os.path.isfile(os.path.join(tmp_dir, WEIGHTS_NAME)))
            self.assertFalse(os.path.isfile(os.path.join(tmp_dir, SAFE_WEIGHTS_NAME)))

            new_model = BertModel.from_pretrained(tmp_dir)

            # Check models are equal
            for p1, p2 in zip(model.parameters(), new_model.parameters()):
                torch.testing.assert_close(p1, p2)

    def test_safetensors_load_from_hub_sharded(self):
        safetensors_model = BertModel.from_pretrained(
            _local("hf-internal-testing/tiny-random-bert-sharded-safetensors"))
        pytorch_model = BertModel.from_pretrained(_local("hf-internal-testing/tiny-random-bert-sharded"))

        # Check models are equal
        for p1, p2 in zip(safetensors_model.parameters(), pytorch_model.parameters()):
            torch.testing.assert_close(p1, p2)

    def test_tied_weights_can_load_symmetrically(self):
        """Test that we can correctly load and tie weights even though the wrong key was saved."""
        model = _tied_model()
        # Just to be sure it's actually tied
        self.assertIs(_source(model), _target(model), msg="Weights are not tied!")
        with tempfile.TemporaryDirectory() as tmp_dir:
            # Save the config
            with open(os.path.join(tmp_dir, "config.json"), "w") as f:
                f.write(json.dumps(model.config.to_dict()))

            state_dict = model.state_dict()
            # Save using the wrong key
            state_dict.pop(SOURCE)
            state_dict = {k: v.clone() for k, v in state_dict.items()}  # BERT's decoder bias is tied too
            safe_save_file(state_dict, os.path.join(tmp_dir, "model.safetensors"))

            new_model, load_info = BertForMaskedLM.from_pretrained(tmp_dir, output_loading_info=True)
            # Assert no missing keys
            self.assertSetEqual(load_info["missing_keys"], set(), msg=f"{load_info['missing_keys']} are missing!")
            # It's still the same weight
            self.assertIs(_source(new_model), _target(new_model), msg="Weights are not tied!")

            # Make sure both state dict are the same
            compare_state_dicts(model.state_dict(), new_model.state_dict())

    def test_tied_weights_are_not_tied_if_both_present_but_different(self):
        """Test that if both the source and target of tied weights are present and different, we do NOT tie them, and instead
        raise a warning"""
        model = _tied_model()
        # Just to be sure it's actually tied
        self.assertIs(_source(model), _target(model), msg="Weights are not tied!")
        with tempfile.TemporaryDirectory() as tmp_dir:
            # Save the config
            with open(os.path.join(tmp_dir, "config.json"), "w") as f:
                f.write(json.dumps(model.config.to_dict()))

            state_dict = model.state_dict()
            # Clone every param to make sure nothing is tied -> we save everything
            state_dict = {k: v.clone() for k, v in state_dict.items()}
            # Make sure the target tied weights has a different value than the source
            state_dict[TARGET] = state_dict[TARGET] + 2
            safe_save_file(state_dict, os.path.join(tmp_dir, "model.safetensors"))

            logger = _logger("transformers.modeling_utils")
            with CaptureLogger(logger) as cl:
                new_model, load_info = BertForMaskedLM.from_pretrained(tmp_dir, output_loading_info=True)

            # We should have raised a warning here saying that we will NOT tie the weights
            self.assertIn("both are present in the checkpoints with different values, so we will NOT tie them", cl.out)
            # Assert no missing keys
            self.assertSetEqual(load_info["missing_keys"], set(), msg=f"{load_info['missing_keys']} are missing!")
            # It should not be the same weight anymore
            self.assertIsNot(
                _source(new_model), _target(new_model), msg="Weights are tied but they should not!"
            )

    def test_tied_weights_are_tied_if_both_present_and_similar(self):
        """Test that if both the source and target of tied weights are present but have same values, we tie them"""
        model = _tied_model()
        # Just to be sure it's actually tied
        self.assertIs(_source(model), _target(model), msg="Weights are not tied!")
        with tempfile.TemporaryDirectory() as tmp_dir:
            # Save the config
            with open(os.path.join(tmp_dir, "config.json"), "w") as f:
                f.write(json.dumps(model.config.to_dict()))

            state_dict = model.state_dict()
            # Clone every param to make sure nothing is tied -> we save everything
            state_dict = {k: v.clone() for k, v in state_dict.items()}
            safe_save_file(state_dict, os.path.join(tmp_dir, "model.safetensors"))

            new_model, load_info = BertForMaskedLM.from_pretrained(tmp_dir, output_loading_info=True)

            # Assert no missing keys
            self.assertSetEqual(load_info["missing_keys"], set(), msg=f"{load_info['missing_keys']} are missing!")
            # It should still be the same weight
            self.assertIs(
                _source(new_model), _target(new_model), msg="Weights are NOT tied but they should be!"
            )

            # Make sure both state dict are the same
            compare_state_dicts(model.state_dict(), new_model.state_dict())

    def test_safetensors_torch_from_torch(self):
        model = BertModel.from_pretrained(_local("hf-internal-testing/tiny-bert-pt-only"))

        with tempfile.TemporaryDirectory() as tmp_dir:
            model.save_pretrained(tmp_dir)
            new_model = BertModel.from_pretrained(tmp_dir)

        for p1, p2 in zip(model.parameters(), new_model.parameters()):
            self.assertTrue(torch.equal(p1, p2))

    def test_safetensors_torch_from_torch_sharded(self):
        model = BertModel.from_pretrained(_local("hf-internal-testing/tiny-bert-pt-only"))

        with tempfile.TemporaryDirectory() as tmp_dir:
            model.save_pretrained(tmp_dir, max_shard_size="100kB")
            new_model = BertModel.from_pretrained(tmp_dir)

        for p1, p2 in zip(model.parameters(), new_model.parameters()):
            self.assertTrue(torch.equal(p1, p2))

    def test_load_model_with_state_dict_only(self):
        model = BertModel.from_pretrained(_local("hf-internal-testing/tiny-random-bert"))
        state_dict = model.state_dict()
        config = model.config

        model_loaded = BertModel.from_pretrained(
            pretrained_model_name_or_path=None, config=config, state_dict=state_dict
        )
        self.assertTrue(check_models_equal(model, model_loaded))

    def test_unknown_quantization_config(self):
        with tempfile.TemporaryDirectory() as tmpdir:
            config = BertConfig(
                vocab_size=99, hidden_size=32, num_hidden_layers=5, num_attention_heads=4, intermediate_size=37
            )
            model = BertModel(config)
            config.quantization_config = {"quant_method": "unknown"}
            model.save_pretrained(tmpdir)
            with self.assertLogs(LOGGER_NAME, level="WARNING") as cm:
                BertModel.from_pretrained(tmpdir)
            self.assertEqual(len(cm.records), 1)
            self.assertTrue(cm.records[0].message.startswith("Unknown quantization type, got"))

    def test_explicit_transformers_weights(self):
        """
        Transformers supports loading from repos where the weights file is explicitly set in the config.
        When loading a config file, transformers will see whether `transformers_weights` is defined in the config.
        If so, it will load from that file.

        Here, we ensure that the correct file is loaded.
        """
        model = BertModel.from_pretrained(_local("hf-internal-testing/explicit_transformers_weight_in_config"))
        self.assertEqual(model.num_parameters(), 87929)

    def test_explicit_transformers_weights_index(self):
        """
        Transformers supports loading from repos where the weights file is explicitly set in the config.
        When loading a config file, transformers will see whether `transformers_weights` is defined in the config.
        If so, it will load from that file.

        Here, we ensure that the correct file is loaded, given the file is an index of multiple weights.
        """
        model = BertModel.from_pretrained(
            _local("hf-internal-testing/explicit_transformers_weight_in_config_sharded"))
        self.assertEqual(model.num_parameters(), 87929)

    def test_explicit_transformers_weights_save_and_reload(self):
        """
        Transformers supports loading from repos where the weights file is explicitly set in the config.
        When loading a config file, transformers will see whether `transformers_weights` is defined in the config.
        If so, it will load from that file.

        When saving the model, we should be careful not to safe the `transformers_weights` attribute in the config;
        otherwise, transformers will try to load from that file whereas it should simply load from the default file.

        We test that for a non-sharded repo.
        """
        model = BertModel.from_pretrained(_local("hf-internal-testing/explicit_transformers_weight_in_config"))
        explicit_transformers_weights = model.config.transformers_weights

        with tempfile.TemporaryDirectory() as tmpdirname:
            model.save_pretrained(tmpdirname)

            # The config should not have a mention of transformers_weights
            with open(os.path.join(tmpdirname, "config.json")) as f:
                config = json.loads(f.read())
                self.assertFalse("transformers_weights" in config)

            # The serialized weights should be in model.safetensors and not the transformers_weights
            self.assertTrue(explicit_transformers_weights not in os.listdir(tmpdirname))
            self.assertTrue("model.safetensors" in os.listdir(tmpdirname))

    def test_explicit_transformers_weights_index_save_and_reload(self):
        """
        Transformers supports loading from repos where the weights file is explicitly set in the config.
        When loading a config file, transformers will see whether `transformers_weights` is defined in the config.
        If so, it will load from that file.

        When saving the model, we should be careful not to safe the `transformers_weights` attribute in the config;
        otherwise, transformers will try to load from that file whereas it should simply load from the default file.

        We test that for a sharded repo.
        """
        model = BertModel.from_pretrained(
            _local("hf-internal-testing/explicit_transformers_weight_in_config_sharded"))
        explicit_transformers_weights = model.config.transformers_weights

        with tempfile.TemporaryDirectory() as tmpdirname:
            model.save_pretrained(tmpdirname, max_shard_size="100kb")

            # The config should not have a mention of transformers_weights
            with open(os.path.join(tmpdirname, "config.json")) as f:
                config = json.loads(f.read())
                self.assertFalse("transformers_weights" in config)

            # The serialized weights should be in model.safetensors and not the transformers_weights
            self.assertTrue(explicit_transformers_weights not in os.listdir(tmpdirname))
            self.assertTrue("model.safetensors.index.json" in os.listdir(tmpdirname))


_HUB = "downloads {} from the hub, and its expectations are about that repo or the hub client itself"
_ACCELERATOR = "needs an accelerator (device maps, offloading or GPU timing)"
_TOY = ("transformers' loading machinery on its toy PreTrainedModel classes ({}), with expectations about "
        "those classes, not BERT")
_OTHER = "another architecture ({}) from the hub, not BERT"
OUT_OF_SCOPE = {
    "ModelUtilsTest.test_get_total_byte_count_does_not_require_process_group":
        _TOY.format("tensor-parallel byte counting on BaseModel"),
    "ModelUtilsTest.test_hub_retry": "transformers' hub_retry decorator around an HTTP error; no model",
    "ModelUtilsTest.test_model_from_pretrained": _HUB.format("bert-base-uncased (@slow)"),
    "ModelUtilsTest.test_model_from_pretrained_hub_subfolder": _HUB.format("tiny-random-bert-subfolder"),
    "ModelUtilsTest.test_model_from_pretrained_with_different_pretrained_model_name": _OTHER.format("T5"),
    "ModelUtilsTest.test_model_from_pretrained_with_none_quantization_config": _OTHER.format("Mistral, with accelerate"),
    "ModelUtilsTest.test_model_from_config_dtype": _OTHER.format("T5"),
    "ModelUtilsTest.test_model_from_config_dtype_str": _OTHER.format("T5"),
    "ModelUtilsTest.test_model_from_config_dtype_composite": _OTHER.format("Llava"),
    "ModelUtilsTest.test_model_from_pretrained_dtype": _OTHER.format("T5, CLIP"),
    "ModelUtilsTest.test_model_from_pretrained_attn_implementation": _OTHER.format("Mistral"),
    "ModelUtilsTest.test_model_from_config_attn_implementation": _OTHER.format("Mistral"),
    "ModelUtilsTest.test_checkpoint_sharding_from_hub": _HUB.format("tiny-random-bert-sharded"),
    "ModelUtilsTest.test_checkpoint_variant_hub": _HUB.format("tiny-random-bert-variant into a cache_dir"),
    "ModelUtilsTest.test_checkpoint_variant_hub_sharded": _HUB.format("tiny-random-bert-variant-sharded"),
    "ModelUtilsTest.test_checkpoint_variant_hub_safe": _HUB.format("tiny-random-bert-variant-safe"),
    "ModelUtilsTest.test_checkpoint_variant_hub_sharded_safe": _HUB.format("tiny-random-bert-variant-sharded-safe"),
    "ModelUtilsTest.test_model_parallelism_gpt2": _ACCELERATOR,
    "ModelUtilsTest.test_from_pretrained_disk_offload_task_model": _ACCELERATOR,
    "ModelUtilsTest.test_from_pretrained_disk_offload_derived_to_base_model": _ACCELERATOR,
    "ModelUtilsTest.test_from_pretrained_non_contiguous_checkpoint": _OTHER.format("OwlViT (@slow)"),
    "ModelUtilsTest.test_cached_files_are_used_when_internet_is_down": _HUB.format("tiny-random-bert, then mocks httpx"),
    "ModelUtilsTest.test_save_model_with_device_map_cpu": _OTHER.format("GPT-2, with accelerate's device_map"),
    "ModelUtilsTest.test_save_offloaded_model": _ACCELERATOR,
    "ModelUtilsTest.test_save_offloaded_model_with_direct_params": _ACCELERATOR,
    "ModelUtilsTest.test_save_offloaded_model_dynamic_tied_weights_keys": _ACCELERATOR,
    "ModelUtilsTest.test_use_safetensors": _HUB.format("RobertaModel, CLIP and config-no-model repos"),
    "ModelUtilsTest.test_base_model_to_head_model_load": _TOY.format("BaseModel, ModelWithHead; skipped upstream"),
    "ModelUtilsTest.test_tied_weights_reload": _TOY.format("its 'With head' half expects missing_keys == "
                                                           "{'decoder.bias'} of ModelWithHeadAndTiedWeights"),
    "ModelUtilsTest.test_tied_weights_can_load_symmetrically_multiple_keys":
        _TOY.format("three weights tied to one; BERT ties one pair"),
    "ModelUtilsTest.test_tied_weights_are_missing_if_both_absent":
        "refused on purpose: a checkpoint without the word embeddings lacks encoder weights, an error unless "
        "strict=False (transformers loads it with a warning); tests/integrations/test_transformers_tools.py "
        "checks the refusal",
    "ModelUtilsTest.test_tied_weights_are_always_tied_from_config": _TOY.format("Llama, init.no_tie_weights"),
    "ModelUtilsTest.test_no_tie_weights_is_thread_local_during_concurrent_from_pretrained":
        _TOY.format("init.no_tie_weights across threads"),
    "ModelUtilsTest.test_no_tie_weights_is_model_specific_during_nested_from_pretrained":
        _TOY.format("init.no_tie_weights"),
    "ModelUtilsTest.test_unexpected_keys_warnings": _TOY.format("ModelWithHead; transformers' report table"),
    "ModelUtilsTest.test_warn_if_padding_and_no_attention_mask":
        _TOY.format("ModelWithHead.warn_if_padding_and_no_attention_mask, which 5.x BERT never calls"),
    "ModelUtilsTest.test_pretrained_low_mem_new_config": _ACCELERATOR,
    "ModelUtilsTest.test_generation_config_is_loaded_with_model": _OTHER.format("Mistral"),
    "ModelUtilsTest.test_saving_model_config_with_generation_params": _OTHER.format("GPT-2"),
    "ModelUtilsTest.test_model_from_pretrained_from_mlx": _OTHER.format("Mistral, MLX"),
    "ModelUtilsTest.test_can_generate": _TOY.format("GenerationMixin subclasses of BertModel"),
    "ModelUtilsTest.test_save_and_load_config_with_custom_generation": _OTHER.format("T5"),
    "ModelUtilsTest.test_cache_when_needed_at_train_time": _OTHER.format("Mistral; skipped upstream"),
    "ModelUtilsTest.test_restore_default_dtype_from_pretrained": _OTHER.format("Mistral"),
    "ModelUtilsTest.test_restore_default_dtype_from_config": _OTHER.format("Mistral"),
    "ModelUtilsTest.test_loading_is_fast_on_gpu": _ACCELERATOR,
    "ModelUtilsTest.test_config_class_attribute": _TOY.format("config_class resolution of PreTrainedModel subclasses"),
    "ModelUtilsTest.test_ignore_missing_key_works": _TOY.format("BaseModelWithMissingKeys"),
    "ModelUtilsTest.test_device_map_works_with_unexpected_keys": _TOY.format("disk device_map"),
    "ModelUtilsTest.test_device_map_works_with_unexpected_keys_sharded": _TOY.format("disk device_map"),
    "ModelUtilsTest.test_loading_respect_env_variable_for_threading": _TOY.format("HF_DEACTIVATE_ASYNC_LOAD"),
    "ModelUtilsTest.test_error_in_weight_conversion_is_raised": _OTHER.format("Mixtral, its weight conversion"),
    "ModelUtilsTest.test_composite_model_inherit_properties": _TOY.format("MultimodalModel"),
    "ModelUtilsTest.test_decoder_only_model_can_be_used_as_encoder": _OTHER.format("Llama"),
    "TestOffline.*": _HUB.format("a Siglip image classifier"),
    "ModelOnTheFlyConversionTester.*": "pushes to the hub and waits for its safetensors conversion bot (@slow)",
    "ModelPushToHubTester.*": "pushes to the hub's staging server (@is_staging_test)",
    "TestAttentionImplementation.*": "attention and experts dispatch of other architectures (MCTCT, GPTBigCode, "
                                     "Mixtral); not saving or loading",
    "TestTensorSharing.*": "transformers' private _find_disjoint and _find_identical helpers; no model",
    "TestSaveAndLoadModelWithExtraState.*": "a toy PreTrainedModel with torch's extra-state API, not BERT",
    "TestGetDecoder.*": "get_decoder of other architectures (Mistral, Bart, OPT, T5, GPT-2, Llava); not saving or loading",
    "TestGetEncoder.*": "get_encoder of other architectures (Bart, Mistral, Musicgen, Llava); not saving or loading",
    "DisableMmapLoadingTest.*": "transformers' private load_state_dict(disable_mmap=) and _is_on_hf_mount helpers",
}
