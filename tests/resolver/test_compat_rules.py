"""The resolver's rules carry evidence, a rule without evidence rules
nothing out, a system QNN SDK is a note (never a rule), a wheel without QNN
is never recommended, companion pins, and one consistent set of commands."""

from __future__ import annotations

import dataclasses
import io
import json
import re
from typing import Any

import pytest
from helpers.profiles import win_arm64
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from qnndoctor._layout import package_dir
from qnndoctor.matrixdata.releases import ReleaseMatrix, parse
from qnndoctor.render.recommend import render_recommendation
from qnndoctor.resolver.compat_rules import CONFIDENCE_WORDS, RULES
from qnndoctor.resolver.consistency import PipTarget
from qnndoctor.resolver.fixes import make_commands
from qnndoctor.resolver.recommend import Profile, recommend
from qnndoctor.rules.findings import Finding, Fix, Severity

MATRIX_DIR = package_dir("matrix")
assert MATRIX_DIR is not None
RELEASES = json.loads((MATRIX_DIR / "releases.json").read_text("utf-8"))
ISSUES = json.loads((MATRIX_DIR / "known_issues.json").read_text("utf-8"))


def _matrix(up_to: str | None = None, issues: Any = ISSUES) -> ReleaseMatrix:
    kept = [
        r for r in RELEASES["releases"] if up_to is None or Version(r["version"]) <= Version(up_to)
    ]
    return parse({**RELEASES, "releases": kept}, issues)


def _profile(**changes: Any) -> Profile:
    return win_arm64(**{"python": (3, 11), **changes})


SDK = {"system_qnn": Version("2.22.0"), "system_qnn_source": r"env QNN_SDK_ROOT: C:\qnn\2.22"}


def test_every_rule_has_public_sources_and_a_known_confidence() -> None:
    for rule in RULES.values():
        assert rule.confidence in CONFIDENCE_WORDS
        assert rule.sources and all(s.startswith("https://") for s in rule.sources), rule
    for issue in ISSUES["issues"]:
        assert issue["sources"] and all(s.startswith("https://") for s in issue["sources"])


def test_x_elite_python_311_gets_the_newest_release_with_or_without_an_sdk() -> None:
    """The issue's first example: 1.23.2 was picked instead of 2.7.0 when a
    system SDK folder was present."""
    matrix = _matrix()
    plain = recommend(_profile(), matrix)
    with_sdk = recommend(_profile(**SDK), matrix)
    assert str(plain.chosen.version) == str(with_sdk.chosen.version) == "2.7.0"  # type: ignore[union-attr]
    assert plain.commands == with_sdk.commands
    assert not with_sdk.ruled_out
    (note,) = [n for n in with_sdk.notes if "QNN SDK 2.22.0" in n]
    assert "shadowing" in note and "PATH" in note and "https://" in note


@pytest.mark.parametrize("sdk", [{}, SDK], ids=["no-sdk", "sdk"])
def test_a_wheel_without_qnn_is_never_recommended(sdk: dict[str, Any]) -> None:
    matrix = _matrix(up_to="1.17.3")  # bundles no QNN at all
    for arch, native in (("arm64", "arm64"), ("x86_64", "x86_64")):
        rec = recommend(_profile(arch=arch, native_arch=native, htp_arch=None, **sdk), matrix)
        assert rec.status == "nothing-fits", rec
        (verdict,) = rec.ruled_out
        assert [r.axis for r in verdict.reasons] == ["no-bundled-qnn"]
        assert verdict.reasons[0].sources


