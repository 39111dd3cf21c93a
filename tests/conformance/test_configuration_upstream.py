"""transformers 5.23's ``tests/test_configuration_common.py`` (``ConfigTester``), ported to
the library under test and run as ``BertModelTest.test_config`` runs it:
``ConfigTester(self, config_class=BertConfig, hidden_size=37).run_common_tests()``.

Source: the transformers 5.23.0 sdist, ``tests/test_configuration_common.py``, and the
``test_config`` of ``tests/models/bert/test_modeling_bert.py`` (see that port's header).
Every check and expectation is the authors'. Mechanical changes:

* Each ``create_and_test_*`` / ``check_*`` step is its own test (``run_common_tests`` runs
  them in one), so a failure names its step.
* ``CaptureLogger(transformers.configuration_utils logger)`` -> ``assertNoLogs`` on the
  library's logger.
* ``create_and_test_config_from_and_save_pretrained_composite`` and
  ``create_and_test_config_from_pretrained_custom_kwargs`` do nothing for a config without
  sub-configs (BERT's): they run, as upstream, and return at their first line.
* ``config_common_kwargs``, which ``check_config_arguments_init`` reads from
  ``tests/utils/test_configuration_utils.py`` (not in the sdist), is that file's 5.x list,
  from huggingface/transformers' main branch as stored by the search index (the nine keys
  5.x kept; 4.57.6's longer list is held by ``tests_transformers4/test_config_4x.py``).
  ``is_torch_available()`` is True here.
"""

from __future__ import annotations

import copy
import json
import os
import tempfile
import unittest

import torch

from .upstream import LOGGER_NAME, library

BertConfig = library.BertConfig

config_common_kwargs = {
    "return_dict": False,
    "output_hidden_states": True,
    "output_attentions": True,
    "dtype": "float16",
    "chunk_size_feed_forward": 5,
    "architectures": ["BertModel"],
    "id2label": {0: "label"},
    "label2id": {"label": "0"},
    "problem_type": "regression",
}


