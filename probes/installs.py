"""Probe 3: every distribution that provides ``onnxruntime`` / ``onnxruntime_qnn``,
and whose files are really on disk.

Works from the files alone (dist-info folders, RECORD, top_level.txt) and
never imports onnxruntime, so it works when onnxruntime crashes on import.
Cost grows linearly with the number of installed distributions: an unrelated
distribution costs one small file read (``top_level.txt``), or one RECORD
read when that file is missing. Start-up counts too (the probe program runs
on every check): the modules imported here are the cheap ones.
"""

from __future__ import annotations

import csv
import io
import os

from ._names import is_flavour_folder, is_key_file_name
from ._requirements import requirements_present
from ._searchpath import SearchEntry, module_resolution, search_path
from ._util import (
    LazyPattern,
    absolute,
    canonical_name,
    hash_file,
    open_regular,
    show,
)
from .base import Context, ProbeOutput

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: the target's startup skips `typing`
    from typing import Any, Dict, Iterable, List, Optional, Tuple

NAME = "installs"

MODULES = ("onnxruntime", "onnxruntime_qnn")

_RECORD_MODULE_LINE = LazyPattern(rb'(?m)^"?(onnxruntime|onnxruntime_qnn)(/|\.py)')

# Hash files up to this size whenever their size matches; bigger ones are
# hashed only when the size cannot tell two owners apart, or in deep mode.
HASH_LIMIT = 256 * 1024
_MAX_LISTED = 25


def parse_headers(text: str) -> Dict[str, List[str]]:
    """The header block of METADATA / PKG-INFO (RFC 822 style, continuation
    lines folded). ``email.parser`` would do, but costs ~25 ms to import."""
    headers: Dict[str, List[str]] = {}
    last: Optional[str] = None
    for line in text.splitlines():
        if not line.strip():
            break
        if line[0] in " \t" and last is not None:
            headers[last][-1] += " " + line.strip()
            continue
        name, sep, value = line.partition(":")
        if not sep:
            raise ValueError("malformed header line %r" % line[:60])
        last = name.strip().lower()
        headers.setdefault(last, []).append(value.strip())
    return headers


def record_path(base: str, rel: str) -> str:
    """The file a RECORD row names, in one canonical spelling. The plain case
    (no ``..``, POSIX) skips normpath: RECORDs have hundreds of rows."""
    if os.sep == "/" and "/.." not in rel and not rel.startswith(".."):
        return base + "/" + rel if not base.endswith("/") else base + rel
    return os.path.normcase(os.path.normpath(os.path.join(base, rel)))


def _first(headers: Dict[str, List[str]], name: str) -> Optional[str]:
    values = headers.get(name)
    return values[0] if values else None


def _read_bytes(path: str, limit: int = 16 * 1024 * 1024) -> Optional[bytes]:
    try:
        with open_regular(path) as handle:
            return handle.read(limit)
    except OSError:
        return None


