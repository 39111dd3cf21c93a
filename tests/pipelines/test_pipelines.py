"""``mini_hf_bert.pipeline``: each task tested equal to transformers' own ``pipeline`` on the
same weights: the same tokens, labels, spans and offsets, scores within FP32_ATOL.
(Question answering, which transformers 5 removed, is tested against 4.57.6 in
tests_transformers4/test_pipelines_4x.py.)"""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch
import transformers

import mini_hf_bert
from mini_hf_bert import CheckpointError, pipeline
from mini_hf_bert.pipelines import FillMaskPipeline
from mini_hf_bert.checkpoints.convert import convert
from mini_hf_bert.parity.compare import FP32_ATOL
from tools.testing_utils import write_head_checkpoint

from .test_sentence_embeddings import _reference
from ..paths import FIXTURES

GOOGLE_DIR = os.path.join(FIXTURES, "tf", "bert_pretraining")
LABELS = {0: "O", 1: "B-PER", 2: "I-PER", 3: "B-LOC", 4: "I-LOC"}
SENTENCES = ["Angela Merkel visited Paris and Berlin last week.", "Ms. Müller lives in Zürich.",
             "John Smith-Jones flew from New York to 北京 on an unaffable airline.", "nothing here"]


def assert_close(ours, theirs, path="result"):
    """Equal structure, keys, strings and ints; floats (and numpy scalars) within FP32_ATOL."""
    if isinstance(theirs, (np.floating, float)) and not isinstance(theirs, bool):
        assert isinstance(ours, float), f"{path}: {type(ours).__name__}"
        assert abs(ours - float(theirs)) <= FP32_ATOL, f"{path}: {ours} vs {theirs}"
    elif isinstance(theirs, np.integer):
        assert ours == int(theirs), path
    elif isinstance(theirs, dict):
        assert isinstance(ours, dict) and list(ours) == list(theirs), f"{path}: keys {list(ours)} vs {list(theirs)}"
        for key in theirs:
            assert_close(ours[key], theirs[key], f"{path}[{key!r}]")
    elif isinstance(theirs, (list, tuple)):
        assert isinstance(ours, (list, tuple)) and len(ours) == len(theirs), f"{path}: {ours!r:.200} vs {theirs!r:.200}"
        for i, (a, b) in enumerate(zip(ours, theirs)):
            assert_close(a, b, f"{path}[{i}]")
    elif isinstance(theirs, torch.Tensor):
        assert isinstance(ours, torch.Tensor) and ours.shape == theirs.shape, path
        assert torch.allclose(ours, theirs, atol=FP32_ATOL, rtol=0), path
    else:
        assert ours == theirs, f"{path}: {ours!r} vs {theirs!r}"


@pytest.fixture(scope="module")
def google_mlm(tmp_path_factory) -> str:
    """Google's checkpoint format (the committed TF fixture), converted to an HF directory."""
    directory = tmp_path_factory.mktemp("google") / "converted"
    convert(GOOGLE_DIR, directory, progress=False)
    return str(directory)


@pytest.fixture(scope="module")
def ner_dir(tmp_path_factory, minilm_dir) -> str:
    return write_head_checkpoint(tmp_path_factory.mktemp("ner"), minilm_dir, "BertForTokenClassification",
                                 num_labels=len(LABELS), id2label=LABELS, label2id={v: k for k, v in LABELS.items()})


@pytest.fixture(scope="module")
def sentiment_dir(tmp_path_factory, minilm_dir) -> str:
    labels = {0: "negative", 1: "neutral", 2: "positive"}
    return write_head_checkpoint(tmp_path_factory.mktemp("sentiment"), minilm_dir, "BertForSequenceClassification",
                                 num_labels=3, id2label=labels, label2id={v: k for k, v in labels.items()})


# ------------------------------------------------------------------ fill-mask
@pytest.mark.parametrize("batch_size", [1, 3])
def test_fill_mask_on_a_converted_google_checkpoint(google_mlm, batch_size):
    ours, theirs = pipeline("fill-mask", model=google_mlm), transformers.pipeline("fill-mask", model=google_mlm)
    texts = ["tok1 tok2 [MASK] tok4", "[MASK] tok7", "tok3 [MASK] tok5 [MASK] tok9 tok9 tok9"]
    assert_close(ours(texts, batch_size=batch_size), theirs(texts, batch_size=batch_size))
    assert_close(ours(texts[0], top_k=2), theirs(texts[0], top_k=2))
    assert_close(ours(texts[2], targets=["tok3", "tok30"]), theirs(texts[2], targets=["tok3", "tok30"]))
    assert_close(ours([texts[0]]), theirs([texts[0]]))  # a list of one: transformers unwraps it


