"""Facts read from a pasted log itself: versions, OS, Python, SoC, paths.

People paste `pip list` output, the bug template's environment lines, ORT /
QNN log headers, tracebacks with paths and wheel file names. Each of those
says something about the machine the log came from, which is the machine
the diagnosis is about. Every fact found names the line it came from; the
first line that sets a key wins (the environment block usually comes first).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

from ..facts.socs import mentioned_soc
from ..matrixdata import Soc
from .cleaning import clean_lines
from .facts import DiagnosisFacts, Fact, from_items, soc_name
from .prefilter import Allow, LineGate

_VERSION = r"(\d+\.\d+(?:\.\d+)?(?:\.?(?:dev|rc|post|a|b)\d*)?)"
_ORT_FLAVOURS = (
    "onnxruntime-qnn",
    "onnxruntime-directml",
    "onnxruntime-gpu",
    "onnxruntime-openvino",
    "onnxruntime-genai",
    "onnxruntime-genai-qnn",
    "onnxruntime-genai-directml",
    "onnxruntime-winml",
    "onnxruntime-training",
    "ort-nightly-qnn",
    "onnxruntime",
)
_FLAVOUR_KEYS = {"onnxruntime-qnn": "onnxruntime_qnn.version", "onnxruntime": "onnxruntime.version"}
_MODULE_FLAVOURS = frozenset(f for f in _ORT_FLAVOURS if not f.startswith("onnxruntime-genai"))

# name  version   (pip list), name==version (freeze), name-version-...whl (wheel file).
# No two adjacent blank runs: a line of blanks would be split every way (seconds).
_PIP_LINE = re.compile(
    r"^\s*(?P<name>[A-Za-z][A-Za-z0-9_.\-]*)(?:\s*==\s*|\s+)(?P<version>\d+\.\d+(?:\.\d+)*(?:\.?(?:dev|rc|post|a|b)\d*)?)(?:\s.*)?$"
)
_WHEEL = re.compile(
    r"(?P<name>onnxruntime(?:[_-][a-z]+)*|numpy)-(?P<version>\d+\.\d+(?:\.\d+)*(?:\.?dev\d+)?)-(?P<py>cp\d+)-[a-z0-9_]+-(?P<plat>win_arm64|win_amd64|win32|manylinux\w*_(?:x86_64|aarch64)|linux_(?:x86_64|aarch64)|macosx\w*)\.whl",
    re.IGNORECASE,
)
_PIP_SHOW = re.compile(r"^\s*Name:\s*(?P<name>\S+)\s*$", re.IGNORECASE)
_SHOW_VERSION = re.compile(r"^\s*Version:\s*" + _VERSION, re.IGNORECASE)
_ORT_TEMPLATE = re.compile(
    r"^\W*(?:ONNX ?Runtime|ORT|onnxruntime) version\s*[:=]\s*v?" + _VERSION, re.IGNORECASE
)
_QNN_VERSION = re.compile(  # not "onnxruntime-qnn 2.7.0": that is the package's version
    r"(?<!onnxruntime[-_])\b(?:QNN(?:\s*SDK)?|QAIRT(?:\s*SDK)?|Qualcomm AI (?:Engine Direct|Runtime)(?:\s*SDK)?)"
    r"(?:\s*(?:version|ver\.?|v))?\s*[:=]?\s*v?(2\.\d+(?:\.\d+)?)",
    re.IGNORECASE,
)
_QNN_BUILD = re.compile(
    r"\b(?:Build Id|build id|qnn_build|QNN build)\s*[:=]?\s*v?(2\.\d+\.\d+)\.\d+", re.I
)
# A QAIRT / QNN SDK folder ("qairt/2.31.0.250130", "qnn-v2.28.0"); the
# onnxruntime-qnn package's own name ("onnxruntime_qnn-2.7.0-cp311-...whl",
# "onnxruntime-qnn-2.3.0") carries the package's version, not QNN's.
_QAIRT_PATH = re.compile(
    r"(?<!onnxruntime[-_])(?:qairt|qnn)[\\/_-]v?(2\.\d+\.\d+)(?:\.\d+)?", re.IGNORECASE
)
_OLDEST_QNN_SDK_MINOR = 10  # QNN 2.10 (2023) predates every onnxruntime-qnn wheel (2.18+)


def _plausible_qnn_sdk(version: str) -> bool:
    """'QNN 2.7.0' or a folder 'qnn2.3.0' names onnxruntime-qnn 2.x (the QNN EP
    plugin), not a QNN SDK: SDKs below 2.10 predate every onnxruntime-qnn."""
    return int(version.split(".")[1]) >= _OLDEST_QNN_SDK_MINOR


_PYTHON_TEMPLATE = re.compile(
    r"^\W*Python(?: version)?\s*[:=]?\s*v?(3\.\d+(?:\.\d+)?)\b", re.IGNORECASE
)
_PYTHON_BANNER = re.compile(
    r"\bPython (3\.\d+\.\d+)\b|^\s*(3\.\d+\.\d+)\+? \((?:tags|main|heads|default)[/,]"
)
_MSC_ARCH = re.compile(
    r"\[MSC v\.\d+ (?:64|32) bit \((?P<arch>ARM64|AMD64|Intel)\)\]", re.IGNORECASE
)
_PY_PATH = re.compile(
    r"[\\/](?:Python|python)3?\.?(?P<minor>1\d|[89])(?P<arm>-arm64)?(?:-32)?[\\/]", re.IGNORECASE
)
_SITE_PATH_LINUX = re.compile(
    r"/(?:usr|home|opt|root|data|mnt)/\S*python3\.(\d+)/(?:site|dist)-packages"
)
_CP_TAG = re.compile(r"\bcp3(1\d|[89])\b")
_ANDROID = re.compile(
    r"\b(?:Android|Termux|/data/app/|/data/local/tmp|\.apk\b|jniLibs|adb shell)", re.I
)
_WSL = re.compile(r"\bWSL2?\b|microsoft-standard-WSL", re.IGNORECASE)
_WINDOWS = re.compile(
    r"\bWindows (?:1[01]|on (?:ARM|Snapdragon))\b|\bwin_(?:arm64|amd64)\b|\b[A-Z]:\\(?:Users|Program|Python|src|work|dev|code|projects?)|\.dll\b(?!: cannot open shared object file)|\bWinError\b|\bOS Platform.*Windows",
    re.IGNORECASE,
)
_LINUX = re.compile(
    r"\b(?:Ubuntu|Debian|Fedora|CentOS|Linux|manylinux)\b|/usr/lib/|\.so(?:\.\d+)*\b|/home/\w|\bsite-packages/",
    re.IGNORECASE,
)
_MAC = re.compile(r"\bmacOS\b|\bDarwin\b|/Users/\w+/|\.dylib\b")
_ARM_MACHINE = re.compile(
    r"\bSnapdragon\b|\bWindows on (?:ARM|Snapdragon)\b|\bARM64 (?:laptop|device|machine|PC)\b|\bCopilot\+ PC\b|\bSurface Pro (?:X|11)\b|\baarch64\b|\bQualcomm\(R\) Oryon",
    re.IGNORECASE,
)
_X64_MACHINE = re.compile(r"\b(?:Intel\(R\)|Core\(TM\)|AMD Ryzen|Xeon)\b")
_NPY = re.compile(r"^\W*numpy(?: version)?\s*[:=]?\s*" + _VERSION, re.IGNORECASE)
# The arch as written in options and log headers, and as the HTP skel / stub the
# reporter deployed names it (libQnnHtpV69Skel.so, QnnHtpV73Stub.dll, hexagon-v75/).
# QNN's "Arch 68 set by custom config is different from arch associated with
# SoC 57, will overwrite it to 75": the configured arch is not the device's.
_HTP_ARCH = re.compile(
    r"\b(?:htp_arch|arch|architecture|hexagon|HTP|dsp_arch)\s*[=: ]\s*v?(6[6-9]|7[3-9]|8[1-9])\b"
    r"(?! set by custom config)"
    r"|QnnHtpV(6[6-9]|7[3-9]|8[1-9])(?:Skel|Stub)\b|\bhexagon-v(6[6-9]|7[3-9]|8[1-9])\b"
    r"|\bwill overwrite it to (6[6-9]|7[3-9]|8[1-9])\b",
    re.I,
)
# A model file named as an fp16 export (model_f16.onnx, yolo-fp16.onnx).
_FP16_MODEL = re.compile(r"[\w.-]*?[_-](?:fp|f)16\.(?:onnx|ort)\b", re.I)
_ADSP = re.compile(r"\bADSP_LIBRARY_PATH\s*[=:]\s*[\"']?(?P<value>[^\"'\r\n]+)")
_NON_ASCII_PATH = re.compile(
    r"(?:[A-Za-z]:\\|/)(?:[^\s\"'<>|]*[\\/])?[^\s\"'<>|\\/]*[^\x00-\x7f][^\s\"'<>|]*"
)
_LEFTOVER = re.compile(r"(?:^|[\\/\s'\"])~[a-z]?nnxruntime", re.IGNORECASE)
_BACKEND = re.compile(
    r"\b(?:backend_type['\"]?\s*[:=]\s*['\"]?(htp|gpu|cpu)|(Qnn(?:Htp|Gpu|Cpu))\.(?:dll|so))", re.I
)
_EPCONTEXT = re.compile(
    r"_ctx\.onnx\b|ep\.context_enable\W+1|EPContext (?:node|model)|from EpContext|\bep_cache_context\b|context binary",
    re.IGNORECASE,
)
# A record of the QNN EP itself: onnxruntime's prefix naming one of the EP's
# source files ("[E:onnxruntime:, qnn_execution_provider.cc:2290 GetCapabilityImpl]"),
# its set-up message, or onnxruntime's report of the plugin EP's own call. A
# text with one was written by a session that had the EP, so it was loaded
# (for 2.x: registered); "Loading EP library ... as a plugin" alone says less.
_QNN_EP_LINE = re.compile(
    r"\bqnn_\w+\.cc: ?\d+|\bQNN SetupBackend failed\b|\bOrtEp::\w+\(\) for QNNExecutionProvider\b",
    re.IGNORECASE,
)
_SIMULATOR = re.compile(r"\bRouterX86\b|\bx86_64 simulator|HTP simulator", re.IGNORECASE)


def _snippet(line: str) -> str:
    """The line as a fact's source quotes it: at most 80 characters."""
    line = line.strip()
    return line if len(line) <= 80 else line[:77] + "..."


