"""Where mini_hf_bert differs from transformers on purpose, each with why and the test that
shows the difference (tools/conformance_doc.py lists them in docs/conformance.md;
test_out_of_scope.py checks that each named test exists)."""

from __future__ import annotations

#: (what differs, why it is kept, the test that shows it: path::function).
KEPT_DIFFERENCES = (
    ("`from_pretrained`'s loading info holds `missing_keys` (and the other key lists) as sets, as transformers 5.x; "
     "4.57.6 returns lists",
     "5.x's type; membership is what callers ask of it",
     "tests/core/test_transformers_api.py::test_an_encoder_checkpoint_loads_into_every_task_head_as_in_transformers"),
    ("A checkpoint that lacks weights of the encoder itself (none at all, or both ends of the word-embedding tie) is "
     "refused, naming them, unless `strict=False`; transformers loads it with a warning and random weights",
     "a half-loaded encoder computes garbage: it is never silent",
     "tests/core/test_transformers_api.py::test_a_missing_encoder_weight_is_still_an_error_unless_strict_false"),
    ("Loading a head model's checkpoint into its base model, the head's own weights are all reported in "
     "`unexpected_keys`, also one named like a weight of the base (`linear` beside `base.linear`); transformers "
     "5.23 leaves those out of the list (it loads the same weights)",
     "they are weights of the file that were not used: the list says so",
     "tests/core/test_user_models.py::test_a_head_checkpoint_loads_into_its_base"),
    ("`BertConfig(is_encoder_decoder=True)` is a TypeError; transformers 4.57.6's PretrainedConfig takes it",
     "a BERT config describes one stack: it is a class setting (False), and a config.json that writes it still "
     "reads; every other keyword of 4.57.6's PretrainedConfig is accepted (tests_transformers4/test_config_4x.py)",
     "tests/core/test_config.py::test_is_encoder_decoder_is_a_class_setting_not_an_argument"),
    ("A pair encoded without special tokens gives the second segment token type 1, as transformers 5.x's tokenizer; "
     "4.57.6's fast tokenizer types it 0 throughout",
     "5.x is the tokenizer this one is held equal to (tests/core/test_tokenizer.py)",
     "tests_transformers4/test_tokenizer_4x.py::test_encode_plus_equals_4x"),
    ("The warning for padding without an attention mask is logged on mini_hf_bert's logger "
     "(`mini_hf_bert.validation`), so a capture of transformers' `transformers.modeling_utils` logger, where 4.57.6's "
     "`test_for_warning_if_padding_and_no_attention_mask` looks, does not see it",
     "the library's warnings carry its own name, so that its logging settings govern them and transformers need not "
     "be installed; the same inputs warn in both libraries (tests_transformers4/test_masks_and_model.py)",
     "tests_transformers4/test_masks_and_model.py::test_the_padding_warning_is_on_our_logger_not_transformers"),
    ("`BertConfig(pruned_heads=...)` with a value that is not a map of layer to head indices (4.57.6's ConfigTester "
     "sets `{'a': 1}`) is a ConfigError naming the field; 4.57.6 stores it, and a model built from that config then "
     "fails in `prune_heads` with a TypeError naming neither",
     "an error names the field and the problem where it is made, not later in a model",
     "tests_transformers4/test_config_4x.py::test_pruned_heads_that_is_not_a_layer_map_is_refused_where_4x_stores_it"),
    ("`transformers.pipeline(\"feature-extraction\", model=our_model)` is a KeyError (0); "
     "`from_pretrained(..., return_dict=False)` gives transformers' features exactly, and so does our `pipeline`",
     "transformers rebuilds an output that is not its own ModelOutput as a plain dict of its named fields and this "
     "pipeline reads `outputs[0]`; no output class survives both that and the other pipelines' `outputs[\"logits\"]` "
     "(tuples lose the names, integer keys would reach every `outputs.items()`), and deriving from transformers' "
     "class would make it a run-time dependency (docs/ecosystem.md)",
     "tests/integrations/test_transformers_pipeline.py::"
     "test_feature_extraction_over_our_model_returning_its_output_class_is_a_key_error"),
    ("`shap.Explainer(our_pipeline)` stops (\"masker cannot be None\"; with our tokenizer as masker, \"'str' object has "
     "no attribute 'shape'\"): shap takes its own path only for transformers' Pipeline and tokenizer classes",
     "shap checks `isinstance` against transformers' classes; the recipe of docs/ecosystem.md names its wrapper and "
     "masker, or transformers' pipeline holding our model takes shap's own path, both with transformers' values",
     "tests/integrations/test_shap.py::test_our_tokenizer_as_the_masker_is_taken_for_data"),
)
