"""diagnosis.oneline: a regex that cannot match a line break is searched only on
the lines holding all its literals, and finds what the whole text's search finds."""

from __future__ import annotations

import random
import re

from qnndoctor.diagnosis.prefilter import Literals, fold, plan
from qnndoctor.diagnosis.wrapping import wrap_tolerant

ONE_LINE = [
    r"(?:QNN|HTP)[^\n]{0,20}(?:Intel|AMD)",
    r"\bgraph\b[^\n]*?(input|output)(?!\w)",
    r"(?<![A-Za-z])onnx(?![A-Za-z-])",
    r"^Error:[^\n]*(?:failed|error)$",  # MULTILINE: a line's end
]
NOT_ONE_LINE = [
    r"QNN\s+Intel",  # \s takes a line break
    r"QNN[^x]{0,5}Intel",  # so does a negated class
    r"QNN.{0,9}Intel$",  # $ without MULTILINE reads the text's end
    r"QNN(?=\n)",  # a lookahead that reads the line break
    r"(?s)QNN.Intel",
]


def _flags(source: str) -> int:
    return re.IGNORECASE | (re.MULTILINE if source.startswith("^") else 0)


def test_which_regexes_stay_on_one_line() -> None:
    for source in ONE_LINE:
        assert plan(re.compile(source, _flags(source))).one_line, source
    for source in NOT_ONE_LINE:
        assert not plan(re.compile(source, _flags(source))).one_line, source
    # A catalogue message's spaces may be line breaks (wrapping): not one line.
    message = "QNN graph failed"
    assert not plan(re.compile(wrap_tolerant(message), re.IGNORECASE), message).one_line
    assert plan(re.compile(wrap_tolerant("QNN[^\\n]*Intel"), re.I), "QNN[^\\n]*Intel").one_line


def test_searched_line_by_line_it_finds_the_same_match() -> None:
    chosen = random.Random(29)
    words = ["QNN", "htp", "Intel", "amd", "graph", "input", "output", "onnx", "onnx-", "Error:",
             "failed", "error", "x", "\n", "\n", "  ", "Intel\n", "qnn\n"]  # fmt: skip
    for source in ONE_LINE + NOT_ONE_LINE:
        regex = re.compile(source, _flags(source))
        planned = plan(regex)
        for _ in range(1500):
            text = " ".join(chosen.choice(words) for _ in range(chosen.randint(0, 30)))
            ours = planned.search(text, Literals(fold(text)))
            theirs = regex.search(text)
            assert (ours and (ours.span(), ours.groups())) == (
                theirs and (theirs.span(), theirs.groups())
            ), (source, text)