class ConfigTester:
    def __init__(self, parent, config_class=None, has_text_modality=True, common_properties=None, **kwargs):
        self.parent = parent
        self.config_class = config_class
        self.has_text_modality = has_text_modality
        self.inputs_dict = kwargs
        self.common_properties = common_properties

    def create_and_test_config_common_properties(self):
        config = self.config_class(**self.inputs_dict)
        common_properties = (
            ["hidden_size", "num_attention_heads", "num_hidden_layers"]
            if self.common_properties is None and not self.config_class.sub_configs
            else self.common_properties
        )
        common_properties = [] if common_properties is None else common_properties

        # Add common fields for text models
        if self.has_text_modality:
            common_properties.extend(["vocab_size"])

        # Test that config has the common properties as getters
        for prop in common_properties:
            self.parent.assertTrue(hasattr(config, prop), msg=f"`{prop}` does not exist")

    def create_and_test_config_to_json_string(self):
        config = self.config_class(**self.inputs_dict)
        obj = json.loads(config.to_json_string())
        for key, value in self.inputs_dict.items():
            self.parent.assertEqual(obj[key], value)

    def create_and_test_config_to_json_file(self):
        config_first = self.config_class(**self.inputs_dict)

        with tempfile.TemporaryDirectory() as tmpdirname:
            json_file_path = os.path.join(tmpdirname, "config.json")
            config_first.to_json_file(json_file_path)
            config_second = self.config_class.from_json_file(json_file_path)

        self.parent.assertEqual(config_second.to_dict(), config_first.to_dict())

    def create_and_test_config_from_and_save_pretrained(self):
        config_first = self.config_class(**self.inputs_dict)

        with tempfile.TemporaryDirectory() as tmpdirname:
            config_first.save_pretrained(tmpdirname)
            config_second = self.config_class.from_pretrained(tmpdirname)

        self.parent.assertEqual(config_second.to_dict(), config_first.to_dict())

        with self.parent.assertRaises(OSError):
            self.config_class.from_pretrained(f".{tmpdirname}")

    def create_and_test_config_from_and_save_pretrained_subfolder(self):
        config_first = self.config_class(**self.inputs_dict)

        subfolder = "test"
        with tempfile.TemporaryDirectory() as tmpdirname:
            sub_tmpdirname = os.path.join(tmpdirname, subfolder)
            config_first.save_pretrained(sub_tmpdirname)
            config_second = self.config_class.from_pretrained(tmpdirname, subfolder=subfolder)

        self.parent.assertEqual(config_second.to_dict(), config_first.to_dict())

    def create_and_test_config_from_and_save_pretrained_composite(self):
        config = self.config_class(**self.inputs_dict)

        with tempfile.TemporaryDirectory() as tmpdirname:
            config.save_pretrained(tmpdirname)
            general_config_loaded = self.config_class.from_pretrained(tmpdirname)
            general_config_dict = config.to_dict()

            # Iterate over all sub_configs if there are any and load them with their own classes
            sub_configs = general_config_loaded.sub_configs
            for sub_config_key, sub_class in sub_configs.items():
                if general_config_dict[sub_config_key] is not None:
                    sub_config_loaded = sub_class.from_pretrained(tmpdirname)
                    self.parent.assertEqual(sub_config_loaded.to_dict(), general_config_dict[sub_config_key])

    def create_and_test_config_from_pretrained_custom_kwargs(self):
        config = self.config_class(**self.inputs_dict)
        if config.get_text_config() is config or not hasattr(self.parent, "model_tester"):
            return
        raise AssertionError("BERT's config has no sub-config: this branch is not reached upstream either")

    def create_and_test_config_with_num_labels(self):
        config = self.config_class(**self.inputs_dict, num_labels=5)
        self.parent.assertEqual(len(config.id2label), 5)
        self.parent.assertEqual(len(config.label2id), 5)

        config.num_labels = 3
        self.parent.assertEqual(len(config.id2label), 3)
        self.parent.assertEqual(len(config.label2id), 3)

    def check_config_can_be_init_without_params(self):
        with self.parent.assertNoLogs(LOGGER_NAME, level="WARNING"):
            config = self.config_class()
        self.parent.assertIsNotNone(config)

        with self.parent.assertNoLogs(LOGGER_NAME, level="WARNING"):
            config = self.config_class(**self.inputs_dict)
        self.parent.assertIsNotNone(config)

    def check_config_arguments_init(self):
        if self.config_class.sub_configs:
            return  # TODO: @raushan composite models are not consistent in how they set general params

        kwargs = copy.deepcopy(config_common_kwargs)
        config = self.config_class(**kwargs)
        wrong_values = []
        for key, value in config_common_kwargs.items():
            if key == "dtype":
                if config.dtype != torch.float16:
                    wrong_values.append(("dtype", config.dtype, torch.float16))
            elif getattr(config, key) != value:
                wrong_values.append((key, getattr(config, key), value))

        if len(wrong_values) > 0:
            errors = "\n".join([f"- {v[0]}: got {v[1]} instead of {v[2]}" for v in wrong_values])
            raise ValueError(f"The following keys were not properly set in the config:\n{errors}")


class BertConfigTest(unittest.TestCase):
    def setUp(self):
        self.config_tester = ConfigTester(self, config_class=BertConfig, hidden_size=37)

    def test_config_common_properties(self):
        self.config_tester.create_and_test_config_common_properties()

    def test_config_to_json_string(self):
        self.config_tester.create_and_test_config_to_json_string()

    def test_config_to_json_file(self):
        self.config_tester.create_and_test_config_to_json_file()

    def test_config_from_and_save_pretrained(self):
        self.config_tester.create_and_test_config_from_and_save_pretrained()

    def test_config_from_and_save_pretrained_subfolder(self):
        self.config_tester.create_and_test_config_from_and_save_pretrained_subfolder()

    def test_config_from_and_save_pretrained_composite(self):
        self.config_tester.create_and_test_config_from_and_save_pretrained_composite()

    def test_config_with_num_labels(self):
        self.config_tester.create_and_test_config_with_num_labels()

    def test_config_from_pretrained_custom_kwargs(self):
        self.config_tester.create_and_test_config_from_pretrained_custom_kwargs()

    def test_config_can_be_init_without_params(self):
        self.config_tester.check_config_can_be_init_without_params()

    def test_config_arguments_init(self):
        self.config_tester.check_config_arguments_init()


OUT_OF_SCOPE: dict[str, str] = {}
