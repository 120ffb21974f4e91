"""The diagnosis engine: the catalogue against its real symptom texts, weighted
scoring, tie-breaking, fact exclusion, exit codes that only sharpen, facts read
from the text itself (re-wrapping, hex codes and harmless lines:
test_text_as_written.py)."""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from helpers.catalogues import write_catalogue
from packaging.specifiers import SpecifierSet

from qnndoctor.diagnosis import Fact, catalogue, diagnose
from qnndoctor.diagnosis.facts import from_items
from qnndoctor.matrixdata import load_socs

CATALOGUE: dict[str, Any] = json.loads(
    resources.files("qnndoctor.matrix").joinpath("signatures.json").read_text("utf-8")
)
ENTRIES = CATALOGUE["signatures"]
SOCS = load_socs()
VERSIONS = [
    f"{major}.{minor}.{patch}" for major in (1, 2) for minor in range(0, 40) for patch in (0, 2)
]


def _schema(name: str) -> Any:
    return json.loads(resources.files("qnndoctor.matrix").joinpath(name).read_text("utf-8"))


def test_catalogue_matches_its_schema_and_loads() -> None:
    jsonschema.validate(CATALOGUE, _schema("signatures.schema.json"))
    assert len(catalogue.load().signatures) == len(ENTRIES)
    assert len({e["id"] for e in ENTRIES}) == len(ENTRIES)


def test_catalogue_cites_only_public_sources() -> None:
    for entry in ENTRIES:
        for source in entry["sources"]:
            assert source.startswith("https://"), (entry["id"], source)
            # no path into this project's own shared/ or tests/ folders (a public repo's
            # folder that merely ends in 'shared', like ai-hub-models' models/_shared/, is fine)
            folders = re.split(r"[/#?]", source)
            assert "shared" not in folders and "tests" not in folders, (entry["id"], source)


def _facts_that_fit(entry: dict[str, Any]) -> list[Fact]:
    """Facts satisfying every condition of an entry (what its own machine would show)."""
    facts = []
    for cond in entry.get("facts") or []:
        if "equals" in cond:
            value: Any = cond["equals"]
        elif "in" in cond:
            value = cond["in"][0]
        elif "contains" in cond:
            value = frozenset({cond["contains"]})
        else:
            spec = cond["spec"]
            value = next(v for v in VERSIONS if SpecifierSet(spec).contains(v))
        facts.append(Fact(cond["fact"], value, "test"))
    return facts


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["id"] for e in ENTRIES])
def test_every_entry_is_raised_by_its_real_symptoms(entry: dict[str, Any]) -> None:
    """Each symptom example (copied from a public report) raises its entry when
    the machine's facts fit it."""
    codes = entry.get("exit_codes") or [None]
    facts = from_items(_facts_that_fit(entry))
    for example in entry["symptom_examples"]:
        result = diagnose(example, exit_code=codes[0], facts=facts, socs=SOCS)
        assert entry["id"] in result.ids(), example


LOOK_ALIKES = [
    # (text, facts, expected first): the same error, told apart by a cue or a fact
    (
        "QNN_DEVICE_ERROR_INVALID_CONFIG",
        {"os": "android"},
        "skel-not-found-adsp-library-path-linux-android",
    ),
    (
        "QNN_DEVICE_ERROR_INVALID_CONFIG\nthe manifest has no <uses-native-library> for libcdsprpc.so",
        {"os": "android"},
        "android-missing-uses-native-library-libcdsprpc",
    ),
    (
        "QNN_DEVICE_ERROR_INVALID_CONFIG\nworks after setting useLegacyPackaging true",
        {"os": "android"},
        "android-compressed-jnilibs-skel-not-on-disk",
    ),
    ("QNN graph execute error. Error code: 1100", {}, "graph-execute-jit-only-failure"),
    (
        "QNN graph execute error. Error code: 1100\nafter 2000 times in a loop",
        {},
        "graph-execute-1100-repeated-session-cycles",
    ),
    (
        "Failed to create context from binary. Error code: 5005",
        {},
        "context-binary-5005-config-mismatch",
    ),
    (
        "Failed to create context from binary. Error code: 5005\nonly while another process uses the NPU",
        {},
        "context-binary-5005-npu-in-use",
    ),
    (
        "Failed to finalize QNN graph. Error code: 1002",
        {},
        "finalize-1002-op-config-not-compilable",
    ),
    (
        "qnn_open failed, 0x80000406\nFailed to finalize QNN graph. Error code: 1002",
        {"os": "windows"},
        "finalize-1002-skel-not-loaded-windows",
    ),
    ("Unable to load backend, error: load library failed", {}, "backend-path-load-library-failed"),
    (
        "Unable to load backend, error: load library failed",
        {"python.arch": "x86_64", "machine.arch": "arm64"},
        "x64-wheel-qnn-load-library-failed",
    ),
    (
        "Specified provider 'QNNExecutionProvider' is not in available provider names",
        {"onnxruntime_qnn.version": "1.23.2"},
        "provider-not-listed-shadowed-by-other-onnxruntime",
    ),
    (
        "Specified provider 'QNNExecutionProvider' is not in available provider names",
        {"onnxruntime_qnn.version": "2.7.0"},
        "provider-not-listed-plugin-not-registered",
    ),
]


