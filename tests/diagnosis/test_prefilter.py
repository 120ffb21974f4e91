"""The literal pre-filter (``diagnosis.prefilter``) changes how fast a big log
is explained, never the answer: every regex answers as it does unfiltered,
the per-line gates never skip a line a regex matches, and big or pathological
logs (a failure buried in 20,000 real lines, CRLF, a megabyte on one line,
binary junk) are explained as the failure alone is. Speed itself lives in
bench/bench_explain.py."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from qnndoctor.diagnosis import diagnose, load, prefilter, resemblance, textfacts
from qnndoctor.diagnosis.prefilter import LineGate, Literals, fold, plan

CORPUS = Path(__file__).parents[1] / "diagnosis_corpus"
FAILURE_ID = "dev-018"  # "Failed to finalize QNN graph" (a real report)


def _dev_cases() -> list[dict[str, object]]:
    cases: list[dict[str, object]] = []
    for part in sorted(CORPUS.glob("dev*.json")):
        cases += json.loads(part.read_text("utf-8"))["cases"]
    return cases


def _texts() -> list[str]:
    """Real failure texts and healthy logs, plus the same texts in shapes that
    test the folding and the line handling."""
    base = [str(case["text"]) for case in _dev_cases()]
    base += [p.read_text("utf-8") for p in sorted((CORPUS / "healthy").glob("*.txt"))]
    base += [example for s in load().signatures for example in s.examples]
    shaped: list[str] = []
    for text in base[:40]:
        shaped += [
            text.upper(),
            text.replace("i", "\u0130").replace("s", "\u017f").replace("k", "\u212a"),
            text.replace("\n", "\r\n"),
            text.replace(" ", "\n  ", 3),  # hard-wrapped at word boundaries
            "\x00\x1b[0;93m" + text.replace(" ", "\t") + "\x1b[m",
        ]
    return base + shaped


def _regexes() -> list[tuple[re.Pattern[str], str]]:
    """Every regex the engine pre-filters, with its catalogue source (if any):
    each catalogue pattern both ways (read from its source and from itself)."""
    catalogue = load()
    found = [(p.regex, p.source) for s in catalogue.signatures for p in s.patterns]
    found += [(p.regex, "") for s in catalogue.signatures for p in s.patterns]
    found += [(h.regex, "") for h in catalogue.harmless]
    found += [(r, "") for _finder, regexes in textfacts._FINDER_REGEXES for r in regexes]
    return [*found, (resemblance.FAILURE_WORDS, "")]


def test_fold_keeps_positions_and_folds_what_a_case_insensitive_ascii_literal_matches() -> None:
    everything = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    folded = fold(everything)
    assert len(folded) == len(everything)  # positions in the folded text are the text's
    ascii_like = re.compile(r"[\x00-\x7f]", re.IGNORECASE)
    checked = 0
    for match in ascii_like.finditer(everything):
        char, as_folded = match.group(0), folded[match.start()]
        matching = {a for a in map(chr, range(128)) if re.fullmatch(re.escape(a), char, re.I)}
        assert {a.lower() for a in matching} == {as_folded}, (hex(ord(char)), as_folded)
        checked += 1
    assert checked > 128  # the non-ASCII look-alikes (KELVIN SIGN, dotless i, long s) were met


def test_every_regex_finds_the_same_match_with_and_without_the_prefilter(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each text's unfiltered answers are computed once and compared with the
    pre-filter's twice: as it runs (the big-text word index from 32 KiB) and
    with the word index used on every text (a big text's literals are first
    looked for among its distinct words: that index never hides a literal)."""
    texts = _texts()
    regexes = _regexes()
    assert len(regexes) > 800
    skipped = 0
    default = prefilter._WORD_INDEX_FROM
    for text in texts:
        expected = [regex.search(text) for regex, _source in regexes]
        literals = Literals(fold(text))
        for (regex, source), want in zip(regexes, expected, strict=True):
            got = plan(regex, source).search(text, literals)
            assert (got and (got.span(), got.group(0))) == (
                want and (want.span(), want.group(0))
            ), (regex.pattern, text[:200])
            skipped += want is None and not plan(regex, source).may_match(literals)
        monkeypatch.setattr(prefilter, "_WORD_INDEX_FROM", 0)
        literals = Literals(fold(text))
        for (regex, source), want in zip(regexes, expected, strict=True):
            got = plan(regex, source).search(text, literals)
            assert (got and got.span()) == (want and want.span()), ("word index", regex.pattern)
        monkeypatch.setattr(prefilter, "_WORD_INDEX_FROM", default)
    assert skipped > len(texts) * len(regexes) // 2  # the pre-filter does answer most


