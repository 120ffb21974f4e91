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
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

import qnndoctor
from qnndoctor.render import markdown, summary, text
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
    kinds = set(kind) if isinstance(kind, list) else {kind}
    return kinds | {"integer"} if "number" in kinds else kinds  # an integer is a number


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
    if hint is int:
        return {"integer"}
    if hint is float:
        return {"number"}
    if typing.get_origin(hint) is Mapping:
        return {"object"}
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
        "Probe",
        "Smoke",
        "Recommendation",
        "InventoryItem",
        "Changes",
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
    shown = {"tool", "target", "findings", "skipped_checks", "redacted", "facts", "smoke"}
    shown |= {"recommendation", "inventory", "changes_since_report"}
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


# Corrupt parts of a ticket: the view gives defaults and the text and Markdown
# renderers (render/summary.py included: sections, counts, smoke and
# recommendation lines all read the view) must cope.
RENDERED_CORRUPTIONS = [
    lambda d: [f.update(fix={"text": 5, "commands": [1, None, "ok"]}) for f in d["findings"]],
    lambda d: [f.update(fix=["x"], title=None, explanation=3, id=[]) for f in d["findings"]],
    lambda d: d.update(tool=None, target="x", skipped_checks=[{"rule": None}, 7], redacted="yes"),
    lambda d: d.update(changes_since_report={"report_created": 12}),
    lambda d: [f.pop("severity") for f in d["findings"]],  # was a KeyError in summary.counts
    lambda d: [f.update(evidence=[None, {"fact": 1, "value": "v"}, "x"]) for f in d["findings"]],
    lambda d: d.update(findings={"a": 1}, skipped_checks=7),
    lambda d: [f.update(severity=3, evidence="no") for f in d["findings"]],
    lambda d: d.update(findings=[1, "x", None]),
    lambda d: d.update(smoke="x", recommendation=[1], inventory={"kind": "x"}),
    lambda d: d.update(
        smoke={"status": 5, "duration_s": "1", "child": 7, "backend": ["htp"]},
        recommendation={"status": "ok", "ruled_out": [1, {"reasons": "x"}], "alternatives": [{}]},
        inventory=[1, {"kind": 5, "shadowed_by": "a"}, {"kind": "qnn-sdk", "on_loader_path": 3}],
    ),
    lambda d: d.update(
        recommendation={"status": None, "emulation": {"native_arm64": {"commands": "x"}}}
    ),
    lambda d: d.update(facts={"soc": "x", "interpreter": {"status": "error", "error": "x"}}),
    lambda d: d["facts"].update({k: {"status": "ok", "values": [1]} for k in d["facts"]}),
    lambda d: d["facts"]["installs"]["values"].update(distributions=[1], would_import=[1]),
    lambda d: d.update(  # a changed finding without a title was a KeyError in change_lines
        changes_since_report={"appeared": [{"id": 1}, 5], "vanished": "x", "matrix": []}
    ),
]
VIEW_CORRUPTIONS = [
    *RENDERED_CORRUPTIONS,
    lambda d: [
        f.pop(k) for f in d["findings"] for k in ("id", "severity", "title", "explanation", "fix")
    ],
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
    for probe in doc.facts.values():
        assert isinstance(probe.status, str) and isinstance(probe.values.data, Mapping)
    assert doc.smoke is None or doc.smoke.status is None or isinstance(doc.smoke.status, str)
    assert all(item.kind is None or isinstance(item.kind, str) for item in doc.inventory)
    rec = doc.recommendation
    assert rec is None or all(isinstance(c, str) for c in rec.commands)
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


def test_a_finding_without_severity_is_counted_not_a_traceback(
    real_reports: list[dict[str, Any]],
) -> None:
    """A hand-edited ticket whose findings lost their severity: summary.counts
    raised KeyError, so neither renderer could show it."""
    document = copy.deepcopy(real_reports[1])
    assert document["findings"]
    for f in document["findings"]:
        del f["severity"]
    assert summary.counts(document) == {
        "error": 0,
        "warning": 0,
        "info": 0,
        "": len(document["findings"]),
    }
    plain, md = _render(document)
    assert "0 error(s), 0 warning(s), 0 info" in plain and "**Result:** 0 error(s)" in md


# Values of the types real reports hold, for the branches a Linux machine's
# report does not reach (Windows NPU and GPU drivers, an SDK, PE files, ...).
RICH_VALUES: dict[str, dict[str, Any]] = {
    "interpreter": {"free_threaded": True, "windows_code_pages": {"ansi": 1252}, "conda": "x"},
    "emulation": {"emulated": True, "emulator": "xtajit64", "process_arch": "AMD64"},
    "soc": {
        "processor_name": "Snapdragon(R) X Elite",
        "npu_drivers": [{"DriverDesc": "Hexagon NPU", "DriverVersion": "30.0"}],
        "socinfo": {"soc_id": "555", "machine": None},
        "dsp_device_nodes": ["/dev/fastrpc-cdsp"],
        "npu_runtime": [{"service": "s", "files": [{"name": "QnnHtp.dll", "exists": True}]}],
        "gpu_drivers": [{"DriverDesc": "Adreno", "OpenCLDriverName": ["a.dll", "b.dll"]}],
        "fastrpc_access": [{"path": "/dev/fastrpc-cdsp", "accessible": False}],
        "wsl": {"wsl": True},
        "android_properties": {"ro.soc.model": "SM8650"},
        "errors": {"npu": "timed out"},
    },
    "qnn_sdk": {
        "roots": [{"path": "/opt/qnn", "origin": "o", "version": {"sdk_yaml": "2.28"}}],
        "adsp_library_path": {"set": True, "value": "/opt/dsp"},
        "qnn_on_path": [{"path": "/opt/qnn/lib"}],
    },
    "paths": {"non_ascii": [{"label": "home", "path": "/home/\u00fc"}]},
    "binaries": {
        "pe": {"a.dll": {"machine": "ARM64"}, "b.dll": {"error": "truncated"}},
        "qnn_versions": {"d": {"agree": True, "version": "2.28"}, "e": {"evidence": {"x": 1}}},
    },
}
BAD_VALUES: list[Any] = [None, 5, "x", [1, "a", None], {"a": 1}]


def _paths(value: Any, prefix: tuple[Any, ...] = (), depth: int = 3) -> list[tuple[Any, ...]]:
    """Where a value can be replaced: object keys and a list's first item, ``depth`` deep."""
    if depth == 0:
        return []
    inner: list[tuple[Any, ...]] = []
    if isinstance(value, dict):
        for key, item in value.items():
            inner += [(*prefix, key), *_paths(item, (*prefix, key), depth - 1)]
    elif isinstance(value, list) and value:
        inner += [(*prefix, 0), *_paths(value[0], (*prefix, 0), depth - 1)]
    return inner


def test_every_probe_value_of_a_wrong_type_summarises_without_a_traceback(
    real_reports: list[dict[str, Any]],
) -> None:
    """Every value the summary reads (three levels into each probe's values,
    real and Windows-shaped), replaced by each wrong JSON type: the section
    still summarises, and the other sections do not change."""
    document = copy.deepcopy(real_reports[0])
    for key, values in RICH_VALUES.items():
        document["facts"][key]["values"].update(copy.deepcopy(values))
    before = {s.key: s for s in summary.sections(document)}
    assert "could not summarise" not in repr(before)
    tried = 0
    for key in summary.TITLES:
        for path in _paths(document["facts"][key]["values"]):
            for bad in BAD_VALUES:
                corrupt = {**document, "facts": dict(document["facts"])}
                corrupt["facts"][key] = copy.deepcopy(document["facts"][key])
                node = corrupt["facts"][key]["values"]
                for part in path[:-1]:
                    node = node[part]
                node[path[-1]] = bad
                after = {s.key: s for s in summary.sections(corrupt)}
                assert after[key].ok and all(isinstance(line, str) for line in after[key].lines)
                assert not any("could not summarise" in line for line in after[key].lines)
                assert {k: s for k, s in after.items() if k != key} == {
                    k: s for k, s in before.items() if k != key
                }, (key, path, bad)
                tried += 1
    assert tried > 500, tried