class Distribution:
    """A dist-info / egg-info folder and what its metadata and RECORD claim."""

    def __init__(self, entry: SearchEntry, folder_name: str) -> None:
        self.entry = entry
        self.folder_name = folder_name
        self.folder = os.path.join(entry.path, folder_name)
        self.kind = "dist-info" if folder_name.endswith(".dist-info") else "egg-info"
        self.name: Optional[str] = None
        self.version: Optional[str] = None
        self.requires_python: Optional[str] = None
        self.requires_dist: List[str] = []
        self.problems: List[str] = []
        self.record: Optional[List[Tuple[str, Optional[str], Optional[int]]]] = None
        self.top_level: Optional[List[str]] = None
        self.full_paths: List[str] = []  # record_path() of each RECORD row

    @property
    def ident(self) -> str:
        return "%s==%s@%d" % (canonical_name(self.name or "?"), self.version, self.entry.index)

    def read_metadata(self) -> None:
        meta_name = "METADATA" if self.kind == "dist-info" else "PKG-INFO"
        data = _read_bytes(os.path.join(self.folder, meta_name), 1024 * 1024)
        if data is None:
            self.problems.append("%s missing or unreadable" % meta_name)
            name, _, version = self.folder_name.rsplit(".", 1)[0].partition("-")
            self.name, self.version = name or None, version or None
            return
        try:
            headers = parse_headers(data.decode("utf-8", "replace"))
        except ValueError as exc:
            self.problems.append("%s unparseable: %s" % (meta_name, exc))
            headers = {}
        self.name = _first(headers, "name")
        self.version = _first(headers, "version")
        self.requires_python = _first(headers, "requires-python")
        self.requires_dist = list(headers.get("requires-dist") or [])
        if not self.name or not self.version:
            self.problems.append("%s has no Name or Version" % meta_name)
            base_name, _, version = self.folder_name.rsplit(".", 1)[0].partition("-")
            self.name = self.name or base_name or None
            self.version = self.version or version or None

    def read_top_level(self) -> Optional[List[str]]:
        data = _read_bytes(os.path.join(self.folder, "top_level.txt"), 65536)
        if data is None:
            return None
        self.top_level = [
            line.strip() for line in data.decode("utf-8", "replace").splitlines() if line.strip()
        ]
        return self.top_level

    def read_record(self) -> None:
        if self.kind != "dist-info":
            return
        data = _read_bytes(os.path.join(self.folder, "RECORD"))
        if data is None:
            self.problems.append("RECORD missing or unreadable")
            return
        rows: List[Tuple[str, Optional[str], Optional[int]]] = []
        try:
            reader = csv.reader(io.StringIO(data.decode("utf-8", "replace")))
            for number, row in enumerate(reader, 1):
                if not row:
                    continue
                if len(row) != 3:
                    self.problems.append("RECORD line %d has %d fields" % (number, len(row)))
                    continue
                size: Optional[int]
                try:
                    size = int(row[2]) if row[2] else None
                except ValueError:
                    self.problems.append("RECORD line %d has a bad size" % number)
                    size = None
                rows.append((row[0], row[1] or None, size))
        except csv.Error as exc:
            self.problems.append("RECORD unparseable: %s" % exc)
        self.record = rows

    def provided_modules(self) -> List[str]:
        found: List[str] = []
        for module in self.top_level or []:
            if module in MODULES and module not in found:
                found.append(module)
        for path, _hash, _size in self.record or []:
            top = path.replace("\\", "/").split("/", 1)[0]
            if top.endswith(".py"):
                top = top[:-3]
            if top in MODULES and top not in found:
                found.append(top)
        return found


def _candidate_dists(entries: Iterable[SearchEntry]) -> List[Distribution]:
    """Flavours by name, plus any other distribution claiming our modules."""
    found: List[Distribution] = []
    for entry in entries:
        for name in entry.names:
            if not name.endswith((".dist-info", ".egg-info")) or name.startswith("~"):
                continue
            dist = Distribution(entry, name)
            if is_flavour_folder(name):
                found.append(dist)
                continue
            top_level = dist.read_top_level()
            if top_level is not None:
                if any(module in MODULES for module in top_level):
                    found.append(dist)
                continue
            record = _read_bytes(os.path.join(dist.folder, "RECORD"))
            # The substring test (memchr-fast) spares the regex, which tries
            # every position, the big RECORDs of unrelated distributions.
            if record and b"onnxruntime" in record and _RECORD_MODULE_LINE.search(record):
                found.append(dist)
    return found


def _era(dist: Distribution, modules: List[str]) -> Optional[str]:
    name = canonical_name(dist.name or "")
    if "onnxruntime_qnn" in modules:
        return "plugin-2.x"
    if name in ("onnxruntime-qnn", "ort-nightly-qnn"):
        major = (dist.version or "").split(".", 1)[0]
        if major.isdigit():
            return "monolithic-1.x" if int(major) < 2 else "plugin-2.x"
    return None


