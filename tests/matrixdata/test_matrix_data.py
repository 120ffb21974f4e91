"""Every maintained data file of the matrix validates against its published
schema, and the hand-curated ones say where each fact comes from."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import jsonschema
import pytest
from packaging.specifiers import SpecifierSet

from qnndoctor.matrixdata import load

FILES = [
    "socs",
    "known_issues",
    "signatures",
    "harmless",
    "releases",
    "qnn_errors",
    "options",
    "stages",
]


def _json(name: str) -> Any:
    return json.loads(resources.files("qnndoctor.matrix").joinpath(name).read_text("utf-8"))


@pytest.mark.parametrize("name", FILES)
def test_data_matches_its_schema(name: str) -> None:
    jsonschema.validate(_json(f"{name}.json"), _json(f"{name}.schema.json"))


def test_socs_are_unique_and_sourced() -> None:
    socs = _json("socs.json")["socs"]
    parts = [s["part"] for s in socs]
    assert len(parts) == len(set(parts))
    assert {"SM8550", "SM8650", "SM8750", "SC8380XP"} <= set(parts)
    assert all(s["sources"] for s in socs)
    assert load().socs  # and it loads into values


def test_known_issues_name_real_releases() -> None:
    versions = {r["version"] for r in _json("releases.json")["releases"]}
    for issue in _json("known_issues.json")["issues"]:
        affected = [v for v in versions if SpecifierSet(issue["onnxruntime_qnn"]).contains(v)]
        assert affected, f"{issue['id']} names no published release"