Finder = Callable[[str, Allow], Iterator[tuple[str, Any]]]


# A version named inside a sentence or a parenthesis: "(onnxruntime 1.9.1, numpy 1.21.4)".
_MENTION = re.compile(
    r"\b(onnxruntime[-_]qnn|onnxruntime|numpy)(?:==|\s+version\s+|\s*[:=]\s*|\s+v?(?=\d))v?(\d+\.\d+(?:\.\d+)?)\b",
    re.IGNORECASE,
)
_MENTION_KEYS = {**_FLAVOUR_KEYS, "numpy": "numpy.version"}


# A line naming the version that still worked ("Last known-good |
# onnxruntime-qnn==1.25.0"): its versions are not those of the failing machine.
_KNOWN_GOOD = re.compile(r"known[- ]good|last (?:good|working)", re.IGNORECASE)


def _pip_lines(line: str, allow: Allow) -> Iterator[tuple[str, Any]]:
    match = _PIP_LINE.match(line) if allow(_PIP_LINE) else None
    if not match:
        if allow(_KNOWN_GOOD) and _KNOWN_GOOD.search(line):
            return
        for mention in _MENTION.finditer(line) if allow(_MENTION) else ():
            name = mention[1].lower().replace("_", "-")
            yield _MENTION_KEYS[name], mention[2]  # a mention is not proof it is installed
    if match:
        name = match["name"].lower().replace("_", "-")
        version = match["version"]
        if name in _FLAVOUR_KEYS:
            yield _FLAVOUR_KEYS[name], version
        if name in _ORT_FLAVOURS:
            yield "flavour", name
        if name == "numpy":
            yield "numpy.version", version
    for wheel in _WHEEL.finditer(line) if allow(_WHEEL) else ():
        name = wheel["name"].lower().replace("_", "-")
        if name in _FLAVOUR_KEYS:
            yield _FLAVOUR_KEYS[name], wheel["version"]
        if name == "numpy":
            yield "numpy.version", wheel["version"]
        yield "python.minor", wheel["py"]
        plat = wheel["plat"].lower()
        if plat.startswith("win"):
            yield "os", "windows"
            yield "python.arch", "arm64" if plat == "win_arm64" else "x86_64"
        elif "linux" in plat:
            yield "os", "linux"
            yield "python.arch", "arm64" if plat.endswith("aarch64") else "x86_64"