def test_fill_mask_with_real_english_weights(tmp_path, minilm_dir):
    """A real checkpoint's encoder under transformers' (seeded) MLM head: real wordpieces in
    the decoded sequences, [UNK]-free Chinese, pairs of masks."""
    torch.manual_seed(0)
    transformers.BertForMaskedLM.from_pretrained(minilm_dir).save_pretrained(tmp_path)
    mini_hf_bert.BertTokenizer.from_pretrained(minilm_dir).save_pretrained(tmp_path)
    ours, theirs = pipeline("fill-mask", model=str(tmp_path)), transformers.pipeline("fill-mask", model=str(tmp_path))
    texts = ["Paris is the [MASK] of France.", "北京是中国的[MASK]都。", "The [MASK] sat on the [MASK]."]
    assert_close(ours(texts, top_k=4, batch_size=2), theirs(texts, top_k=4, batch_size=2))


# ------------------------------------------------------------------ feature-extraction
@pytest.mark.parametrize("batch_size", [1, 2])
def test_feature_extraction_on_the_packaged_checkpoint(minilm_dir, batch_size):
    ours, theirs = pipeline("feature-extraction", model=minilm_dir), transformers.pipeline("feature-extraction", model=minilm_dir)
    texts = ["A man is playing a guitar.", "北京是中国的首都。", "short"]
    assert_close(ours(texts, batch_size=batch_size), theirs(texts, batch_size=batch_size))
    assert_close(ours(texts[0], return_tensors=True), theirs(texts[0], return_tensors=True))
    long_text = "word " * 600
    assert_close(ours(long_text, truncation=True), theirs(long_text, truncation=True))


# ------------------------------------------------------------------ sentence-similarity
def test_sentence_similarity_is_the_sentence_transformers_recipe(minilm_dir):
    """transformers has no such pipeline: the reference is the model card's recipe (mean
    pooling, L2 norm, max_seq_length 256) written out on transformers' BertModel."""
    sim = pipeline("sentence-similarity", model=minilm_dir, batch_size=2)
    query = {"source_sentence": "A man is playing a guitar.",
             "sentences": ["Someone is strumming a guitar on stage.", "北京是中国的首都。", "word " * 400]}
    scores = sim(query)
    embeddings = _reference(minilm_dir, [query["source_sentence"], *query["sentences"]], max_length=256)
    expected = (embeddings[1:] @ embeddings[0]).tolist()
    assert_close(scores, expected)
    assert scores[0] > 0.5 > scores[1]  # the guitar sentences are alike, the capital one is not
    assert_close(sim([query, query]), [expected, expected])
    assert_close(mini_hf_bert.encode_sentences(sim.model, sim.tokenizer, [query["source_sentence"]], max_length=256)[0],
                 embeddings[0])


@pytest.mark.parametrize("modes", [("pooling_mode_cls_token",), ("pooling_mode_max_tokens",),
                                   ("pooling_mode_mean_sqrt_len_tokens",), ("pooling_mode_weightedmean_tokens",),
                                   ("pooling_mode_lasttoken",), ("pooling_mode_cls_token", "pooling_mode_mean_tokens"),
                                   "cls", ["max", "cls"], "weightedmean", "lasttoken"])
