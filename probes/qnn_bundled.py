"""Probe 6: the QNN libraries that ship inside onnxruntime-qnn.

1.x keeps them in ``onnxruntime/capi/``; 2.x in ``onnxruntime_qnn/`` and
possibly ``onnxruntime_qnn/libs/<arch>/``. Only headers are read here (binary
format and machine); PE version resources are read on qnndoctor's side.
"""

from __future__ import annotations

import os

from ._util import LazyPattern, binary_format, normalize_arch, open_regular, show
from .base import Context, ProbeOutput

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: the target's startup skips `typing`
    from typing import Any, Callable, Dict, List, Optional, Tuple

NAME = "qnn_bundled"

_LIB_SUFFIX = LazyPattern(r"\.(dll|so(\.\d+)*|dylib|cat)$", ignore_case=True)

# String tests on the lower-cased file name instead of 16 regular expressions
# (each compile costs the probe program's start-up): "^" is startswith, "$"
# also matches before one final newline, "\d+" is a run of isdecimal().


def _digits_between(text: str, head: str, tail: str) -> bool:
    r"""``re.search(head + r"\d+" + tail, text)``."""
    start = text.find(head)
    while start != -1:
        end = digits = start + len(head)
        while digits < len(text) and text[digits].isdecimal():
            digits += 1
        if digits > end and text.startswith(tail, digits):
            return True
        start = text.find(head, start + 1)
    return False


def _at_end(text: str, suffix: str) -> bool:
    return text.endswith(suffix) or text.endswith(suffix + "\n")


_ORT_RUNTIME_STARTS = ("onnxruntime.", "onnxruntime_", "libonnxruntime.", "libonnxruntime_")

# (test on the lower-cased file name, kind). First match wins.
_KINDS: List[Tuple[Callable[[str], bool], str]] = [
    (lambda n: _digits_between(n, "qnnhtpv", "stub"), "htp_stub"),
    (lambda n: _digits_between(n, "qnnhtpv", "skel"), "htp_skel"),
    (lambda n: _at_end(n, ".cat"), "signed_catalog"),
    (
        lambda n: "qnnhtpprepare" in n or n.startswith(("htpprepare", "libhtpprepare")),
        "htp_prepare",
    ),
    (lambda n: "qnnhtpnetrun" in n, "htp_netrun_extensions"),
    (lambda n: "qnnhtp." in n, "backend_htp"),
    (lambda n: "qnnsystem" in n, "system"),
    (lambda n: "qnncpu" in n, "backend_cpu"),
    (lambda n: "qnngpu" in n, "backend_gpu"),
    (lambda n: "qnnsaver" in n, "backend_saver"),
    (lambda n: "qnnir" in n, "backend_ir"),
    (lambda n: "genie" in n, "genie"),
    (lambda n: "onnxruntime_providers_qnn" in n, "ort_provider_qnn"),
    (lambda n: "onnxruntime_providers_shared" in n, "ort_providers_shared"),
    (lambda n: n.startswith(_ORT_RUNTIME_STARTS), "ort_runtime"),
    (lambda n: "qnn" in n, "qnn_other"),
]


def has_library_suffix(lower: str) -> bool:
    """``_LIB_SUFFIX.search(lower)``; non-ASCII names are left to the regex
    (its case folding is Unicode's: "\u017f" matches "s")."""
    if not lower.isascii():
        return _LIB_SUFFIX.search(lower) is not None
    text = lower[:-1] if lower.endswith("\n") else lower
    if text.endswith((".dll", ".dylib", ".cat")):
        return True
    start = text.find(".so")
    while start != -1:
        rest = text[start + 3 :]
        if not rest or (rest[0] == "." and all(p.isdecimal() for p in rest[1:].split("."))):
            return True
        start = text.find(".so", start + 1)
    return False


def classify(file_name: str) -> Optional[str]:
    lower = file_name.lower()
    if not has_library_suffix(lower) and "pybind11_state" not in lower:
        return None
    if "pybind11_state" in lower:
        return "ort_pybind"
    for test, kind in _KINDS:
        if test(lower):
            return kind
    return None


def hexagon_version(file_name: str, kind: str) -> Optional[int]:
    """The number of the first ``v`` + 2-3 digits (``re.search(r"v(\\d{2,3})")``
    on the lower-cased name without "qnnhtp")."""
    if kind not in ("htp_stub", "htp_skel", "signed_catalog"):
        return None
    text = file_name.lower().replace("qnnhtp", "")
    start = text.find("v")
    while start != -1:
        end = start + 1
        while end < len(text) and end - start <= 3 and text[end].isdecimal():
            end += 1
        if end - start >= 3:
            return int(text[start + 1 : end])
        start = text.find("v", start + 1)
    return None


def assigned_string(text: str, name: str) -> Optional[str]:
    """``re.search(r"(?m)^NAME\\s*=\\s*['\"]([^'\"]+)['\"]", text).group(1)``:
    a string assigned at the start of a line (each step of that pattern has
    one way to match, so a scan does the same)."""
    start = 0
    while True:
        if text.startswith(name, start):
            at = _skip_space(text, start + len(name))
            if text.startswith("=", at):
                at = _skip_space(text, at + 1)
                if text[at : at + 1] in ("'", '"'):
                    end = at + 1
                    while end < len(text) and text[end] not in "'\"":
                        end += 1
                    if at + 1 < end < len(text):
                        return text[at + 1 : end]
        newline = text.find("\n", start)
        if newline == -1:
            return None
        start = newline + 1