def _templates(line: str, allow: Allow) -> Iterator[tuple[str, Any]]:
    if allow(_ORT_TEMPLATE) and (match := _ORT_TEMPLATE.match(line)):
        yield "onnxruntime.template", match[1]
    if allow(_PYTHON_TEMPLATE) and (match := _PYTHON_TEMPLATE.match(line)):
        yield "python.version", match[1]
    if allow(_NPY) and (match := _NPY.match(line)):
        yield "numpy.version", match[1]
    if allow(_PYTHON_BANNER) and (match := _PYTHON_BANNER.search(line)):
        yield "python.version", match[1] or match[2]
    if allow(_X64_PYTHON) and _X64_PYTHON.search(line):
        yield "python.arch", "x86_64"
    elif allow(_ARM64_PYTHON) and _ARM64_PYTHON.search(line):
        yield "python.arch", "arm64"
    if allow(_MSC_ARCH) and (match := _MSC_ARCH.search(line)):
        yield "os", "windows"
        yield "python.arch", {"arm64": "arm64", "amd64": "x86_64"}.get(match["arch"].lower(), "x86")
    for regex in (_QNN_BUILD, _QNN_VERSION, _QAIRT_PATH):
        if allow(regex) and (match := regex.search(line)) and _plausible_qnn_sdk(match[1]):
            yield "qnn.version", match[1]
            break
    if allow(_HTP_ARCH) and (match := _HTP_ARCH.search(line)):
        yield "htp_arch", "v" + next(group for group in match.groups() if group)
    if allow(_FP16_MODEL) and _FP16_MODEL.search(line):
        yield "model.precision", "float16"


