"""fix's plan and proof read the report through its typed view: a report with
parts of the wrong JSON type (a corrupt or hand-edited document) gives a plan,
a refusal or a proof, never a traceback."""

from __future__ import annotations

import copy
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import qnndoctor
from qnndoctor.fix import proof
from qnndoctor.fix.environment import TargetEnvironment
from qnndoctor.fix.plan import Plan, build_plan, refusals, report_is_healthy

CORRUPTIONS: list[Callable[[dict[str, Any]], object]] = [
    lambda d: [f.pop("id") for f in d["findings"]],  # was a KeyError in _sources
    lambda d: [f.update(severity="error", fix=["x"], title=None) for f in d["findings"]],
    lambda d: d.update(findings=[1, None, {"severity": "error"}]),
    lambda d: d.update(recommendation={"status": "nothing-fits", "ruled_out": [{"reasons": 1}]}),
    lambda d: d.update(
        recommendation={"status": "nothing-fits", "ruled_out": [{"reasons": [{}]}], "profile": 3}
    ),
    lambda d: d.update(recommendation={"emulation": {"native_arm64": [1]}, "commands": "x"}),
    lambda d: d.update(recommendation=[1], smoke="passed", error="x"),
    lambda d: d.update(smoke={"status": "failed", "reason": 7, "child": [], "signatures": 3}),
    lambda d: d["facts"]["installs"].update(values={"distributions": {"a": 1}, "leftovers": 1}),
    lambda d: d["facts"].update(installs=[1]),
]


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    """A real report of a Python without onnxruntime: error findings with fixes."""
    document: dict[str, Any] = qnndoctor.check(Path(sys.executable), smoke=False).to_dict()
    assert any(f["severity"] == "error" for f in document["findings"])
    return document


def _environment() -> TargetEnvironment:
    return TargetEnvironment(
        python=sys.executable,
        prefix=sys.prefix,
        in_venv=True,
        marker="",
        externally_managed=False,
        has_pip=True,
        site_dirs=(),
    )


@pytest.mark.parametrize("corrupt", CORRUPTIONS)
def test_a_corrupt_report_gives_a_plan_or_refusal(
    report: dict[str, Any], corrupt: Callable[[dict[str, Any]], object]
) -> None:
    document = copy.deepcopy(report)
    corrupt(document)
    environment = _environment()
    reasons = refusals(document, environment, False)
    assert all(isinstance(r, str) and r for r in reasons)
    plan = build_plan(document, environment)
    assert isinstance(plan, Plan) and plan.refusals == tuple(reasons)
    assert all(isinstance(step.why, str) for step in plan.steps)
    assert report_is_healthy(document) is False
    compared = proof.compare_reports(report, document)
    assert compared["proven"] is False and isinstance(compared["findings_new"], list)
    assert proof.failure_text(document, compared).startswith("smoke session ")
    after = proof.next_step(sys.executable, plan, {"proof": compared}, after=document)
    assert after["commands"] and all(isinstance(c, str) for c in after["commands"])


def test_the_plan_of_the_real_report_comes_from_its_findings(report: dict[str, Any]) -> None:
    plan = build_plan(report, _environment())
    whys = " ".join(step.why for step in plan.steps) + " ".join(plan.notes)
    assert not plan.refusals and "onnxruntime-qnn" in whys, plan