def _skip_space(text: str, at: int) -> int:
    while at < len(text) and text[at].isspace():  # what \s matches in a str pattern
        at += 1
    return at


def _qnn_version_from_package_info(folder: str) -> Tuple[Optional[str], Optional[str]]:
    """``qnn_version`` and ``__version__`` from build_and_package_info.py, read
    as text: importing the package would load the native libraries."""
    path = os.path.join(folder, "build_and_package_info.py")
    try:
        with open_regular(path) as handle:
            text = handle.read(65536).decode("utf-8", "replace")
    except OSError:
        return None, None
    return assigned_string(text, "qnn_version"), assigned_string(text, "__version__")


def _library_folders(dist: Dict[str, Any]) -> List[Tuple[str, str]]:
    """(folder, role) pairs where this distribution keeps native libraries."""
    location = dist["_location_raw"]
    folders: List[Tuple[str, str]] = []
    if "onnxruntime_qnn" in dist.get("provides_modules", []):
        base = os.path.join(location, "onnxruntime_qnn")
        folders.append((base, "onnxruntime_qnn"))
        libs = os.path.join(base, "libs")
        if os.path.isdir(libs):
            for arch in sorted(os.listdir(libs)):
                if os.path.isdir(os.path.join(libs, arch)):
                    folders.append((os.path.join(libs, arch), "onnxruntime_qnn/libs/" + arch))
    if "onnxruntime" in dist.get("provides_modules", []):
        folders.append((os.path.join(location, "onnxruntime", "capi"), "onnxruntime/capi"))
    return folders


def _scan_folder(folder: str, role: str) -> Dict[str, Any]:
    entry: Dict[str, Any] = {"path": show(folder), "role": role, "libraries": []}
    try:
        names = sorted(os.listdir(folder))
    except OSError as exc:
        entry["error"] = "%s: %s" % (type(exc).__name__, exc.strerror or exc)
        return entry
    libraries: List[Dict[str, Any]] = []
    for name in names:
        kind = classify(name)
        if kind is None:
            continue
        full = os.path.join(folder, name)
        lib: Dict[str, Any] = {"name": show(name), "path": show(full), "kind": kind}
        try:
            lib["size"] = os.path.getsize(full)
        except OSError as exc:
            lib["error"] = "%s: %s" % (type(exc).__name__, exc.strerror or exc)
            libraries.append(lib)
            continue
        hexagon = hexagon_version(name, kind)
        if hexagon is not None:
            lib["hexagon_version"] = hexagon
        if kind != "signed_catalog":
            try:
                header = binary_format(full)
            except OSError as exc:
                header = {"format": None, "error": "%s: %s" % (type(exc).__name__, exc)}
            lib["format"] = header.get("format")
            lib["machine"] = header.get("machine")
            lib["arch"] = normalize_arch(header.get("machine"))
            if header.get("error"):
                lib["error"] = header["error"]
        libraries.append(lib)
    entry["libraries"] = libraries
    if role.startswith("onnxruntime_qnn") and role.count("/") == 0:
        qnn, version = _qnn_version_from_package_info(folder)
        entry["package_info_qnn_version"] = qnn
        entry["package_info_version"] = version
    return entry


def run(ctx: Context) -> ProbeOutput:
    out = ProbeOutput()
    dists = ctx.value("installs", "distributions")
    if dists is None:
        raise RuntimeError("the installs probe did not run; bundled libraries unknown")
    bundles: List[Dict[str, Any]] = []
    for dist in dists:
        has_qnn_name = "qnn" in dist.get("canonical_name", "")
        if not has_qnn_name and dist.get("era") is None:
            continue
        raw_locations = ctx.private("installs", "raw_locations", {})
        dist = dict(dist, _location_raw=raw_locations.get(dist["location"], dist["location"]))
        bundle: Dict[str, Any] = {
            "dist": dist["id"],
            "name": dist["name"],
            "version": dist["version"],
            "era": dist.get("era"),
            "folders": [_scan_folder(folder, role) for folder, role in _library_folders(dist)],
        }
        qnn_versions = {f.get("package_info_qnn_version") for f in bundle["folders"]} - {None}
        bundle["qnn_version"] = sorted(qnn_versions)[0] if len(qnn_versions) == 1 else None
        bundle["qnn_version_source"] = (
            "onnxruntime_qnn/build_and_package_info.py" if bundle["qnn_version"] else None
        )
        stubs = set()
        skels = set()
        for folder in bundle["folders"]:
            for lib in folder["libraries"]:
                if lib["kind"] == "htp_stub" and "hexagon_version" in lib:
                    stubs.add(lib["hexagon_version"])
                if lib["kind"] == "htp_skel" and "hexagon_version" in lib:
                    skels.add(lib["hexagon_version"])
        bundle["stub_hexagon_versions"] = sorted(stubs)
        bundle["skel_hexagon_versions"] = sorted(skels)
        bundles.append(bundle)
    out.put("bundles", bundles, "folder listings of installed onnxruntime-qnn + binary headers")
    damaged = [
        lib["path"]
        for bundle in bundles
        for folder in bundle["folders"]
        for lib in folder["libraries"]
        if lib.get("error")
    ]
    out.put("damaged_libraries", damaged, "binary header checks (truncated / unreadable)")
    out.put("any_library_damaged", bool(damaged), "binary header checks (truncated / unreadable)")
    return out
