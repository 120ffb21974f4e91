"""The target as the resolver sees it (``Profile``): its Python, operating
system and processor, emulation, glibc, the chip's Hexagon version, a system
QNN SDK, what is installed; read from the probes' facts, or given in what-if
mode (``whatif.py``), and the wheel tags pip would accept there."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from packaging.tags import Tag, compatible_tags, cpython_tags
from packaging.version import InvalidVersion, Version

from ..facts.probed import Facts, externally_managed, target_pip
from ..facts.reading import records
from ..facts.socs import identify as identify_soc
from ..matrixdata import Matrix

_PLATFORM_BUCKET = {
    ("windows", "x86_64"): "win_amd64",
    ("windows", "arm64"): "win_arm64",
    ("windows", "x86"): "win32",
    ("linux", "x86_64"): "linux_x86_64",
    ("linux", "arm64"): "linux_aarch64",
}
_LEGACY_MANYLINUX = {17: "manylinux2014", 12: "manylinux2010", 5: "manylinux1"}
PLATFORM_WORDS = {
    "win_arm64": "Windows on ARM64",
    "win_amd64": "Windows x64",
    "win32": "Windows 32-bit",
    "linux_x86_64": "Linux x86-64",
    "linux_aarch64": "Linux ARM64",
}


def platform_words(profile: Profile) -> str:
    return PLATFORM_WORDS.get(profile.bucket or "", profile.bucket or profile.os)


@dataclass(frozen=True)
class Profile:
    """The target as the resolver sees it."""

    python: tuple[int, int]
    free_threaded: bool
    os: str
    arch: str | None  # the interpreter process's architecture
    native_arch: str | None
    emulated: bool
    glibc: tuple[int, int] | None
    htp_arch: int | None
    htp_arch_source: str | None
    system_qnn: Version | None
    system_qnn_source: str | None
    python_exe: str
    installed: tuple[tuple[str, str, tuple[str, ...]], ...] = ()  # (name, version, modules)
    notes: tuple[str, ...] = ()
    # What-if mode names no interpreter path: the command that starts the
    # right Python instead (``py -V:3.12-arm64`` on Windows, ``python3.12``).
    launcher: tuple[str, ...] = ()
    npu_driver: str | None = None
    npu_driver_source: str | None = None
    # facts.target_pip: "absent" puts `-m ensurepip` before the pip commands.
    pip: str = "unknown"
    # A system Python pip refuses to change (PEP 668): install into a new venv.
    externally_managed: bool = False

    @property
    def windows(self) -> bool:
        return self.os == "windows"

    @property
    def drives_npu(self) -> bool:
        """Whether onnxruntime-qnn runs the HTP backend on this machine's NPU
        (and so needs the HTP stub for its Hexagon version): every machine but
        an x86-64 one (Linux x86-64: the HTP simulator; x64 Windows: no NPU)."""
        return (self.native_arch or self.arch) != "x86_64"

    @property
    def bucket(self) -> str | None:
        return _PLATFORM_BUCKET.get((self.os, self.arch or ""))

    def platform_tags(self) -> list[str]:
        return list(_platform_tags(self.os, self.arch, self.glibc))

    def tags(self) -> frozenset[Tag]:
        return _supported_tags(self.python, self.free_threaded, tuple(self.platform_tags()))

    def accepts(self, wheel_tags: frozenset[Tag]) -> bool:
        """Whether pip would install a wheel with these tags here: the same
        answer as ``wheel_tags & self.tags()``, from packaging's supported tags
        for only the wheel's own platforms (each supported tag names one
        platform, or "any"): ~30 tags instead of ~930 on Linux."""
        own = self.platform_tags()
        if not own:  # packaging would read no platforms as "this machine's"
            return not wheel_tags.isdisjoint(self.tags())
        wheel_platforms = {tag.platform for tag in wheel_tags}
        platforms = tuple(p for p in own if p in wheel_platforms)
        if not platforms and "any" in wheel_platforms:
            platforms = (own[0],)  # the "any" tags come with every platform list
        return bool(platforms) and not wheel_tags.isdisjoint(
            _supported_tags(self.python, self.free_threaded, platforms)
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "python": ".".join(map(str, self.python)) + ("t" if self.free_threaded else ""),
            "os": self.os,
            "arch": self.arch,
            "native_arch": self.native_arch,
            "emulated": self.emulated,
            "platform_tags": self.platform_tags()[:3],
            "glibc": ".".join(map(str, self.glibc)) if self.glibc else None,
            "htp_arch": self.htp_arch,
            "htp_arch_source": self.htp_arch_source,
            "system_qnn": str(self.system_qnn) if self.system_qnn else None,
            "system_qnn_source": self.system_qnn_source,
            "npu_driver": self.npu_driver,
            "npu_driver_source": self.npu_driver_source,
            "pip": self.pip,
            "externally_managed": self.externally_managed,
            "notes": list(self.notes),
        }


@functools.lru_cache(maxsize=64)
def _platform_tags(os: str, arch: str | None, glibc: tuple[int, int] | None) -> tuple[str, ...]:
    if os == "windows":
        return {"x86_64": ("win_amd64",), "arm64": ("win_arm64",), "x86": ("win32",)}.get(
            arch or "", ()
        )
    if os == "linux" and arch in ("x86_64", "arm64"):
        machine = "x86_64" if arch == "x86_64" else "aarch64"
        major, minor = glibc or (2, 99)
        tags = []
        for glibc_minor in range(minor, 4, -1):
            tags.append(f"manylinux_{major}_{glibc_minor}_{machine}")
            legacy = _LEGACY_MANYLINUX.get(glibc_minor)
            if legacy and (legacy != "manylinux1" or machine == "x86_64"):
                tags.append(f"{legacy}_{machine}")
        return (*tags, f"linux_{machine}")
    return ()


@functools.lru_cache(maxsize=64)
def _supported_tags(
    python: tuple[int, int], free_threaded: bool, platforms: tuple[str, ...]
) -> frozenset[Tag]:
    """What pip would accept for such an interpreter (computed once per target)."""
    abi = f"cp{python[0]}{python[1]}{'t' if free_threaded else ''}"
    interpreter = f"cp{python[0]}{python[1]}"
    return frozenset(
        [
            *cpython_tags(python, abis=[abi], platforms=platforms),
            *compatible_tags(python, interpreter=interpreter, platforms=platforms),
        ]
    )


def _os_name(sys_platform: str | None) -> str:
    if sys_platform == "win32":
        return "windows"
    if sys_platform and sys_platform.startswith("linux"):
        return "linux"
    if sys_platform == "darwin":
        return "macos"
    return str(sys_platform or "unknown")


def _version(text: Any) -> Version | None:
    try:
        return Version(str(text)) if text else None
    except InvalidVersion:
        return None


def profile_from_facts(facts: Facts, matrix: Matrix) -> Profile:
    """What the resolver needs, read from the probes' facts."""
    notes: list[str] = []
    info = facts.value("interpreter", "version_info") or [3, 0, 0]
    libc = facts.value("interpreter", "libc") or {}
    glibc: tuple[int, int] | None = None
    if libc.get("name") == "glibc" and libc.get("version"):
        parts = str(libc["version"]).split(".")
        glibc = (int(parts[0]), int(parts[1])) if len(parts) >= 2 and parts[1].isdigit() else None
    os_name = _os_name(facts.value("interpreter", "sys_platform"))
    if os_name == "linux" and glibc is None:
        notes.append("glibc version unknown: assumed new enough for every manylinux wheel")
    arch = facts.value("emulation", "process_arch") or facts.value("interpreter", "build_arch")
    htp_arch = htp_source = None
    soc = identify_soc(facts, matrix)
    if soc is not None and soc.soc.htp_arch is not None:
        htp_arch, htp_source = soc.soc.htp_arch, f"{soc.soc.part} ({soc.matched_by})"
    system_qnn = system_source = None
    for root in facts.value("qnn_sdk", "roots", []) or []:
        if not isinstance(root, dict) or root.get("exists") is False:
            continue
        found = root.get("version") or {}
        version = _version(found.get("sdk_yaml")) or _version(found.get("from_folder_name"))
        if system_source is None or (system_qnn is None and version is not None):
            system_qnn, system_source = version, f"{root.get('origin')}: {root.get('path')}"
    installed = tuple(
        (str(d.get("name")), str(d.get("version")), tuple(d.get("provides_modules") or ()))
        for d in facts.value("installs", "distributions", []) or []
    )
    npu_driver, npu_driver_source = _npu_driver(facts)
    return Profile(
        python=(int(info[0]), int(info[1])),
        free_threaded=bool(facts.value("interpreter", "free_threaded")),
        os=os_name,
        arch=str(arch) if arch else None,
        native_arch=facts.value("emulation", "native_arch"),
        emulated=facts.value("emulation", "emulated") is True,
        glibc=glibc,
        htp_arch=htp_arch,
        htp_arch_source=htp_source,
        system_qnn=system_qnn,
        system_qnn_source=system_source,
        python_exe=str(facts.value("interpreter", "executable") or "python"),
        installed=installed,
        notes=tuple(notes),
        npu_driver=npu_driver,
        npu_driver_source=npu_driver_source,
        pip=target_pip(facts),
        externally_managed=externally_managed(facts) is not None,
    )


def _npu_driver(facts: Facts) -> tuple[str | None, str | None]:
    """The NPU driver's version and where it was read (Windows): the runtime
    DLLs in the driver's DriverStore folder first, else the class driver."""
    for service in records(facts.value("soc", "npu_runtime")):
        for item in records(service.get("files")):
            if item.get("version"):
                return f"{item.get('name')} {item['version']}", str(item.get("version_source"))
    for driver in records(facts.value("soc", "npu_drivers")):
        if driver.get("DriverVersion"):
            return (
                f"{driver.get('DriverDesc') or 'NPU driver'} {driver['DriverVersion']}",
                f"registry class driver {driver.get('class_guid')}\\{driver.get('instance')}",
            )
    return None, None


def python_words(profile: Profile) -> str:
    """3.12, or 3.13t for a free-threaded build."""
    return ".".join(map(str, profile.python)) + ("t" if profile.free_threaded else "")