def test_sentence_similarity_pools_as_the_directory_says(modes, minilm_dir, tmp_path):
    """A sentence-transformers directory whose 1_Pooling/config.json says CLS (as bge
    models), max, mean-sqrt-len, weighted-mean or last-token pooling, or several, in the
    keys of sentence-transformers 2.x-5.x (a tuple here) or 6.x's ``"pooling_mode"`` (a
    string or list here): the similarities are sentence-transformers' own."""
    import json
    import shutil

    from sentence_transformers import SentenceTransformer

    directory = tmp_path / "model"
    shutil.copytree(minilm_dir, directory)
    config_file = directory / "1_Pooling" / "config.json"
    config = json.loads(config_file.read_text(encoding="utf-8"))
    if isinstance(modes, tuple):
        config.update({key: key in modes for key in (*config, *modes) if key.startswith("pooling_mode")})
    else:
        config = {"embedding_dimension": config["word_embedding_dimension"], "pooling_mode": modes}
    config_file.write_text(json.dumps(config), encoding="utf-8")
    sentences = ["A man is playing a guitar.", "Someone is strumming a guitar on stage.", "北京是中国的首都。"]
    ours = pipeline("sentence-similarity", model=str(directory))({"source_sentence": sentences[0],
                                                                   "sentences": sentences[1:]})
    reference = SentenceTransformer(str(directory), device="cpu")
    embeddings = torch.nn.functional.normalize(reference.encode(sentences, convert_to_tensor=True), dim=-1)
    assert_close(ours, (embeddings[1:] @ embeddings[0]).tolist())
    mean = pipeline("sentence-similarity", model=minilm_dir)({"source_sentence": sentences[0], "sentences": sentences[1:]})
    if modes not in (("pooling_mode_mean_sqrt_len_tokens",), ["max", "cls"]):  # sum/sqrt(n) points as the mean
        assert max(abs(a - b) for a, b in zip(ours, mean)) > 0.01  # the pooling matters


def test_a_pooling_mini_hf_bert_does_not_compute_is_refused_naming_the_file(minilm_dir, tmp_path):
    import json
    import shutil

    directory = tmp_path / "model"
    shutil.copytree(minilm_dir, directory)
    config_file = directory / "1_Pooling" / "config.json"
    config = json.loads(config_file.read_text(encoding="utf-8"))
    config.update(pooling_mode_mean_tokens=False, pooling_mode_fancy_tokens=True)
    config_file.write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(ValueError, match=r"1_Pooling/config.json: pooling_mode_fancy_tokens is not a pooling"):
        pipeline("sentence-similarity", model=str(directory))
    for given in ("fancy", [], ["cls", "fancy"], 3):
        config_file.write_text(json.dumps({"pooling_mode": given}), encoding="utf-8")
        with pytest.raises(ValueError, match=r"1_Pooling/config.json: pooling_mode .* is not a sentence-transformers pooling"):
            pipeline("sentence-similarity", model=str(directory))


# ------------------------------------------------------------------ text-classification
def test_text_classification(sentiment_dir):
    ours = pipeline("text-classification", model=sentiment_dir)
    theirs = transformers.pipeline("text-classification", model=sentiment_dir)
    texts = ["I love this movie!", "这部电影很无聊。", "It was fine, I guess."]
    assert_close(ours(texts[0]), theirs(texts[0]))  # a list holding one dict
    assert_close(ours(texts, batch_size=2), theirs(texts, batch_size=2))
    assert_close(ours(texts, top_k=None), theirs(texts, top_k=None))
    assert_close(ours(texts[1], top_k=2), theirs(texts[1], top_k=2))
    pair = {"text": "A man is playing a guitar.", "text_pair": "Someone plays music."}
    assert_close(ours(pair), theirs(pair))
    assert_close(ours([pair, pair], function_to_apply="sigmoid"), theirs([pair, pair], function_to_apply="sigmoid"))
    assert_close(ours(texts, function_to_apply="none", top_k=1), theirs(texts, function_to_apply="none", top_k=1))
    assert_close(pipeline("sentiment-analysis", model=sentiment_dir, top_k=None)(texts[0]), theirs(texts[0], top_k=None))


def test_one_label_regression_and_multi_label_scores(tmp_path, minilm_dir):
    for problem, labels in (("regression", 1), ("multi_label_classification", 3)):
        directory = write_head_checkpoint(tmp_path / problem, minilm_dir, "BertForSequenceClassification",
                                          num_labels=labels, problem_type=problem)
        ours = pipeline("text-classification", model=directory)
        theirs = transformers.pipeline("text-classification", model=directory)
        assert_close(ours(["good", "bad"], top_k=None), theirs(["good", "bad"], top_k=None))