def test_plugin_2_3_is_installed_with_its_companion_pinned() -> None:
    rec = recommend(
        _profile(os="linux", glibc=(2, 35), python_exe="/v/bin/python"), _matrix(up_to="2.3.0")
    )
    assert str(rec.chosen.version) == "2.3.0"  # type: ignore[union-attr]
    # The pin comes from the matrix's companion experiments (docs/matrix.md).
    assert rec.commands == (
        "/v/bin/python -m pip install onnxruntime-qnn==2.3.0 'onnxruntime>=1.24.2,<1.28.0'",
    )
    pin = SpecifierSet(">=1.24.2,<1.28.0")
    assert pin.contains("1.27.0") and not pin.contains("1.32.0")
    assert any(
        "1.24.2 to 1.27.0 passed with it, 1.28.0 failed" in n and "installing with" in n
        for n in rec.chosen.notes  # type: ignore[union-attr]
    )
    newer = recommend(_profile(os="linux", glibc=(2, 35)), _matrix(up_to="2.4.0"))
    assert newer.commands[-1].endswith("onnxruntime-qnn==2.4.0")


def _issue(**changes: Any) -> dict[str, Any]:
    issue = {
        "id": "made-up-crash",
        "title": "crashes on this chip",
        "onnxruntime_qnn": "==2.7.0",
        "effect": "rule-out",
        "explanation": "x",
        "confidence": "field-report",
        "sources": ["https://github.com/onnxruntime/onnxruntime-qnn/issues/1"],
    }
    return {**issue, **changes}


def test_a_known_issue_without_evidence_rules_nothing_out() -> None:
    with_source = recommend(_profile(), _matrix(issues={"issues": [_issue()]}))
    assert str(with_source.chosen.version) == "2.6.0"  # type: ignore[union-attr]
    (reason,) = with_source.ruled_out[0].reasons
    assert reason.axis == "known-issue" and reason.sources == (_issue()["sources"][0],)
    without = recommend(_profile(), _matrix(issues={"issues": [_issue(sources=[])]}))
    assert str(without.chosen.version) == "2.7.0"  # type: ignore[union-attr]
    assert any("no public source" in n for n in without.chosen.notes)  # type: ignore[union-attr]


_PLACEHOLDER = re.compile(r"<[A-Za-z_]+>|field-observation")


def test_texts_use_plain_words() -> None:
    for profile in (
        _profile(htp_arch=75),
        _profile(python=(3, 8)),
        _profile(arch="x86_64", emulated=True, python=(3, 12)),
        _profile(os="linux", arch="x86_64", native_arch="x86_64", glibc=(2, 31), **SDK),
    ):
        rec = recommend(profile, _matrix()).to_json()
        out = io.StringIO()
        render_recommendation(rec, out)
        text = out.getvalue()
        assert not _PLACEHOLDER.search(json.dumps(rec)), rec
        assert not _PLACEHOLDER.search(text)
        for verdict in rec["ruled_out"]:
            for reason in verdict["reasons"]:
                assert CONFIDENCE_WORDS[reason["confidence"]] in text
                assert all(source in text for source in reason["sources"])


def test_linux_x86_64_says_simulator() -> None:
    rec = recommend(
        _profile(os="linux", arch="x86_64", native_arch="x86_64", glibc=(2, 35)), _matrix()
    )
    assert str(rec.chosen.version) == "2.7.0"  # type: ignore[union-attr]
    assert any("simulator" in n for n in rec.notes)


def _finding(*runs: tuple[str, ...]) -> Finding:
    """A finding whose fix states pip runs (the command stage makes the commands)."""
    return Finding(
        "qnn-htp-backend-missing", Severity.ERROR, "t", "e", (), Fix("Reinstall.", pip_runs=runs)
    )


