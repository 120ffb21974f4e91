"""`qnndoctor check` against real venvs with real installed distributions."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import CliResult, validate_report
from helpers.monolithic import monolithic_qnn_wheel
from helpers.pe_builder import MACHINE_AMD64, build_pe
from helpers.wheels import build_wheel, make_venv, pip_install, site_packages

Cli = Callable[..., CliResult]

def test_healthy_reference_setup_is_info_only(cli: Cli, healthy_venv: Path) -> None:
    result = cli("check", "--python", str(healthy_venv), "--json")
    assert result.code == 0, result.err
    report = result.json()
    validate_report(report)
    severities = {f["id"]: f["severity"] for f in report["findings"]}
    assert severities.get("htp-simulator-host") == "info"
    assert "error" not in severities.values()
    installs = report["facts"]["installs"]["values"]
    names = {d["canonical_name"]: d for d in installs["distributions"]}
    assert names["onnxruntime-qnn"]["era"] == "plugin-2.x"
    assert names["onnxruntime-qnn"]["version"] == "2.7.0"
    assert names["onnxruntime"]["provides_modules"] == ["onnxruntime"]
    assert installs["would_import"]["onnxruntime"]["owners"][0].startswith("onnxruntime==1.31.1")
    bundle = report["facts"]["qnn_bundled"]["values"]["bundles"][0]
    assert bundle["qnn_version"] == "2.51.0"  # from build_and_package_info.py of the real wheel
    kinds = {lib["kind"] for folder in bundle["folders"] for lib in folder["libraries"]}
    assert {"backend_htp", "system", "ort_provider_qnn"} <= kinds
    for key in names["onnxruntime-qnn"]["key_files"]:
        assert key["status"] in ("intact", "size-match"), key


def test_plugin_with_too_old_onnxruntime(
    cli: Cli, tmp_path: Path, real_wheels: dict[str, Path]
) -> None:
    python = make_venv(tmp_path / "venv")
    pip_install(
        python, str(real_wheels["onnxruntime==1.22.1"]), str(real_wheels["onnxruntime-qnn==2.7.0"])
    )
    result = cli("check", "--python", str(python), "--json")
    assert result.code == 1
    finding = next(f for f in result.json()["findings"] if f["id"] == "plugin-companion-mismatch")
    assert "onnxruntime>=1.24.2" in finding["explanation"]
    assert "1.22.1" in finding["explanation"]
    assert any("onnxruntime>=1.24.2" in c for c in finding["fix"]["commands"])


def test_plugin_without_onnxruntime(cli: Cli, tmp_path: Path, real_wheels: dict[str, Path]) -> None:
    python = make_venv(tmp_path / "venv")
    pip_install(python, str(real_wheels["onnxruntime-qnn==2.7.0"]))
    result = cli("check", "--python", str(python), "--json")
    assert result.code == 1
    assert "plugin-companion-missing" in result.finding_ids()
    # The right onnxruntime-qnn is there, but not what it plugs into: the
    # recommendation is not "already installed", and every fix says the same.
    report = result.json()
    commands = report["recommendation"]["commands"]
    # A venv without pip: its bundled pip comes first (the pip-absent finding says why).
    assert commands[0] == f"{python} -m ensurepip"
    assert [c.split(" -m pip ", 1)[1] for c in commands[1:]] == [
        "install onnxruntime-qnn==2.7.0 onnxruntime"
    ]
    for finding in report["findings"]:
        fix = finding["fix"] or {}
        if any("onnxruntime" in c for c in fix.get("commands", [])):
            assert fix["commands"] == commands, finding["id"]


def test_no_onnxruntime_qnn_at_all(cli: Cli, tmp_path: Path, real_wheels: dict[str, Path]) -> None:
    python = make_venv(tmp_path / "venv")
    pip_install(python, str(real_wheels["onnxruntime==1.31.1"]))
    result = cli("check", "--python", str(python), "--json")
    assert result.code == 1
    finding = next(f for f in result.json()["findings"] if f["id"] == "no-onnxruntime-qnn")
    assert "onnxruntime 1.31.1" in finding["explanation"]
    # One consistent set of commands: the finding's fix is the recommendation's.
    recommended = result.json()["recommendation"]
    assert recommended["version"] == "2.7.0"
    assert finding["fix"]["commands"] == recommended["commands"]
    assert finding["fix"]["commands"][-1].endswith("-m pip install onnxruntime-qnn==2.7.0")


def test_two_flavours_and_overwritten_pybind(
    cli: Cli, tmp_path: Path, real_wheels: dict[str, Path]
) -> None:
    """onnxruntime-qnn 1.x installed, then plain onnxruntime over it: pip lets
    both stay 'installed' while the shared files are the second one's."""
    python = make_venv(tmp_path / "venv")
    wheel = monolithic_qnn_wheel(tmp_path / "wheels")
    pip_install(python, str(wheel))
    pip_install(python, str(real_wheels["onnxruntime==1.31.1"]))
    result = cli("check", "--python", str(python), "--json")
    assert result.code == 1
    report = result.json()
    validate_report(report)
    ids = {f["id"] for f in report["findings"]}
    assert {"onnxruntime-multiple-owners"} <= ids
    # Both own onnxruntime/__init__.py; the copy on disk is plain onnxruntime's.
    dists = {d["canonical_name"]: d for d in report["facts"]["installs"]["values"]["distributions"]}
    assert dists["onnxruntime-qnn"]["era"] == "monolithic-1.x"
    assert dists["onnxruntime-qnn"]["overwritten_by"]
    shared = report["facts"]["installs"]["values"]["shared_files"]
    init = next(s for s in shared if s["path"].endswith("onnxruntime/__init__.py"))
    assert init["on_disk_owner"].startswith("onnxruntime==1.31.1")
    multiple = next(f for f in report["findings"] if f["id"] == "onnxruntime-multiple-owners")
    assert "onnxruntime-qnn 1.23.2" in multiple["explanation"]
    assert any("uninstall -y onnxruntime" in c for c in multiple["fix"]["commands"])
    # Uninstalling onnxruntime-qnn 1.x deletes the files it shares with the
    # onnxruntime that stays, and pip would then call that one "already
    # satisfied": the commands reinstall it before installing the plugin.
    commands = report["recommendation"]["commands"]
    assert commands[0] == f"{python} -m ensurepip"  # a venv without pip
    assert [c.split(" -m pip ", 1)[1] for c in commands[1:]] == [
        "uninstall -y onnxruntime-qnn",
        "install --force-reinstall --no-deps onnxruntime==1.31.1",
        "install onnxruntime-qnn==2.7.0",
    ]
    assert multiple["fix"]["commands"] == commands
    # The words agree with the commands: they remove onnxruntime-qnn 1.x, so
    # the text does not say to keep it (issue 25).
    assert "except onnxruntime-qnn" not in multiple["fix"]["text"]
    assert "they uninstall onnxruntime-qnn and install" in multiple["fix"]["text"]


