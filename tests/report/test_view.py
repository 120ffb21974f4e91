"""The typed view of a report: it agrees with report.schema.json, it holds what
real reports hold, and a corrupt ticket gives defaults, never a traceback, in
the view and in every renderer that reads it."""

from __future__ import annotations

import copy
import dataclasses
import io
import json
import sys
import types
import typing
from pathlib import Path
from typing import Any

import pytest

import qnndoctor
from qnndoctor.render import markdown, text
from qnndoctor.report import view as reportview
from qnndoctor.report.view import NESTED_FIELDS, ReportView, view

SCHEMA: dict[str, Any] = json.loads(
    (Path(qnndoctor.__file__).parent / "schema" / "report.schema.json").read_text(encoding="utf-8")
)
VIEW_CLASSES: list[Any] = [
    c for c in vars(reportview).values() if isinstance(c, type) and dataclasses.is_dataclass(c)
]


def _resolve(pointer: str) -> dict[str, Any]:
    node: Any = SCHEMA
    for part in pointer.lstrip("#").strip("/").split("/"):
        if part:
            node = node[part]
    while "$ref" in node:
        node = _resolve(node["$ref"])
    return dict(node)


def _schema_types(node: dict[str, Any]) -> set[str]:
    if "enum" in node or "const" in node:
        values = node.get("enum", [node.get("const")])
        return {
            type(v).__name__.replace("str", "string").replace("bool", "boolean") for v in values
        }
    kind = node.get("type")
    if kind is None:
        return {"any"}
    return set(kind) if isinstance(kind, list) else {kind}


def _view_types(hint: Any) -> set[str]:
    """The JSON types a view field may hold, from its annotation."""
    if hint is Any:
        return {"any"}
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return set().union(*(_view_types(arg) for arg in typing.get_args(hint)))
    if hint is type(None):
        return {"null"}
    if hint is str:
        return {"string"}
    if hint is bool:
        return {"boolean"}
    if typing.get_origin(hint) is tuple:
        return {"array"}
    if dataclasses.is_dataclass(hint):
        return {"object"}
    raise AssertionError(f"a view field of a type the test does not know: {hint!r}")


def test_every_view_class_mirrors_a_schema_part() -> None:
    assert {c.__name__ for c in VIEW_CLASSES} >= {
        "Tool",
        "Target",
        "Finding",
        "Fix",
        "Evidence",
        "SkippedCheck",
    }
    for cls in VIEW_CLASSES:
        node = _resolve(cls.SCHEMA)  # every view class names the schema part it mirrors
        properties = node["properties"]
        hints = typing.get_type_hints(cls)
        for field in dataclasses.fields(cls):
            where = NESTED_FIELDS.get(field.name) if cls is ReportView else None
            prop = _resolve(where) if where else properties.get(field.name)
            if prop is None and field.name in node.get("required", []):
                prop = {}  # required, of any type (evidence's value)
            assert prop is not None, f"{cls.__name__}.{field.name} is not in the schema"
            schema_types, view_types = _schema_types(prop), _view_types(hints[field.name])
            # a None default stands for a missing or wrong-typed value, not a schema type
            assert (
                "any" in schema_types
                or "any" in view_types
                or view_types - {"null"} <= schema_types
            ), (
                cls.__name__,
                field.name,
                schema_types,
                view_types,
            )
        if cls is not ReportView:  # the report: only the parts renderers show (below)
            missing = set(node.get("required", [])) - {f.name for f in dataclasses.fields(cls)}
            assert not missing, f"{cls.__name__} lacks required schema properties {missing}"
    shown = {"tool", "target", "findings", "skipped_checks", "redacted"}
    assert shown <= {f.name for f in dataclasses.fields(ReportView)}


def _render(document: Any) -> tuple[str, str]:
    outputs = []
    for renderer in (text, markdown):
        stream = io.StringIO()
        renderer.render(document, stream)
        outputs.append(stream.getvalue())
    return outputs[0], outputs[1]


