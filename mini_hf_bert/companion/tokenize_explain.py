"""``python -m mini_hf_bert tokenize [--explain]`` as library calls: how a text becomes
tokens, stage by stage (google-research/bert's ``BasicTokenizer`` then ``WordpieceTokenizer``),
and the tokens, ids and character offsets the model receives.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..tokenization_bert import BertTokenizer, whitespace_tokenize
from ..tokenization_utils import lower_case, strip_accents

# --------------------------------------------------------------------------------------
# How a text becomes tokens, stage by stage
# --------------------------------------------------------------------------------------


@dataclass
class TokenizationStage:
    """One stage of BERT's tokenizer: what it does, and the text or words it leaves."""

    name: str
    rule: str
    result: str | list[str]
    skipped: bool = False


@dataclass
class WordPieces:
    """One word's greedy longest-match: its pieces and, for each, how many candidate
    substrings were looked up in the vocabulary before it matched."""

    word: str
    pieces: list[str]
    lookups: list[int]


@dataclass
class TokenizationExplanation:
    text: str
    stages: list[TokenizationStage]
    wordpieces: list[WordPieces]
    tokens: list[str]  # the wordpieces, as tokenizer.tokenize(text) gives them
    input_tokens: list[str]  # with [CLS] and [SEP]
    input_ids: list[int]


def _greedy_longest_match(word: str, vocab: dict[str, int], unk: str, max_chars: int) -> WordPieces:
    """WordpieceTokenizer.word_pieces, counting the look-ups (to show the search)."""
    if len(word) > max_chars:
        return WordPieces(word, [unk], [0])
    pieces, lookups, start = [], [], 0
    while start < len(word):
        end, tries = len(word), 0
        while end > start:
            tries += 1
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in vocab:
                break
            end -= 1
        if end == start:
            return WordPieces(word, [unk], [sum(lookups) + tries])
        pieces.append(piece)
        lookups.append(tries)
        start = end
    return WordPieces(word, pieces, lookups)