def _platform(line: str, allow: Allow) -> Iterator[tuple[str, Any]]:
    named = []  # the systems this line names, in the order they were checked
    if allow(_ANDROID) and _ANDROID.search(line):
        named.append("android")
    wsl = allow(_WSL) and bool(_WSL.search(line))
    if wsl:
        yield "wsl", True
    if allow(_WINDOWS) and _WINDOWS.search(line):
        named.append("windows")
    if allow(_MAC) and _MAC.search(line):
        named.append("macos")
    if allow(_LINUX) and _LINUX.search(line):
        named.append("linux")
    if wsl:
        yield "os", "linux"
    elif named and not ("windows" in named and len(set(named)) > 1):
        # "fails the same way on Android 14 and on Windows 11": a line that
        # names Windows beside another system says nothing about this machine's
        yield "os", named[0]
    if allow(_PY_PATH) and (match := _PY_PATH.search(line)):
        yield "python.minor", f"cp3{match['minor']}"
        if match["arm"]:
            yield "python.arch", "arm64"
    if allow(_SITE_PATH_LINUX) and (match := _SITE_PATH_LINUX.search(line)):
        yield "python.minor", f"cp3{match[1]}"
    if allow(_CP_TAG) and (match := _CP_TAG.search(line)):
        yield "python.minor", f"cp3{match[1]}"
    if allow(_SIMULATOR) and _SIMULATOR.search(line):
        yield "machine.arch", "x86_64"  # the HTP runs in a simulator on an x86-64 host
    elif (
        allow(_ARM_MACHINE) and _ARM_MACHINE.search(line) and "Detected Snapdragon SOC" not in line
    ):
        yield "machine.arch", "arm64"
    elif allow(_X64_MACHINE) and _X64_MACHINE.search(line):
        yield "machine.arch", "x86_64"