def test_overwritten_file_is_named_with_its_real_owner(cli: Cli, tmp_path: Path) -> None:
    """Two wheels ship the same pybind file; the second install wins on disk."""
    python = make_venv(tmp_path / "venv")
    qnn = monolithic_qnn_wheel(tmp_path / "qnn")
    plain = build_wheel(
        tmp_path / "plain",
        "onnxruntime",
        "1.19.0",
        {
            "onnxruntime/__init__.py": b"__version__ = '1.19.0'\n",
            "onnxruntime/capi/onnxruntime_pybind11_state.pyd": build_pe(
                MACHINE_AMD64, strings={"FileDescription": "plain onnxruntime cpu build"}
            ),
        },
    )
    pip_install(python, str(qnn))
    pip_install(python, str(plain))
    result = cli("check", "--python", str(python), "--json")
    report = result.json()
    overwritten = next(f for f in report["findings"] if f["id"] == "files-overwritten")
    assert "onnxruntime-qnn 1.23.2" in overwritten["explanation"]
    assert "onnxruntime_pybind11_state.pyd" in overwritten["explanation"]
    assert "onnxruntime==1.19.0" in overwritten["explanation"]
    qnn_dist = next(
        d
        for d in report["facts"]["installs"]["values"]["distributions"]
        if d["canonical_name"] == "onnxruntime-qnn"
    )
    pybind = next(k for k in qnn_dist["key_files"] if k["path"].endswith("pybind11_state.pyd"))
    assert pybind["status"] == "overwritten"
    assert pybind["owner_on_disk"].startswith("onnxruntime==1.19.0")


