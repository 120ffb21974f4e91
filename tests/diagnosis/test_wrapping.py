"""diagnosis.wrapping: a leading run of one class is only tried where it begins,
and that finds the same matches as the regex without the lookbehind."""

from __future__ import annotations

import random
import re

from qnndoctor.diagnosis.wrapping import _wrapped, wrap_tolerant

LEADING_RUNS = [
    r"\S+ is not a graph (?:input|output)\b",
    r"\w+OpBuilder::IsOpSupported\b",
    r"\w+\(\): incompatible (?:function|constructor) arguments\.",
    r"\d+ (ms)|\d+x",  # a group and a top-level alternation
    r"\S+|is not",
]


def test_a_leading_run_gets_a_lookbehind_and_nothing_else_does() -> None:
    assert wrap_tolerant(r"\S+ is not") == r"(?<!\S)" + _wrapped(r"\S+ is not")
    assert wrap_tolerant(r"\w+OpBuilder") == r"(?<!\w)\w+OpBuilder"
    for unchanged in (r"\S+? is", r"\S* is", r"\w{2} x", r"(\S+) is", r"x\S+ is"):
        assert wrap_tolerant(unchanged) == _wrapped(unchanged), unchanged


def test_the_lookbehind_finds_the_same_matches() -> None:
    chosen = random.Random(29)
    words = ["abc", "x.y", "Conv", "ReluOpBuilder::IsOpSupported", "is", "not", "a", "graph",
             "input", "output", "12", "ms", "f():", "incompatible", "function", "arguments.",
             "/path/to/model.onnx", "\n", "  ", "\t"]  # fmt: skip
    for source in LEADING_RUNS:
        plain = re.compile(_wrapped(source), re.IGNORECASE)
        tolerant = re.compile(wrap_tolerant(source), re.IGNORECASE)
        for _ in range(3000):
            text = " ".join(chosen.choice(words) for _ in range(chosen.randint(0, 14)))
            ours, theirs = tolerant.search(text), plain.search(text)
            assert (ours and (ours.span(), ours.groups())) == (
                theirs and (theirs.span(), theirs.groups())
            ), (source, text)
            assert [m.span() for m in tolerant.finditer(text)][:1] == [
                m.span() for m in plain.finditer(text)
            ][:1]