def _environment(line: str, allow: Allow) -> Iterator[tuple[str, Any]]:
    if allow(_ADSP) and (match := _ADSP.search(line)):
        yield "adsp_library_path", match["value"].strip()
    if allow(_NON_ASCII_PATH) and _NON_ASCII_PATH.search(line):
        yield "non_ascii_path", True
    if allow(_LEFTOVER) and _LEFTOVER.search(line):
        yield "leftover_dirs", True
    if allow(_BACKEND) and (match := _BACKEND.search(line)):
        kind = (match[1] or match[2][3:]).lower()
        yield "backend", kind
    if allow(_EPCONTEXT) and _EPCONTEXT.search(line):
        yield "epcontext", True
    if allow(_QNN_EP_LINE) and _QNN_EP_LINE.search(line):
        yield "qnn_ep_logged", True


def _pip_show_blocks(lines: list[str]) -> Iterator[tuple[int, str, str]]:
    """(line number, name, version) of ``pip show`` blocks (Name: on one line, Version: on the next)."""
    for number, line in enumerate(lines):
        match = _PIP_SHOW.match(line) if line else None
        if match and number + 1 < len(lines):
            version = _SHOW_VERSION.match(lines[number + 1])
            if version:
                yield number + 1, match["name"].lower().replace("_", "-"), version[1]


_HEADING = re.compile(r"^\s*#{2,4}\s*(?P<name>[A-Za-z][A-Za-z /()]+?)\s*$")
# "x64 Python", "Python (x64)", "Python 3.12 x64", "Python 3.12.4 (AMD64)", "x64 version of Python"
_X64_PYTHON = re.compile(
    r"\b(?:x64|x86[-_]64|amd64)\s+(?:version\s+of\s+|build\s+of\s+)?Python\b"
    r"|\bPython\s+(?:3\.\d+(?:\.\d+)?\s+)?\(?(?:x64|amd64)\)?(?!\w)",
    re.I,
)
# The same for native ARM64 builds: "ARM64 Python", "Python 3.12 (ARM64)", "Python 3.12 arm64"
_ARM64_PYTHON = re.compile(
    r"\b(?:arm64|aarch64)\s+(?:version\s+of\s+|build\s+of\s+)?Python\b"
    r"|\bPython\s+(?:3\.\d+(?:\.\d+)?\s+)?\(?(?:arm64|aarch64)\)?(?![\w-])",
    re.I,
)


def _template_headings(lines: list[str]) -> Iterator[tuple[int, str, Any]]:
    """The onnxruntime bug template: ``### Platform`` then the answer on the next
    non-empty line (Platform, OS Version, ONNX Runtime Version, Architecture, ...)."""
    for number, line in enumerate(lines):
        heading = _HEADING.match(line) if line else None
        if not heading:
            continue
        found = next(
            (
                (i, a.strip())
                for i, a in enumerate(lines[number + 1 : number + 4], number + 2)
                if a.strip()
            ),
            None,
        )
        if found is None or found[1].startswith("#"):
            continue
        at, answer = found  # 1-based line number of the answer
        name = heading["name"].lower()
        if name == "platform":
            kind = next((v for k, v in _TEMPLATE_OS.items() if k in answer.lower()), None)
            if kind:
                yield at, "os", kind
        elif name == "architecture":
            arch = {"arm64": "arm64", "x64": "x86_64", "x86": "x86", "arm": None}.get(
                answer.lower()
            )
            if arch:
                yield at, "python.arch", arch
        elif name.startswith("onnx runtime version") and (
            version := re.match(r"v?" + _VERSION + r"\b", answer)
        ):
            yield at, "onnxruntime.template", version[1]
        elif name.startswith("execution provider library version") and (
            qnn := _QNN_VERSION.search(answer)
        ):
            yield at, "qnn.version", qnn[1]