@pytest.mark.parametrize(("text", "known", "first"), LOOK_ALIKES)
def test_look_alikes_are_told_apart_by_cues_and_facts(
    text: str, known: dict[str, str], first: str
) -> None:
    facts = from_items(Fact(k, v, "test") for k, v in known.items())
    result = diagnose(text, facts=facts, text_facts=False)
    assert result.ids()[0] == first, result.ids()[:3]
    assert not result.verdict.tie


def test_specific_evidence_beats_many_generic_words_whatever_the_file_order(tmp_path: Path) -> None:
    generic = {
        "id": "generic",
        "title": "g",
        "patterns": [
            {"regex": "failed", "weight": 3},
            {"regex": "error", "weight": 3},
            {"regex": "QNN", "weight": 3},
            {"regex": "load", "weight": 3},
            {"regex": "skel", "weight": 3},
        ],
    }
    specific = {
        "id": "specific",
        "title": "s",
        "patterns": [{"regex": "Failed to load skel, error: 4000", "weight": 9}],
    }
    text = "QNN error: Failed to load skel, error: 4000"
    for order, folder in (([generic, specific], "a"), ([specific, generic], "b")):
        result = diagnose(
            text, catalogue=write_catalogue(tmp_path / folder, order), text_facts=False
        )
        assert result.ids() == ["specific", "generic"]
        assert [c.score for c in result.candidates] == [9, 5]  # 3 + at most two corroborations
        assert result.top is not None and result.top.specificity == 9


def test_equal_scores_are_broken_by_specificity_then_facts_never_by_order(tmp_path: Path) -> None:
    text = "Unable to load backend, error: load library failed"
    facts = from_items([Fact("os", "windows", "ticket")])
    broad = {
        "id": "a-broad",
        "title": "a",
        "patterns": [{"regex": "load library failed", "weight": 3}],
        "facts": [{"fact": "os", "equals": "windows", "effect": "support"}],
    }
    narrow = {
        "id": "z-narrow",
        "title": "b",
        "patterns": [{"regex": "Unable to load backend, error: load library failed", "weight": 6}],
    }
    for order in ([broad, narrow], [narrow, broad]):
        cat = write_catalogue(tmp_path / f"s{order[0]['id']}", order)
        result = diagnose(text, catalogue=cat, facts=facts)
        assert [c.score for c in result.candidates] == [6, 6]
        assert result.ids()[0] == "z-narrow"  # more specific, though it sorts last by name
        assert not result.verdict.tie
        assert any("most specific pattern" in r for r in result.verdict.why_first)
    confirmed = {
        "id": "a-confirmed",
        "title": "c",
        "patterns": [{"regex": "Unable to load backend", "weight": 6}],
        "facts": [{"fact": "os", "equals": "windows", "effect": "support"}],
    }
    counted = {
        "id": "b-counted",
        "title": "d",
        "patterns": [
            {"regex": "Unable to load backend", "weight": 6},
            {"regex": "error:", "weight": 3},
            {"regex": "library", "weight": 3},
            {"regex": "failed", "weight": 3},  # corroborations: +1, +1, then nothing
            {"regex": "load library", "weight": 1, "context": True},
        ],
    }
    for order in ([confirmed, counted], [counted, confirmed]):
        cat = write_catalogue(tmp_path / f"f{order[0]['id']}", order)
        result = diagnose(text, catalogue=cat, facts=facts)
        assert [c.rank_key()[:2] for c in result.candidates] == [(9, 6), (9, 6)]
        assert result.ids()[0] == "a-confirmed"
        assert any("confirmed facts" in r for r in result.verdict.why_first)


