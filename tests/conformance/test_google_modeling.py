"""google-research/bert's ``modeling_test.py``, ported to the library under test, without
TensorFlow.

Source: google-research/bert@281d86edff60d1337c85bbb96d6f2dc99ce16229, ``modeling_test.py``.
The tester's sizes, inputs and assertions are the authors'. Mechanical changes:

* ``tf.test.TestCase`` -> ``unittest.TestCase``; ``assertAllEqual`` on shapes -> ``assertEqual``
  on lists; ``ids_tensor`` builds a torch tensor (the same draws from ``random.Random()``,
  seeded).
* ``modeling.BertModel(config, is_training, input_ids, input_mask, token_type_ids)`` builds a
  graph; here ``BertModel(config)`` (in train mode when ``is_training``, as Google's
  dropout) is called on the same inputs with ``output_hidden_states=True``.
  ``get_embedding_output()`` is ``hidden_states[0]``, ``get_sequence_output()``
  ``last_hidden_state``, ``get_pooled_output()`` ``pooler_output``,
  ``get_all_encoder_layers()`` ``hidden_states[1:]``.
* ``assert_all_tensors_reachable`` (every op of the TF graph reaches the outputs) becomes
  its torch form: every parameter receives a gradient from the outputs.
"""

from __future__ import annotations

import json
import random
import unittest

import torch

from .upstream import library


class BertModelTest(unittest.TestCase):
    class BertModelTester:
        def __init__(
            self,
            parent,
            batch_size=13,
            seq_length=7,
            is_training=True,
            use_input_mask=True,
            use_token_type_ids=True,
            vocab_size=99,
            hidden_size=32,
            num_hidden_layers=5,
            num_attention_heads=4,
            intermediate_size=37,
            hidden_act="gelu",
            hidden_dropout_prob=0.1,
            attention_probs_dropout_prob=0.1,
            max_position_embeddings=512,
            type_vocab_size=16,
            initializer_range=0.02,
            scope=None,
        ):
            self.parent = parent
            self.batch_size = batch_size
            self.seq_length = seq_length
            self.is_training = is_training
            self.use_input_mask = use_input_mask
            self.use_token_type_ids = use_token_type_ids
            self.vocab_size = vocab_size
            self.hidden_size = hidden_size
            self.num_hidden_layers = num_hidden_layers
            self.num_attention_heads = num_attention_heads
            self.intermediate_size = intermediate_size
            self.hidden_act = hidden_act
            self.hidden_dropout_prob = hidden_dropout_prob
            self.attention_probs_dropout_prob = attention_probs_dropout_prob
            self.max_position_embeddings = max_position_embeddings
            self.type_vocab_size = type_vocab_size
            self.initializer_range = initializer_range
            self.scope = scope

        def create_model(self):
            input_ids = BertModelTest.ids_tensor([self.batch_size, self.seq_length], self.vocab_size)

            input_mask = None
            if self.use_input_mask:
                input_mask = BertModelTest.ids_tensor([self.batch_size, self.seq_length], vocab_size=2)

            token_type_ids = None
            if self.use_token_type_ids:
                token_type_ids = BertModelTest.ids_tensor([self.batch_size, self.seq_length], self.type_vocab_size)

            config = library.BertConfig(
                vocab_size=self.vocab_size,
                hidden_size=self.hidden_size,
                num_hidden_layers=self.num_hidden_layers,
                num_attention_heads=self.num_attention_heads,
                intermediate_size=self.intermediate_size,
                hidden_act=self.hidden_act,
                hidden_dropout_prob=self.hidden_dropout_prob,
                attention_probs_dropout_prob=self.attention_probs_dropout_prob,
                max_position_embeddings=self.max_position_embeddings,
                type_vocab_size=self.type_vocab_size,
                initializer_range=self.initializer_range,
            )

            model = library.BertModel(config)
            model.train(self.is_training)
            result = model(
                input_ids=input_ids, attention_mask=input_mask, token_type_ids=token_type_ids, output_hidden_states=True
            )

            outputs = {
                "embedding_output": result.hidden_states[0],
                "sequence_output": result.last_hidden_state,
                "pooled_output": result.pooler_output,
                "all_encoder_layers": list(result.hidden_states[1:]),
            }
            return model, outputs

        def check_output(self, result):
            self.parent.assertEqual(
                list(result["embedding_output"].shape), [self.batch_size, self.seq_length, self.hidden_size]
            )

            self.parent.assertEqual(
                list(result["sequence_output"].shape), [self.batch_size, self.seq_length, self.hidden_size]
            )

            self.parent.assertEqual(list(result["pooled_output"].shape), [self.batch_size, self.hidden_size])

    def test_default(self):
        self.run_tester(BertModelTest.BertModelTester(self))

    def test_config_to_json_string(self):
        config = library.BertConfig(vocab_size=99, hidden_size=37)
        obj = json.loads(config.to_json_string())
        self.assertEqual(obj["vocab_size"], 99)
        self.assertEqual(obj["hidden_size"], 37)

    def run_tester(self, tester):
        model, ops = tester.create_model()
        tester.check_output(ops)
        self.assert_all_tensors_reachable(model, ops)

    ids_rng = random.Random(0)

    @classmethod
    def ids_tensor(cls, shape, vocab_size, rng=None, name=None):
        """Creates a random int tensor of the shape within the vocab size."""
        if rng is None:
            rng = cls.ids_rng

        total_dims = 1
        for dim in shape:
            total_dims *= dim

        values = []
        for _ in range(total_dims):
            values.append(rng.randint(0, vocab_size - 1))

        return torch.tensor(values, dtype=torch.long).view(shape)

    def assert_all_tensors_reachable(self, model, outputs):
        """Checks that every parameter of the model is reachable from the outputs."""
        total = sum(t.sum() for t in self.flatten_recursive(outputs))
        model.zero_grad()
        total.backward()
        unreachable = [name for name, p in model.named_parameters() if p.grad is None]
        self.assertEqual(len(unreachable), 0, "The following parameters are unreachable: %s" % " ".join(unreachable))

    @classmethod
    def flatten_recursive(cls, item):
        """Flattens (potentially nested) a tuple/dictionary/list to a list."""
        output = []
        if isinstance(item, list):
            output.extend(item)
        elif isinstance(item, tuple):
            output.extend(list(item))
        elif isinstance(item, dict):
            for _, v in item.items():
                output.append(v)
        else:
            return [item]

        flat_output = []
        for x in output:
            flat_output.extend(cls.flatten_recursive(x))
        return flat_output
