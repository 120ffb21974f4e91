"""Where it failed, read from the first answer's catalogue entry
(matrix/stages.json), and the development stage labels made from the same
table (issue 29)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.catalogues import FILLER, write_catalogue

from qnndoctor import _layout
from qnndoctor.diagnosis import diagnose, load, stage

CORPUS = Path(__file__).parents[1] / "diagnosis_corpus"
NO_KERNEL = (
    "onnxruntime.capi.onnxruntime_pybind11_state.NotImplemented: [ONNXRuntimeError] : 9 : "
    "NOT_IMPLEMENTED : Could not find an implementation for EPContext(1) node with name "
    "'QNNExecutionProvider_QNN_6418317120081008875_9_0'"
)


def test_every_catalogue_entry_is_placed_at_a_stage() -> None:
    """A new entry fails here until its cause is given a stage and a component."""
    ids = {entry.id for entry in load().signatures}
    placed = {i for i in ids if stage.for_entry(i) is not None}
    assert ids - placed == set()
    assert stage.problems == []
    for i in ids:
        where = stage.for_entry(i)
        assert where is not None and where[0] in stage.STAGES and where[1] in stage.COMPONENTS


def test_the_first_answer_says_the_stage_with_its_own_line() -> None:
    """The line's wording ("EPContext") reads as a context binary that did not
    load; the cause the catalogue names (no QNN EP in the session to run the
    compiled node) stops the run at EP registration, in the application code."""
    assert stage.where([(1, NO_KERNEL)]).stage == "context-binary load"
    result = diagnose(NO_KERNEL)
    assert result.ids()[:1] == ["ep-context-node-without-qnn-ep"]
    where = result.where()
    assert (where.stage, where.component, where.line) == (
        "EP registration",
        "application code",
        1,
    )
    assert "EPContext(1)" in str(where.text)
    assert "registers the QNN plugin" in where.experiment
    assert result.where(from_entry=False).stage == "context-binary load"


def test_an_entry_the_table_does_not_place_is_read_from_its_line(tmp_path: Path) -> None:
    entry = {
        "id": "zz-not-in-the-stage-table",
        "title": "a cause only this test knows",
        "patterns": [{"regex": "quux graph finalize rejected", "weight": 9}],
    }
    cat = write_catalogue(tmp_path, [entry, *FILLER])
    result = diagnose("[E:onnxruntime] quux graph finalize rejected node 7\n", catalogue=cat)
    assert result.ids()[:1] == ["zz-not-in-the-stage-table"]
    assert stage.for_entry("zz-not-in-the-stage-table") is None
    where = result.where()
    assert (where.stage, where.line) == ("graph compose / finalize", 1)


def test_development_labels_are_their_expected_entrys_stage() -> None:
    """How the development parts were labelled: a case's label is its expected
    entry's stage, unless its note says why not (no entry, or a scenario at
    another stage); no case is left without a label or a note."""
    labels = json.loads((CORPUS / "stages" / "labels.json").read_text("utf-8"))
    stages, notes = labels["stages"], labels["notes"]
    parts = sorted(CORPUS.glob("dev*.json")) + sorted(CORPUS.glob("runtime/dev*.json"))
    cases = [c for p in parts for c in json.loads(p.read_text("utf-8"))["cases"]]
    assert len(cases) == 548
    for case in cases:
        if case["id"] in notes:
            assert case["id"] in stages or notes[case["id"]].startswith("not labelled")
            continue
        placed = stage.for_entry(case["expected"])
        assert placed is not None and stages[case["id"]] == placed[0], case["id"]
    assert sum(c["id"] in stages for c in cases) == 547


WORDINGS = [
    ("error: externally-managed-environment", "install"),
    ("A module that was compiled using NumPy 1.x cannot be run in", "import"),
    (
        "[W:onnxruntime:, qnn_execution_provider.cc:198 ParseHtpPerformanceMode] "
        "Htp performance mode not valid.",
        "EP registration",
    ),
    (
        "[E:onnxruntime:, onnx_ctx_model_helper.cc:451 CreateEPContextNodes] "
        "Failed to open context cache file.",
        "graph compose / finalize",
    ),
    ("Load model from m.onnx failed:Protobuf parsing failed.", "graph compose / finalize"),
    ("RuntimeError: Error in execution: Invalid rank for input: x Got: 3 Expected: 4", "execute"),
]


def test_what_a_line_says_when_no_answer_places_it() -> None:
    """The wording rules (measured on the development parts: 383 of 547 stages
    right from the lines alone, 189 before these wordings were added)."""
    for line, expected in WORDINGS:
        rule = stage.classify(line)
        assert rule is not None and rule.stage == expected, line


def test_a_damaged_table_is_said_and_the_lines_are_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "stages.json").write_text('{"entries": {"ep-context-node-without-qnn-ep": 7}}')
    # only stages.json is damaged in this install: the other shipped table is intact
    real = _layout.package_dir("matrix")
    assert real is not None
    (tmp_path / "qnn_errors.json").write_bytes((real / "qnn_errors.json").read_bytes())
    monkeypatch.setattr(_layout, "package_dir", lambda _name: tmp_path)  # shipped_table's seam
    monkeypatch.setattr(stage, "problems", [])
    stage._entries.cache_clear()
    try:
        assert stage.for_entry("ep-context-node-without-qnn-ep") is None
        assert len(stage.problems) == 1 and "stages.json: TypeError" in stage.problems[0]
        assert diagnose(NO_KERNEL).where().stage == "context-binary load"  # the line's wording
    finally:
        stage._entries.cache_clear()