# ------------------------------------------------------------------ token-classification
@pytest.mark.parametrize("strategy", ["none", "simple", "first", "average", "max"])
def test_token_classification(ner_dir, strategy):
    ours = pipeline("token-classification", model=ner_dir, aggregation_strategy=strategy)
    theirs = transformers.pipeline("token-classification", model=ner_dir, aggregation_strategy=strategy)
    got, expected = ours(SENTENCES, batch_size=2), theirs(SENTENCES, batch_size=2)
    assert_close(got, expected)
    assert sum(len(e) for e in got) >= 4  # entities were found, so the comparison compared something
    assert_close(ours(SENTENCES[0], ignore_labels=[]), theirs(SENTENCES[0], ignore_labels=[]))


def test_token_classification_of_pre_split_words_and_long_texts(ner_dir):
    ours = pipeline("ner", model=ner_dir, aggregation_strategy="first")
    theirs = transformers.pipeline("ner", model=ner_dir, aggregation_strategy="first")
    words = ["Angela", "Merkel", "visited", "Paris", "."]
    assert_close(ours(words, is_split_into_words=True), theirs(words, is_split_into_words=True))
    assert_close(ours([words, words[:3]], is_split_into_words=True, delimiter="_"),
                 theirs([words, words[:3]], is_split_into_words=True, delimiter="_"))
    long_text = " ".join(SENTENCES * 40)  # > 512 tokens: windows with a stride, entities merged
    for tokenizer in (ours.tokenizer, theirs.tokenizer):
        tokenizer.model_max_length = 64
    try:
        assert_close(ours(long_text, stride=16), theirs(long_text, stride=16))
    finally:
        ours.tokenizer.model_max_length = theirs.tokenizer.model_max_length = 512


# ------------------------------------------------------------------ the pipeline object
def test_a_model_object_and_a_tokenizer_object(ner_dir):
    model = mini_hf_bert.BertForTokenClassification.from_pretrained(ner_dir)
    tokenizer = mini_hf_bert.BertTokenizer.from_pretrained(ner_dir)
    ours = pipeline("token-classification", model=model, tokenizer=tokenizer)
    assert_close(ours(SENTENCES[0]), transformers.pipeline("token-classification", model=ner_dir)(SENTENCES[0]))


def test_progress_bar_over_batches(minilm_dir, capsys):
    ours = pipeline("feature-extraction", model=minilm_dir, batch_size=2, progress=True)
    ours(["a", "b", "c", "d", "e"])
    err = capsys.readouterr().err
    assert "feature-extraction" in err and "3/3" in err  # 5 texts in batches of 2
    ours(["a", "b", "c"], batch_size=3)
    assert "1/1" in capsys.readouterr().err
    pipeline("feature-extraction", model=minilm_dir, batch_size=2, progress=False)(["a", "b", "c"])
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("task,call,error,message", [
    ("fill-mask", lambda p: p("no mask here"), ValueError, r"inputs: no \[MASK\] in 'no mask here'"),
    ("fill-mask", lambda p: p(["a [MASK]", "none"]), ValueError, r"inputs\[1\]: no \[MASK\]"),
    ("fill-mask", lambda p: p(""), ValueError, r"inputs is empty \(''\)"),
    ("fill-mask", lambda p: p("a [MASK]", top_k=0), ValueError, "top_k must be a positive int, got 0"),
    ("fill-mask", lambda p: p([]), TypeError, "inputs must be a str or a non-empty list of str"),
    ("fill-mask", lambda p: p("[MASK] " + "tok1 " * 40), ValueError, "is more than 32 tokens long; the model takes at most 32"),
    ("feature-extraction", lambda p: p(["ok", "   "]), ValueError, r"inputs\[1\] is empty"),
    ("feature-extraction", lambda p: p(3), TypeError, "inputs must be a str or a non-empty list of str, got int"),
    ("feature-extraction", lambda p: p("a", batch_size=0), ValueError, "batch_size must be a positive int, got 0"),
])
def test_bad_input_is_a_clear_error(google_mlm, task, call, error, message):
    with pytest.raises(error, match=message):
        call(pipeline(task, model=google_mlm))


