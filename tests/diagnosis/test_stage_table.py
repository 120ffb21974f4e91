"""Where it failed, read from the first answer's catalogue entry
(matrix/stages.json), and the development stage labels made from the same
table (issue 29)."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.catalogues import FILLER, write_catalogue

from qnndoctor.diagnosis import diagnose, load, stage

CORPUS = Path(__file__).parents[1] / "diagnosis_corpus"
PLUGIN_TOO_OLD = (
    "Traceback (most recent call last):\n"
    '  File "app.py", line 9, in <module>\n'
    "onnxruntime.capi.onnxruntime_pybind11_state.Fail: [ONNXRuntimeError] : 1 : FAIL : "
    "Error creating execution provider: ep_plugin_provider_interfaces.cc:82 "
    "onnxruntime::SanityCheckOrtEp OrtEp has invalid ort_version_supported=0 (expected at least 22)."
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
    """The answer's line has none of the wordings the rules read (they say
    "unknown"); its entry places it at EP registration, onnxruntime packaging."""
    line = PLUGIN_TOO_OLD.splitlines()[2]
    assert stage.where([(3, line)]).stage == "unknown"
    result = diagnose(PLUGIN_TOO_OLD)
    assert result.ids()[:1] == ["plugin-ort-version-supported-zero"]
    where = result.where()
    assert (where.stage, where.component, where.line) == (
        "EP registration",
        "onnxruntime packaging",
        3,
    )
    assert "ort_version_supported=0" in str(where.text)
    assert "registers the QNN plugin" in where.experiment


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