def test_findings_take_the_recommendations_commands_when_they_disagree() -> None:
    """The command stage (resolver/fixes.py) makes each fix's commands once:
    a pip run that installs another onnxruntime-qnn, or the companion on its
    own, takes the recommendation's commands; the others are made as stated."""
    rec = {
        "status": "ok",
        "version": "2.7.0",
        "commands": ['py -m pip install "onnxruntime-qnn==2.7.0"'],
    }
    target = PipTarget("/v/bin/python", windows=False)
    reinstall_old = _finding(
        ("install", "--force-reinstall", "--no-deps", "onnxruntime-qnn==1.23.2")
    )
    unpinned = _finding(("install", "--force-reinstall", "onnxruntime-qnn"))
    same = _finding(("install", "--force-reinstall", "--no-deps", "onnxruntime-qnn==2.7.0"))
    other = _finding(("install", "onnxruntime>=1.24.2"))
    gpu = _finding(("uninstall", "-y", "onnxruntime-gpu"))
    aligned = make_commands((reinstall_old, unpinned, same, other, gpu), rec, target)
    for changed in (aligned[0], aligned[1], aligned[3]):
        assert changed.fix.commands == tuple(rec["commands"])  # type: ignore[union-attr]
    assert "onnxruntime-qnn 2.7.0" in aligned[0].fix.text  # type: ignore[union-attr]
    assert aligned[2].fix == Fix(
        "Reinstall.",
        ("/v/bin/python -m pip install --force-reinstall --no-deps onnxruntime-qnn==2.7.0",),
    )
    assert aligned[4].fix == Fix(
        "Reinstall.", ("/v/bin/python -m pip uninstall -y onnxruntime-gpu",)
    )
    old = ("/v/bin/python -m pip install --force-reinstall --no-deps onnxruntime-qnn==1.23.2",)
    nothing_to_do = {"status": "ok", "version": "1.23.2", "commands": []}
    assert make_commands((reinstall_old,), nothing_to_do, target)[0].fix == Fix("Reinstall.", old)
    nothing_fits = {"status": "nothing-fits"}
    assert make_commands((reinstall_old,), nothing_fits, target)[0].fix == Fix("Reinstall.", old)
    # The recommended release installed already: an unpinned install gets its version.
    (pinned,) = make_commands(
        (_finding(("install", "-U", "onnxruntime-qnn")),), nothing_to_do, target
    )
    assert pinned.fix is not None
    assert pinned.fix.commands == ("/v/bin/python -m pip install onnxruntime-qnn==1.23.2",)


def test_windows_commands_work_in_powershell_and_cmd() -> None:
    """A quoted interpreter path cannot start a PowerShell command (it needs
    `&`, which cmd rejects): such a path is entered with pushd / popd."""
    spaced = _profile(python_exe=r"C:\Program Files\Python311-arm64\python.exe")
    rec = recommend(spaced, _matrix())
    assert rec.commands == (
        r'pushd "C:\Program Files\Python311-arm64"',
        r'.\python.exe -m pip install "onnxruntime-qnn==2.7.0"',
        "popd",
    )
    plain = recommend(_profile(), _matrix())
    assert plain.commands == (r'C:\py\python.exe -m pip install "onnxruntime-qnn==2.7.0"',)
    for command in (*rec.commands, *plain.commands):
        assert "&" not in command and "$" not in command and "'" not in command


def test_a_met_companion_pin_needs_no_command() -> None:
    installed = (
        ("onnxruntime-qnn", "2.3.0", ("onnxruntime_qnn",)),
        ("onnxruntime", "1.27.0", ("onnxruntime",)),
    )
    profile = _profile(os="linux", glibc=(2, 35), python_exe="/v/bin/python", installed=installed)
    rec = recommend(profile, _matrix(up_to="2.3.0"))
    assert str(rec.chosen.version) == "2.3.0" and rec.commands == ()  # type: ignore[union-attr]
    too_new = (installed[0], ("onnxruntime", "1.32.0", ("onnxruntime",)))
    rec = recommend(dataclasses.replace(profile, installed=too_new), _matrix(up_to="2.3.0"))
    assert rec.commands == (
        "/v/bin/python -m pip install onnxruntime-qnn==2.3.0 'onnxruntime>=1.24.2,<1.28.0'",
    )