def test_uninstall_leftovers(cli: Cli, tmp_path: Path) -> None:
    python = make_venv(tmp_path / "venv")
    pip_install(python, str(monolithic_qnn_wheel(tmp_path / "w")))
    site = site_packages(python)
    # A failed uninstall: pip renamed the folder to ~nnxruntime and died, and
    # the package files are gone while the dist-info stayed.
    shutil.move(str(site / "onnxruntime"), str(site / "~nnxruntime"))
    result = cli("check", "--python", str(python), "--json")
    ids = result.finding_ids()
    assert "uninstall-leftover" in ids
    leftovers = result.json()["facts"]["installs"]["values"]["leftovers"]
    kinds = {item["kind"] for item in leftovers}
    assert {"pip-temp-rename", "metadata-without-files"} <= kinds
    assert "files-missing" in ids


def test_files_without_metadata(cli: Cli, tmp_path: Path) -> None:
    python = make_venv(tmp_path / "venv")
    pip_install(python, str(monolithic_qnn_wheel(tmp_path / "w")))
    site = site_packages(python)
    shutil.rmtree(next(site.glob("onnxruntime_qnn-*.dist-info")))
    result = cli("check", "--python", str(python), "--json")
    leftovers = result.json()["facts"]["installs"]["values"]["leftovers"]
    assert {
        "kind": "files-without-metadata",
        "path": str(site / "onnxruntime"),
        "module": "onnxruntime",
    } in leftovers
    assert {"uninstall-leftover", "no-onnxruntime-qnn"} <= result.finding_ids()


def test_x64_dlls_in_arm64_bundle_are_read_with_pefile(cli: Cli, tmp_path: Path) -> None:
    """A 1.x bundle whose QNN DLLs are AMD64: machine types and the QNN
    version come from the real PE headers and VERSIONINFO resources."""
    python = make_venv(tmp_path / "venv")
    pip_install(python, str(monolithic_qnn_wheel(tmp_path / "w", machine=MACHINE_AMD64)))
    report = cli("check", "--python", str(python), "--json").json()
    pe = report["facts"]["binaries"]["values"]["pe"]
    htp = next(v for k, v in pe.items() if k.endswith("QnnHtp.dll"))
    assert htp["machine"] == "AMD64"
    assert htp["strings"]["ProductVersion"] == "2.37.1.250807093845_124904"
    assert htp["file_version_fixed"] == "2.37.1.0"
    versions = report["facts"]["binaries"]["values"]["qnn_versions"]
    (only,) = versions.values()
    assert only["version"] == "2.37.1" and only["agree"] is True
    assert only["build"] == "2.37.1.250807093845_124904"
    bundle = report["facts"]["qnn_bundled"]["values"]["bundles"][0]
    assert bundle["stub_hexagon_versions"] == [73]
    assert bundle["skel_hexagon_versions"] == [73]


def test_truncated_and_missing_htp_library(cli: Cli, tmp_path: Path) -> None:
    python = make_venv(tmp_path / "venv")
    pip_install(python, str(monolithic_qnn_wheel(tmp_path / "w")))
    capi = site_packages(python) / "onnxruntime" / "capi"
    data = (capi / "QnnSystem.dll").read_bytes()
    (capi / "QnnSystem.dll").write_bytes(data[:300])
    result = cli("check", "--python", str(python), "--json")
    corrupt = next(f for f in result.json()["findings"] if f["id"] == "qnn-library-corrupt")
    assert "QnnSystem.dll" in corrupt["explanation"] and "truncated" in corrupt["explanation"]
    (capi / "QnnHtp.dll").unlink()
    result = cli("check", "--python", str(python), "--json")
    assert {"qnn-htp-backend-missing", "files-missing"} <= result.finding_ids()


