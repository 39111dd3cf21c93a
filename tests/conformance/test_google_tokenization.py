"""google-research/bert's ``tokenization_test.py``, ported to the library under test.

Source: google-research/bert@281d86edff60d1337c85bbb96d6f2dc99ce16229, ``tokenization_test.py``.
Every test and expectation is the authors'. Mechanical changes:

* ``tf.test.TestCase`` -> ``unittest.TestCase``; ``assertAllEqual`` -> ``assertEqual``; the
  Python 2 branch of the vocabulary writer dropped.
* ``tokenization.FullTokenizer(vocab_file)`` -> ``BertTokenizer(vocab_file)`` (the same
  BasicTokenizer + WordPiece; its vocabulary lacks ``[PAD]`` and ``[MASK]``, which Google's
  tokenizer never looks up and ours adds after the vocabulary, as transformers does).
* ``tokenization.WordpieceTokenizer(vocab=vocab)`` -> ``WordpieceTokenizer(vocab, unk_token="[UNK]")``
  (Google's default ``unk_token``, passed: ours has no default, as transformers').
* ``tokenization.convert_tokens_to_ids(vocab, tokens)`` -> ``BertTokenizer(vocab=vocab).convert_tokens_to_ids(tokens)``.
* ``tokenization._is_whitespace`` / ``_is_control`` / ``_is_punctuation`` -> the same-named
  functions of ``mini_hf_bert.tokenization_bert``.
"""

from __future__ import annotations

import os
import tempfile
import unittest

from .upstream import character_classes, library, word_tokenization


class TokenizationTest(unittest.TestCase):
    def test_full_tokenizer(self):
        vocab_tokens = ["[UNK]", "[CLS]", "[SEP]", "want", "##want", "##ed", "wa", "un", "runn", "##ing", ","]
        with tempfile.NamedTemporaryFile(delete=False) as vocab_writer:
            vocab_writer.write("".join([x + "\n" for x in vocab_tokens]).encode("utf-8"))
            vocab_file = vocab_writer.name

        tokenizer = library.BertTokenizer(vocab_file)
        os.unlink(vocab_file)

        tokens = tokenizer.tokenize("UNwant\u00e9d,running")
        self.assertEqual(tokens, ["un", "##want", "##ed", ",", "runn", "##ing"])

        self.assertEqual(tokenizer.convert_tokens_to_ids(tokens), [7, 4, 5, 10, 8, 9])

    def test_chinese(self):
        tokenizer = word_tokenization.BasicTokenizer()

        self.assertEqual(tokenizer.tokenize("ah\u535a\u63a8zz"), ["ah", "\u535a", "\u63a8", "zz"])

    def test_basic_tokenizer_lower(self):
        tokenizer = word_tokenization.BasicTokenizer(do_lower_case=True)

        self.assertEqual(tokenizer.tokenize(" \tHeLLo!how  \n Are yoU?  "), ["hello", "!", "how", "are", "you", "?"])
        self.assertEqual(tokenizer.tokenize("H\u00e9llo"), ["hello"])

    def test_basic_tokenizer_no_lower(self):
        tokenizer = word_tokenization.BasicTokenizer(do_lower_case=False)

        self.assertEqual(tokenizer.tokenize(" \tHeLLo!how  \n Are yoU?  "), ["HeLLo", "!", "how", "Are", "yoU", "?"])

    def test_wordpiece_tokenizer(self):
        vocab_tokens = ["[UNK]", "[CLS]", "[SEP]", "want", "##want", "##ed", "wa", "un", "runn", "##ing"]

        vocab = {}
        for i, token in enumerate(vocab_tokens):
            vocab[token] = i
        tokenizer = word_tokenization.WordpieceTokenizer(vocab=vocab, unk_token="[UNK]")

        self.assertEqual(tokenizer.tokenize(""), [])

        self.assertEqual(tokenizer.tokenize("unwanted running"), ["un", "##want", "##ed", "runn", "##ing"])

        self.assertEqual(tokenizer.tokenize("unwantedX running"), ["[UNK]", "runn", "##ing"])

    def test_convert_tokens_to_ids(self):
        vocab_tokens = ["[UNK]", "[CLS]", "[SEP]", "want", "##want", "##ed", "wa", "un", "runn", "##ing"]

        vocab = {}
        for i, token in enumerate(vocab_tokens):
            vocab[token] = i

        self.assertEqual(
            library.BertTokenizer(vocab=vocab).convert_tokens_to_ids(["un", "##want", "##ed", "runn", "##ing"]),
            [7, 4, 5, 8, 9],
        )

    def test_is_whitespace(self):
        self.assertTrue(character_classes._is_whitespace(" "))
        self.assertTrue(character_classes._is_whitespace("\t"))
        self.assertTrue(character_classes._is_whitespace("\r"))
        self.assertTrue(character_classes._is_whitespace("\n"))
        self.assertTrue(character_classes._is_whitespace("\u00a0"))

        self.assertFalse(character_classes._is_whitespace("A"))
        self.assertFalse(character_classes._is_whitespace("-"))

    def test_is_control(self):
        self.assertTrue(character_classes._is_control("\u0005"))

        self.assertFalse(character_classes._is_control("A"))
        self.assertFalse(character_classes._is_control(" "))
        self.assertFalse(character_classes._is_control("\t"))
        self.assertFalse(character_classes._is_control("\r"))

    def test_is_punctuation(self):
        self.assertTrue(character_classes._is_punctuation("-"))
        self.assertTrue(character_classes._is_punctuation("$"))
        self.assertTrue(character_classes._is_punctuation("`"))
        self.assertTrue(character_classes._is_punctuation("."))

        self.assertFalse(character_classes._is_punctuation("A"))
        self.assertFalse(character_classes._is_punctuation(" "))