def test_check_summary_shows_the_emulation_verdict_first() -> None:
    from qnndoctor.render.summary import recommendation_lines

    emulated = _profile(arch="x86_64", emulated=True, python=(3, 12))
    rec = recommend(emulated, _matrix()).to_json()
    lines = recommendation_lines({"recommendation": rec})
    assert lines[0].startswith("emulation: this x64 Python runs under emulation")
    assert lines[2] == "  winget install --exact --id Python.Python.3.12 --architecture arm64"
    assert lines[3] == '  py -V:3.12-arm64 -m pip install "onnxruntime-qnn==2.7.0"'
    assert lines[4] == "or, in this emulated x64 Python:"


def test_finding_commands_are_typed_the_same_in_powershell_and_cmd() -> None:
    from qnndoctor.resolver.consistency import shell_neutral

    exe = r'"C:\Program Files\Python312-arm64\python.exe"'
    commands = (
        f"{exe} -m pip uninstall -y onnxruntime-gpu",
        f'{exe} -m pip install "onnxruntime>=1.24.2"',
        r'cmd /c rmdir /s /q "C:\app\.venv\Lib\site-packages\~nnxruntime"',
        r"C:\py\python.exe -m pip list",
    )
    assert shell_neutral(commands) == (
        r'pushd "C:\Program Files\Python312-arm64"',
        r".\python.exe -m pip uninstall -y onnxruntime-gpu",
        r'.\python.exe -m pip install "onnxruntime>=1.24.2"',
        "popd",
        r'cmd /c rmdir /s /q "C:\app\.venv\Lib\site-packages\~nnxruntime"',
        r"C:\py\python.exe -m pip list",
    )
    assert shell_neutral(("/v/bin/python -m pip list",)) == ("/v/bin/python -m pip list",)
    # The command stage applies it to every finding, whatever the recommendation says.
    windows = PipTarget(r"C:\Program Files\Python312-arm64\python.exe", windows=True)
    (aligned,) = make_commands((_finding(("install", "onnxruntime")),), None, windows)
    assert aligned.fix is not None and aligned.fix.commands[0].startswith("pushd ")


def test_adsp_fixes_on_windows_name_no_placeholder_and_no_cmd_only_syntax() -> None:
    from qnndoctor.facts.probed import Facts
    from qnndoctor.matrixdata import load
    from qnndoctor.rules.registry import evaluate

    def facts(adsp: dict[str, Any], soc: dict[str, Any]) -> Facts:
        return Facts.from_json(
            {
                "interpreter": {"status": "ok", "values": {"sys_platform": "win32"}, "sources": {}},
                "installs": {"status": "ok", "values": {"distributions": []}, "sources": {}},
                "qnn_sdk": {"status": "ok", "values": {"adsp_library_path": adsp}, "sources": {}},
                "soc": {"status": "ok", "values": soc, "sources": {}},
            }
        )

    colon = {"set": True, "value": "C:/a:C:/b", "colon_separated": True, "entries": []}
    (finding,) = [
        f for f in evaluate(facts(colon, {}), load()).findings if f.id == "adsp-library-path-colon"
    ]
    assert finding.fix is not None and finding.fix.commands == ()
    assert "os.environ['ADSP_LIBRARY_PATH']" in finding.fix.text
    missing = {
        "set": True,
        "value": r"C:\nope",
        "colon_separated": False,
        "entries": [{"path": r"C:\nope", "exists": False}],
    }
    elite = {"processor_name": "Snapdragon(R) X Elite - X1E78100 - Qualcomm(R) Oryon(TM) CPU"}
    (finding,) = [
        f
        for f in evaluate(facts(missing, elite), load()).findings
        if f.id == "adsp-library-path-bad-entry"
    ]
    assert (
        finding.fix is not None
        and "libQnnHtpV73Skel.so (this chip is Hexagon v73)" in finding.fix.text
    )
    assert not _PLACEHOLDER.search(finding.fix.text)