def explain_tokenization(tokenizer: BertTokenizer, text: str) -> TokenizationExplanation:
    """Run ``text`` through the tokenizer's rules one stage at a time.

    The stages are google-research/bert's ``BasicTokenizer`` + ``WordpieceTokenizer`` (and
    transformers'), in the order the fast tokenizer applies them: special tokens kept
    whole, clean-up, CJK split, whitespace split, accent stripping, lower-casing,
    punctuation split, WordPiece. Their end result equals ``tokenizer.tokenize(text)``
    (the tests hold it to that on the tokenizer corpus).
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    basic = tokenizer.basic_tokenizer
    if not tokenizer.do_basic_tokenize:
        raise ValueError("this tokenizer has do_basic_tokenize=False: it only splits on whitespace before WordPiece")
    specials = [(m.start(), m.end()) for m in tokenizer._special_pattern.finditer(text)]
    segments: list[tuple[str, bool]] = []  # (text, is a special token)
    position = 0
    for start, end in specials + [(len(text), len(text))]:
        if position < start:
            segments.append((text[position:start], False))
        if start < end:
            segments.append((text[start:end], True))
        position = end

    def per_segment(fn) -> list[tuple[object, bool]]:
        return [(piece if special else fn(piece), special) for piece, special in segments]

    stages = [TokenizationStage(
        "special tokens", f"the special tokens ({', '.join(tokenizer.all_special_tokens)}) in the text stay whole",
        [piece if special else repr(piece) for piece, special in segments], skipped=not specials)]

    cleaned = per_segment(basic._clean_text)
    stages.append(TokenizationStage(
        "clean-up", "drop NUL, U+FFFD and control characters; every whitespace character becomes a space",
        "".join(str(p) if s else p for p, s in cleaned)))

    spaced = [(p if s or not basic.tokenize_chinese_chars else basic._tokenize_chinese_chars(p), s) for p, s in cleaned]
    stages.append(TokenizationStage(
        "CJK split", "a space on both sides of every CJK ideograph: each becomes a word of its own",
        "".join(p for p, _ in spaced), skipped=not basic.tokenize_chinese_chars))

    words: list[tuple[str, bool]] = []  # (word, kept whole)
    for piece, special in spaced:
        if special:
            words.append((piece, True))
        else:
            words.extend((w, w in basic.never_split) for w in whitespace_tokenize(piece))
    stages.append(TokenizationStage("whitespace split", "split on runs of spaces", [w for w, _ in words]))

    def map_chars(fn, active: bool) -> list[tuple[str, bool]]:
        if not active:
            return words
        return [(w if whole else fn(w), whole) for w, whole in words]

    words = map_chars(strip_accents, basic._strip)
    stages.append(TokenizationStage(
        "accent stripping", "NFD-decompose each character and drop the combining marks (é -> e)",
        [w for w, _ in words], skipped=not basic._strip))
    words = map_chars(lower_case, basic.do_lower_case)
    stages.append(TokenizationStage(
        "lower-casing", "lower-case every character (an uncased vocabulary)",
        [w for w, _ in words], skipped=not basic.do_lower_case))

    split: list[str] = []
    for word, whole in words:
        if whole:
            split.append(word)
            continue
        split.extend(basic._run_split_on_punc(word))
    stages.append(TokenizationStage(
        "punctuation split", "every punctuation character (and every ASCII non-alphanumeric) becomes a word of its own",
        split, skipped=not basic.do_split_on_punc))

    special_set = set(tokenizer.all_special_tokens)
    wordpiece = tokenizer.wordpiece_tokenizer
    matches = [WordPieces(w, [w], [0]) if w in special_set
               else _greedy_longest_match(w, wordpiece.vocab, wordpiece.unk_token, wordpiece.max_input_chars_per_word)
               for w in split]
    tokens = [p for m in matches for p in m.pieces]
    stages.append(TokenizationStage(
        "WordPiece", "greedy longest match: the longest vocabulary prefix, then '##' + the longest continuation, ...",
        tokens))
    ids = tokenizer.build_inputs_with_special_tokens(tokenizer.convert_tokens_to_ids(tokens))
    return TokenizationExplanation(text, stages, matches, tokens, tokenizer.convert_ids_to_tokens(ids), ids)


def format_tokenization(explanation: TokenizationExplanation) -> str:
    """The stages as a learner reads them, one block each, then the ids."""
    lines = [f"Text: {explanation.text!r}", ""]
    for number, stage in enumerate(explanation.stages, 1):
        lines.append(f"{number}. {stage.name}: {stage.rule}" + ("  [skipped by this tokenizer]" if stage.skipped else ""))
        if isinstance(stage.result, str):
            lines.append(f"   {stage.result!r}")
        else:
            lines.append("   " + " | ".join(stage.result) if stage.result else "   (nothing)")
        if stage.name == "WordPiece":
            for match in explanation.wordpieces:
                if len(match.pieces) > 1 or match.pieces[0] != match.word:
                    steps = ", ".join(f"{p} ({n} look-up{'s' if n != 1 else ''})" for p, n in zip(match.pieces, match.lookups))
                    lines.append(f"     {match.word} -> {steps}")
    lines.append("")
    lines.append("Model input ([CLS] first, [SEP] last):")
    width = max([len(t) for t in explanation.input_tokens] + [5])
    lines.append("   " + " ".join(f"{t:>{width}}" for t in explanation.input_tokens))
    lines.append("   " + " ".join(f"{i:>{width}}" for i in explanation.input_ids))
    return "\n".join(lines)


def format_tokens(tokenizer: BertTokenizer, text: str) -> str:
    """Tokens, ids and character offsets of one text, as the model receives it."""
    encoding = tokenizer(text, return_offsets_mapping=True)
    tokens = tokenizer.convert_ids_to_tokens(encoding["input_ids"])
    lines = [f"{'#':>3}  {'token':<16} {'id':>6}  chars"]
    for i, (token, index, (start, end)) in enumerate(zip(tokens, encoding["input_ids"], encoding["offset_mapping"])):
        span = f"{start}:{end} {text[start:end]!r}" if end > start else "-"
        lines.append(f"{i:>3}  {token:<16} {index:>6}  {span}")
    return "\n".join(lines)