@pytest.mark.parametrize("make,error,message", [
    (lambda d: pipeline("translation", model=d), ValueError, "unknown task 'translation'; the tasks are feature-extraction"),
    (lambda d: pipeline("fill-mask"), ValueError, r"pipeline\('fill-mask'\) needs model="),
    (lambda d: pipeline("fill-mask", model=d, topk=3), TypeError, r"unexpected keyword arguments \['topk'\]"),
    (lambda d: pipeline("fill-mask", model=mini_hf_bert.BertModel.from_pretrained(d)), ValueError, "pass tokenizer="),
    (lambda d: pipeline("fill-mask", model=mini_hf_bert.BertModel.from_pretrained(d), tokenizer=d), TypeError,
     r"fill-mask needs a BertForMaskedLM \(mini_hf_bert's or transformers'\), got BertModel"),
    (lambda d: pipeline("text-classification", model=d), CheckpointError,
     r"has no trained head for 'text-classification' \(classifier.bias, classifier.weight would be random\)"),
])
def test_bad_pipeline_arguments_are_named(google_mlm, make, error, message):
    with pytest.raises(error, match=message):
        make(google_mlm)


def test_transformers_model_and_tokenizer_objects_run_in_our_pipeline(google_mlm):
    """transformers' BertForMaskedLM computes what ours does; its tokenizer's files make ours."""
    theirs = transformers.BertForMaskedLM.from_pretrained(google_mlm)
    their_tokenizer = transformers.AutoTokenizer.from_pretrained(google_mlm)
    text = "the capital of france is [MASK] ."
    expected = pipeline("fill-mask", model=google_mlm)(text, top_k=3)
    got = pipeline("fill-mask", model=theirs, tokenizer=their_tokenizer)(text, top_k=3)
    assert [(r["token"], r["sequence"]) for r in got] == [(r["token"], r["sequence"]) for r in expected]
    assert [r["score"] for r in got] == pytest.approx([r["score"] for r in expected], abs=FP32_ATOL)
    roberta = transformers.RobertaForMaskedLM(transformers.RobertaConfig(
        vocab_size=50, hidden_size=32, num_hidden_layers=1, num_attention_heads=4, intermediate_size=37))
    with pytest.raises(TypeError, match=r"fill-mask needs a BertForMaskedLM \(mini_hf_bert's or transformers'\), "
                                        r"got transformers' RobertaForMaskedLM"):
        pipeline("fill-mask", model=roberta, tokenizer=their_tokenizer)
    with pytest.raises(TypeError, match=r"tokenizer must be a BertTokenizer \(mini_hf_bert's, or transformers' "
                                        r"BertTokenizer or BertTokenizerFast\), got str"):
        FillMaskPipeline(theirs, "not a tokenizer")


# ------------------------------------------------------------------ streams
@pytest.mark.parametrize("task,texts,options", [
    ("fill-mask", ["Paris is the [MASK] of France.", "I [MASK] you.", "The [MASK] sat on the mat."], {"top_k": 2}),
    ("feature-extraction", ["A man is playing a guitar.", "short", "北京是中国的首都。"], {}),
    ("text-classification", ["I love it.", "Terrible.", "It is fine.", "Nice"], {"top_k": None}),
    ("token-classification", ["Ada Lovelace lived in London.", "Nothing here."], {"aggregation_strategy": "simple"}),
])
def test_a_generator_streams_one_answer_per_item_as_transformers(task, texts, options, google_mlm, minilm_dir,
                                                                 sentiment_dir, ner_dir):
    """``pipe(generator, batch_size=...)`` answers lazily, one answer per item, equal to the
    answers for the list, and to transformers' for the same generator."""
    model = {"fill-mask": google_mlm, "feature-extraction": minilm_dir, "text-classification": sentiment_dir,
             "token-classification": ner_dir}[task]
    ours, theirs = pipeline(task, model=model), transformers.pipeline(task, model=model)
    taken = []

    def stream():
        for text in texts:
            taken.append(text)
            yield text

    answers = ours(stream(), batch_size=2, **options)
    assert not taken  # nothing runs until the first answer is asked for
    first = next(answers)
    assert taken == texts[:2]  # one batch read
    streamed = [first, *answers]
    assert_close(streamed, ours(texts, batch_size=2, **options))
    assert_close(streamed, list(theirs((t for t in texts), batch_size=2, **options)))


