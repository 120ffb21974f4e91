"""What a wheel contains: its METADATA, its native libraries and their machine
types (ELF header, or qnndoctor's pefile reader), the QNN version evidence;
read by ranges, member by member, through ``members``."""

from __future__ import annotations

import importlib
import importlib.util
import struct
import sys
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from packaging.metadata import parse_email

from qnndoctor._layout import package_dir
from qnndoctor.facts.libkinds import QNN_RUNTIME  # the kinds that carry the QNN VERSIONINFO
from qnndoctor.target.binaries.pe import read_pe_bytes, read_pe_header

from .common import (
    _HEAD_MAX,
    _METADATA_RE,
    _PKG_QNN_RE,
    _VERSIONINFO_MAX_COMPRESSED,
    _VERSIONINFO_TRIES,
    FileFailure,
    Log,
    MemberFailure,
    UsageError,
)
from .index import Http, IndexFile
from .members import open_wheel, read_member, read_member_head
from .qnn_version import decide_qnn_version, qnn_build_strings
from .ranged_file import RangedFile
from .records import Analysis, Library

_ELF_HEAD = 64  # an ELF header (and enough to tell ELF from PE)
_HEAD_FIRST = 1024  # a DLL's DOS, file and optional headers (SizeOfHeaders is usually 1 KiB)


def _head_need(head: bytes) -> int:
    """How much of a binary's start its header reader needs (sizes only:
    the headers themselves are read by the ELF table and pefile)."""
    if len(head) < _ELF_HEAD:
        return _ELF_HEAD
    return _HEAD_FIRST if head[:2] == b"MZ" else _ELF_HEAD


def _more_head(head: bytes) -> int:
    return _HEAD_MAX


@dataclass(frozen=True)
class Probes:
    """The library naming rules of the probes (one source of truth)."""

    classify: Callable[[str], str | None]
    hexagon_version: Callable[[str, str], int | None]
    elf_machines: Mapping[int, str]


def load_probes() -> Probes:
    """``classify``/``hexagon_version`` from ``qnndoctor.probes``; from a plain
    source checkout the probes folder is loaded under a private name."""
    try:
        bundled = importlib.import_module("qnndoctor.probes.qnn_bundled")
        util = importlib.import_module("qnndoctor.probes._util")
    except ImportError:
        folder = package_dir("probes")
        if folder is None:
            raise UsageError("the qnndoctor.probes package is missing") from None
        name = "_qnndoctor_refresh_probes"
        if name not in sys.modules:
            spec = importlib.util.spec_from_file_location(
                name, folder / "__init__.py", submodule_search_locations=[str(folder)]
            )
            if spec is None or spec.loader is None:
                raise UsageError(f"cannot load the probes from {folder}") from None
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
        bundled = importlib.import_module(f"{name}.qnn_bundled")
        util = importlib.import_module(f"{name}._util")
    return Probes(bundled.classify, bundled.hexagon_version, dict(util.ELF_MACHINES))


def header_machine(head: bytes, probes: Probes) -> tuple[str | None, str | None, str | None]:
    """(machine, machine_source, error) from a binary's first bytes."""
    if head[:4] == b"\x7fELF":
        if len(head) < 20:
            return None, None, "truncated ELF header"
        endian = "<" if head[5] == 1 else ">"
        (code,) = struct.unpack_from(endian + "H", head, 18)
        return probes.elf_machines.get(code, str(code)), "elf-header", None
    if head[:2] == b"MZ":  # qnndoctor's PE reader (pefile), as for installed DLLs
        info = read_pe_header(head)
        if "error" in info:
            return None, None, str(info["error"])
        return str(info["machine"]), "pe-header", None
    if not head:
        return None, None, "empty member"
    return None, None, "unrecognised binary header"


