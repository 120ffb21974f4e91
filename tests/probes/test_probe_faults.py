"""Probes against files that are not files, and probes that hang: a real FIFO
in a real venv's package folder, a probe blocked on a real FIFO, and a probe
program killed half-way. One lost section, never the whole report."""

from __future__ import annotations

import json
import os
import sys
import types
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import CliResult, validate_report
from helpers.fake_python import write_fake_python
from helpers.wheels import build_wheel, make_venv, pip_install, site_packages

from qnndoctor import _layout
from qnndoctor.target.collect import PART_MARKER, PLAN_MARKER, run_probes
from qnndoctor.target.interpreter import Target

Cli = Callable[..., CliResult]
posix_only = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")

# The first 64 bytes of an x86-64 ELF shared object (enough for the header probe).
ELF_HEADER = (
    b"\x7fELF\x02\x01\x01" + b"\x00" * 9 + b"\x03\x00\x3e\x00\x01\x00\x00\x00" + b"\x00" * 40
)


@posix_only
def test_a_fifo_named_like_a_qnn_library_is_never_opened(cli: Cli, tmp_path: Path) -> None:
    wheel = build_wheel(
        tmp_path / "wheels",
        "onnxruntime-qnn",
        "2.7.0",
        {
            "onnxruntime_qnn/__init__.py": b"",
            "onnxruntime_qnn/build_and_package_info.py": b"qnn_version = '2.51.0'\n",
            "onnxruntime_qnn/libQnnHtp.so": ELF_HEADER,
            "onnxruntime_qnn/libQnnSystem.so": ELF_HEADER,
        },
    )
    python = make_venv(tmp_path / "venv")
    pip_install(python, str(wheel))
    package = site_packages(python) / "onnxruntime_qnn"
    (package / "libQnnHtp.so").unlink()
    os.mkfifo(package / "libQnnHtp.so")  # in RECORD too: the install check sees it
    os.mkfifo(package / "libQnnHtpV73Stub.so")  # not in RECORD
    result = cli("check", "--python", str(python), "--json", "--no-smoke", "--timeout", "120")
    assert "Traceback" not in result.err
    report = result.json()
    validate_report(report)
    facts = report["facts"]
    assert all(probe["status"] == "ok" for probe in facts.values()), facts
    (bundle,) = facts["qnn_bundled"]["values"]["bundles"]
    libraries = {lib["name"]: lib for lib in bundle["folders"][0]["libraries"]}
    for name in ("libQnnHtp.so", "libQnnHtpV73Stub.so"):
        assert "not a regular file (a FIFO)" in libraries[name]["error"]
    assert libraries["libQnnSystem.so"]["machine"] == "x86_64"
    assert facts["probe_run"]["values"]["unfinished"] is None