def test_a_text_without_a_mask_is_a_pipeline_exception_as_in_transformers(google_mlm):
    from mini_hf_bert.pipelines import PipelineException

    with pytest.raises(transformers.pipelines.PipelineException) as theirs:
        transformers.pipeline("fill-mask", model=google_mlm)("no mask here")
    with pytest.raises(PipelineException) as ours:
        pipeline("fill-mask", model=google_mlm)("no mask here")
    assert (ours.value.task, ours.value.model) == (theirs.value.task, theirs.value.model) == ("fill-mask", "bert")
    assert isinstance(ours.value, ValueError)  # what it was before, still caught so


# ------------------------------------------------------------------ transformers' constructor and surface
def test_pipeline_classes_take_transformers_constructor_arguments(ner_dir, google_mlm):
    """``XxxPipeline(model=, tokenizer=, feature_extractor=None, ..., dtype=, top_k=...)``, as
    transformers' tests and tools build them, answers as ``pipeline(...)`` does."""
    from mini_hf_bert.pipelines import TokenClassificationPipeline

    model = mini_hf_bert.BertForMaskedLM.from_pretrained(google_mlm)
    tokenizer = mini_hf_bert.BertTokenizer.from_pretrained(google_mlm)
    built = FillMaskPipeline(model=model, tokenizer=tokenizer, feature_extractor=None, image_processor=None,
                             processor=None, dtype="float32", top_k=2, targets=["paris", "berlin", "london"])
    text = "the capital of france is [MASK] ."
    assert_close(built(text), pipeline("fill-mask", model=google_mlm, top_k=2, targets=["paris", "berlin", "london"])(text))
    assert_close(built(text), transformers.FillMaskPipeline(
        model=transformers.BertForMaskedLM.from_pretrained(google_mlm),
        tokenizer=transformers.AutoTokenizer.from_pretrained(google_mlm), top_k=2,
        targets=["paris", "berlin", "london"])(text))
    ner = TokenClassificationPipeline(model=mini_hf_bert.BertForTokenClassification.from_pretrained(ner_dir),
                                      tokenizer=mini_hf_bert.BertTokenizer.from_pretrained(ner_dir),
                                      aggregation_strategy="first")
    assert ner._postprocess_params["aggregation_strategy"] == "first"
    assert_close(ner(SENTENCES), transformers.pipeline("ner", model=ner_dir, aggregation_strategy="first")(SENTENCES))


def test_a_dtype_casts_the_model_object(google_mlm):
    model = mini_hf_bert.BertForMaskedLM.from_pretrained(google_mlm)
    tokenizer = mini_hf_bert.BertTokenizer.from_pretrained(google_mlm)
    half = FillMaskPipeline(model=model, tokenizer=tokenizer, dtype=torch.bfloat16)
    assert half.model.dtype == torch.bfloat16
    answers = half("the capital of france is [MASK] .", top_k=3)
    assert [type(a["score"]) for a in answers] == [float] * 3
    assert pipeline("fill-mask", model=google_mlm, dtype="bfloat16").model.dtype == torch.bfloat16


def test_token_classification_steps_are_public_and_equal_transformers(ner_dir):
    """``gather_pre_entities`` and ``aggregate``, called as transformers' own tests call them,
    give transformers' results for the same scores."""
    from mini_hf_bert.pipelines import AggregationStrategy

    ours = pipeline("ner", model=ner_dir)
    theirs = transformers.pipeline("ner", model=ner_dir)
    sentence = SENTENCES[2]
    encoded = theirs.tokenizer(sentence, return_tensors="np", return_special_tokens_mask=True,
                               return_offsets_mapping=True)
    scores = np.random.default_rng(0).dirichlet(np.ones(len(LABELS)), size=encoded["input_ids"].shape[1])
    for strategy in ("none", "simple", "first", "average", "max"):
        args = (sentence, encoded["input_ids"][0], scores, encoded["offset_mapping"][0],
                encoded["special_tokens_mask"][0])
        pre_ours = ours.gather_pre_entities(*args, aggregation_strategy=AggregationStrategy(strategy))
        pre_theirs = theirs.gather_pre_entities(
            *args, aggregation_strategy=transformers.pipelines.AggregationStrategy(strategy))
        listed = [[{k: v.tolist() if isinstance(v, np.ndarray) else v for k, v in piece.items()} for piece in pre]
                  for pre in (pre_ours, pre_theirs)]  # each piece's scores: a (L,) array
        assert_close(*listed)
        assert len(pre_ours) == encoded["input_ids"].shape[1] - 2  # every token but [CLS] and [SEP]
        assert_close(ours.aggregate(pre_ours, strategy),
                     theirs.aggregate(pre_theirs, transformers.pipelines.AggregationStrategy(strategy)))