def _metadata(data: bytes) -> tuple[str | None, tuple[str, ...]]:
    """Requires-Python and Requires-Dist of a wheel's METADATA, read by
    packaging's own METADATA parser (folded lines, encodings)."""
    raw, _unparsed = parse_email(data)
    requires = raw.get("requires_python")

    def clean(value: Any) -> str:
        return " ".join(str(value).split())

    dist = tuple(sorted({clean(v) for v in raw.get("requires_dist") or ()}))
    return (clean(requires) if requires else None), dist


def _name(member: zipfile.ZipInfo) -> str:
    return member.filename


def analyse_wheel(remote: RangedFile, probes: Probes) -> Analysis:
    """Read what the matrix records from one wheel, by ranges. Member
    problems stay with that member; file problems raise FileFailure."""
    with open_wheel(remote) as archive:
        return _analyse(archive, remote, probes)


def _analyse(archive: zipfile.ZipFile, remote: RangedFile, probes: Probes) -> Analysis:
    members = [m for m in archive.infolist() if not m.is_dir()]
    reader = _Reader(archive, remote, probes, members)
    requires_python, requires_dist, metadata_read = reader.metadata()
    package_info = reader.package_info()
    fully_read, pe_infos = reader.versioninfo()
    reader.headers(fully_read)
    libs = reader.libs
    for name, lib in sorted(libs.items()):
        if lib.error:
            reader.member_errors.append(f"{name}: {lib.error}")
    member_errors = reader.member_errors
    version, note = decide_qnn_version(package_info, pe_infos, reader.build_strings)
    return Analysis(
        requires_python=requires_python,
        requires_dist=requires_dist,
        metadata_read=metadata_read,
        libraries=tuple(libs[name] for name in sorted(libs)),
        qnn_version=version,
        qnn_version_note=note,
        fetched_whole=remote.fetched_whole,
        bytes_read=remote.bytes_read,
        requests=remote.requests,
        file_size=remote.size,
        error=("member errors: " + "; ".join(member_errors)) if member_errors else None,
    )