_TEMPLATE_OS = {
    "windows": "windows",
    "android": "android",
    "linux": "linux",
    "mac": "macos",
    "ios": None,
}


# The header of `pip list` / `conda list`, and `pip freeze` lines: the text
# lists every installed package, so a flavour it does not list is not installed.
_LISTING_HEADER = re.compile(
    r"[ \t]*(?:Package[ \t]+Version|#[ \t]*Name[ \t]+Version[ \t]+Build)\b"
)
_FREEZE_LINE = re.compile(r"[ \t]*[A-Za-z][\w.\-]*==\d")
FREEZE_LINES = 3  # this many name==version lines read as a `pip freeze` listing


def _listing(line: str, allow: Allow) -> Iterator[tuple[str, Any]]:
    """A line of a listing of every installed package: its header, or a freeze line."""
    if allow(_LISTING_HEADER) and _LISTING_HEADER.match(line):
        yield "listing", "header"
    elif allow(_FREEZE_LINE) and _FREEZE_LINE.match(line):
        yield "listing", "freeze"


# Each per-line finder and every regex it runs (each behind ``allow``): a
# finder is only called on a line where one of its regexes may match.
_FINDER_REGEXES: tuple[tuple[Finder, tuple[re.Pattern[str], ...]], ...] = (
    (_pip_lines, (_PIP_LINE, _MENTION, _WHEEL, _KNOWN_GOOD)),
    (_templates, (_ORT_TEMPLATE, _PYTHON_TEMPLATE, _NPY, _PYTHON_BANNER, _X64_PYTHON,
                  _ARM64_PYTHON, _MSC_ARCH, _QNN_BUILD, _QNN_VERSION, _QAIRT_PATH, _HTP_ARCH,
                  _FP16_MODEL)),
    (_platform, (_ANDROID, _WSL, _WINDOWS, _MAC, _LINUX, _PY_PATH, _SITE_PATH_LINUX, _CP_TAG,
                 _SIMULATOR, _ARM_MACHINE, _X64_MACHINE)),
    (_environment, (_ADSP, _NON_ASCII_PATH, _LEFTOVER, _BACKEND, _EPCONTEXT, _QNN_EP_LINE)),
    (_listing, (_LISTING_HEADER, _FREEZE_LINE)),
)  # fmt: skip


def from_text(text: str, socs: tuple[Soc, ...] = ()) -> DiagnosisFacts:
    """Every fact the text states about its own machine, each with its line."""
    return from_lines(clean_lines(text), socs)


def from_lines(lines: list[str], socs: tuple[Soc, ...] = ()) -> DiagnosisFacts:
    """``from_text`` for lines the engine already cleaned (``cleaning.clean_lines``:
    terminal colour codes out, so a fact's source line quotes without them)."""
    text = "\n".join(lines)  # for the few finders that read across lines
    scan = _Scan()
    scan.blocks(lines)
    scan.each_line(lines)
    found = scan.found
    items = [fact for key, fact in found.items() if key != "python.minor"]
    minor = found.get("python.minor")
    if minor is not None and "python.version" not in found:
        items.append(Fact("python.version", f"3.{str(minor.value)[3:]}", minor.source))
    if scan.template_ort is not None:
        items.extend(_template_versions(scan.template_ort, found, text))
    if scan.flavours and (flavours := scan.flavour_fact()) is not None:
        items.append(flavours)
    if socs and (hit := mentioned_soc(text, socs)):
        soc, named = hit
        source = f"the log names {named!r} (SoC table)"
        items.append(Fact("soc", soc_name(soc), source))
        if soc.htp_arch:
            items.append(Fact("htp_arch", f"v{soc.htp_arch}", source))
        items.append(Fact("machine.arch", "arm64", source))
    return from_items(items)


