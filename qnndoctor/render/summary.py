"""Human summaries of each probe section, shared by the text and Markdown
renderers. Reads the report's JSON form only, through its typed, defensive
view (report/view.py), so a saved ticket renders the same as a live run and
a corrupt one renders its defaults, never a traceback."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..facts.reading import Fields
from ..report.view import Recommendation, ReportView, view

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


def _interpreter(v: Fields) -> list[str]:
    version = ".".join(str(p) for p in v.elements("version_info"))
    env = "venv" if v.value("in_venv") else ("conda" if v.value("conda") else "system/base")
    lines = [
        f"{v.value('implementation')} {version} {v.value('build_arch')} "
        f"({v.value('sysconfig_platform')}, {v.value('pointer_bits')}-bit"
        + (", free-threaded" if v.value("free_threaded") else "")
        + f"), {env}",
        f"executable: {v.value('executable')}",
        f"encodings: filesystem {v.value('filesystem_encoding')}, "
        f"locale {v.value('locale_encoding')}"
        + (", UTF-8 mode" if v.value("utf8_mode") else "")
        + (
            f", ANSI code page {v.mapping('windows_code_pages').value('ansi')}"
            if v.value("windows_code_pages")
            else ""
        ),
    ]
    return lines


def _emulation(v: Fields) -> list[str]:
    process, native = v.value("process_arch"), v.value("native_arch")
    if v.value("emulated") is True:
        return [f"EMULATED: {process} process on {native} ({v.value('emulator')})"]
    if v.value("emulated") is False:
        return [f"native {process} process (machine: {native})"]
    return ["could not tell"]


def _distribution(d: Fields) -> str:
    states: dict[str, int] = {}
    for k in d.records("key_files"):
        status = str(k.value("status", "?"))
        states[status] = states.get(status, 0) + 1
    state_text = ", ".join(f"{n} {s}" for s, n in sorted(states.items()))
    era = f", {d.value('era')}" if d.value("era") else ""
    return (
        f"{d.value('name')} {d.value('version')}{era} in {d.value('location_kind')} "
        f"[{d.value('installer') or 'no INSTALLER'}]; key files: {state_text or 'none'}"
    )


def _installs(v: Fields) -> list[str]:
    dists = v.records("distributions")
    lines = [] if dists else ["no onnxruntime flavour installed"]
    lines += [_distribution(d) for d in dists]
    for module, found in sorted(v.mapping("would_import").children(), key=lambda kv: kv[0]):
        if found.value("found"):
            owners = ", ".join(found.strings("owners")) or "no owner"
            lines.append(f"import {module} -> {found.value('path')} ({owners})")
        else:
            lines.append(f"import {module} -> not found")
    if v.value("leftovers"):
        lines.append(f"leftovers: {len(v.elements('leftovers'))}")
    return lines


def _hexagon(versions: tuple[Any, ...]) -> list[str] | str:
    return [f"v{s}" for s in versions] or "none"


def _bundled(v: Fields) -> list[str]:
    lines = []
    for b in v.records("bundles"):
        lines.append(
            f"{b.value('name')} {b.value('version')}: "
            f"QNN {b.value('qnn_version') or '(version: see binary details)'}; "
            f"stubs {_hexagon(b.elements('stub_hexagon_versions'))}, "
            f"skels {_hexagon(b.elements('skel_hexagon_versions'))}"
        )
        for folder in b.records("folders"):
            libs = folder.records("libraries")
            machines = sorted({str(lib.value("machine")) for lib in libs if lib.value("machine")})
            lines.append(
                f"  {folder.value('role')}: {len(libs)} libraries ({', '.join(machines) or '-'})"
            )
    return lines or ["no onnxruntime-qnn libraries"]


def _sdk(v: Fields) -> list[str]:
    lines = []
    for root in v.records("roots"):
        found = root.mapping("version")
        version = found.value("sdk_yaml") or found.value("from_folder_name")
        lines.append(
            f"{root.value('path')} ({root.value('origin')}): version {version or 'unknown'}"
        )
    adsp = v.mapping("adsp_library_path")
    if adsp.value("set"):
        lines.append(f"ADSP_LIBRARY_PATH={adsp.value('value')}")
    for variable in ("qnn_on_path", "qnn_on_ld_library_path"):
        for entry in v.records(variable):
            lines.append(f"{variable[7:].upper()} has QNN libraries: {entry.value('path')}")
    return lines or ["no system QNN SDK found"]


def _set_values(label: str, values: Fields) -> list[str]:
    """``label: k=v, ...`` for the keys of ``values`` that are set; [] for none."""
    if not any(value for _key, value in values.items()):
        return []
    return [f"{label}: " + ", ".join(f"{k}={val}" for k, val in values.items() if val)]


def _npu_runtime(service: Fields) -> str:
    versions = ", ".join(
        f"{f.value('name')} {f.value('version') or '-'}"
        for f in service.records("files")
        if f.value("exists")
    )
    return f"NPU driver service {service.value('service')}: {versions or 'no runtime DLLs'}"


def _gpu(gpu: Fields) -> str:
    opencl = gpu.value("OpenCLDriverName")
    if isinstance(opencl, list):
        opencl = ", ".join(str(name) for name in opencl)
    return f"GPU driver: {gpu.value('DriverDesc')} {gpu.value('DriverVersion')}, " + (
        f"OpenCL driver {opencl}" if opencl else "no OpenCL driver registered"
    )


def _soc(v: Fields) -> list[str]:
    lines = []
    if v.value("processor_name"):
        lines.append(f"processor: {v.value('processor_name')}")
    for driver in v.records("npu_drivers"):
        lines.append(f"NPU driver: {driver.value('DriverDesc')} {driver.value('DriverVersion')}")
    lines += _set_values("socinfo", v.mapping("socinfo"))
    if v.value("dsp_device_nodes"):
        nodes = ", ".join(str(node) for node in v.elements("dsp_device_nodes"))
        lines.append(f"DSP device nodes: {nodes}")
    lines += [_npu_runtime(service) for service in v.records("npu_runtime")]
    lines += [_gpu(gpu) for gpu in v.records("gpu_drivers")]
    blocked = [
        n.value("path") for n in v.records("fastrpc_access") if n.value("accessible") is False
    ]
    if blocked:
        lines.append(f"not accessible to this user: {', '.join(str(b) for b in blocked)}")
    if v.mapping("wsl").value("wsl"):
        lines.append("running under WSL (no NPU access)")
    lines += _set_values("Android", v.mapping("android_properties"))
    for key, error in v.mapping("errors").items():
        lines.append(f"could not check {key}: {error}")
    return lines or ["no Qualcomm SoC identity found"]


def _paths(v: Fields) -> list[str]:
    flagged = v.elements("non_ascii")
    lines = [
        f"{len(v.elements('checked'))} paths checked, {len(flagged)} with non-ASCII characters"
    ]
    lines += [f"{f.value('label')}: {f.value('path')}" for f in v.records("non_ascii")[:6]]
    return lines


def _binaries(v: Fields) -> list[str]:
    pe = v.mapping("pe")
    if not pe:
        return ["no PE libraries to read"]
    lines = [f"{len(pe)} PE files read"]
    for dist, info in v.mapping("qnn_versions").children():
        if info.value("agree"):
            lines.append(
                f"{dist}: bundled QNN {info.value('version')} (build {info.value('build')})"
            )
        else:
            lines.append(
                f"{dist}: QNN DLL versions disagree: {', '.join(info.mapping('evidence').keys())}"
            )
    broken = [path for path, d in pe.children() if d.value("error")]
    if broken:
        lines.append(f"unreadable or truncated: {', '.join(broken[:4])}")
    return lines


_SUMMARIZERS: dict[str, Callable[[Fields], list[str]]] = {
    "interpreter": _interpreter,
    "emulation": _emulation,
    "installs": _installs,
    "qnn_bundled": _bundled,
    "qnn_sdk": _sdk,
    "soc": _soc,
    "paths": _paths,
    "binaries": _binaries,
}


# A report document, or its view when the caller has made it already (the
# renderers): the view is built once per rendering, not once per part.
Report = Mapping[str, Any] | ReportView


def _viewed(report: Report) -> ReportView:
    return report if isinstance(report, ReportView) else view(report)


def _flagged(doc: ReportView) -> dict[str, str]:
    """probe key -> the worst severity (error or warning) of the findings citing it."""
    worst: dict[str, str] = {}
    for finding in doc.findings:
        if finding.severity not in ("error", "warning"):
            continue
        for evidence in finding.evidence:
            key = evidence.fact.split(".", 1)[0].split("[", 1)[0]
            if worst.get(key) != "error":
                worst[key] = finding.severity
    return worst


def sections(report: Report) -> list[Section]:
    doc = _viewed(report)
    result = []
    flagged = _flagged(doc)
    for key, title in TITLES.items():
        probe = doc.facts.get(key)
        if probe is None:
            continue
        if probe.status != "ok":
            kind, message = (
                (probe.error.type, probe.error.message) if probe.error else ("error", "")
            )
            text = f"could not check: {kind}: {message}"
            result.append(Section(key, title, False, (text,)))
            continue
        lines = _SUMMARIZERS[key](probe.values)
        result.append(Section(key, title, True, tuple(lines), flagged.get(key)))
    if doc.inventory:
        result.append(Section("inventory", "QNN EP sources", True, tuple(inventory_lines(doc))))
    return result


def inventory_lines(report: Report) -> list[str]:
    """One line per QNN EP source: what it is, and whether it is the one used."""
    lines = []
    for item in _viewed(report).inventory:
        if item.kind == "python-package":
            state = (
                "loaded by this interpreter"
                if item.loaded_by_this_interpreter
                else f"shadowed by {', '.join(item.shadowed_by) or 'another copy'}"
            )
            qnn = f", QNN {item.qnn_version}" if item.qnn_version else ""
            lines.append(f"{item.name} {item.version}{qnn}: {state}")
        elif item.kind == "qnn-sdk":
            via = ", ".join(item.on_loader_path)
            lines.append(
                f"QNN SDK {item.version or '?'} at {item.path}: "
                + (f"on {via}, can shadow the bundled QNN" if via else "not on the loader path")
            )
        else:
            lines.append(f"{item.kind}: {item.path}")
    return lines


def counts(report: Report) -> dict[str, int]:
    """Findings per severity (a finding of no or an unknown severity counts under its own key)."""
    result = {"error": 0, "warning": 0, "info": 0}
    for finding in _viewed(report).findings:
        result[finding.severity] = result.get(finding.severity, 0) + 1
    return result


def smoke_title(report: Report) -> str:
    """ "HTP smoke session", or the backend the session really used ("GPU ...")."""
    smoke = _viewed(report).smoke
    backend = smoke.backend if smoke else None
    return f"{backend.upper()} smoke session" if backend else "Smoke session"


def smoke_line(report: Report) -> str:
    smoke = _viewed(report).smoke
    if smoke is None:
        return "not run"
    text = f"{smoke.status} ({smoke.backend} backend"
    if smoke.duration_s is not None:
        text += f", {smoke.duration_s} s"
    text += ")"
    if smoke.status == "passed":
        text += f": {smoke.child.value('path')}, output matched, all nodes on QNN"
    if smoke.reason:
        text += f": {smoke.reason}"
    return text


def _emulated_lines(rec: Recommendation) -> list[str]:
    emulation = rec.emulation
    native = emulation.mapping("native_arm64")
    lines = [
        f"emulation: {emulation.value('verdict')}",
        f"native ARM64 Python {native.value('python')} "
        f"with onnxruntime-qnn {native.value('version')}:",
    ]
    lines += [f"  {c}" for c in rec.commands]
    if emulation.value("this_interpreter_commands"):
        lines.append("or, in this emulated x64 Python:")
        lines += [f"  {c}" for c in emulation.elements("this_interpreter_commands")]
    return lines


def _ok_lines(rec: Recommendation) -> list[str]:
    lines = [
        f"onnxruntime-qnn {rec.version} ({rec.era}, bundled QNN "
        f"{rec.bundled_qnn or 'unknown'})"
        + (": already installed" if rec.already_installed else "")
    ]
    lines += [f"  {c}" for c in rec.commands]
    for verdict in rec.ruled_out[:5]:
        detail = verdict.reasons[0].detail if verdict.reasons else None
        lines.append(f"  not {verdict.version}: {detail}")
    if len(rec.ruled_out) > 5:
        lines.append(f"  ... {len(rec.ruled_out) - 5} more newer releases ruled out")
    lines += [f"  better: {a.change} -> onnxruntime-qnn {a.version}" for a in rec.alternatives]
    lines += [f"  measured: {e.text}" for e in rec.local_evidence[:5]]
    return lines


def recommendation_lines(report: Report) -> list[str]:
    """The resolver's answer in a few lines (details: `qnndoctor recommend`)."""
    rec = _viewed(report).recommendation
    if rec is None:
        return ["not available"]
    if rec.emulation.mapping("native_arm64").value("commands"):
        return _emulated_lines(rec)
    if rec.status == "ok":
        return _ok_lines(rec)
    if rec.status == "nothing-fits":
        lines = ["no onnxruntime-qnn release works for this interpreter"]
        lines += [f"  instead: {a.change} -> onnxruntime-qnn {a.version}" for a in rec.alternatives]
        return lines
    return [f"{rec.status}: {rec.reason or '; '.join(rec.notes)}"]