def test_legacy_grouped_entities_warn_and_map_to_a_strategy(ner_dir):
    from mini_hf_bert.pipelines import AggregationStrategy

    with pytest.warns(UserWarning, match=r"`grouped_entities` is deprecated .* aggregation_strategy=\"simple\""):
        simple = pipeline("ner", model=ner_dir, grouped_entities=True)
    with pytest.warns(UserWarning, match=r"`ignore_subwords` is deprecated"):
        first = pipeline("ner", model=ner_dir, grouped_entities=True, ignore_subwords=True)
    assert simple._postprocess_params["aggregation_strategy"] is AggregationStrategy.SIMPLE
    assert first._postprocess_params["aggregation_strategy"] is AggregationStrategy.FIRST
    assert_close(first(SENTENCES), pipeline("ner", model=ner_dir, aggregation_strategy="first")(SENTENCES))


@pytest.mark.parametrize("task,call,message", [
    ("fill-mask", lambda p: p([None]), r"inputs\[0\] must be a str, got NoneType"),
    ("text-classification", lambda p: p([["a text", "its pair"]]),
     r"inputs\[0\] must be a str or a dict \{'text': \.\.\., 'text_pair': \.\.\.\} \(for a text pair, send the dict\)"),
    ("text-classification", lambda p: p({"text": None}), r"inputs\['text'\] must be a str, got NoneType"),
    ("question-answering", lambda p: p(question=None, context="Paris is in France."),
     r"question and context must be str or lists of str, got NoneType and str"),
    ("question-answering", lambda p: p(question="Where?", context=None), r"context is None: question answering needs"),
    ("question-answering", lambda p: p({"question": "Where?"}), r"'context' is missing"),
    ("token-classification", lambda p: p("a text", offset_mapping=[[(0, 1)], [(1, 2)]]),
     r"offset_mapping has 2 lists of offsets for 1 texts"),
    ("token-classification", lambda p: p("a text", aggregation_strategy="loud"),
     r"aggregation_strategy='loud': expected one of \['none', 'simple', 'first', 'average', 'max'\]"),
])
def test_inputs_transformers_refuses_with_a_valueerror_are_valueerrors_here(task, call, message, google_mlm,
                                                                            sentiment_dir, ner_dir, tmp_path):
    """Where transformers raises ValueError (or KeyError) for an input, so do we, naming it;
    a wrong type is also a TypeError (``PipelineInputError``), as it was before."""
    if task == "question-answering":
        model = write_head_checkpoint(tmp_path / "qa", google_mlm, "BertForQuestionAnswering")
    else:
        model = {"fill-mask": google_mlm, "text-classification": sentiment_dir, "token-classification": ner_dir}[task]
    errors = (KeyError,) if "missing" in message else (ValueError,)
    with pytest.raises(errors, match=message):
        call(pipeline(task, model=model))


@pytest.mark.parametrize("make,error,message", [
    (lambda m, t: FillMaskPipeline(model=m, tokenizer=t, feature_extractor=object()), TypeError,
     "FillMaskPipeline reads text with its tokenizer; it takes no feature_extractor"),
    (lambda m, t: FillMaskPipeline(model=m), ValueError, "FillMaskPipeline needs tokenizer="),
    (lambda m, t: FillMaskPipeline(model=m, tokenizer=t, topk=2), TypeError,
     r"FillMaskPipeline got unexpected keyword arguments \['topk'\]; its calls take \['inputs', 'top_k', 'targets'\]"),
    (lambda m, t: FillMaskPipeline(model=m, tokenizer=t, dtype="int8"), ValueError,
     "dtype='int8' is not a floating torch dtype"),
])
def test_bad_pipeline_constructor_arguments_are_named(google_mlm, make, error, message):
    model = mini_hf_bert.BertForMaskedLM.from_pretrained(google_mlm)
    with pytest.raises(error, match=message):
        make(model, mini_hf_bert.BertTokenizer.from_pretrained(google_mlm))
