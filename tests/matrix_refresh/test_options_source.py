"""matrix/refresh/options_source.py on a real git repository laid out like
onnxruntime-qnn (two revisions: 1.x reads provider_options_map, 2.x reads
FormatEPConfigKey with defaults) and a wheel whose EP library holds strings."""

from __future__ import annotations

import importlib
import json
import subprocess
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

import jsonschema
from helpers.refresh_tool import load_refresh_tool
from packaging.version import Version

if TYPE_CHECKING:
    from matrix.refresh import options_source
else:  # the maintainers' tool is not in the wheel: loaded from the repository
    load_refresh_tool()
    options_source = importlib.import_module("matrix.refresh.options_source")

ROOT = Path(__file__).resolve().parents[2]

SESSION_H = """\
static const char* const kOrtSessionOptionsDisableCPUEPFallback = "session.disable_cpu_ep_fallback";
static const char* const kOrtSessionOptionEpContextEnable =
    "ep.context_enable";
"""
RUN_H = """\
static const char* const kOrtRunOptionsConfigQnnPerfMode = "qnn.htp_perf_mode";
static const char* const kOrtRunOptionsConfigQnnRpcControlLatency = "qnn.rpc_control_latency";
"""
EP_1X = """\
void ParseHtpPerformanceMode(std::string htp_performance_mode_string) {
  if (htp_performance_mode_string == "burst") {
  } else if (htp_performance_mode_string == "balanced") {
  } else if (htp_performance_mode_string == "default") {
  } else {
    LOGS_DEFAULT(WARNING) << "Htp performance mode not valid.";
  }
}
QNNExecutionProvider::QNNExecutionProvider(const ProviderOptions& provider_options_map, const ConfigOptions* config_options) {
  disable_cpu_ep_fallback_ = config_options->GetConfigOrDefault(
                                 kOrtSessionOptionsDisableCPUEPFallback, "0") == "1";
  static const std::string HTP_PERFORMANCE_MODE = "htp_performance_mode";
  auto htp_performance_mode_pos = provider_options_map.find(HTP_PERFORMANCE_MODE);
  static const std::string QNN_VTCM_MB = "vtcm_mb";
  auto qnn_vtcm_mb_pos = provider_options_map.find(QNN_VTCM_MB);
  if (qnn_vtcm_mb_pos != provider_options_map.end()) {
    int value = std::stoi(qnn_vtcm_mb_pos->second);
  }
}
Status QNNExecutionProvider::OnRunStart(const RunOptions& run_options) {
  if (TryGetConfigEntry(config_options, kOrtRunOptionsConfigQnnPerfMode, htp_perf_mode)) {
  }
}
"""
EP_2X = """\
void Read() {
  GetSessionConfigEntryOrDefault(ort_api, session_options_, FormatEPConfigKey("vtcm_mb"), "0", vtcm_mb_str);
  GetSessionConfigEntryOrDefault(ort_api, session_options_, FormatEPConfigKey("op_affinity"), "", affinity);
  disable_cpu_ep_fallback_ = GetConfigOrDefault(kOrtSessionOptionsDisableCPUEPFallback, "0") == "1";
}
"""


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
        capture_output=True, text=True, check=True, timeout=60, stdin=subprocess.DEVNULL,
    )
    return done.stdout.strip()


def _commit(repo: Path, ep: str, message: str) -> str:
    for path, text in (
        ("include/onnxruntime/core/session/onnxruntime_session_options_config_keys.h", SESSION_H),
        ("include/onnxruntime/core/session/onnxruntime_run_options_config_keys.h", RUN_H),
        ("onnxruntime/core/providers/qnn/qnn_execution_provider.cc", ep),
    ):
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text, "utf-8")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", message)
    return _git(repo, "rev-parse", "HEAD")


