"""diagnosis.logfile: the fast noise test answers as the noise regex does."""

from __future__ import annotations

import random

from qnndoctor.diagnosis.logfile import _NOISE, holds_noise, readable


def test_holds_noise_is_the_noise_regex_for_every_code_point() -> None:
    for code in range(0x110000):
        character = chr(code)
        assert holds_noise(character) == (_NOISE.search(character) is not None), hex(code)


def test_holds_noise_is_the_noise_regex_for_mixed_texts() -> None:
    chosen = random.Random(29)
    alphabet = [chr(c) for c in range(0x180)] + ["\ufffd", "\ud800", "\U0001f600", "中"]
    for _ in range(5000):
        text = "".join(chosen.choice(alphabet) for _ in range(chosen.randint(0, 16)))
        assert holds_noise(text) == (_NOISE.search(text) is not None), repr(text)


def test_a_clean_text_is_returned_unchanged_and_noise_is_taken_out() -> None:
    clean = "line one\n\tline two \x1b[31mred\x1b[0m\r\n" * 3
    assert readable(clean) is clean
    assert readable("ok\x00 line\nfine\n") == "ok line\nfine\n"