class _Scan:
    """What ``from_lines`` gathers from a text's lines, the first of each fact kept."""

    def __init__(self) -> None:
        self.found: dict[str, Fact] = {}
        self.flavours: dict[str, str] = {}
        self.template_ort: Fact | None = None
        self.listing_header: int | None = None  # the line of a `pip list` / `conda list` header
        self.freeze_lines = 0

    def note(self, key: str, value: Any, number: int, line: str) -> None:
        if key not in self.found:
            self.found[key] = Fact(key, value, f"log line {number}: {_snippet(line)!r}")

    def blocks(self, lines: list[str]) -> None:
        """Facts that span lines: `pip show` blocks, the bug template's headings."""
        for number, name, version in _pip_show_blocks(lines):
            if name in _FLAVOUR_KEYS:
                self.note(
                    _FLAVOUR_KEYS[name], version, number, lines[number - 1] + " " + lines[number]
                )
            if name in _ORT_FLAVOURS:
                self.flavours.setdefault(name, f"log line {number}")
        for number, key, value in _template_headings(lines):
            if key == "onnxruntime.template":
                if self.template_ort is None:
                    source = f"log line {number}: {_snippet(lines[number - 1])!r}"
                    self.template_ort = Fact("onnxruntime.version", value, source)
            elif value is not None:
                self.note(key, value, number, lines[number - 1])

    def each_line(self, lines: list[str]) -> None:
        """Every line finder, each only on the lines that hold its regexes' literals."""
        gate = LineGate(lines, [r for _finder, regexes in _FINDER_REGEXES for r in regexes])
        finders = [(finder, gate.lines_for(regexes)) for finder, regexes in _FINDER_REGEXES]
        for number, line in enumerate(lines, 1):
            if not line:
                continue  # no finder reads an empty line (a long log's blanked ones: compact)
            index = number - 1
            wanted = [f for f, on in finders if on is None or index in on]
            if not wanted:
                continue  # no finder's regex can match this line
            allow = gate.for_line(index)
            if len(line) > 2000:
                line = line[:2000]
            for finder in wanted:
                for key, value in finder(line, allow):
                    self.take(key, value, number, line)

    def take(self, key: str, value: Any, number: int, line: str) -> None:
        if key == "flavour":
            self.flavours.setdefault(value, f"log line {number}")
        elif key == "listing":
            if value == "header":
                self.listing_header = self.listing_header or number
            else:
                self.freeze_lines += 1
        elif key == "python.minor":
            self.note("python.minor", value, number, line)
        elif key == "onnxruntime.template":
            if self.template_ort is None:
                source = f"log line {number}: {_snippet(line)!r}"
                self.template_ort = Fact("onnxruntime.version", value, source)
        else:
            self.note(key, value, number, line)

    def flavour_fact(self) -> Fact | None:
        """Which onnxruntime flavours are installed, when the text shows it."""
        names = frozenset(f for f in self.flavours if f in _MODULE_FLAVOURS)
        listing = (
            f"a full package listing (log line {self.listing_header})"
            if self.listing_header is not None
            else "a pip freeze listing"
            if self.freeze_lines >= FREEZE_LINES
            else None
        )
        # ``flavours`` is the whole set: one flavour seen in a `pip show` or a
        # sentence is not proof that no other is installed (a shadowed install
        # is one its owner does not know about); a full listing is.
        if len(names) > 1 or (names and listing):
            pip_lines = ", ".join(sorted(self.flavours.values()))
            source = f"pip lines: {pip_lines}" + (f", in {listing}" if listing else "")
            return Fact("flavours", names, source)
        return None


def _template_versions(template: Fact, found: dict[str, Fact], text: str) -> list[Fact]:
    """The bug template's "ONNX Runtime version": in the 1.x era (before the 2.x
    plugin) onnxruntime-qnn carried onnxruntime's version number."""
    items = []
    if "onnxruntime.version" not in found:
        items.append(template)
    mentions_qnn = re.search(r"\bQNN|onnxruntime[-_]qnn", text, re.IGNORECASE) is not None
    major_minor = tuple(int(p) for p in str(template.value).split(".")[:2])
    if mentions_qnn and "onnxruntime_qnn.version" not in found and major_minor < (1, 25):
        items.append(
            Fact(
                "onnxruntime_qnn.version",
                template.value,
                template.source + " (1.x onnxruntime-qnn releases share onnxruntime's version)",
            )
        )
    return items