class FileCheck:
    """The state of one RECORD entry on disk (one per file of onnxruntime's
    hundreds: kept small)."""

    __slots__ = ("_hashes", "error", "exists", "path", "size")

    def __init__(self, path: str) -> None:
        self.path = path
        self.exists = False
        self.size: Optional[int] = None
        self._hashes: Optional[Dict[str, str]] = None
        self.error: Optional[str] = None
        try:
            stat = os.stat(path)
            self.exists = True
            self.size = stat.st_size
        except FileNotFoundError:
            pass
        except OSError as exc:
            self.error = "%s: %s" % (type(exc).__name__, exc)

    def hash(self, algorithm: str) -> Optional[str]:
        if self._hashes is None:
            self._hashes = {}
        if algorithm not in self._hashes:
            try:
                self._hashes[algorithm] = hash_file(self.path, algorithm)
            except (OSError, ValueError) as exc:
                self.error = "%s: %s" % (type(exc).__name__, exc)
                return None
        return self._hashes[algorithm]


def _verdict(
    check: FileCheck, recorded_hash: Optional[str], recorded_size: Optional[int], deep: bool
) -> Tuple[str, str]:
    """(status, method): does the file on disk match what RECORD says?"""
    if check.error and not check.exists:
        return "unreadable", "stat"
    if not check.exists:
        return "missing", "stat"
    if recorded_size is not None and check.size != recorded_size:
        return "modified", "size"
    if not recorded_hash or "=" not in recorded_hash:
        return "unverifiable", "no hash in RECORD"
    if check.size is not None and check.size > HASH_LIMIT and not deep:
        return "size-match", "size"
    algorithm, _, expected = recorded_hash.partition("=")
    try:
        actual = check.hash(algorithm)
    except Exception:
        return "unverifiable", "unsupported hash %s" % algorithm
    if actual is None:
        return "unreadable", "hash"
    return ("intact" if actual == expected else "modified"), "hash"


def _owner_label(
    on_disk_owner: "Dict[str, Optional[Distribution]]", path: str, dist: Distribution, status: str
) -> Optional[str]:
    """Whose copy of ``path`` is on disk, as far as we can tell."""
    if path in on_disk_owner:
        owner = on_disk_owner[path]
        return owner.ident if owner is not None else None
    return dist.ident if status in ("intact", "size-match") else None


if TYPE_CHECKING:
    Claim = Tuple[Distribution, Optional[str], Optional[int]]


def _read_dists(dists: List[Distribution]) -> Dict[str, List[Claim]]:
    """Reads every candidate's metadata and RECORD: which distributions claim each file."""
    claims: Dict[str, List[Claim]] = {}
    for dist in dists:
        dist.read_metadata()
        if dist.top_level is None:
            dist.read_top_level()
        dist.read_record()
        dist.full_paths = [record_path(dist.entry.path, row[0]) for row in dist.record or []]
        for index, (_rel, digest, size) in enumerate(dist.record or []):
            claims.setdefault(dist.full_paths[index], []).append((dist, digest, size))
    return claims


class _Disk:
    """The files on disk as far as looked at: one FileCheck per path, and for
    files claimed by several distributions, whose copy is there."""

    def __init__(self) -> None:
        self.checks: Dict[str, FileCheck] = {}
        self.owner: Dict[str, Optional[Distribution]] = {}
        self.method: Dict[str, str] = {}

    def check(self, path: str) -> FileCheck:
        if path not in self.checks:
            self.checks[path] = FileCheck(path)
        return self.checks[path]

    def shared(self, claims: Dict[str, List[Claim]]) -> List[Dict[str, Any]]:
        """Files claimed by more than one distribution: whose copy is on disk?"""
        shared: List[Dict[str, Any]] = []
        for path, claimants in claims.items():
            if len({id(c[0]) for c in claimants}) < 2:
                continue
            check = self.check(path)
            owner, method = _on_disk_owner(check, claimants)
            self.owner[path] = owner
            self.method[path] = method
            shared.append(
                {
                    "path": show(path),
                    "claimed_by": [c[0].ident for c in claimants],
                    "on_disk_owner": owner.ident if owner else None,
                    "exists": check.exists,
                    "method": method,
                }
            )
        return shared


def _on_disk_owner(check: FileCheck, claimants: List[Claim]) -> Tuple[Optional[Distribution], str]:
    """(the claimant whose copy is on disk or None, how that was told)."""
    if not check.exists:
        return None, "stat"
    by_size = [c for c in claimants if c[2] is None or c[2] == check.size]
    method = "size"
    if len(by_size) > 1:
        method = "hash"
        by_size = [
            c
            for c in by_size
            if c[1] and "=" in c[1] and check.hash(c[1].partition("=")[0]) == c[1].partition("=")[2]
        ]
    return (by_size[0][0] if len(by_size) == 1 else None), method