@pytest.fixture(scope="module")
def real_reports(healthy_venv: Path) -> list[dict[str, Any]]:
    """A healthy setup (info only) and a Python without onnxruntime (errors with fixes)."""
    return [
        qnndoctor.check(python, smoke=False).to_dict()
        for python in (healthy_venv, Path(sys.executable))
    ]


def test_the_view_of_real_reports_holds_what_they_hold(real_reports: list[dict[str, Any]]) -> None:
    with_fix = 0
    for document in real_reports:
        doc = view(document)
        assert doc.tool.version == document["tool"]["version"]
        assert doc.target.python == document["target"]["python"]
        assert [f.id for f in doc.findings] == [f["id"] for f in document["findings"]]
        for f, raw in zip(doc.findings, document["findings"], strict=True):
            assert (f.severity, f.title, f.explanation) == (
                raw["severity"],
                raw["title"],
                raw["explanation"],
            )
            assert [e.fact for e in f.evidence] == [e["fact"] for e in raw["evidence"]]
            if raw["fix"]:
                with_fix += 1
                assert f.fix is not None and list(f.fix.commands) == raw["fix"]["commands"]
        plain, md = _render(document)
        for f in doc.findings:
            assert f.title in plain and f"`{f.id}`" in md
    assert with_fix, "the reports checked hold no fix"


# Corrupt parts only the view reads: the text and Markdown renderers must cope.
# (render/summary.py, which builds the sections, the counts and the smoke and
# recommendation lines, still reads the dict itself and is not ported yet.)
RENDERED_CORRUPTIONS = [
    lambda d: [f.update(fix={"text": 5, "commands": [1, None, "ok"]}) for f in d["findings"]],
    lambda d: [f.update(fix=["x"], title=None, explanation=3, id=[]) for f in d["findings"]],
    lambda d: d.update(tool=None, target="x", skipped_checks=[{"rule": None}, 7], redacted="yes"),
    lambda d: d.update(changes_since_report={"report_created": 12}),
]
VIEW_CORRUPTIONS = [
    *RENDERED_CORRUPTIONS,
    lambda d: [f.update(evidence=[None, {"fact": 1, "value": "v"}, "x"]) for f in d["findings"]],
    lambda d: d.update(findings={"a": 1}, skipped_checks=7),
    lambda d: [f.update(severity=3, evidence="no") for f in d["findings"]],
    lambda d: [
        f.pop(k) for f in d["findings"] for k in ("id", "severity", "title", "explanation", "fix")
    ],
    lambda d: d.update(findings=[1, "x", None]),
]


@pytest.mark.parametrize("corrupt", VIEW_CORRUPTIONS)
def test_a_corrupt_report_gives_defaults_in_the_view(
    real_reports: list[dict[str, Any]], corrupt: Any
) -> None:
    document = copy.deepcopy(real_reports[1])
    corrupt(document)
    doc = view(document)
    assert all(isinstance(c.rule, str) and isinstance(c.reason, str) for c in doc.skipped_checks)
    for f in doc.findings:
        for value in (f.id, f.severity, f.title, f.explanation, *(e.fact for e in f.evidence)):
            assert isinstance(value, str)
        assert f.fix is None or (
            isinstance(f.fix.text, str) and all(isinstance(c, str) for c in f.fix.commands)
        )
    assert doc.report_created is None or isinstance(doc.report_created, str)
    assert doc.redacted in (True, False) and (
        doc.tool.version is None or isinstance(doc.tool.version, str)
    )


@pytest.mark.parametrize("corrupt", RENDERED_CORRUPTIONS)
def test_a_corrupt_report_renders_without_a_traceback(
    real_reports: list[dict[str, Any]], corrupt: Any
) -> None:
    document = copy.deepcopy(real_reports[1])
    corrupt(document)
    plain, md = _render(document)
    assert plain.startswith("qnndoctor ") and md.startswith("### qnndoctor ")
    assert "Recommended onnxruntime-qnn" in plain and "</details>" in md


def test_a_report_that_is_not_a_mapping_gives_an_empty_view() -> None:
    doc = view([])  # type: ignore[arg-type]
    assert doc.findings == () and doc.tool.version is None and doc.redacted is False