class _Reader:
    """One wheel's analysis under way: its native libraries as read so far,
    the QNN build strings found in them, and the members' problems."""

    def __init__(
        self,
        archive: zipfile.ZipFile,
        remote: RangedFile,
        probes: Probes,
        members: list[zipfile.ZipInfo],
    ) -> None:
        self.archive = archive
        self.remote = remote
        self.probes = probes
        self.members = members
        self.member_errors: list[str] = []
        self.build_strings: list[tuple[str, str]] = []
        self.libs: dict[str, Library] = {}
        self.lib_members: dict[str, zipfile.ZipInfo] = {}
        for member in members:
            base = member.filename.rsplit("/", 1)[-1]
            kind = probes.classify(base)
            if kind is None:
                continue
            self.lib_members[member.filename] = member
            self.libs[member.filename] = Library(
                path=member.filename,
                kind=kind,
                size=member.file_size,
                hexagon_version=probes.hexagon_version(base, kind),
            )

    def metadata(self) -> tuple[str | None, tuple[str, ...], bool]:
        """(Requires-Python, Requires-Dist, whether METADATA was read)."""
        metadata = sorted((m for m in self.members if _METADATA_RE.match(m.filename)), key=_name)
        if not metadata:
            self.member_errors.append("no *.dist-info/METADATA")
            return None, (), False
        try:
            data = read_member(self.archive, self.remote, metadata[0])
        except MemberFailure as exc:
            self.member_errors.append(f"{metadata[0].filename}: {exc}")
            return None, (), False
        requires_python, requires_dist = _metadata(data)
        return requires_python, requires_dist, True

    def package_info(self) -> tuple[str, str] | None:
        """(member, QNN version) of the first build_and_package_info.py naming one."""
        for member in sorted(self.members, key=_name):
            if not member.filename.endswith("/build_and_package_info.py"):
                continue
            try:
                data = read_member(self.archive, self.remote, member)
            except MemberFailure as exc:
                self.member_errors.append(f"{member.filename}: {exc}")
                continue
            match = _PKG_QNN_RE.search(data.decode("utf-8", "replace"))
            if match:
                return member.filename, match.group(1)
        return None

    def versioninfo(self) -> tuple[set[str], list[tuple[str, str]]]:
        """(the libraries read whole, (library, ProductVersion) found).
        VERSIONINFO: the smallest QNN DLL of each library folder that has one
        (win_amd64 2.x wheels carry an amd64 and an arm64ec folder)."""
        libs = self.libs
        fully_read: set[str] = set()
        pe_infos: list[tuple[str, str]] = []
        by_folder: dict[str, list[zipfile.ZipInfo]] = {}
        for name, member in self.lib_members.items():
            if (
                libs[name].kind in QNN_RUNTIME
                and name.lower().endswith(".dll")
                and member.compress_size <= _VERSIONINFO_MAX_COMPRESSED
            ):
                by_folder.setdefault(name.rsplit("/", 1)[0], []).append(member)
        for folder in sorted(by_folder):
            candidates = sorted(by_folder[folder], key=lambda m: (m.compress_size, m.filename))
            for member in candidates[:_VERSIONINFO_TRIES]:
                fully_read.add(member.filename)
                self.read_whole_pe(member.filename)
                product = libs[member.filename].product_version
                if product:
                    pe_infos.append((member.filename, product))
                    break
        for name, lib in sorted(libs.items()):
            if lib.kind == "ort_providers_shared" and name.lower().endswith(".dll"):
                fully_read.add(name)
                self.read_whole_pe(name)
        return fully_read, pe_infos

    def read_whole_pe(self, name: str) -> None:
        libs = self.libs
        try:
            data = read_member(self.archive, self.remote, self.lib_members[name])
        except MemberFailure as exc:
            libs[name] = replace(libs[name], error=str(exc))
            return
        if libs[name].kind in QNN_RUNTIME:
            self.build_strings.extend((name, b) for b in qnn_build_strings(data))
        if data[:2] != b"MZ":
            machine, source, error = header_machine(data[:_HEAD_MAX], self.probes)
            libs[name] = replace(libs[name], machine=machine, machine_source=source, error=error)
            return
        info: dict[str, Any] = read_pe_bytes(data)
        strings = info.get("strings") or {}
        if "error" not in info:
            source = "pe-load-config"
        else:  # a truncated image still names its header's machine
            source = "pe-header" if info.get("machine_code") is not None else None
        libs[name] = replace(
            libs[name],
            machine=info.get("machine"),
            machine_source=source,
            product_version=strings.get("ProductVersion"),
            file_version=strings.get("FileVersion"),
            error=info.get("error"),
        )

    def headers(self, fully_read: set[str]) -> None:
        """The machine of every library not read whole, from its header."""
        libs = self.libs
        for name in sorted(libs):
            lib = libs[name]
            if name in fully_read or lib.kind == "signed_catalog":
                continue
            member = self.lib_members[name]
            try:
                head = read_member_head(self.archive, self.remote, member, _head_need)
                machine, source, error = header_machine(head, self.probes)
                if error and len(head) == _HEAD_FIRST:  # PE headers further in than usual
                    head = read_member_head(self.archive, self.remote, member, _more_head)
                    machine, source, error = header_machine(head, self.probes)
            except MemberFailure as exc:
                libs[name] = replace(lib, error=str(exc))
                continue
            libs[name] = replace(lib, machine=machine, machine_source=source, error=error)


def read_wheel(http: Http, index_file: IndexFile, probes: Probes, log: Log) -> Analysis:
    """``analyse_wheel`` that never raises: failures become the record's error."""
    remote = RangedFile(http, index_file, log)
    try:
        return analyse_wheel(remote, probes)
    except (FileFailure, MemberFailure) as exc:
        error = str(exc)
    except (zipfile.BadZipFile, struct.error, ValueError, EOFError, OSError) as exc:
        error = f"bad zip: {type(exc).__name__}: {exc}"
    finally:
        remote.close()
    return Analysis(
        fetched_whole=remote.fetched_whole,
        bytes_read=remote.bytes_read,
        requests=remote.requests,
        file_size=remote.size,
        error=error,
    )
