"""``tokenize --explain``: BERT's tokenizer one stage at a time, ending where the tokenizer ends."""

from __future__ import annotations

import contextlib
import io
import os

import pytest

from mini_hf_bert import BertTokenizer
from mini_hf_bert.checkpoints.bundled import default_checkpoint_dir
from mini_hf_bert.__main__ import main
from mini_hf_bert.companion.tokenize_explain import explain_tokenization, format_tokenization

from ..core.tokenizer_corpus import CHINESE, CORPUS
from ..paths import FIXTURES

GOOGLE_VOCAB = os.path.join(FIXTURES, "tf", "bert_pretraining", "vocab.txt")


@pytest.fixture(scope="module", params=["uncased", "cased"])
def tokenizer(request, minilm_dir):
    # The same vocabulary both ways: "cased" skips lower-casing and accent stripping.
    return BertTokenizer(os.path.join(minilm_dir, "vocab.txt"), do_lower_case=request.param == "uncased")


@pytest.mark.parametrize("text", CORPUS + CHINESE + ["Héllo, [MASK] unaffable 北京欢迎你!\x00 tab\there", ""])
def test_the_stages_end_in_the_tokenizers_own_tokens(tokenizer, text):
    explanation = explain_tokenization(tokenizer, text)
    assert explanation.tokens == tokenizer.tokenize(text)
    assert explanation.input_ids == tokenizer(text)["input_ids"]


def test_each_stage_shows_its_rule(minilm_dir):
    explanation = explain_tokenization(BertTokenizer.from_pretrained(minilm_dir), "Héllo, [MASK] unaffable 北京!\x07")
    stages = {s.name: s for s in explanation.stages}
    assert list(stages) == ["special tokens", "clean-up", "CJK split", "whitespace split", "accent stripping",
                            "lower-casing", "punctuation split", "WordPiece"]
    assert stages["special tokens"].result == ["'Héllo, '", "[MASK]", "' unaffable 北京!\\x07'"]
    assert stages["clean-up"].result == "Héllo, [MASK] unaffable 北京!"  # the BEL is gone
    assert stages["CJK split"].result == "Héllo, [MASK] unaffable  北  京 !"
    assert stages["whitespace split"].result == ["Héllo,", "[MASK]", "unaffable", "北", "京", "!"]
    assert stages["accent stripping"].result[0] == "Hello,"
    assert stages["lower-casing"].result[0] == "hello,"
    assert stages["punctuation split"].result[:2] == ["hello", ","]
    pieces = {m.word: m for m in explanation.wordpieces}
    # The vocabulary has "una", "##ffa", "##ble": greedy longest match, not morphology.
    assert pieces["unaffable"].pieces == ["una", "##ffa", "##ble"]
    # From "unaffable" down to "una": 7 candidates looked up before the first piece matched.
    assert pieces["unaffable"].lookups[0] == len("unaffable") - len("una") + 1
    assert explanation.input_tokens[0] == "[CLS]" and explanation.input_tokens[-1] == "[SEP]"


def test_a_cased_tokenizer_skips_the_casing_stages(minilm_dir):
    cased = BertTokenizer(os.path.join(minilm_dir, "vocab.txt"), do_lower_case=False)
    stages = {s.name: s for s in explain_tokenization(cased, "Café").stages}
    assert stages["accent stripping"].skipped and stages["lower-casing"].skipped
    assert "[skipped by this tokenizer]" in format_tokenization(explain_tokenization(cased, "Café"))


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_explain_command_shows_the_cjk_rule():
    code, out, err = _cli("tokenize", "北京是中国的首都。BERT reads it.", "--explain", "--checkpoint",
                          default_checkpoint_dir())  # the English vocabulary, whose [UNK] is the point
    assert code == 0, err
    assert "3. CJK split:" in out and "' 北  京  是  中  国  的  首  都 。BERT reads it.'" in out
    assert "8. WordPiece:" in out and "北 | 京 | [UNK]" in out
    ids_line = out.strip().splitlines()[-1].split()
    assert ids_line[0] == "101" and ids_line[-1] == "102"


def test_tokenize_takes_any_vocab_file():
    code, out, err = _cli("tokenize", "tok1 tok2", "--vocab", GOOGLE_VOCAB)
    assert code == 0, err
    first, _, *rows = out.splitlines()
    assert first == f"checkpoint: {GOOGLE_VOCAB}, as given"
    assert [line.split()[1] for line in rows] == ["[CLS]", "tok1", "tok2", "[SEP]"]


@pytest.mark.parametrize("argv,fragment", [
    (["tokenize", "x", "--vocab", "/nonexistent/vocab.txt"], "/nonexistent/vocab.txt"),
    (["tokenize", "x", "--vocab", "{empty}"], "no vocab.txt or tokenizer.json"),
    (["tokenize", "x", "--vocab", "{binary}"], "binary.txt"),
])
def test_tokenize_bad_vocab_is_one_line(argv, fragment, tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "config.json").write_text("{}")
    (tmp_path / "binary.txt").write_bytes(b"\xff\xfe\x00garbage\x00" * 10)
    names = dict(empty=str(tmp_path / "empty"), binary=str(tmp_path / "binary.txt"))
    code, _, err = _cli(*[a.format(**names) for a in argv])
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert code == 2 and len(errors) == 1 and fragment in errors[0], err
    assert "(unexpected" not in errors[0]