def test_look_alikes_whose_rounded_resemblance_ties_are_told_apart_by_the_unrounded_one(
    tmp_path: Path,
) -> None:
    """Two causes of one message, both +1 for resemblance (0.79 and 0.57 round
    alike): the one whose symptoms the text resembles more comes first, whatever
    the ids, and that is said (dev-008 of the LOO: three look-alikes tied and
    the id order decided)."""
    text = "QNN_DEVICE_ERROR_INVALID_CONFIG on the phone: is the skel missing?"
    manifest = {
        "id": "a-manifest",
        "title": "QNN_DEVICE_ERROR_INVALID_CONFIG in an app",
        "patterns": [{"regex": "QNN_DEVICE_ERROR_INVALID_CONFIG", "weight": 4}],
        "symptom_examples": [
            "QNN_DEVICE_ERROR_INVALID_CONFIG: libcdsprpc not declared in the manifest of the phone app"
        ],
    }
    skel = {
        "id": "z-skel",
        "title": "QNN_DEVICE_ERROR_INVALID_CONFIG: skel not found",
        "patterns": [{"regex": "QNN_DEVICE_ERROR_INVALID_CONFIG", "weight": 4}],
        "symptom_examples": [
            "QnnDevice_create 14001 QNN_DEVICE_ERROR_INVALID_CONFIG: the skel is not on the transport search path"
        ],
    }
    other = {
        "id": "m-other",
        "title": "something else entirely",
        "patterns": [{"regex": "never matches this", "weight": 9}],
        "symptom_examples": ["an unrelated phone app message"],
    }
    result = diagnose(
        text, catalogue=write_catalogue(tmp_path, [manifest, skel, other]), text_facts=False
    )
    assert result.ids() == ["z-skel", "a-manifest"]
    first, second = result.candidates
    assert first.score == second.score  # the rounded bonuses are equal
    assert (first.resemblance or 0.0) > (second.resemblance or 0.0)
    assert not result.verdict.tie
    assert any("resembles its symptoms more" in r for r in result.verdict.why_first)
    assert result.confidence(0) == "low"  # equal matched scores: no margin


def test_a_fact_that_fits_none_of_an_entrys_supporting_values_counts_against_it(
    tmp_path: Path,
) -> None:
    """Support conditions on one fact are alternatives: one that fits adds 3
    and the others say nothing; when the known value fits none, the fact
    counts -3 (once) and is the candidate's doubt (it is not excluded)."""
    plugin = {
        "id": "plugin",
        "title": "p",
        "patterns": [{"regex": "Failed to load execution provider library", "weight": 8}],
        "facts": [
            {"fact": "onnxruntime_qnn.version", "spec": ">=2.0", "effect": "support"},
            {"fact": "os", "in": ["linux"], "effect": "support"},
            {"fact": "os", "in": ["android"], "effect": "support"},
        ],
    }
    cat = write_catalogue(tmp_path, [plugin])
    text = "Failed to load execution provider library: /x/libonnxruntime_providers_qnn.so"

    def judged(version: str, os_name: str) -> Any:
        facts = from_items(
            [Fact("onnxruntime_qnn.version", version, "t"), Fact("os", os_name, "t")]
        )
        return diagnose(text, catalogue=cat, facts=facts, text_facts=False)

    fitting = judged("2.3.0", "android")
    assert fitting.top is not None and fitting.top.score == 8 + 3 + 3
    assert fitting.top.contradicted == () and "speaks against" not in str(fitting.doubt(0))
    against = judged("1.24.1", "android")
    assert against.top is not None and against.top.score == 8 - 3 + 3
    assert against.top.contradicted == (
        "onnxruntime_qnn.version is '1.24.1' (t) does not fit onnxruntime_qnn.version >=2.0",
    )
    assert against.confidence(0) == "low" and "speaks against it" in str(against.doubt(0))
    both = judged("1.24.1", "windows")
    assert both.top is not None and both.top.score == 8 - 3 - 3
    assert "os in ['linux'] or os in ['android']" in both.top.contradicted[1]


def test_why_first_names_the_fact_that_speaks_against_the_runner_up(tmp_path: Path) -> None:
    """Two causes of one message, one of them for 2.x only: with 1.24.1
    known, the 2.x one counts -3 and comes second, and "why first" says so
    (before, it said only the scores)."""
    message = {"regex": "Failed to load execution provider library", "weight": 8}
    plugin = {
        "id": "a-plugin",
        "title": "p",
        "patterns": [message],
        "facts": [{"fact": "onnxruntime_qnn.version", "spec": ">=2.0", "effect": "support"}],
    }
    other = {"id": "z-other", "title": "o", "patterns": [message]}
    facts = from_items([Fact("onnxruntime_qnn.version", "1.24.1", "t")])
    result = diagnose(
        "Failed to load execution provider library",
        catalogue=write_catalogue(tmp_path, [plugin, other]),
        facts=facts,
        text_facts=False,
    )
    assert result.ids() == ["z-other", "a-plugin"]
    assert (
        "against a-plugin: onnxruntime_qnn.version is '1.24.1' (t) does not fit "
        "onnxruntime_qnn.version >=2.0 (-3)"
    ) in result.verdict.why_first


