"""What ``fix`` must know of the target that the report does not say: pip,
PEP 668, where the environment lives, and (for the snapshot) every installed
distribution with the hashes of the touched ones' files.

Read by a small stdlib-only script run in the target interpreter itself.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from typing import Any

# Runs in the target (CPython 3.8+): argv[1] is a JSON list of canonical
# names whose files to hash.
_SCRIPT = r"""
import hashlib, importlib.util, json, os, re, sys, sysconfig
from importlib import metadata
want = set(json.loads(sys.argv[1]))
def canon(n):
    return re.sub(r"[-_.]+", "-", n).lower()
def digest(p):
    h = hashlib.sha256()
    with open(p, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
dists, files = [], {}
for d in metadata.distributions():
    name = d.metadata["Name"]
    if not name:
        continue
    c = canon(name)
    where = str(getattr(d, "_path", ""))
    dists.append({"name": name, "canonical": c, "version": d.version, "metadata_dir": where})
    if c in want:
        for f in d.files or ():
            p = os.path.normpath(str(f.locate()))
            ok = os.path.isfile(p) and not os.path.islink(p)
            files[p] = {"dist": c, "sha256": digest(p) if ok else None}
stdlib = sysconfig.get_path("stdlib")
marker = os.path.join(stdlib, "EXTERNALLY-MANAGED")
in_venv = sys.prefix != getattr(sys, "base_prefix", sys.prefix)
print(json.dumps({
    "python": sys.executable,
    "prefix": sys.prefix,
    "in_venv": in_venv,
    "marker": marker,
    "externally_managed": os.path.isfile(marker) and not in_venv,
    "has_pip": importlib.util.find_spec("pip") is not None,
    "site_dirs": sorted({sysconfig.get_path("purelib"), sysconfig.get_path("platlib")}),
    "dists": dists,
    "files": files,
}))
"""


class InspectFailed(Exception):
    """The inspection script could not run in the target."""


@dataclass(frozen=True)
class TargetEnvironment:
    python: str
    prefix: str
    in_venv: bool
    marker: str
    externally_managed: bool
    has_pip: bool
    site_dirs: tuple[str, ...]

    def owns(self, path: str) -> bool:
        """Whether ``path`` lies in this environment's site-packages."""
        real = os.path.realpath(path)
        return any(
            os.path.commonpath([real, os.path.realpath(d)]) == os.path.realpath(d)
            for d in self.site_dirs
        )


@dataclass(frozen=True)
class Inspection:
    environment: TargetEnvironment
    dists: tuple[tuple[str, str, str], ...]  # (canonical, version, metadata_dir), sorted
    files: dict[str, dict[str, Any]]  # path -> {"dist", "sha256"}

    def freeze(self) -> list[str]:
        """The ``pip freeze``-equivalent: every distribution as name==version."""
        return sorted({f"{c}=={v}" for c, v, _where in self.dists})


def inspect(python: str, names: tuple[str, ...] = (), timeout: float = 300.0) -> Inspection:
    try:
        done = subprocess.run(
            [python, "-B", "-c", _SCRIPT, json.dumps(sorted(names))],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InspectFailed(f"could not run {python}: {exc}") from exc
    try:
        data = json.loads(done.stdout.decode("utf-8", errors="replace").strip().splitlines()[-1])
    except (ValueError, IndexError) as exc:
        tail = done.stderr.decode("utf-8", errors="replace")[-2000:]
        raise InspectFailed(
            f"{python}: inspection failed (exit {done.returncode}): {tail}"
        ) from exc
    environment = TargetEnvironment(
        python=str(data["python"]),
        prefix=str(data["prefix"]),
        in_venv=bool(data["in_venv"]),
        marker=str(data["marker"]),
        externally_managed=bool(data["externally_managed"]),
        has_pip=bool(data["has_pip"]),
        site_dirs=tuple(data["site_dirs"]),
    )
    dists = tuple(
        sorted(
            (str(d["canonical"]), str(d["version"]), str(d["metadata_dir"])) for d in data["dists"]
        )
    )
    return Inspection(environment, dists, dict(data["files"]))
