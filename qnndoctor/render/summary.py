"""Human summaries of each probe section, shared by the text and Markdown
renderers. Reads the report's JSON form only, so a saved ticket renders the
same as a live run."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

TITLES = {
    "interpreter": "Interpreter",
    "emulation": "Emulation",
    "installs": "onnxruntime installs",
    "qnn_bundled": "Bundled QNN libraries",
    "qnn_sdk": "System QNN SDK",
    "soc": "SoC / NPU",
    "paths": "Non-ASCII paths",
    "binaries": "Binary details (read by qnndoctor)",
}


@dataclass(frozen=True)
class Section:
    key: str
    title: str
    ok: bool
    lines: tuple[str, ...]
    # The worst severity of the findings whose evidence cites this probe
    # ("error", "warning" or None): a section must not read "ok" above a
    # warning about what it lists.
    flagged: str | None = None


def _interpreter(v: dict[str, Any]) -> list[str]:
    version = ".".join(str(p) for p in v.get("version_info", []))
    env = "venv" if v.get("in_venv") else ("conda" if v.get("conda") else "system/base")
    lines = [
        f"{v.get('implementation')} {version} {v.get('build_arch')} "
        f"({v.get('sysconfig_platform')}, {v.get('pointer_bits')}-bit"
        + (", free-threaded" if v.get("free_threaded") else "")
        + f"), {env}",
        f"executable: {v.get('executable')}",
        f"encodings: filesystem {v.get('filesystem_encoding')}, locale {v.get('locale_encoding')}"
        + (", UTF-8 mode" if v.get("utf8_mode") else "")
        + (
            f", ANSI code page {v['windows_code_pages']['ansi']}"
            if v.get("windows_code_pages")
            else ""
        ),
    ]
    return lines


def _emulation(v: dict[str, Any]) -> list[str]:
    if v.get("emulated") is True:
        return [
            f"EMULATED: {v.get('process_arch')} process on {v.get('native_arch')} ({v.get('emulator')})"
        ]
    if v.get("emulated") is False:
        return [f"native {v.get('process_arch')} process (machine: {v.get('native_arch')})"]
    return ["could not tell"]


def _installs(v: dict[str, Any]) -> list[str]:
    lines = []
    dists = v.get("distributions", [])
    if not dists:
        lines.append("no onnxruntime flavour installed")
    for d in dists:
        keys = d.get("key_files", [])
        states: dict[str, int] = {}
        for k in keys:
            states[k.get("status", "?")] = states.get(k.get("status", "?"), 0) + 1
        state_text = ", ".join(f"{n} {s}" for s, n in sorted(states.items()))
        era = f", {d['era']}" if d.get("era") else ""
        lines.append(
            f"{d.get('name')} {d.get('version')}{era} in {d.get('location_kind')} "
            f"[{d.get('installer') or 'no INSTALLER'}]; key files: {state_text or 'none'}"
        )
    for module, found in sorted((v.get("would_import") or {}).items()):
        if found.get("found"):
            owners = ", ".join(found.get("owners") or []) or "no owner"
            lines.append(f"import {module} -> {found.get('path')} ({owners})")
        else:
            lines.append(f"import {module} -> not found")
    if v.get("leftovers"):
        lines.append(f"leftovers: {len(v['leftovers'])}")
    return lines


def _bundled(v: dict[str, Any]) -> list[str]:
    lines = []
    for b in v.get("bundles", []):
        lines.append(
            f"{b.get('name')} {b.get('version')}: QNN {b.get('qnn_version') or '(version: see binary details)'}; "
            f"stubs {[f'v{s}' for s in b.get('stub_hexagon_versions', [])] or 'none'}, "
            f"skels {[f'v{s}' for s in b.get('skel_hexagon_versions', [])] or 'none'}"
        )
        for folder in b.get("folders", []):
            libs = folder.get("libraries", [])
            machines = sorted({str(lib.get("machine")) for lib in libs if lib.get("machine")})
            lines.append(
                f"  {folder.get('role')}: {len(libs)} libraries ({', '.join(machines) or '-'})"
            )
    return lines or ["no onnxruntime-qnn libraries"]


def _sdk(v: dict[str, Any]) -> list[str]:
    lines = []
    for root in v.get("roots", []):
        version = (root.get("version") or {}).get("sdk_yaml") or (root.get("version") or {}).get(
            "from_folder_name"
        )
        lines.append(f"{root.get('path')} ({root.get('origin')}): version {version or 'unknown'}")
    adsp = v.get("adsp_library_path") or {}
    if adsp.get("set"):
        lines.append(f"ADSP_LIBRARY_PATH={adsp.get('value')}")
    for variable in ("qnn_on_path", "qnn_on_ld_library_path"):
        for entry in v.get(variable, []) or []:
            lines.append(f"{variable[7:].upper()} has QNN libraries: {entry.get('path')}")
    return lines or ["no system QNN SDK found"]


def _soc(v: dict[str, Any]) -> list[str]:
    lines = []
    if v.get("processor_name"):
        lines.append(f"processor: {v['processor_name']}")
    for driver in v.get("npu_drivers", []) or []:
        lines.append(f"NPU driver: {driver.get('DriverDesc')} {driver.get('DriverVersion')}")
    socinfo = v.get("socinfo") or {}
    if any(socinfo.values()):
        lines.append("socinfo: " + ", ".join(f"{k}={val}" for k, val in socinfo.items() if val))
    if v.get("dsp_device_nodes"):
        lines.append(f"DSP device nodes: {', '.join(v['dsp_device_nodes'])}")
    for service in v.get("npu_runtime", []) or []:
        versions = ", ".join(
            f"{f.get('name')} {f.get('version') or '-'}"
            for f in service.get("files", []) or []
            if f.get("exists")
        )
        lines.append(
            f"NPU driver service {service.get('service')}: {versions or 'no runtime DLLs'}"
        )
    for gpu in v.get("gpu_drivers", []) or []:
        opencl = gpu.get("OpenCLDriverName")
        if isinstance(opencl, list):
            opencl = ", ".join(opencl)
        lines.append(
            f"GPU driver: {gpu.get('DriverDesc')} {gpu.get('DriverVersion')}, "
            + (f"OpenCL driver {opencl}" if opencl else "no OpenCL driver registered")
        )
    blocked = [
        n.get("path") for n in v.get("fastrpc_access", []) or [] if n.get("accessible") is False
    ]
    if blocked:
        lines.append(f"not accessible to this user: {', '.join(str(b) for b in blocked)}")
    if (v.get("wsl") or {}).get("wsl"):
        lines.append("running under WSL (no NPU access)")
    props = v.get("android_properties") or {}
    if any(props.values()):
        lines.append("Android: " + ", ".join(f"{k}={val}" for k, val in props.items() if val))
    for key, error in (v.get("errors") or {}).items():
        lines.append(f"could not check {key}: {error}")
    return lines or ["no Qualcomm SoC identity found"]


def _paths(v: dict[str, Any]) -> list[str]:
    flagged = v.get("non_ascii", [])
    lines = [f"{len(v.get('checked', []))} paths checked, {len(flagged)} with non-ASCII characters"]
    lines += [f"{f.get('label')}: {f.get('path')}" for f in flagged[:6]]
    return lines


def _binaries(v: dict[str, Any]) -> list[str]:
    pe = v.get("pe", {})
    if not pe:
        return ["no PE libraries to read"]
    lines = [f"{len(pe)} PE files read"]
    for dist, info in (v.get("qnn_versions") or {}).items():
        if info.get("agree"):
            lines.append(f"{dist}: bundled QNN {info.get('version')} (build {info.get('build')})")
        else:
            lines.append(
                f"{dist}: QNN DLL versions disagree: {', '.join(info.get('evidence', {}))}"
            )
    broken = [path for path, d in pe.items() if d.get("error")]
    if broken:
        lines.append(f"unreadable or truncated: {', '.join(broken[:4])}")
    return lines


_SUMMARIZERS: dict[str, Callable[[dict[str, Any]], list[str]]] = {
    "interpreter": _interpreter,
    "emulation": _emulation,
    "installs": _installs,
    "qnn_bundled": _bundled,
    "qnn_sdk": _sdk,
    "soc": _soc,
    "paths": _paths,
    "binaries": _binaries,
}


def _flagged(report: dict[str, Any]) -> dict[str, str]:
    """probe key -> the worst severity (error or warning) of the findings citing it."""
    worst: dict[str, str] = {}
    for finding in report.get("findings") or []:
        severity = finding.get("severity")
        if severity not in ("error", "warning"):
            continue
        for evidence in finding.get("evidence") or []:
            key = str(evidence.get("fact", "")).split(".", 1)[0].split("[", 1)[0]
            if worst.get(key) != "error":
                worst[key] = severity
    return worst


def sections(report: dict[str, Any]) -> list[Section]:
    result = []
    flagged = _flagged(report)
    for key, title in TITLES.items():
        probe = (report.get("facts") or {}).get(key)
        if probe is None:
            continue
        if probe.get("status") != "ok":
            error = probe.get("error") or {}
            text = f"could not check: {error.get('type', 'error')}: {error.get('message', '')}"
            result.append(Section(key, title, False, (text,)))
            continue
        try:
            lines = _SUMMARIZERS[key](probe.get("values") or {})
        except Exception as exc:
            lines = [f"(could not summarise: {type(exc).__name__}: {exc})"]
        result.append(Section(key, title, True, tuple(lines), flagged.get(key)))
    if report.get("inventory"):
        result.append(Section("inventory", "QNN EP sources", True, tuple(inventory_lines(report))))
    return result


def inventory_lines(report: dict[str, Any]) -> list[str]:
    """One line per QNN EP source: what it is, and whether it is the one used."""
    lines = []
    for item in report.get("inventory") or []:
        kind = item.get("kind")
        if kind == "python-package":
            state = (
                "loaded by this interpreter"
                if item.get("loaded_by_this_interpreter")
                else f"shadowed by {', '.join(item.get('shadowed_by') or []) or 'another copy'}"
            )
            qnn = f", QNN {item['qnn_version']}" if item.get("qnn_version") else ""
            lines.append(f"{item.get('name')} {item.get('version')}{qnn}: {state}")
        elif kind == "qnn-sdk":
            via = ", ".join(item.get("on_loader_path") or [])
            lines.append(
                f"QNN SDK {item.get('version') or '?'} at {item.get('path')}: "
                + (f"on {via}, can shadow the bundled QNN" if via else "not on the loader path")
            )
        else:
            lines.append(f"{kind}: {item.get('path')}")
    return lines


def counts(report: dict[str, Any]) -> dict[str, int]:
    result = {"error": 0, "warning": 0, "info": 0}
    for finding in report.get("findings", []):
        result[finding["severity"]] = result.get(finding["severity"], 0) + 1
    return result


def smoke_title(report: dict[str, Any]) -> str:
    """ "HTP smoke session", or the backend the session really used ("GPU ...")."""
    backend = (report.get("smoke") or {}).get("backend")
    return f"{str(backend).upper()} smoke session" if backend else "Smoke session"


def smoke_line(report: dict[str, Any]) -> str:
    smoke = report.get("smoke")
    if smoke is None:
        return "not run"
    text = f"{smoke.get('status')} ({smoke.get('backend')} backend"
    if smoke.get("duration_s") is not None:
        text += f", {smoke['duration_s']} s"
    text += ")"
    child = smoke.get("child") or {}
    if smoke.get("status") == "passed":
        text += f": {child.get('path')}, output matched, all nodes on QNN"
    if smoke.get("reason"):
        text += f": {smoke['reason']}"
    return text


def recommendation_lines(report: dict[str, Any]) -> list[str]:
    """The resolver's answer in a few lines (details: `qnndoctor recommend`)."""
    rec = report.get("recommendation")
    if not rec:
        return ["not available"]
    status = rec.get("status")
    emulation = rec.get("emulation") or {}
    if emulation.get("native_arm64", {}).get("commands"):
        native = emulation["native_arm64"]
        lines = [
            f"emulation: {emulation.get('verdict')}",
            f"native ARM64 Python {native.get('python')} with onnxruntime-qnn {native.get('version')}:",
        ]
        lines += [f"  {c}" for c in rec.get("commands", [])]
        if emulation.get("this_interpreter_commands"):
            lines.append("or, in this emulated x64 Python:")
            lines += [f"  {c}" for c in emulation["this_interpreter_commands"]]
        return lines
    if status == "ok":
        lines = [
            f"onnxruntime-qnn {rec.get('version')} ({rec.get('era')}, bundled QNN "
            f"{rec.get('bundled_qnn') or 'unknown'})"
            + (": already installed" if rec.get("already_installed") else "")
        ]
        lines += [f"  {c}" for c in rec.get("commands", [])]
        for verdict in rec.get("ruled_out", [])[:5]:
            first = (verdict.get("reasons") or [{}])[0]
            lines.append(f"  not {verdict.get('version')}: {first.get('detail')}")
        if len(rec.get("ruled_out", [])) > 5:
            lines.append(f"  ... {len(rec['ruled_out']) - 5} more newer releases ruled out")
        lines += [
            f"  better: {a['change']} -> onnxruntime-qnn {a['version']}"
            for a in rec.get("alternatives", [])
        ]
        lines += [f"  measured: {e['text']}" for e in rec.get("local_evidence", [])[:5]]
        return lines
    if status == "nothing-fits":
        lines = ["no onnxruntime-qnn release works for this interpreter"]
        lines += [
            f"  instead: {a['change']} -> onnxruntime-qnn {a['version']}"
            for a in rec.get("alternatives", [])
        ]
        return lines
    return [f"{status}: {rec.get('reason') or '; '.join(rec.get('notes', []))}"]