def test_second_interpreter_and_python38_probe(cli: Cli, tmp_path: Path) -> None:
    """The probes are stdlib-only and run on any CPython 3.8+."""
    candidates = sorted(Path.home().glob(".pyenv/versions/3.8*/bin/python3.8"))
    which = shutil.which("python3.8")
    python38 = str(candidates[0]) if candidates else which
    if python38 is None:
        pytest.skip("no CPython 3.8 on this machine")
    result = cli("check", "--python", python38, "--json", "--no-redact")
    report = result.json()
    validate_report(report)
    assert report["target"]["python"] == python38
    facts = report["facts"]
    assert facts["interpreter"]["values"]["version_info"][:2] == [3, 8]
    assert all(probe["status"] == "ok" for probe in facts.values()), {
        k: v.get("error") for k, v in facts.items() if v["status"] != "ok"
    }
    assert "no-onnxruntime-qnn" in {f["id"] for f in report["findings"]}


def test_a_python_too_old_for_the_probes_is_named_with_its_version(
    cli: Cli, tmp_path: Path
) -> None:
    """Python 2.7 or 3.6 as the target: the probe program cannot even be
    compiled there; the message names the version, not a traceback."""
    found = sorted(Path.home().glob(".pyenv/versions/2.7*/bin/python2.7")) + sorted(
        Path.home().glob(".pyenv/versions/3.6*/bin/python3.6")
    )
    old = str(found[0]) if found else shutil.which("python2.7") or shutil.which("python3.6")
    if old is None:
        pytest.skip("no CPython 2.7 or 3.6 on this machine")
    result = cli("check", "--python", old, "--no-smoke", "--quiet")
    assert result.code == 3
    assert f"{old} is Python " in result.out
    assert "need Python 3.8 or newer" in result.out
    assert "Traceback" not in result.out + result.err and "SyntaxError" not in result.out


def test_a_program_that_is_no_python_is_named_so(cli: Cli) -> None:
    program = shutil.which("ls")
    if program is None:
        pytest.skip("no ls on this machine")
    result = cli("check", "--python", program, "--no-smoke", "--quiet")
    assert result.code == 3
    assert f"{program} exited with code" in result.out
    assert "is it a Python interpreter?" in result.out


