"""The text the tokenizer tests (tests/core/test_tokenizer.py, tests_transformers4/) and its
benchmark (tools/benchmark_tokenizer.py) share; importing it needs no transformers."""

from __future__ import annotations

CORPUS = [
    # English prose
    "The quick brown fox jumps over the lazy dog.",
    "BERT, or Bidirectional Encoder Representations from Transformers, was introduced in 2018.",
    "Don't stop believin' -- it's what they'd've said, isn't it?",
    "unaffable unbelievably antidisestablishmentarianism",
    # numbers and dates
    "1,234,567.89 is larger than 1.2e6; 3/4 = 0.75 and 50% of $20 is $10.",
    "On 2024-01-31T12:34:56Z (31/01/2024, Jan. 31st) at 9:05pm.",
    # URLs and emails
    "https://example.com/path/to/page?query=1&lang=en#section visit www.python.org",
    "Write to first.last+tag@sub.example.co.uk or @handle #hashtag",
    # CJK
    "北京是中华人民共和国的首都。",
    "東京は日本の首都です。ひらがなとカタカナ",
    "서울은 대한민국의 수도입니다.",
    "中文English混合text测试123",
    # accented Latin, combining marks
    "café naïve Ångström façade jalapeño Zürich résumé",
    "CAFÉ NAÏVE ÅNGSTRÖM",
    "e\u0301 combining acute, a\u0308 umlaut, n\u0303 tilde, i\u0307 dot",
    "Ελληνικά ΟΔΟΣ οδός Русский текст",
    "İstanbul ß ﬁ ﬂ Ǆ ǅ ǆ",
    # emoji and symbols
    "emoji 😀 👍🏽 👨‍👩‍👧 🇫🇷 ✓ ✗ © ® ™ € £ ¥ ° ± × ÷ → ∞",
    "math: ∑ ∫ √ ≤ ≥ ≠ ≈ α β γ",
    # control characters, zero-width and non-breaking spaces
    "tab\there\nnewline\rreturn\x00nul\x07bell\x1bescape\ufffdreplacement",
    "zero\u200bwidth\u200cnon\u200djoiner\ufeffbom\u2060word",
    "non\u00a0breaking\u2009thin\u3000ideographic\u202fnarrow\u2028line\u2029para",
    "\x85next\x0bvtab\x0cformfeed",
    # very long words
    "x" * 101,
    "a" * 100,
    "supercalifragilisticexpialidocious" * 4,
    # repeated punctuation
    "What?!?! No... way!!! (((nested))) [[brackets]] {{braces}} ---dashes--- ___",
    "!!!",
    "...",
    # empty and whitespace-only
    "",
    " ",
    "\n\t ",
    # special tokens in text
    "hello [MASK] world [CLS] x[SEP]y [mask] [UNK] [PAD]",
]

CHINESE = [
    "今天天气很好，我们去公园散步吧！",
    "《红楼梦》是中国古典四大名著之一。",
    "他说：“我明天会来。”然后离开了。",
    "2023年全国GDP增长5.2%，达到126万亿元。",
    "人工智能（AI）正在改变世界；机器学习、深度学习都是其分支。",
    "繁體中文與简体中文混排測試",
    "𠀀𠀁𪚥 CJK extension B characters",
    "豈更車 compatibility ideographs",
]

PAIRS = [
    ("The first sentence is rather long and has many words in it.", "Short second."),
    ("Short.", "The second sentence is the long one here, with plenty of tokens."),
    ("Equal length sentence number one here.", "Equal length sentence number two here."),
    ("北京是首都。", "Paris is the capital of France."),
]


#: Inputs on which transformers' two tokenizers (5.x BertTokenizer, Rust; BertTokenizerLegacy,
#: Python) differ, and at which level; mini_hf_bert follows the fast one. docs/tokenizer.md
#: lists the same cases under the same names.
FAST_VS_LEGACY = {
    "word-final capital sigma": ("uncased", "tokens", "ΟΔΟΣ"),
    "unassigned code point kept as a character": ("uncased", "tokens", "a\u0378b"),
    "no NFC composition": ("cased", "words", "cafe\u0301"),
    "longest_first gives the odd token to the longer (second on a tie)": (
        "uncased", "truncation", ("Equal length sentence one.", "Equal length sentence two.")),
}


#: Corpus lines that hold a documented case (the Greek line's "ΟΔΟΣ": word-final sigma).
LEGACY_DIFFERS = {"Ελληνικά ΟΔΟΣ οδός Русский текст": ("uncased", "word-final capital sigma")}