def test_a_line_gate_never_skips_a_line_its_regex_matches() -> None:
    regexes = [regex for regex, _source in _regexes()]
    for text in _texts()[::3]:
        lines = text.splitlines()
        gate = LineGate(lines, regexes)
        for index, line in enumerate(lines):
            allow = gate.for_line(index)
            for regex in regexes:
                if regex.search(line):
                    assert allow(regex), (regex.pattern, line)
                    on = gate.lines_for([regex])
                    assert on is None or index in on


def test_a_regex_the_parser_cannot_read_is_searched_in_full() -> None:
    backreference = re.compile(r"(QNN)\s+\1|error (\d+)", re.IGNORECASE)
    assert plan(backreference).branches == ()
    text = "qnn QNN and error 5005"
    assert plan(backreference).search(text).group(0) == "qnn QNN"  # type: ignore[union-attr]


def _failure() -> tuple[str, str]:
    case = next(c for c in _dev_cases() if c["id"] == FAILURE_ID)
    return str(case["text"]), str(case["expected"])


def _repeated(session: str, lines: int) -> list[str]:
    base = session.splitlines()
    out: list[str] = []
    while len(out) < lines:
        out += base[: lines - len(out)]
    return out


@pytest.mark.real_ort
def test_a_failure_buried_in_20000_real_lines_is_found_as_it_is_alone(
    verbose_session: subprocess.CompletedProcess[str],
) -> None:
    failure, expected = _failure()
    alone = diagnose(failure)
    assert alone.ids()[:1] == [expected]
    body = _repeated(verbose_session.stdout + verbose_session.stderr, 20_000)
    buried = "\n".join([*body[:10_000], failure, *body[10_000:]])
    result = diagnose(buried)
    assert result.ids()[:1] == [expected]
    top, top_alone = result.candidates[0], alone.candidates[0]
    assert [e.detail for e in top.evidence if e.kind == "pattern"] == [
        e.detail for e in top_alone.evidence if e.kind == "pattern"
    ]
    assert diagnose(buried.replace("\n", "\r\n")).ids()[:1] == [expected]
    assert diagnose("\n".join(body)).candidates == ()  # the healthy part alone raises nothing


def test_pathological_lines_are_explained_not_hung_on(tmp_path: Path) -> None:
    """Megabyte lines of the shapes that make regexes backtrack (blank runs for
    the wrap-tolerant spaces, repeated near-miss words), NUL bytes and binary
    junk: explain answers, through the CLI, with the failure they carry."""
    failure, expected = _failure()
    shapes = [
        "Failed to finalize " * 50_000,
        "QNN " + " \t" * 300_000 + "error",
        "x" * 1_000_000,
        "\x00\xff\xfe" * 200_000,
    ]
    log = tmp_path / "pathological.log"
    log.write_bytes(
        "\n".join([*shapes, failure]).encode("utf-8", errors="surrogateescape")
        + bytes(range(256)) * 2000
    )
    done = subprocess.run(
        [sys.executable, "-m", "qnndoctor", "explain", "--json", "--log", str(log)],
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    data = json.loads(done.stdout)
    assert data["candidates"][0]["id"] == expected
    assert data["input"]["characters"] > 3_000_000


def test_an_enclosing_group_is_planned_branch_by_branch() -> None:
    from qnndoctor.diagnosis.prefilter import _ungrouped

    assert _ungrouped("(?:a|b)") == "a|b"
    for kept in ("(?:a|b)c", "(?:a|b)+", "(?:a)(?:b)", "a|b", "(a|b)"):
        assert _ungrouped(kept) == kept
    assert _ungrouped(r"(?:[)]|b\))") == r"[)]|b\)"
    # a non-ASCII branch has no literal to look for: the others are still planned
    regex = re.compile("(?:File doesn'?t exist|No such file|文件不存在)", re.IGNORECASE)
    assert len(plan(regex).branches) == 3
    for text in ("x" * 40000 + "\n文件不存在 no such FILE", "no such file\n" * 3, "nothing"):
        ours, theirs = plan(regex).search(text), regex.search(text)
        assert (ours and ours.span()) == (theirs and theirs.span())