def test_auto_picks_the_active_virtualenv(
    cli: Cli, healthy_venv: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VIRTUAL_ENV", str(healthy_venv.parent.parent))
    monkeypatch.delenv("CONDA_PREFIX", raising=False)
    report = cli("check", "--python", "auto", "--json", "--no-redact").json()
    assert report["target"]["python"] == str(healthy_venv)
    assert "VIRTUAL_ENV" in report["target"]["how_chosen"]


def test_missing_interpreter_exit_code_3_with_json(cli: Cli, tmp_path: Path) -> None:
    result = cli("check", "--python", str(tmp_path / "nope" / "python"), "--json")
    assert result.code == 3
    document = result.json()
    validate_report(document)
    assert document["error"]["kind"] == "could-not-check"
    assert "no such interpreter" in result.err


def test_usage_error_exit_code_2(cli: Cli) -> None:
    assert cli("check", "--format", "yaml").code == 2
    assert cli("frobnicate").code == 2


def test_fail_on_warning(
    cli: Cli, healthy_venv: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ADSP_LIBRARY_PATH", str(tmp_path / "missing-dir"))
    assert cli("check", "--python", str(healthy_venv), "--json").code == 0
    result = cli("check", "--python", str(healthy_venv), "--json", "--fail-on", "warning")
    assert result.code == 1
    assert "adsp-library-path-bad-entry" in result.finding_ids()


def test_adsp_library_path_colon_trap(
    cli: Cli, healthy_venv: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    monkeypatch.setenv("ADSP_LIBRARY_PATH", f"{tmp_path / 'a'}:{tmp_path / 'b'}")
    result = cli("check", "--python", str(healthy_venv), "--json")
    assert result.code == 1
    finding = next(f for f in result.json()["findings"] if f["id"] == "adsp-library-path-colon")
    assert f"{tmp_path / 'a'};{tmp_path / 'b'}" in finding["fix"]["commands"][0]


def test_system_qnn_sdk_on_library_path(
    cli: Cli, healthy_venv: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sdk = tmp_path / "qairt" / "2.40.0.251030"
    lib = sdk / "lib" / "x86_64-linux-clang"
    lib.mkdir(parents=True)
    (lib / "libQnnHtp.so").write_bytes(b"\x7fELF")
    (sdk / "lib" / "hexagon-v73").mkdir()
    (sdk / "sdk.yaml").write_text("name: qairt\nversion: 2.40.0.251030\n")
    monkeypatch.setenv("QNN_SDK_ROOT", str(sdk))
    monkeypatch.setenv("LD_LIBRARY_PATH", str(lib))
    report = cli("check", "--python", str(healthy_venv), "--json").json()
    root = report["facts"]["qnn_sdk"]["values"]["roots"][0]
    assert root["version"]["sdk_yaml"] == "2.40.0.251030"
    assert root["lib_targets"] == ["x86_64-linux-clang"]
    assert root["hexagon_folders"] == ["hexagon-v73"]
    finding = next(f for f in report["findings"] if f["id"] == "system-qnn-on-loader-path")
    # A system SDK is a shadowing risk, never a reason to rule a release out.
    rec = report["recommendation"]
    assert rec["status"] == "ok" and rec["version"] == "2.7.0", rec
    assert not any(
        r["axis"] == "bundled-qnn-newer-than-system" for v in rec["ruled_out"] for r in v["reasons"]
    )
    assert any("shadowing" in note for note in rec["notes"])
    # The fix is a real sh command: run it and see the SDK folder gone, the rest kept.
    (command,) = finding["fix"]["commands"]
    other = tmp_path / "other lib"
    done = subprocess.run(
        ["sh", "-c", f'{command}; printf %s "$LD_LIBRARY_PATH"'],
        env={"PATH": os.environ["PATH"], "LD_LIBRARY_PATH": f"{other}:{lib}:/usr/lib"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout == f"{other}:/usr/lib"
    # The text report's section does not read "ok" above the warning about it.
    text = cli("check", "--python", str(healthy_venv), "--no-smoke").out
    assert "System QNN SDK warning (see Findings)" in text
    monkeypatch.delenv("LD_LIBRARY_PATH")
    monkeypatch.delenv("QNN_SDK_ROOT")
    assert "System QNN SDK ok" in cli("check", "--python", str(healthy_venv), "--no-smoke").out


def test_local_folder_shadows_onnxruntime(
    cli: Cli, healthy_venv: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checkout = tmp_path / "src"
    (checkout / "onnxruntime").mkdir(parents=True)
    (checkout / "onnxruntime" / "__init__.py").write_text("")
    monkeypatch.setenv("PYTHONPATH", str(checkout))
    result = cli("check", "--python", str(healthy_venv), "--json")
    finding = next(f for f in result.json()["findings"] if f["id"] == "module-shadowed")
    assert str(checkout / "onnxruntime") in finding["explanation"]
    assert "PYTHONPATH" in finding["explanation"]


def test_corrupt_environment_never_tracebacks(cli: Cli, tmp_path: Path) -> None:
    """Broken METADATA and RECORD, a symlink loop and a file on sys.path,
    non-UTF-8 file names: each becomes a clear entry, the report still comes."""
    python = make_venv(tmp_path / "venv")
    pip_install(python, str(monolithic_qnn_wheel(tmp_path / "w")))
    site = site_packages(python)
    info = next(site.glob("onnxruntime_qnn-*.dist-info"))
    (info / "METADATA").write_bytes(b"\xff\xfe garbage without headers\n\x00\x01")
    (info / "RECORD").write_bytes(b'onnxruntime/__init__.py,sha256=abc\n"unterminated,\n')
    broken = site / "onnxruntime_gpu-1.0.dist-info"
    broken.mkdir()
    (broken / "top_level.txt").write_text("onnxruntime\n")
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    odd = os.fsencode(tmp_path) + b"/caf\xe9-\xff"
    os.mkdir(odd)
    os.mkdir(odd + b"/~nnxruntime\xff")
    env_path = os.pathsep.join([str(loop), str(a_file), os.fsdecode(odd)])
    completed = subprocess.run(
        [sys.executable, "-m", "qnndoctor", "check", "--python", str(python), "--json"],
        env={**os.environ, "PYTHONPATH": env_path},
        cwd=tmp_path,
        capture_output=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    assert b"Traceback" not in completed.stderr, completed.stderr.decode(errors="replace")
    assert completed.returncode == 1
    import json

    report = json.loads(completed.stdout)
    validate_report(report)
    installs = report["facts"]["installs"]["values"]
    errors = {e["path"]: e["error"] for e in installs["search_path"] if e["error"]}
    assert errors[str(loop)].startswith("OSError") or "loop" in errors[str(loop)].lower()
    assert errors[str(a_file)] == "not a directory"
    qnn = next(d for d in installs["distributions"] if "onnxruntime_qnn" in d["metadata_dir"])
    assert any("METADATA" in p for p in qnn["problems"]) and any(
        "RECORD" in p for p in qnn["problems"]
    )
    gpu = next(
        d
        for d in installs["distributions"]
        if d["metadata_dir"].endswith("onnxruntime_gpu-1.0.dist-info")
    )
    assert "METADATA missing or unreadable" in gpu["problems"]
    leftover = next(item for item in installs["leftovers"] if item["kind"] == "pip-temp-rename")
    assert leftover["path"].endswith("caf\\xe9-\\xff/~nnxruntime\\xff")
    flagged = (
        {e["label"]: e for e in report["facts"]["paths"]["values"]["non_ascii"]}
        if report["facts"]["paths"]["status"] == "ok"
        else {}
    )
    assert report["facts"]["paths"]["status"] == "ok"
    del flagged


def test_non_ascii_venv_path(cli: Cli, tmp_path: Path, real_wheels: dict[str, Path]) -> None:
    """A user name like the seed's: every path under it carries the characters."""
    python = make_venv(tmp_path / "Jürgen 李" / "venv")
    pip_install(python, str(real_wheels["onnxruntime-qnn==2.7.0"]))
    report = cli("check", "--python", str(python), "--json", "--no-redact").json()
    finding = next(f for f in report["findings"] if f["id"] == "non-ascii-path")
    assert finding["severity"] == "warning"  # no ANSI code page on Linux
    assert "ü (U+00FC)" in finding["explanation"] and "李 (U+674E)" in finding["explanation"]
    labels = {e["label"] for e in report["facts"]["paths"]["values"]["non_ascii"]}
    assert {"interpreter", "prefix", "site-packages"} <= labels
    assert any(label.startswith("package onnxruntime_qnn") for label in labels)


def test_same_flavour_installed_twice(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One copy in the venv, another in a PYTHONPATH folder (pip --target)."""
    python = make_venv(tmp_path / "venv")
    old = build_wheel(
        tmp_path / "w1", "onnxruntime-qnn", "1.22.0", {"onnxruntime/__init__.py": b"# 1.22"}
    )
    new = build_wheel(
        tmp_path / "w2", "onnxruntime-qnn", "1.23.2", {"onnxruntime/__init__.py": b"# 1.23"}
    )
    pip_install(python, str(new))
    target = tmp_path / "extra"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-index",
            "--no-deps",
            "--target",
            str(target),
            str(old),
        ],
        check=True,
        stdin=subprocess.DEVNULL,
        timeout=300,
    )
    monkeypatch.setenv("PYTHONPATH", str(target))
    report = cli("check", "--python", str(python), "--json", "--no-redact").json()
    twice = next(f for f in report["findings"] if f["id"] == "distribution-installed-twice")
    assert "1.22.0 in " + str(target) in twice["explanation"]
    assert "(1.22.0) wins the import" in twice["explanation"]
    would = report["facts"]["installs"]["values"]["would_import"]["onnxruntime"]
    assert would["entry_kind"] == "pythonpath" and would["path"] == str(target / "onnxruntime")
