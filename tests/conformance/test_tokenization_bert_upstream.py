"""transformers' BERT tokenizer tests, ported to the library under test: the 4.x file
(``BertTokenizer`` and ``BertTokenizerFast``) and 5.x's ``test_tokenization_bert_legacy.py``
(the pure-Python tokenizer). The common tests of ``TokenizerTesterMixin`` are ported in
``test_tokenization_common_upstream.py``.

Sources:
* huggingface/transformers@c8dfc84ee87d238ad88090d677fe5f1bae4739cf,
  ``tests/models/bert/test_tokenization_bert.py`` (4.x: both tokenizer classes);
* huggingface/transformers@20581ae17a7e7cf1894d2a458c11e1b00431badd,
  ``tests/models/bert/test_tokenization_bert_legacy.py`` (5.x).

Every test and expectation is the authors'. Mechanical changes:

* ``BertTokenizer``, ``BertTokenizerFast`` and ``BertTokenizerLegacy`` are all the library's
  ``BertTokenizer`` (one implementation plays transformers' Python and Rust-backed ones;
  with ``MINI_HF_BERT_CONFORMANCE=transformers``, transformers' own classes).
  ``BasicTokenizer``, ``WordpieceTokenizer``, ``whitespace_tokenize`` and the character
  classes come from ``mini_hf_bert.tokenization_bert``.
* The mixin's ``tokenizers_list`` loads the hub id ``google-bert/bert-base-uncased``; here the
  packaged all-MiniLM-L6-v2 directory, which holds bert-base-uncased's vocab.txt (no hub).
  ``get_tokenizer`` / ``get_rust_tokenizer`` load from the test's own directory, as the mixin's.
* ``@slow`` / ``@require_tokenizers`` dropped: with the vocabulary local, ``test_sequence_builders`` runs.
* ``encode_plus(...)`` -> ``__call__(...)`` (5.x removed ``encode_plus``; the same arguments).
* Run against transformers 5.x, a test of an API 5.x removed is skipped (``transformers_4_api``);
  against mini_hf_bert every test runs.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import unittest

from mini_hf_bert.checkpoints.bundled import default_checkpoint_dir

from .upstream import PythonBertTokenizer, character_classes, library, transformers_4_api, word_tokenization

BasicTokenizer = word_tokenization.BasicTokenizer
WordpieceTokenizer = word_tokenization.WordpieceTokenizer
whitespace_tokenize = word_tokenization.whitespace_tokenize
_is_control = character_classes._is_control
_is_punctuation = character_classes._is_punctuation
_is_whitespace = character_classes._is_whitespace
VOCAB_FILES_NAMES = {"vocab_file": "vocab.txt"}


class BertTokenizationTest(unittest.TestCase):
    tokenizer_class = library.BertTokenizer
    rust_tokenizer_class = library.BertTokenizer
    test_rust_tokenizer = True

    def setUp(self):
        self.tmpdirname = tempfile.mkdtemp()
        # the mixin's (pretrained name, kwargs) list: bert-base-uncased's vocabulary, local
        self.tokenizers_list = [(self.rust_tokenizer_class, default_checkpoint_dir(), {})]

        vocab_tokens = [
            "[UNK]",
            "[CLS]",
            "[SEP]",
            "[PAD]",
            "[MASK]",
            "want",
            "##want",
            "##ed",
            "wa",
            "un",
            "runn",
            "##ing",
            ",",
            "low",
            "lowest",
        ]
        self.vocab_file = os.path.join(self.tmpdirname, VOCAB_FILES_NAMES["vocab_file"])
        with open(self.vocab_file, "w", encoding="utf-8") as vocab_writer:
            vocab_writer.write("".join([x + "\n" for x in vocab_tokens]))

    def tearDown(self):
        shutil.rmtree(self.tmpdirname)

    def get_tokenizer(self, **kwargs):
        return self.tokenizer_class.from_pretrained(self.tmpdirname, **kwargs)

    def get_rust_tokenizer(self, **kwargs):
        return self.rust_tokenizer_class.from_pretrained(self.tmpdirname, **kwargs)

    def test_full_tokenizer(self):
        tokenizer = self.tokenizer_class(self.vocab_file)

        tokens = tokenizer.tokenize("UNwant\u00e9d,running")
        self.assertListEqual(tokens, ["un", "##want", "##ed", ",", "runn", "##ing"])
        self.assertListEqual(tokenizer.convert_tokens_to_ids(tokens), [9, 6, 7, 12, 10, 11])

    def test_rust_and_python_full_tokenizers(self):
        if not self.test_rust_tokenizer:
            return

        tokenizer = self.get_tokenizer()
        rust_tokenizer = self.get_rust_tokenizer()

        sequence = "UNwant\u00e9d,running"

        tokens = tokenizer.tokenize(sequence)
        rust_tokens = rust_tokenizer.tokenize(sequence)
        self.assertListEqual(tokens, rust_tokens)

        ids = tokenizer.encode(sequence, add_special_tokens=False)
        rust_ids = rust_tokenizer.encode(sequence, add_special_tokens=False)
        self.assertListEqual(ids, rust_ids)

        rust_tokenizer = self.get_rust_tokenizer()
        ids = tokenizer.encode(sequence)
        rust_ids = rust_tokenizer.encode(sequence)
        self.assertListEqual(ids, rust_ids)

        # With lower casing
        tokenizer = self.get_tokenizer(do_lower_case=True)
        rust_tokenizer = self.get_rust_tokenizer(do_lower_case=True)

        sequence = "UNwant\u00e9d,running"

        tokens = tokenizer.tokenize(sequence)
        rust_tokens = rust_tokenizer.tokenize(sequence)
        self.assertListEqual(tokens, rust_tokens)

        ids = tokenizer.encode(sequence, add_special_tokens=False)
        rust_ids = rust_tokenizer.encode(sequence, add_special_tokens=False)
        self.assertListEqual(ids, rust_ids)

        rust_tokenizer = self.get_rust_tokenizer()
        ids = tokenizer.encode(sequence)
        rust_ids = rust_tokenizer.encode(sequence)
        self.assertListEqual(ids, rust_ids)

    def test_chinese(self):
        tokenizer = BasicTokenizer()

        self.assertListEqual(tokenizer.tokenize("ah\u535a\u63a8zz"), ["ah", "\u535a", "\u63a8", "zz"])

    def test_basic_tokenizer_lower(self):
        tokenizer = BasicTokenizer(do_lower_case=True)

        self.assertListEqual(
            tokenizer.tokenize(" \tHeLLo!how  \n Are yoU?  "), ["hello", "!", "how", "are", "you", "?"]
        )
        self.assertListEqual(tokenizer.tokenize("H\u00e9llo"), ["hello"])

    def test_basic_tokenizer_lower_strip_accents_false(self):
        tokenizer = BasicTokenizer(do_lower_case=True, strip_accents=False)

        self.assertListEqual(
            tokenizer.tokenize(" \tHäLLo!how  \n Are yoU?  "), ["hällo", "!", "how", "are", "you", "?"]
        )
        self.assertListEqual(tokenizer.tokenize("H\u00e9llo"), ["h\u00e9llo"])

    def test_basic_tokenizer_lower_strip_accents_true(self):
        tokenizer = BasicTokenizer(do_lower_case=True, strip_accents=True)

        self.assertListEqual(
            tokenizer.tokenize(" \tHäLLo!how  \n Are yoU?  "), ["hallo", "!", "how", "are", "you", "?"]
        )
        self.assertListEqual(tokenizer.tokenize("H\u00e9llo"), ["hello"])

    def test_basic_tokenizer_lower_strip_accents_default(self):
        tokenizer = BasicTokenizer(do_lower_case=True)

        self.assertListEqual(
            tokenizer.tokenize(" \tHäLLo!how  \n Are yoU?  "), ["hallo", "!", "how", "are", "you", "?"]
        )
        self.assertListEqual(tokenizer.tokenize("H\u00e9llo"), ["hello"])

    def test_basic_tokenizer_no_lower(self):
        tokenizer = BasicTokenizer(do_lower_case=False)

        self.assertListEqual(
            tokenizer.tokenize(" \tHeLLo!how  \n Are yoU?  "), ["HeLLo", "!", "how", "Are", "yoU", "?"]
        )

    def test_basic_tokenizer_no_lower_strip_accents_false(self):
        tokenizer = BasicTokenizer(do_lower_case=False, strip_accents=False)

        self.assertListEqual(
            tokenizer.tokenize(" \tHäLLo!how  \n Are yoU?  "), ["HäLLo", "!", "how", "Are", "yoU", "?"]
        )

    def test_basic_tokenizer_no_lower_strip_accents_true(self):
        tokenizer = BasicTokenizer(do_lower_case=False, strip_accents=True)

        self.assertListEqual(
            tokenizer.tokenize(" \tHäLLo!how  \n Are yoU?  "), ["HaLLo", "!", "how", "Are", "yoU", "?"]
        )

    def test_basic_tokenizer_respects_never_split_tokens(self):
        tokenizer = BasicTokenizer(do_lower_case=False, never_split=["[UNK]"])

        self.assertListEqual(
            tokenizer.tokenize(" \tHeLLo!how  \n Are yoU? [UNK]"), ["HeLLo", "!", "how", "Are", "yoU", "?", "[UNK]"]
        )

    def test_basic_tokenizer_splits_on_punctuation(self):
        tokenizer = BasicTokenizer()
        text = "a\n'll !!to?'d of, can't."
        expected = ["a", "'", "ll", "!", "!", "to", "?", "'", "d", "of", ",", "can", "'", "t", "."]
        self.assertListEqual(tokenizer.tokenize(text), expected)

    def test_wordpiece_tokenizer(self):
        vocab_tokens = ["[UNK]", "[CLS]", "[SEP]", "want", "##want", "##ed", "wa", "un", "runn", "##ing"]

        vocab = {}
        for i, token in enumerate(vocab_tokens):
            vocab[token] = i
        tokenizer = WordpieceTokenizer(vocab=vocab, unk_token="[UNK]")

        self.assertListEqual(tokenizer.tokenize(""), [])

        self.assertListEqual(tokenizer.tokenize("unwanted running"), ["un", "##want", "##ed", "runn", "##ing"])

        self.assertListEqual(tokenizer.tokenize("unwantedX running"), ["[UNK]", "runn", "##ing"])

    def test_is_whitespace(self):
        self.assertTrue(_is_whitespace(" "))
        self.assertTrue(_is_whitespace("\t"))
        self.assertTrue(_is_whitespace("\r"))
        self.assertTrue(_is_whitespace("\n"))
        self.assertTrue(_is_whitespace("\u00a0"))

        self.assertFalse(_is_whitespace("A"))
        self.assertFalse(_is_whitespace("-"))

    def test_is_control(self):
        self.assertTrue(_is_control("\u0005"))

        self.assertFalse(_is_control("A"))
        self.assertFalse(_is_control(" "))
        self.assertFalse(_is_control("\t"))
        self.assertFalse(_is_control("\r"))

    def test_is_punctuation(self):
        self.assertTrue(_is_punctuation("-"))
        self.assertTrue(_is_punctuation("$"))
        self.assertTrue(_is_punctuation("`"))
        self.assertTrue(_is_punctuation("."))

        self.assertFalse(_is_punctuation("A"))
        self.assertFalse(_is_punctuation(" "))

    def test_clean_text(self):
        tokenizer = self.get_tokenizer()
        rust_tokenizer = self.get_rust_tokenizer()

        # Example taken from the issue https://github.com/huggingface/tokenizers/issues/340
        self.assertListEqual([tokenizer.tokenize(t) for t in ["Test", "\xad", "test"]], [["[UNK]"], [], ["[UNK]"]])

        self.assertListEqual(
            [rust_tokenizer.tokenize(t) for t in ["Test", "\xad", "test"]], [["[UNK]"], [], ["[UNK]"]]
        )

    @transformers_4_api("its Rust-backed BertTokenizer has no build_inputs_with_special_tokens")
    def test_sequence_builders(self):
        tokenizer = self.tokenizer_class.from_pretrained(default_checkpoint_dir())

        text = tokenizer.encode("sequence builders", add_special_tokens=False)
        text_2 = tokenizer.encode("multi-sequence build", add_special_tokens=False)

        encoded_sentence = tokenizer.build_inputs_with_special_tokens(text)
        encoded_pair = tokenizer.build_inputs_with_special_tokens(text, text_2)

        assert encoded_sentence == [101] + text + [102]
        assert encoded_pair == [101] + text + [102] + text_2 + [102]

    def test_offsets_with_special_characters(self):
        for tokenizer, pretrained_name, kwargs in self.tokenizers_list:
            with self.subTest(f"{tokenizer.__name__} ({pretrained_name})"):
                tokenizer_r = self.rust_tokenizer_class.from_pretrained(pretrained_name, **kwargs)

                sentence = f"A, naïve {tokenizer_r.mask_token} AllenNLP sentence."
                tokens = tokenizer_r(
                    sentence,
                    return_attention_mask=False,
                    return_token_type_ids=False,
                    return_offsets_mapping=True,
                    add_special_tokens=True,
                )

                do_lower_case = tokenizer_r.do_lower_case if hasattr(tokenizer_r, "do_lower_case") else False
                expected_results = (
                    [
                        ((0, 0), tokenizer_r.cls_token),
                        ((0, 1), "A"),
                        ((1, 2), ","),
                        ((3, 5), "na"),
                        ((5, 6), "##ï"),
                        ((6, 8), "##ve"),
                        ((9, 15), tokenizer_r.mask_token),
                        ((16, 21), "Allen"),
                        ((21, 23), "##NL"),
                        ((23, 24), "##P"),
                        ((25, 33), "sentence"),
                        ((33, 34), "."),
                        ((0, 0), tokenizer_r.sep_token),
                    ]
                    if not do_lower_case
                    else [
                        ((0, 0), tokenizer_r.cls_token),
                        ((0, 1), "a"),
                        ((1, 2), ","),
                        ((3, 8), "naive"),
                        ((9, 15), tokenizer_r.mask_token),
                        ((16, 21), "allen"),
                        ((21, 23), "##nl"),
                        ((23, 24), "##p"),
                        ((25, 33), "sentence"),
                        ((33, 34), "."),
                        ((0, 0), tokenizer_r.sep_token),
                    ]
                )

                self.assertEqual(
                    [e[1] for e in expected_results], tokenizer_r.convert_ids_to_tokens(tokens["input_ids"])
                )
                self.assertEqual([e[0] for e in expected_results], [tuple(o) for o in tokens["offset_mapping"]])

    def test_change_tokenize_chinese_chars(self):
        list_of_commun_chinese_char = ["的", "人", "有"]
        text_with_chinese_char = "".join(list_of_commun_chinese_char)
        for tokenizer, pretrained_name, kwargs in self.tokenizers_list:
            with self.subTest(f"{tokenizer.__name__} ({pretrained_name})"):
                kwargs["tokenize_chinese_chars"] = True
                tokenizer_p = self.tokenizer_class.from_pretrained(pretrained_name, **kwargs)
                tokenizer_r = self.rust_tokenizer_class.from_pretrained(pretrained_name, **kwargs)

                ids_without_spe_char_p = tokenizer_p.encode(text_with_chinese_char, add_special_tokens=False)
                ids_without_spe_char_r = tokenizer_r.encode(text_with_chinese_char, add_special_tokens=False)

                tokens_without_spe_char_r = tokenizer_r.convert_ids_to_tokens(ids_without_spe_char_r)
                tokens_without_spe_char_p = tokenizer_p.convert_ids_to_tokens(ids_without_spe_char_p)

                # it is expected that each Chinese character is not preceded by "##"
                self.assertListEqual(tokens_without_spe_char_p, list_of_commun_chinese_char)
                self.assertListEqual(tokens_without_spe_char_r, list_of_commun_chinese_char)

                kwargs["tokenize_chinese_chars"] = False
                tokenizer_r = self.rust_tokenizer_class.from_pretrained(pretrained_name, **kwargs)
                tokenizer_p = self.tokenizer_class.from_pretrained(pretrained_name, **kwargs)

                ids_without_spe_char_r = tokenizer_r.encode(text_with_chinese_char, add_special_tokens=False)
                ids_without_spe_char_p = tokenizer_p.encode(text_with_chinese_char, add_special_tokens=False)

                tokens_without_spe_char_r = tokenizer_r.convert_ids_to_tokens(ids_without_spe_char_r)
                tokens_without_spe_char_p = tokenizer_p.convert_ids_to_tokens(ids_without_spe_char_p)

                # it is expected that only the first Chinese character is not preceded by "##".
                expected_tokens = [
                    f"##{token}" if idx != 0 else token for idx, token in enumerate(list_of_commun_chinese_char)
                ]
                self.assertListEqual(tokens_without_spe_char_p, expected_tokens)
                self.assertListEqual(tokens_without_spe_char_r, expected_tokens)


VOCAB_TOKENS = [
    "[UNK]",
    "[CLS]",
    "[SEP]",
    "[PAD]",
    "[MASK]",
    "want",
    "##want",
    "##ed",
    "wa",
    "un",
    "runn",
    "##ing",
    ",",
    "low",
    "lowest",
]


class BertTokenizerLegacyTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmpdirname = tempfile.mkdtemp()
        cls.vocab_file = os.path.join(cls.tmpdirname, VOCAB_FILES_NAMES["vocab_file"])
        with open(cls.vocab_file, "w", encoding="utf-8") as vocab_writer:
            vocab_writer.write("".join(token + "\n" for token in VOCAB_TOKENS))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmpdirname)

    def get_tokenizer(self, **kwargs):
        return PythonBertTokenizer(self.vocab_file, **kwargs)

    def test_full_tokenizer(self):
        tokenizer = self.get_tokenizer()

        tokens = tokenizer.tokenize("UNwantéd,running")

        self.assertListEqual(tokens, ["un", "##want", "##ed", ",", "runn", "##ing"])
        self.assertListEqual(tokenizer.convert_tokens_to_ids(tokens), [9, 6, 7, 12, 10, 11])

    def test_vocab_size_and_get_vocab(self):
        tokenizer = self.get_tokenizer()

        self.assertEqual(tokenizer.vocab_size, len(VOCAB_TOKENS))
        self.assertEqual(tokenizer.get_vocab()["##want"], 6)

    def test_missing_vocab_file_raises(self):
        with self.assertRaises(ValueError):
            PythonBertTokenizer(os.path.join(self.tmpdirname, "does-not-exist.txt"))

    def test_do_basic_tokenize_false_goes_straight_to_wordpiece(self):
        # Without basic tokenization the input is only split on whitespace, so punctuation stays glued to the word
        # and no longer matches the vocabulary.
        tokenizer = self.get_tokenizer(do_basic_tokenize=False)

        self.assertListEqual(tokenizer.tokenize("unwanted , running"), ["un", "##want", "##ed", ",", "runn", "##ing"])
        self.assertListEqual(tokenizer.tokenize("unwanted, running"), ["[UNK]", "runn", "##ing"])

    def test_never_split_is_honored(self):
        tokenizer = self.get_tokenizer(never_split=["[UNK]"])

        self.assertListEqual(tokenizer.tokenize("lowest [UNK]"), ["lowest", "[UNK]"])

    def test_tokenize_chinese_chars_can_be_disabled(self):
        text = "want博推want"

        spaced = self.get_tokenizer(tokenize_chinese_chars=True).tokenize(text)
        unspaced = self.get_tokenizer(tokenize_chinese_chars=False).tokenize(text)

        # With CJK spacing on, the two han characters are isolated and the surrounding word pieces survive.
        self.assertListEqual(spaced, ["want", "[UNK]", "[UNK]", "want"])
        # With it off, the whole run is one token and falls out of the vocabulary.
        self.assertListEqual(unspaced, ["[UNK]"])

    def test_convert_tokens_to_string(self):
        tokenizer = self.get_tokenizer()

        self.assertEqual(tokenizer.convert_tokens_to_string(["un", "##want", "##ed"]), "unwanted")

    def test_build_inputs_with_special_tokens(self):
        tokenizer = self.get_tokenizer()
        cls_id, sep_id = tokenizer.cls_token_id, tokenizer.sep_token_id

        text = tokenizer.encode("want", add_special_tokens=False)
        text_pair = tokenizer.encode("lowest", add_special_tokens=False)

        self.assertEqual(tokenizer.build_inputs_with_special_tokens(text), [cls_id] + text + [sep_id])
        self.assertEqual(
            tokenizer.build_inputs_with_special_tokens(text, text_pair),
            [cls_id] + text + [sep_id] + text_pair + [sep_id],
        )

    def test_create_token_type_ids_from_sequences(self):
        tokenizer = self.get_tokenizer()

        text = tokenizer.encode("want", add_special_tokens=False)
        text_pair = tokenizer.encode("lowest", add_special_tokens=False)

        token_type_ids = tokenizer.create_token_type_ids_from_sequences(text, text_pair)

        # 0 for [CLS] + first segment + [SEP], 1 for the second segment + its [SEP].
        self.assertEqual(token_type_ids, [0] * (len(text) + 2) + [1] * (len(text_pair) + 1))

    def test_get_special_tokens_mask(self):
        tokenizer = self.get_tokenizer()

        ids = tokenizer.encode("want")
        mask = tokenizer.get_special_tokens_mask(ids, already_has_special_tokens=True)

        self.assertEqual(mask[0], 1)
        self.assertEqual(mask[-1], 1)
        self.assertEqual(sum(mask), 2)

    def test_save_and_reload_vocabulary(self):
        tokenizer = self.get_tokenizer()
        sequence = "UNwantéd,running"

        with tempfile.TemporaryDirectory() as tmpdirname:
            tokenizer.save_pretrained(tmpdirname)
            reloaded = PythonBertTokenizer.from_pretrained(tmpdirname)

        self.assertEqual(reloaded.get_vocab(), tokenizer.get_vocab())
        self.assertListEqual(reloaded.tokenize(sequence), tokenizer.tokenize(sequence))


class WhitespaceTokenizeTest(unittest.TestCase):
    """`whitespace_tokenize` is the helper `data/processors/squad.py` relies on to align answer spans."""

    def test_splits_on_any_whitespace(self):
        self.assertListEqual(whitespace_tokenize("a  b\tc\nd"), ["a", "b", "c", "d"])

    def test_strips_surrounding_whitespace(self):
        self.assertListEqual(whitespace_tokenize("  padded  "), ["padded"])

    def test_empty_text_gives_no_tokens(self):
        self.assertListEqual(whitespace_tokenize("   "), [])