def _probes_package() -> types.ModuleType:
    """The probe program, imported from its folder as the bootstrap does."""
    import importlib.util

    folder = _layout.package_dir("probes")
    assert folder is not None
    spec = importlib.util.spec_from_file_location(
        "_test_probes", folder / "__init__.py", submodule_search_locations=[str(folder)]
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["_test_probes"] = module
    spec.loader.exec_module(module)
    return module


@posix_only
def test_a_probe_blocked_on_a_fifo_loses_only_its_own_section(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A probe stuck in a real blocking open() of a FIFO (as an unguarded
    read would be) times out; the probes before and after it still report."""
    probes = _probes_package()
    fifo = tmp_path / "libQnnHtp.so"
    os.mkfifo(fifo)

    def stuck(ctx: object) -> object:
        with open(fifo, "rb") as handle:  # blocks: no writer ever comes
            return handle.read()

    blocked = types.SimpleNamespace(NAME="blocked", run=stuck)
    order = list(probes.PROBES)
    monkeypatch.setattr(probes, "PROBES", (*order[:3], blocked, *order[3:]))
    seen: list[str] = []
    document = probes.run_all(
        {"probe_timeout": 1.0}, on_result=lambda name, entry: seen.append(name)
    )
    results = document["probes"]
    assert results["blocked"]["status"] == "error"
    assert results["blocked"]["error"]["type"] == "ProbeTimeout"
    assert "did not finish within 1 s" in results["blocked"]["error"]["message"]
    others = [module.NAME for module in order]
    assert all(results[name]["status"] == "ok" for name in others), results
    assert seen == [*others[:3], "blocked", *others[3:]]
    with open(fifo, "wb"):  # a writer: the abandoned thread ends too
        pass


def test_slow_probes_each_within_the_limit_all_report(monkeypatch: pytest.MonkeyPatch) -> None:
    """The probes share one worker thread: two that each take 60% of the
    limit (together more than it) both report, and the limit is per probe."""
    import time

    probes = _probes_package()

    def slow(ctx: object) -> object:
        time.sleep(1.2)
        return types.SimpleNamespace(values={"slept": True}, sources={"slept": "time.sleep"})

    first = types.SimpleNamespace(NAME="slow_one", run=slow)
    second = types.SimpleNamespace(NAME="slow_two", run=slow)
    monkeypatch.setattr(probes, "PROBES", (first, second, *probes.PROBES[:1]))
    results = probes.run_all({"probe_timeout": 2.0})["probes"]
    statuses = [results[n]["status"] for n in ("slow_one", "slow_two", "interpreter")]
    assert statuses == ["ok"] * 3, results
    assert results["slow_two"]["values"] == {"slept": True}


@pytest.mark.parametrize("limit", [None, 5.0])
def test_a_keyboard_interrupt_in_a_probe_is_not_swallowed(
    monkeypatch: pytest.MonkeyPatch, limit: float | None
) -> None:
    probes = _probes_package()

    def interrupted(ctx: object) -> object:
        raise KeyboardInterrupt

    failing = types.SimpleNamespace(NAME="interrupted", run=interrupted)
    monkeypatch.setattr(probes, "PROBES", (*probes.PROBES[:1], failing))
    seen: list[str] = []
    options = {} if limit is None else {"probe_timeout": limit}
    with pytest.raises(KeyboardInterrupt):
        probes.run_all(options, on_result=lambda name, entry: seen.append(name))
    assert seen == ["interpreter"]


def test_a_failure_to_print_an_entry_goes_up_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    """on_result raising (stdout gone) ends run_all in the caller's thread,
    with or without the worker thread."""
    probes = _probes_package()
    monkeypatch.setattr(probes, "PROBES", probes.PROBES[:2])

    def broken_pipe(name: str, entry: object) -> None:
        raise BrokenPipeError(32, "Broken pipe")

    for options in ({}, {"probe_timeout": 5.0}):
        with pytest.raises(BrokenPipeError):
            probes.run_all(options, on_result=broken_pipe)


def test_a_killed_probe_program_keeps_the_sections_it_printed(tmp_path: Path) -> None:
    """A target interpreter that prints two sections, then hangs until killed."""
    interpreter = {"status": "ok", "values": {"version": "3.11.9"}, "sources": {}}
    plan = ["interpreter", "emulation", "installs", "paths"]
    body = (
        "import sys, time\n"
        f"print({PLAN_MARKER + json.dumps(plan)!r})\n"
        f"print({PART_MARKER + json.dumps(['interpreter', interpreter])!r})\n"
        f"print({PART_MARKER + json.dumps(['emulation', interpreter])!r}, flush=True)\n"
        "time.sleep(600)\n"
    )
    target = Target(str(write_fake_python(tmp_path, body)), "test double")
    run = run_probes(target, timeout=3)
    assert run.completed.timed_out
    facts = run.facts
    assert facts.value("interpreter", "version") == "3.11.9"
    assert facts.ok("emulation")
    for lost in ("installs", "paths"):
        probe = facts.probe(lost)
        assert probe is not None and not probe.ok
        assert "killed after 3 s, before this probe finished" in probe.error_text()
    assert "killed after 3 s" in facts.value("probe_run", "unfinished")


def test_a_probe_program_that_prints_nothing_is_still_could_not_check(
    cli: Cli, tmp_path: Path
) -> None:
    target = write_fake_python(tmp_path, "import time; time.sleep(600)")
    result = cli("check", "--python", str(target), "--json", "--timeout", "2")
    assert result.code == 3
    assert "did not finish within 2 s" in result.json()["error"]["message"]


@pytest.mark.skipif(sys.platform == "win32", reason="a folder in use cannot be removed there")
def test_a_removed_working_folder_costs_no_probe(tmp_path: Path) -> None:
    """A shell left standing in a folder that was removed: os.getcwd() fails,
    and '' on sys.path leads nowhere. Every probe still reports."""
    import subprocess

    gone = tmp_path / "gone"
    gone.mkdir()
    console = Path(sys.executable).with_name("qnndoctor")
    argv = [str(console), "check", "--python", sys.executable, "--no-smoke", "--json"]
    done = subprocess.run(
        ["sh", "-c", 'cd "$1" && rmdir "$1" && shift && exec "$@"', "sh", str(gone), *argv],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    report = json.loads(done.stdout)
    validate_report(report)
    failed = {k: v.get("error") for k, v in report["facts"].items() if v.get("status") == "error"}
    assert failed == {}, failed
    assert report["facts"]["interpreter"]["values"]["cwd"] is None


def test_the_probe_program_does_not_import_typing(healthy_venv: Path) -> None:
    """Every probe module keeps `typing` to annotations (the comment in each
    says why: it costs the target's start-up ~5 ms); one that imported it
    made every check slower unnoticed."""
    import subprocess

    from qnndoctor import headstart
    from qnndoctor.children import launch

    probes = headstart._probes_dir()
    assert probes is not None
    argv = launch.probe_argv(str(healthy_venv), probes)
    argv[1:1] = ["-X", "importtime"]
    run = subprocess.run(
        argv, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120
    )
    assert run.returncode == 0, run.stderr[-2000:]
    imported = {
        line.rsplit("|", 1)[-1].strip()
        for line in run.stderr.splitlines()
        if line.startswith("import time:")
    }
    assert "installs" not in imported and "_qnndoctor_probes.installs" in imported
    assert "typing" not in imported