def test_extracts_keys_lines_values_defaults_per_release(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    old = _commit(repo, EP_1X, "1.x")
    new = _commit(repo, EP_2X, "2.x")
    wheel = tmp_path / "onnxruntime_qnn-9.9.9-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("onnxruntime_qnn/libonnxruntime_providers_qnn.so", b"\x00\x01vtcm_mb\x00op_affinity\x00junk\x02")
    doc = options_source.build(
        repo / ".git", [("1.0.0", old), ("2.0.0", new)], [("9.9.9", wheel)], "test/repo", (("op_affinity", "a run"),)
    )
    jsonschema.validate(doc, json.loads((ROOT / "matrix" / "options.schema.json").read_text("utf-8")))
    rows = {(r["kind"], r["key"]): r for r in doc["options"]}
    mode = rows[("provider_option", "htp_performance_mode")]
    assert mode["releases"] == ["1.0.0"]
    assert mode["values"] == ["burst", "balanced", "default"]
    assert mode["read_by_qnn_ep"][0]["line"] == 13 and mode["read_by_qnn_ep"][0]["commit"] == old
    vtcm = rows[("provider_option", "vtcm_mb")]
    assert vtcm["releases"] == ["1.0.0", "2.0.0", "9.9.9"]  # the wheel's library holds the string
    assert vtcm["wrong_value"] == "truncated" and vtcm["default"] == "0"  # 1.x std::stoi; 2.x default
    fallback = rows[("session_config", "session.disable_cpu_ep_fallback")]
    assert fallback["default"] == "0" and fallback["wrong_value"] == "other_values_read_as_off"
    assert rows[("session_config", "ep.context_enable")]["defined"][0]["line"] == 2  # a split declaration
    assert rows[("run_config", "qnn.htp_perf_mode")]["read_by_qnn_ep"][0]["line"] == 21
    assert rows[("run_config", "qnn.rpc_control_latency")]["read_by_qnn_ep"] == []  # declared, never read
    affinity = rows[("provider_option", "op_affinity")]
    assert affinity["releases"] == ["2.0.0", "9.9.9"]
    assert affinity["source"]["line"] == 3  # the 2.x source reads it: its newest reading line
    assert vtcm["source"]["commit"] == new
    assert rows[("run_config", "qnn.rpc_control_latency")]["source"]["path"].endswith("run_options_config_keys.h")


def test_a_monolithic_1x_library_speaks_only_for_provider_options(tmp_path: Path) -> None:
    """onnxruntime-qnn 1.17-1.20 for Windows build the QNN EP into onnxruntime
    itself: its provider-option strings are the EP's, but the session-config
    strings beside them are onnxruntime's own and prove nothing about the EP.
    A library without the EP's name in it is not taken for it."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    new = _commit(repo, EP_2X, "2.x")
    old = _commit(repo, EP_1X, "1.x")
    monolithic = tmp_path / "onnxruntime_qnn-1.18.1-cp311-cp311-win_arm64.whl"
    strings = b"\x00QNNExecutionProvider\x00htp_performance_mode\x00session.disable_cpu_ep_fallback\x00"
    with zipfile.ZipFile(monolithic, "w") as archive:
        archive.writestr("onnxruntime/capi/onnxruntime.dll", b"MZ no EP here\x00vtcm_mb\x00")
        archive.writestr("onnxruntime/capi/onnxruntime_pybind11_state.pyd", b"MZ" + strings)
    found, library, is_monolithic = options_source.library_strings(monolithic)
    assert library == "onnxruntime_pybind11_state.pyd" and is_monolithic
    assert "htp_performance_mode" in found and "vtcm_mb" not in found
    doc = options_source.build(repo / ".git", [("2.0.0", new), ("1.0.0", old)], [("1.18.1", monolithic)], "test/repo")
    jsonschema.validate(doc, json.loads((ROOT / "matrix" / "options.schema.json").read_text("utf-8")))
    rows = {(r["kind"], r["key"]): r for r in doc["options"]}
    assert "1.18.1" in rows[("provider_option", "htp_performance_mode")]["releases"]
    assert "1.18.1" not in rows[("session_config", "session.disable_cpu_ep_fallback")]["releases"]
    [source] = [s for s in doc["provenance"]["sources"] if s["kind"] == "library-strings"]
    assert source == {
        "release": "1.18.1",
        "kind": "library-strings",
        "wheel": monolithic.name,
        "library": "onnxruntime_pybind11_state.pyd",
        "monolithic": True,
    }


def test_a_release_read_from_another_snapshot_and_one_not_read(tmp_path: Path) -> None:
    """``--read-from``: a release's commit read in a second git directory (a
    fork holding the upstream's commit) is cited as the upstream's; a release
    whose source cannot be read is recorded as such; a 1.x wheel with the EP
    linked into onnxruntime.dll has that library's strings read."""
    main, fork = tmp_path / "main", tmp_path / "fork"
    for repo in (main, fork):
        repo.mkdir()
        _git(repo, "init", "-q")
    new = _commit(main, EP_2X, "2.x")
    old = _commit(fork, EP_1X, "1.x")  # only the fork holds it
    wheel = tmp_path / "onnxruntime_qnn-1.5.0-cp311-cp311-win_amd64.whl"
    with zipfile.ZipFile(wheel, "w") as archive:  # no EP library: the EP is inside onnxruntime.dll
        archive.writestr(
            "onnxruntime/capi/onnxruntime.dll", b"MZ\x00QNNExecutionProvider\x00htp_performance_mode\x00"
        )
    doc = options_source.build(
        main / ".git",
        [("1.0.0", old), ("2.0.0", new)],
        [("1.5.0", wheel)],
        "test/repo",
        read_from={"1.0.0": options_source.ReadFrom(fork / ".git", "someone/fork", "upstream/repo")},
        uncovered=(("1.5.0", "its commit is in no snapshot at hand"),),
    )
    jsonschema.validate(doc, json.loads((ROOT / "matrix" / "options.schema.json").read_text("utf-8")))
    sources = doc["provenance"]["sources"]
    assert sources[0] == {
        "release": "1.0.0", "kind": "source", "repo": "upstream/repo", "rev": old, "commit": old, "read_from": "someone/fork"
    }
    assert {"release": "1.5.0", "kind": "none", "why": "its commit is in no snapshot at hand"} in sources
    assert {
        "release": "1.5.0",
        "kind": "library-strings",
        "wheel": wheel.name,
        "library": "onnxruntime.dll",
        "monolithic": True,
    } in sources
    rows = {(r["kind"], r["key"]): r for r in doc["options"]}
    mode = rows[("provider_option", "htp_performance_mode")]
    assert mode["releases"] == ["1.0.0", "1.5.0"]  # oldest first
    assert mode["read_by_qnn_ep"][0]["repo"] == "upstream/repo" and mode["read_by_qnn_ep"][0]["commit"] == old


def test_committed_1x_sources_are_the_commits_the_wheels_were_built_from() -> None:
    """Each 1.x release read from source cites the commit its wheel names (the
    short commit at the end of onnxruntime_providers_shared.dll's file version);
    each 1.x release of releases.json is either read or recorded as not read."""
    options = json.loads((ROOT / "matrix" / "options.json").read_text("utf-8"))
    releases = json.loads((ROOT / "matrix" / "releases.json").read_text("utf-8"))["releases"]
    built_from: dict[str, str] = {}
    for release in releases:
        for file in release["files"]:
            for library in file.get("libraries") or []:
                if library["kind"] == "ort_providers_shared" and library.get("file_version"):
                    built_from[release["version"]] = library["file_version"].rsplit(".", 1)[-1]
    sources = options["provenance"]["sources"]
    read = {s["release"]: s for s in sources if s["kind"] == "source" and s["release"] in built_from}
    assert {"1.17.3", "1.18.0", "1.18.1", "1.19.0", "1.20.0", "1.20.1", "1.23.1", "1.24.1"} <= set(read)
    for release, source in read.items():
        assert source["commit"].startswith(built_from[release]), release
    not_read = {s["release"] for s in sources if s["kind"] == "none"}
    assert not_read == {"1.20.2", "1.21.0", "1.21.1", "1.22.0", "1.22.2"}
    for version in built_from:  # 1.17 to 1.22 (the scope of issue 30): each read or said not to be
        if Version("1.17") <= Version(version) < Version("1.23") and not Version(version).is_devrelease:
            assert version in read or version in not_read, version
    from_source = {s["release"] for s in sources if s["kind"] == "source"}
    for row in options["options"]:  # every reading line cites a release whose source was read
        for cite in row["read_by_qnn_ep"]:
            assert cite["release"] in from_source
            assert cite["release"] not in not_read