def test_a_runner_up_without_an_open_fact_is_told_apart_by_its_own_distinguishing_fact(
    tmp_path: Path,
) -> None:
    """Look-alikes that share a message and no fact: the runner-up names what
    the reader should look for (its first distinguishing fact the top one does
    not share), not only 'run qnndoctor check'."""
    shared = "shared fact both entries list"
    top = {
        "id": "skel-missing",
        "title": "1002, skel",
        "patterns": [{"regex": "Error code: 1002", "weight": 7}, {"regex": "Skel", "weight": 4}],
        "distinguishing_facts": [shared, "a skel load failure earlier in the log"],
    }
    runner_up = {
        "id": "op-config",
        "title": "1002, op",
        "patterns": [{"regex": "Error code: 1002", "weight": 7}],
        "distinguishing_facts": [
            shared,
            "look-alike: the same message has other causes",
            "an op named in a validateOpConfig line before the 1002",
        ],
    }
    cat = write_catalogue(tmp_path, [top, runner_up])
    text = "Unable to load Skel Library\nFailed to finalize QNN graph. Error code: 1002"
    result = diagnose(text, catalogue=cat, text_facts=False)
    assert result.ids() == ["skel-missing", "op-config"]
    told = result.tell_apart(1)
    assert told.startswith("it is this one if an op named in a validateOpConfig line")
    assert "qnndoctor check" in told
    bare = write_catalogue(tmp_path / "bare", [top, {**runner_up, "distinguishing_facts": []}])
    assert diagnose(text, catalogue=bare, text_facts=False).tell_apart(1) == (
        "run `qnndoctor check` on the affected machine to decide"
    )


def test_a_true_tie_is_reported_with_the_fact_that_decides(tmp_path: Path) -> None:
    one = {
        "id": "one",
        "title": "1",
        "patterns": [{"regex": "exit code 127", "weight": 5}],
        "facts": [{"fact": "emulated", "equals": True, "effect": "require"}],
    }
    two = {
        "id": "two",
        "title": "2",
        "patterns": [{"regex": "exit code 127", "weight": 5}],
        "facts": [{"fact": "emulated", "equals": False, "effect": "require"}],
    }
    cat = write_catalogue(tmp_path, [one, two])
    result = diagnose("the process exited with exit code 127", catalogue=cat, text_facts=False)
    assert result.verdict.tie
    assert result.confidence(0) == "low"
    assert "emulated" in result.tell_apart(1)
    emulated = diagnose(
        "exit code 127", catalogue=cat, facts=from_items([Fact("emulated", True, "ticket")])
    )
    assert emulated.ids() == ["one"]
    [excluded] = emulated.verdict.excluded
    assert excluded.signature.id == "two" and "emulated is True (ticket)" in excluded.because


def test_exit_code_alone_raises_nothing_and_only_sharpens(tmp_path: Path) -> None:
    crash = {
        "id": "crash",
        "title": "c",
        "patterns": [{"regex": "access violation", "weight": 5}],
        "exit_codes": [0xC0000005],
    }
    other = {"id": "other", "title": "o", "patterns": [{"regex": "access violation", "weight": 5}]}
    cat = write_catalogue(tmp_path, [other, crash])
    assert diagnose("", exit_code=0xC0000005, catalogue=cat).candidates == ()
    assert diagnose("", exit_code=-1073741819, catalogue=cat).candidates == ()
    result = diagnose(
        "Windows fatal exception: access violation", exit_code=-1073741819, catalogue=cat
    )
    assert result.ids() == ["crash", "other"]
    # and with the real catalogue: no text, no candidate
    assert diagnose("", exit_code=127).candidates == ()
    assert diagnose("", exit_code=1).candidates == ()


def test_generic_words_alone_raise_nothing(tmp_path: Path) -> None:
    weak = {
        "id": "weak",
        "title": "w",
        "patterns": [{"regex": "failed", "weight": 1}, {"regex": "error", "weight": 1}],
    }
    assert (
        diagnose(
            "something failed with an error", catalogue=write_catalogue(tmp_path, [weak])
        ).candidates
        == ()
    )


