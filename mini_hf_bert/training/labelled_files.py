"""A learner's own labelled data for ``finetune``: the file formats, read with an error
that names the file and the line for every way a file can be wrong.

* **Classification** (``.csv``, ``.tsv``): a header row, ``text,label`` or
  ``text,text_pair,label`` (the columns in any order), then one example a row. A CSV quotes a field that holds a comma
  (Python's ``csv`` module, Excel's dialect); a TSV has no quoting: a tab ends a field.
  Labels are any strings: ``pos``/``neg``, ``0``/``1``, ``体育``/``财经``.
* **Tagging** (``.conll``, ``.bio``, ``.iob``, ``.txt``): CoNLL's layout, one token a line
  with its BIO label last (``北 B-LOC``; columns between, as CoNLL-2003's, are skipped), a
  blank line after each sentence. ``-DOCSTART-`` lines are skipped.

transformers: none (its ``run_glue.py`` and ``run_ner.py`` examples read CSV/JSON and
CoNLL files through the ``datasets`` library)
"""

from __future__ import annotations

import csv
import io
import os
import random
import re
from dataclasses import dataclass

from ..file_utils import read_file
from ..limits import LABELLED_FILE_BYTES

#: Extensions -> format. A file whose name ends otherwise names its format with ``--format``.
FORMATS = {".csv": "csv", ".tsv": "tsv", ".conll": "conll", ".bio": "conll", ".iob": "conll", ".txt": "conll"}
#: The columns a classification file's header names, in any order.
CLASSIFICATION_HEADERS = (("text", "label"), ("text", "text_pair", "label"))
#: A label file larger than this is not a learner's data set (and would be read whole).
MAX_FILE_BYTES = LABELLED_FILE_BYTES
#: A tag is O, or B-/I- and the entity type.
BIO_LABEL = re.compile(r"O|[BI]-\S+")
DOCSTART = "-DOCSTART-"


class LabelledFileError(ValueError):
    """A labelled file that cannot be read as its format says: the message names the file,
    the line where there is one, and what is wrong.

    transformers: none
    """


@dataclass
class LabelledData:
    """A labelled file's examples and the labels they use.

    ``kind``: "classification", examples ``(text, text_pair or None, label)``; or "tagging",
    examples ``(tokens, labels)``. ``labels``: the classes, in the order the model's
    outputs take them (``id2label``). ``lines``: the line each example starts on.

    transformers: none
    """

    path: str
    kind: str
    examples: list
    labels: list[str]
    lines: list[int]


def file_format(path: str, format: str | None = None) -> str:
    """The format of ``path``: ``format`` where given, else its extension's (``FORMATS``)."""
    if format is not None:
        if format not in set(FORMATS.values()):
            raise LabelledFileError(f"format={format!r}: expected one of csv, tsv, conll")
        return format
    extension = os.path.splitext(path)[1].lower()
    if extension not in FORMATS:
        raise LabelledFileError(
            f"{path}: cannot tell its format from its name: name it .csv or .tsv (a header row text,label or "
            f"text,text_pair,label, then one example a line) or .conll/.bio (one token and its BIO label a line, a "
            f"blank line after each sentence), or give --format")
    return FORMATS[extension]


def read_labelled_file(path: str | os.PathLike, format: str | None = None) -> LabelledData:
    """``path`` -> its examples, in file order, and their labels (classification: sorted;
    tagging: O, then B- and I- of each type, sorted by type).

    Raises:
        LabelledFileError: naming the file and the line: no such file, not UTF-8, empty, no
            header or a wrong one, a missing or extra column, an empty text or label, a
            tag that is not BIO, one label only.
    """
    path = os.fspath(path)
    kind = file_format(path, format)
    text = _read_text(path)
    if not text.strip():
        raise LabelledFileError(f"{path}: the file is empty; " + (
            "expected a header row text,label (or text,text_pair,label) and one example a line" if kind != "conll"
            else "expected one token and its BIO label a line, a blank line after each sentence"))
    return _read_tagging(path, text) if kind == "conll" else _read_classification(path, text, kind)


def check_training_labels(data: LabelledData) -> None:
    """Refuse a training file whose examples all have one class: nothing to tell apart (a
    dev file may, as a dev set of one class is still a test)."""
    if data.kind == "classification" and len(data.labels) < 2:
        raise LabelledFileError(f"{data.path}: every example has the label {data.labels[0]!r}; classification needs "
                                f"two labels at least")


def _read_text(path: str) -> str:
    try:
        data = read_file(path, max_bytes=MAX_FILE_BYTES)
    except FileNotFoundError:
        raise LabelledFileError(f"{path}: no such file") from None
    except OSError as e:
        raise LabelledFileError(f"{path}: cannot be read ({e.strerror})") from None
    try:
        return data.decode("utf-8-sig")  # a byte-order mark, as Excel writes, is not part of the header
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        raise LabelledFileError(f"{path}, line {line}: not UTF-8 (byte {e.start}: {e.reason}); {_conversion_hint(path, data)}"
                                ) from None


def _conversion_hint(path: str, data: bytes) -> str:
    """How to make a file UTF-8: Chinese Windows and Excel save GBK (GB18030 is its superset)."""
    try:
        data.decode("gb18030")
    except UnicodeDecodeError:
        return "save the file as UTF-8"
    utf8 = os.path.splitext(path)[0] + ".utf8" + os.path.splitext(path)[1]
    return f"it reads as GBK (GB18030), as Chinese Windows and Excel save it: convert it with iconv -f GBK -t UTF-8 {path} > {utf8}"


#: The comma a Chinese input method types: it looks like a separator but is not one.
FULL_WIDTH_COMMA = "\uff0c"


