"""Rules about the QNN libraries: bundled ones, system SDK, loader paths."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..facts.libkinds import PROCESS_LOADED
from ..facts.probed import Facts, bundle_libraries, bundles, pe_details
from ..facts.socs import identify as identify_soc
from ..matrixdata import Matrix
from ._common import (
    label,
    native_arch,
    process_arch,
    qnn_dists,
    quote,
    reinstall_fix,
    target_is_windows,
)
from .declare import rule
from .findings import Evidence, Finding, FindingKind, Fix, Severity, make

LIBS_WRONG_ARCH = FindingKind(
    "qnn-libs-wrong-arch", Severity.ERROR, "Bundled QNN libraries cannot load into this process"
)
HTP_MISSING = FindingKind(
    "qnn-htp-backend-missing", Severity.ERROR, "The QNN HTP backend library is missing"
)
CORRUPT = FindingKind(
    "qnn-library-corrupt", Severity.ERROR, "A bundled QNN library is truncated or corrupt"
)
STUB_MISSING = FindingKind(
    "qnn-stub-missing-for-htp-arch",
    Severity.ERROR,
    "No HTP stub for this SoC's Hexagon architecture",
)
ADSP_COLON = FindingKind(
    "adsp-library-path-colon",
    Severity.ERROR,
    "ADSP_LIBRARY_PATH is ':'-separated; the DSP loader splits on ';'",
)
ADSP_MISSING = FindingKind(
    "adsp-library-path-bad-entry",
    Severity.WARNING,
    "ADSP_LIBRARY_PATH names folders that do not exist",
)
SYSTEM_QNN = FindingKind(
    "system-qnn-on-loader-path",
    Severity.WARNING,
    "QNN libraries of a system SDK are on the library search path",
)
SIMULATOR = FindingKind(
    "htp-simulator-host",
    Severity.INFO,
    "onnxruntime-qnn 2.x with its HTP simulator on x86-64 Linux",
)

# Which PE machine types a process of a given architecture can load, on
# Windows on ARM (x64 processes there run ARM64EC/ARM64X code natively).
_LOADABLE_ON_ARM64 = {"arm64": {"ARM64", "ARM64X"}, "x86_64": {"AMD64", "ARM64EC", "ARM64X"}}
_LOADABLE_ON_X64 = {"x86_64": {"AMD64"}}
_ELF_ARCH = {"x86_64": "x86_64", "aarch64": "arm64"}


@rule(needs=("qnn_bundled", "emulation"), emits=(LIBS_WRONG_ARCH,))
def library_architecture(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    process, native = process_arch(facts), native_arch(facts)
    if not process:
        return
    bad: list[dict[str, Any]] = []
    for lib in (lib for bundle in bundles(facts) for lib in bundle_libraries(bundle)):
        if lib.get("kind") not in PROCESS_LOADED:
            continue
        if lib.get("format") == "PE":
            machine = pe_details(facts, lib).get("machine") or lib.get("machine")
            table = _LOADABLE_ON_ARM64 if native == "arm64" else _LOADABLE_ON_X64
            allowed = table.get(process)
            if machine and allowed is not None and machine not in allowed:
                bad.append({"name": lib.get("name"), "machine": machine, "path": lib.get("path")})
        elif lib.get("format") == "ELF":
            arch = _ELF_ARCH.get(str(lib.get("machine")), lib.get("arch"))
            if arch and arch != process:
                bad.append(
                    {
                        "name": lib.get("name"),
                        "machine": lib.get("machine"),
                        "path": lib.get("path"),
                    }
                )
    if not bad:
        return
    machines = sorted({str(b["machine"]) for b in bad})
    yield make(
        LIBS_WRONG_ARCH,
        f"This is an {process} process on an {native or 'unknown'} machine, but "
        f"{', '.join(str(b['name']) for b in bad[:6])} {'is' if len(bad) == 1 else 'are'} "
        f"{'/'.join(machines)} code, which such a process cannot load. Loading fails with "
        "'%1 is not a valid Win32 application' (error 193) or the process dies. Usually the "
        "wheel for another platform was installed into this environment, or files were copied "
        "from another machine.",
        (
            Evidence("qnn_bundled.bundles[*].libraries", bad[:12]),
            Evidence("emulation.process_arch", process),
        ),
        Fix(
            "Reinstall onnxruntime-qnn with this interpreter so pip picks the wheel for its platform.",
            pip_runs=(("install", "--force-reinstall", "--no-deps", "onnxruntime-qnn"),),
        ),
    )


@rule(needs=("qnn_bundled",), emits=(HTP_MISSING, CORRUPT))
def htp_backend_present(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    for bundle in bundles(facts):
        libs = list(bundle_libraries(bundle))
        reinstall = reinstall_fix(facts, bundle)
        if not any(lib.get("kind") == "backend_htp" for lib in libs):
            yield make(
                HTP_MISSING,
                f"{bundle.get('name')} {bundle.get('version')} has no QnnHtp library in "
                f"{', '.join(str(f.get('path')) for f in bundle.get('folders', []))}: the HTP "
                "(NPU) backend cannot be loaded. Files were deleted, quarantined by antivirus, "
                "or overwritten by another flavour's install.",
                (
                    Evidence(
                        f"qnn_bundled.bundles[{bundle.get('dist')}].folders",
                        [
                            {
                                "path": f.get("path"),
                                "libraries": [lib.get("name") for lib in f.get("libraries", [])],
                            }
                            for f in bundle.get("folders", [])
                        ],
                    ),
                ),
                reinstall,
            )
        broken = []
        for lib in libs:
            pe_error = pe_details(facts, lib).get("error")
            if lib.get("error") or pe_error or lib.get("size") == 0:
                broken.append(
                    {
                        "name": lib.get("name"),
                        "size": lib.get("size"),
                        "error": lib.get("error") or pe_error or "empty file",
                    }
                )
        if broken:
            yield make(
                CORRUPT,
                f"{bundle.get('name')} {bundle.get('version')}: "
                + "; ".join(f"{b['name']} ({b['error']})" for b in broken[:6])
                + ". A truncated library fails to load or crashes the process without a message.",
                (Evidence(f"qnn_bundled.bundles[{bundle.get('dist')}].libraries", broken[:12]),),
                reinstall,
            )


@rule(needs=("qnn_bundled", "soc"), emits=(STUB_MISSING,))
def stub_for_htp_arch(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    match = identify_soc(facts, matrix)
    if match is None or match.soc.htp_arch is None:
        return
    arch = match.soc.htp_arch
    for bundle in bundles(facts):
        stubs = bundle.get("stub_hexagon_versions") or []
        if not stubs or arch in stubs:
            continue  # no stubs at all: a host-only build (simulator), not this rule's case
        yield make(
            STUB_MISSING,
            f"This SoC is {match.soc.part} ({', '.join(match.soc.marketing_names) or 'Snapdragon'}), "
            f"Hexagon v{arch}. {label(bundle)} ships HTP stubs only for "
            f"v{', v'.join(str(s) for s in stubs)}, so its HTP backend cannot talk to this NPU: "
            "session creation fails (often 'Failed to create device' or a skel load error).",
            (
                Evidence(match.fact, match.value),
                Evidence("matrix.socs.htp_arch", arch),
                Evidence(f"qnn_bundled.bundles[{bundle.get('dist')}].stub_hexagon_versions", stubs),
            ),
            Fix(
                "Install an onnxruntime-qnn release that bundles a stub for this Hexagon version (newer releases add newer SoCs)."
            ),
        )


@rule(needs=("qnn_sdk",), emits=(ADSP_COLON, ADSP_MISSING))
def adsp_library_path(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    adsp = facts.value("qnn_sdk", "adsp_library_path") or {}
    if not adsp.get("set"):
        return
    fixed = ";".join(part for part in str(adsp.get("value", "")).split(":") if part)
    if adsp.get("colon_separated"):
        yield make(
            ADSP_COLON,
            f"ADSP_LIBRARY_PATH={adsp.get('value')} uses ':' between folders. The Hexagon DSP "
            "loader splits this variable on ';' on every OS (Linux and Android included), so "
            "it sees one folder that does not exist and cannot find the HTP skel library.",
            (Evidence("qnn_sdk.adsp_library_path.value", adsp.get("value")),),
            Fix(
                "Separate the folders with ';'.",
                (f'export ADSP_LIBRARY_PATH="{fixed}"',),
            )
            if not target_is_windows(facts)
            else Fix(
                # No one command sets a variable in both PowerShell and cmd.
                f"Separate the folders with ';': set ADSP_LIBRARY_PATH to {fixed} (System "
                "Properties > Environment Variables, then a new terminal), or in the app "
                f"before onnxruntime-qnn loads: os.environ['ADSP_LIBRARY_PATH'] = r'{fixed}'."
            ),
        )
        return
    missing = [e["path"] for e in adsp.get("entries", []) if not e.get("exists")]
    if missing:
        yield make(
            ADSP_MISSING,
            f"ADSP_LIBRARY_PATH lists folders that do not exist: {', '.join(missing)}.",
            (Evidence("qnn_sdk.adsp_library_path.entries", adsp.get("entries")),),
            Fix(
                f"Point ADSP_LIBRARY_PATH at the folder holding {_skel_name(facts, matrix)}, "
                "';'-separated, or unset it to use the skels bundled with onnxruntime-qnn."
            ),
        )


def _skel_name(facts: Facts, matrix: Matrix) -> str:
    """The HTP skel this chip loads (libQnnHtpV73Skel.so), or words when the
    chip is not known."""
    match = identify_soc(facts, matrix)
    if match is not None and match.soc.htp_arch is not None:
        return f"libQnnHtpV{match.soc.htp_arch}Skel.so (this chip is Hexagon v{match.soc.htp_arch})"
    return "the HTP skel for this chip's Hexagon version (libQnnHtpV73Skel.so on a v73 chip)"


@rule(needs=("qnn_sdk", "installs"), emits=(SYSTEM_QNN,))
def system_qnn_on_loader_path(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    if not qnn_dists(facts):
        return
    entries = []
    for variable in ("ld_library_path", "path"):
        for entry in facts.value("qnn_sdk", f"qnn_on_{variable}", []) or []:
            entries.append({"variable": variable.upper(), **entry})
    if not entries:
        return
    versions = [
        (root.get("version") or {}).get("sdk_yaml")
        or (root.get("version") or {}).get("from_folder_name")
        for root in facts.value("qnn_sdk", "roots", []) or []
    ]
    yield make(
        SYSTEM_QNN,
        "QNN libraries from outside onnxruntime-qnn are on the library search path: "
        + "; ".join(
            f"{e['variable']}: {e['path']} ({', '.join(e['qnn_libraries'][:4])})"
            for e in entries[:4]
        )
        + ". onnxruntime-qnn must use the QNN libraries it was built with; if the loader picks "
        "these up instead (a different QNN version), you get 'Unable to find a valid interface' "
        "or a crash.",
        (
            Evidence("qnn_sdk.qnn_on_path", entries[:8]),
            Evidence("qnn_sdk.roots[*].version", versions),
        ),
        _shadowing_fix(facts, entries),
    )


def _shadowing_fix(facts: Facts, entries: list[dict[str, Any]]) -> Fix:
    """Take the SDK's folders off the loader's search path for this shell.

    On Windows no single command sets a variable in both PowerShell and cmd,
    so the folders are named instead of a command in one shell's syntax."""
    folders = list(dict.fromkeys(str(e["path"]) for e in entries))
    if target_is_windows(facts):
        return Fix(
            "Remove these folders from PATH (System Properties > Environment Variables, then "
            "open a new terminal) for the program that runs onnxruntime-qnn: "
            + "; ".join(folders)
            + ". The QNN SDK itself can stay installed."
        )
    commands = []
    for variable in dict.fromkeys(str(e["variable"]) for e in entries):
        drop = [str(e["path"]) for e in entries if e["variable"] == variable]
        filters = " ".join(f"-e {quote(facts, folder)}" for folder in drop)
        commands.append(
            f'export {variable}="$(printf %s "${variable}" | tr : "\\n" '
            f'| grep -vxF {filters} | paste -sd: -)"'
        )
    return Fix(
        "Take the SDK's library folders off the search path in the shell that runs "
        "onnxruntime-qnn (the QNN SDK itself can stay installed):",
        tuple(commands),
    )


@rule(needs=("qnn_bundled", "interpreter", "emulation"), emits=(SIMULATOR,))
def htp_simulator(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    if facts.value("interpreter", "sys_platform") != "linux" or process_arch(facts) != "x86_64":
        return
    for bundle in bundles(facts):
        has_htp = any(
            lib.get("kind") == "backend_htp" and lib.get("format") == "ELF"
            for lib in bundle_libraries(bundle)
        )
        if bundle.get("era") == "plugin-2.x" and has_htp:
            yield make(
                SIMULATOR,
                f"{bundle.get('name')} {bundle.get('version')} (QNN {bundle.get('qnn_version') or 'unknown'}) "
                "is installed for x86-64 Linux. Its libQnnHtp.so runs the HTP backend in a "
                "simulator: valid for preparing and testing models; performance numbers from "
                "here say nothing about a real NPU.",
                (
                    Evidence(
                        f"qnn_bundled.bundles[{bundle.get('dist')}].qnn_version",
                        bundle.get("qnn_version"),
                    ),
                    Evidence("emulation.process_arch", process_arch(facts)),
                ),
            )