def test_version_range_condition_tells_1x_from_2x() -> None:
    text = (
        "UserWarning: Specified provider 'QNNExecutionProvider' is not in available provider names."
    )
    old = diagnose(text + "\nonnxruntime-qnn 1.19.0", socs=SOCS)
    new = diagnose(text + "\nonnxruntime-qnn     2.7.0\nonnxruntime    1.31.1", socs=SOCS)
    assert old.facts.value("onnxruntime_qnn.version") == "1.19.0"
    assert new.facts.value("onnxruntime_qnn.version") == "2.7.0"
    assert old.top is not None and new.top is not None
    assert old.top.signature.id != new.top.signature.id
    assert new.top.signature.id == "provider-not-listed-plugin-not-registered"


def test_verbose_narration_alone_raises_nothing_and_ranks_after_an_error_line(
    tmp_path: Path,
) -> None:
    """A pattern matched only on [V] / [I] lines (a session narrating its choices)
    raises no candidate on its own, and ranks after a cause an error line raised
    even when it weighs more; matched on a loud line too, it competes as usual."""
    narration = {
        "id": "narrated",
        "title": "n",
        "patterns": [{"regex": "Validation FAILED for \\d+ nodes", "weight": 9}],
    }
    error = {"id": "error", "title": "e", "patterns": [{"regex": "No such file", "weight": 8}]}
    cat = write_catalogue(tmp_path, [narration, error])
    verbose = "2026 [V:onnxruntime:, x.cc:1 f] Validation FAILED for 1 nodes in OrtNodeUnit (Det)\n"
    assert diagnose(verbose, catalogue=cat, text_facts=False, resemblance=False).ids() == []
    failing = verbose + "FileNotFoundError: [Errno 2] No such file or directory: ''\n"
    found = diagnose(failing, catalogue=cat, text_facts=False, resemblance=False)
    assert found.ids() == ["error", "narrated"]
    retyped = failing + "Validation FAILED for 1 nodes (NodeUnit)\n"  # no level: loud
    assert diagnose(retyped, catalogue=cat, text_facts=False).ids()[0] == "narrated"


def test_verbose_narration_casts_no_doubt_on_an_error_lines_cause(tmp_path: Path) -> None:
    """A runner-up raised by verbose narration alone, even one that weighs more,
    does not make the first answer (raised by an error line) doubtful."""
    narration = {
        "id": "narrated",
        "title": "n",
        "patterns": [{"regex": "Validation FAILED for \\d+ nodes", "weight": 8}],
        "symptom_examples": [
            "[V:onnxruntime:, qnn_execution_provider.cc:1713 LogNodeSupport] Validation FAILED"
            " for 1 nodes in OrtNodeUnit (Det) : REASON : Operators of type Det are not"
            " supported by QNN EP. Det node will not be assigned to QNN EP."
        ],
    }
    error = {
        "id": "error",
        "title": "e",
        "patterns": [{"regex": "No such file", "weight": 7}],
        "symptom_examples": ["FileNotFoundError: [Errno 2] No such file or directory: ''"],
    }
    cat = write_catalogue(tmp_path, [narration, error])
    text = (
        "2026 [V:onnxruntime:, qnn_execution_provider.cc:1713 LogNodeSupport] Validation FAILED"
        " for 1 nodes in OrtNodeUnit (Det) :\n"
        "\tREASON : Operators of type `Det` are not supported by QNN EP.Det node `det` will not"
        " be assigned to QNN EP.\n"
        "FileNotFoundError: [Errno 2] No such file or directory: ''\n"
    )
    found = diagnose(text, catalogue=cat, text_facts=False, resemblance=False)
    assert found.ids() == ["error", "narrated"]
    assert found.doubt(0) is None


def test_a_log_quoted_in_an_issue_comment_reads_as_the_log(tmp_path: Path) -> None:
    """Replies quote a log with Markdown's "> " (nested: ">> "); a pattern that
    runs over a line break still matches, and the quote marker is not text."""
    entry = {
        "id": "callback",
        "title": "c",
        "patterns": [
            {
                "regex": "Exception ignored in: 'onnxruntime\\.InferenceSession\\.run_async "
                "callback'\\s*\\n(?:Traceback|\\w+Error)",
                "weight": 9,
            }
        ],
    }
    cat = write_catalogue(tmp_path, [entry])
    log = (
        "Exception ignored in: 'onnxruntime.InferenceSession.run_async callback'\n"
        "TypeError: on_done() takes 1 positional argument but 3 were given\n"
    )
    for quoted in (log, "".join("> " + line for line in log.splitlines(True))):
        assert diagnose(quoted, catalogue=cat, text_facts=False).ids() == ["callback"], quoted
    nested = "".join(">> " + line for line in log.splitlines(True))
    assert diagnose(nested, catalogue=cat, text_facts=False).ids() == ["callback"]