def _dist_info(dist: Distribution, disk: _Disk, deep: bool) -> Dict[str, Any]:
    modules = dist.provided_modules()
    info: Dict[str, Any] = {
        "id": dist.ident,
        "name": dist.name,
        "canonical_name": canonical_name(dist.name or ""),
        "version": dist.version,
        "location": show(dist.entry.path),
        "location_kind": dist.entry.kind,
        "search_index": dist.entry.index,
        "metadata_dir": show(dist.folder),
        "metadata_kind": dist.kind,
        "provides_modules": modules,
        "era": _era(dist, modules),
        "requires_python": dist.requires_python,
        "requires_dist": dist.requires_dist,
        "problems": dist.problems,
    }
    installer = _read_bytes(os.path.join(dist.folder, "INSTALLER"), 256)
    info["installer"] = installer.decode("utf-8", "replace").strip() if installer else None
    info["requested"] = os.path.exists(os.path.join(dist.folder, "REQUESTED"))
    info["editable"] = os.path.exists(
        os.path.join(dist.folder, "direct_url.json")
    ) and b'"editable": true' in (
        _read_bytes(os.path.join(dist.folder, "direct_url.json"), 65536) or b""
    )
    info.update(_dist_files(dist, disk, deep))
    return info


def _is_metadata_file(rel: str, folder_name: str) -> bool:
    """Is this RECORD row a file of the metadata folder itself?"""
    if "\\" in rel:
        return rel.replace("\\", "/").split("/", 1)[0] == folder_name
    return rel.split("/", 1)[0] == folder_name


def _dist_files(dist: Distribution, disk: _Disk, deep: bool) -> Dict[str, Any]:
    """How many of the distribution's files are on disk, the state of its key
    files, and who overwrote its files (in the order of the probe's output)."""
    files_total = files_missing = 0
    missing: List[str] = []
    key_files: List[Dict[str, Any]] = []
    overwritten_by: Dict[str, int] = {}
    for index, (rel, digest, size) in enumerate(dist.record or []):
        if _is_metadata_file(rel, dist.folder_name):
            continue
        full = dist.full_paths[index]
        files_total += 1
        check = disk.check(full)
        if not check.exists:
            files_missing += 1
            if len(missing) < _MAX_LISTED:
                missing.append(rel)
        if full in disk.owner and disk.owner[full] is not dist and check.exists:
            other = disk.owner[full]
            label = other.ident if other else "no claimant's copy (changed on disk)"
            overwritten_by[label] = overwritten_by.get(label, 0) + 1
        if _is_key(rel):
            key_files.append(_key_file(dist, disk, full, rel, digest, size, deep))
    return {
        "files_total": files_total,
        "files_missing": files_missing,
        "missing_examples": missing,
        "record_present": dist.record is not None,
        "key_files": key_files,
        "overwritten_by": overwritten_by,
    }


def _is_key(rel: str) -> bool:
    if rel.split("/", 1)[0] not in MODULES:
        return False
    base = os.path.basename(rel)
    return is_key_file_name(base) or (base == "__init__.py" and rel.count("/") == 1)


def _key_file(
    dist: Distribution,
    disk: _Disk,
    full: str,
    rel: str,
    digest: Optional[str],
    size: Optional[int],
    deep: bool,
) -> Dict[str, Any]:
    check = disk.check(full)
    status, method = _verdict(check, digest, size, deep)
    if full in disk.owner and check.exists:
        owner = disk.owner[full]
        if owner is not None and owner is not dist:
            status, method = "overwritten", disk.method[full]
    return {
        "path": rel,
        "status": status,
        "method": method,
        "recorded_size": size,
        "size": check.size,
        "owner_on_disk": _owner_label(disk.owner, full, dist, status),
    }