def _full_width_hint(row: list[str], kind: str) -> str:
    """The hint for a CSV line that separates its fields with the full-width comma."""
    if kind != "csv" or not any(FULL_WIDTH_COMMA in field for field in row):
        return ""
    return (f"; this line separates with the full-width comma '{FULL_WIDTH_COMMA}' (U+FF0C, as a Chinese input "
            f"method types it): a CSV's fields are separated by the ASCII comma ','")


def _read_classification(path: str, text: str, kind: str) -> LabelledData:
    dialect = {"delimiter": ","} if kind == "csv" else {"delimiter": "\t", "quoting": csv.QUOTE_NONE}
    separator = "," if kind == "csv" else "\\t"
    reader = csv.reader(io.StringIO(text, newline=""), strict=True, **dialect)
    header, examples, lines, end = None, [], [], 0
    try:
        for row in reader:
            start, end = end + 1, reader.line_num  # a quoted field may span lines
            if not any(field.strip() for field in row):
                continue  # a blank line
            if header is None:
                header = tuple(field.strip().lower() for field in row)
                if sorted(header) not in [sorted(columns) for columns in CLASSIFICATION_HEADERS]:
                    raise LabelledFileError(
                        f"{path}, line {reader.line_num}: the header must be text{separator}label or "
                        f"text{separator}text_pair{separator}label (in any order), got {separator.join(row)!r}"
                        + _full_width_hint(row, kind))
                continue
            if len(row) != len(header):
                raise LabelledFileError(
                    f"{path}, line {reader.line_num}: {len(row)} field(s) where the header has {len(header)} "
                    f"({separator.join(header)})" + ("; a text that holds a comma must be in double quotes"
                                                     if kind == "csv" and len(row) > len(header)
                                                     else _full_width_hint(row, kind)))
            fields = dict(zip(header, (field.strip() for field in row)))
            for name in header:
                if not fields[name]:
                    raise LabelledFileError(f"{path}, line {reader.line_num}: the {name} is empty")
            examples.append((fields["text"], fields.get("text_pair"), fields["label"]))
            lines.append(start)
    except csv.Error as e:
        raise LabelledFileError(f"{path}, line {reader.line_num}: {e}") from None
    if not examples:
        raise LabelledFileError(f"{path}: a header and no examples; one example a line follows the header")
    return LabelledData(path, "classification", examples, _sorted_labels({label for _, _, label in examples}), lines)


def _sorted_labels(labels: set[str]) -> list[str]:
    """Numbers in numeric order (so "2" before "10"), other labels alphabetically."""
    if all(re.fullmatch(r"-?\d+", label) for label in labels):
        return sorted(labels, key=int)
    return sorted(labels)


def _read_tagging(path: str, text: str) -> LabelledData:
    sentences, lines, tokens, tags = [], [], [], []
    for number, line in enumerate(text.splitlines(), 1):
        fields = line.split()
        if not fields or fields[0] == DOCSTART:
            if tokens:
                sentences.append((tokens, tags))
                tokens, tags = [], []
            continue
        if not tokens:
            lines.append(number)
        if len(fields) < 2:
            raise LabelledFileError(f"{path}, line {number}: {line.strip()!r} has no label: expected a token and its "
                                    f"BIO label separated by a space or a tab")
        if not BIO_LABEL.fullmatch(fields[-1]):
            raise LabelledFileError(f"{path}, line {number}: the label {fields[-1]!r} is not BIO: expected O, "
                                    f"B-TYPE or I-TYPE")
        tokens.append(fields[0])
        tags.append(fields[-1])
    if tokens:
        sentences.append((tokens, tags))
    types = sorted({tag[2:] for _, sentence_tags in sentences for tag in sentence_tags if tag != "O"})
    if not types:
        raise LabelledFileError(f"{path}: every token is labelled O; tagging needs at least one entity (B-TYPE)")
    return LabelledData(path, "tagging", sentences, ["O"] + [f"{bi}-{t}" for t in types for bi in "BI"], lines)


def check_held_out_labels(train: LabelledData, held_out: LabelledData) -> None:
    """Refuse a dev file of another kind than the training file's, or with a label the
    training file never has (the model would have no output for it), naming its first line."""
    if held_out.kind != train.kind:
        raise LabelledFileError(f"{held_out.path}: a {held_out.kind} file, but the training file {train.path} is a "
                                f"{train.kind} file")
    known = set(train.labels)
    for index, example in enumerate(held_out.examples):
        labels = [example[2]] if held_out.kind == "classification" else example[1]
        unknown = [label for label in labels if label not in known]
        if unknown:
            raise LabelledFileError(f"{held_out.path}, line {held_out.lines[index]}: the label {unknown[0]!r} never occurs in the "
                                    f"training file {train.path} (its labels: {', '.join(train.labels)})")


def split_held_out(data: LabelledData, fraction: float, seed: int) -> tuple[list, list]:
    """(training examples, held-out examples): a seeded ``fraction`` of ``data``'s
    examples held out, at least one, and at least one left to train on."""
    if not 0 < fraction < 1:
        raise LabelledFileError(f"dev_fraction must be between 0 and 1, got {fraction!r}")
    count = len(data.examples)
    if count < 2:
        raise LabelledFileError(f"{data.path}: one example only; it cannot be split into training and held-out "
                                f"examples: write more, or give a dev file")
    order = list(range(count))
    random.Random(seed).shuffle(order)
    held = min(count - 1, max(1, round(count * fraction)))
    return [data.examples[i] for i in sorted(order[held:])], [data.examples[i] for i in sorted(order[:held])]