def _leftovers(
    entries: List[SearchEntry], claims: Dict[str, List[Claim]], results: List[Dict[str, Any]]
) -> List[Dict[str, Any]]:
    """pip's temporary renames, module folders without metadata and metadata
    without files (or with a broken RECORD)."""
    leftovers: List[Dict[str, Any]] = []
    for entry in entries:
        leftovers.extend(_entry_leftovers(entry, claims))
    for info in results:
        if (
            info["record_present"]
            and info["files_total"]
            and info["files_missing"] == info["files_total"]
        ):
            leftovers.append(
                {"kind": "metadata-without-files", "path": info["metadata_dir"], "dist": info["id"]}
            )
        elif (
            info["problems"] and not info["record_present"] and info["metadata_kind"] == "dist-info"
        ):
            leftovers.append(
                {"kind": "broken-metadata", "path": info["metadata_dir"], "dist": info["id"]}
            )
    return leftovers


def _entry_leftovers(entry: SearchEntry, claims: Dict[str, List[Claim]]) -> List[Dict[str, Any]]:
    leftovers: List[Dict[str, Any]] = []
    for name in entry.names:
        lower = name.lower()
        if name.startswith("~") and (
            "nnxruntime" in lower or "rt_nightly" in lower or "rt-nightly" in lower
        ):
            leftovers.append(
                {"kind": "pip-temp-rename", "path": show(os.path.join(entry.path, name))}
            )
    for module in MODULES:
        if module not in entry.names or not os.path.isdir(os.path.join(entry.path, module)):
            continue
        init = os.path.normcase(os.path.normpath(os.path.join(entry.path, module, "__init__.py")))
        if init not in claims:
            leftovers.append(
                {
                    "kind": "files-without-metadata",
                    "path": show(os.path.join(entry.path, module)),
                    "module": module,
                }
            )
    return leftovers


def _would_import(entries: List[SearchEntry], claims: Dict[str, List[Claim]]) -> Dict[str, Any]:
    resolution: Dict[str, Any] = {}
    for module in MODULES:
        found = module_resolution(entries, module)
        init = found.pop("_init_raw", None)
        if init:
            target = os.path.normcase(os.path.normpath(init))
            found["owners"] = [c[0].ident for c in claims.get(target, [])]
        resolution[module] = found
    return resolution


def run(ctx: Context) -> ProbeOutput:
    out = ProbeOutput()
    deep = bool(ctx.options.get("deep"))
    site_dirs = {
        os.path.normcase(absolute(p)) for p in ctx.value("interpreter", "site_packages", [])
    }
    entries, duplicates = search_path(site_dirs, ctx.value("interpreter", "user_site"))
    out.put("search_path", [e.as_json() for e in entries], "sys.path + os.listdir")
    out.put("duplicate_search_path_entries", duplicates, "os.path.realpath of sys.path")

    dists = _candidate_dists(entries)
    claims = _read_dists(dists)
    disk = _Disk()
    shared = disk.shared(claims)
    results = [_dist_info(dist, disk, deep) for dist in dists]
    out.private["raw_locations"] = {show(d.entry.path): d.entry.path for d in dists}
    out.put("distributions", results, "dist-info METADATA/RECORD/top_level.txt on sys.path")
    out.put("shared_files", shared[:200], "RECORD entries claimed by several distributions")
    out.put("shared_files_total", len(shared), "RECORD entries claimed by several distributions")

    out.put("would_import", _would_import(entries, claims), "path search over sys.path (no import)")
    # The target's own pip, and ensurepip (which installs the pip bundled with
    # this Python): every fix command runs ``<python> -m pip``, and venvs made
    # by uv or ``venv --without-pip`` have no pip.
    tools: Dict[str, Any] = {}
    for module in ("pip", "ensurepip"):
        found = module_resolution(entries, module)
        found.pop("_init_raw", None)
        tools[module] = found
    out.put("pip_tools", tools, "path search over sys.path (no import)")
    out.put(
        "requirements_present",
        requirements_present(entries, results),
        "dist-info / egg-info folder names on sys.path",
    )
    out.put("leftovers", _leftovers(entries, claims, results), "sys.path folder listings")
    out.put("hash_limit_bytes", None if deep else HASH_LIMIT, "probe option deep")
    return out
