"""The companion experiments (``python -m matrix.refresh.companions``):
every onnxruntime-qnn 2.x release with a Linux x86-64 wheel, paired with
every ``onnxruntime`` release its metadata admits and the next one beyond
that range (the newest below its lower bound), each pair run for real as
``qnndoctor bisect`` runs it (a throwaway venv, pip, the smoke session on
the HTP simulator). Each release entry of ``releases.json`` gets
``companions``: one row per pair with its outcome, cause and date. The
resolver takes its companion pins from these rows (docs/matrix.md).

Runs on Linux x86-64 only (the simulator); ``--find-links DIR`` reads the
wheels from a wheelhouse (offline), else pip's configured index.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import platform
import re
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from qnndoctor.matrixdata.wheelreader.assemble import dump

PLATFORM = "linux_x86_64"
_WHEEL = re.compile(r"^onnxruntime-([^-]+)-(cp\d+)-[^-]+-([^-]+)\.whl$")


def companion_spec(release: Mapping[str, Any]) -> SpecifierSet | None:
    """The onnxruntime requirement of the release's Linux x86-64 wheels."""
    for file in release.get("files") or ():
        if file.get("platform") != PLATFORM:
            continue
        for text in file.get("requires_dist") or ():
            try:
                requirement = Requirement(str(text))
            except InvalidRequirement:
                continue
            if requirement.name == "onnxruntime" and not requirement.marker:
                return requirement.specifier
    return None


def admitted(spec: SpecifierSet, available: Sequence[Version]) -> list[tuple[Version, bool]]:
    """Every available release ``spec`` admits (True), and the next one
    beyond it (False): the newest below the admitted ones, newest first."""
    inside = sorted((v for v in available if spec.contains(v)), reverse=True)
    below = [v for v in available if not v.is_prerelease and inside and v < min(inside)]
    found = [(v, True) for v in inside]
    if below:
        found.append((max(below), False))
    return found


def wheelhouse_versions(folder: Path, python_tag: str) -> list[Version]:
    found = set()
    for path in folder.glob("onnxruntime-*.whl"):
        match = _WHEEL.match(path.name)
        if match and match.group(2) == python_tag and "x86_64" in match.group(3):
            try:
                found.add(Version(match.group(1)))
            except InvalidVersion:
                continue
    return sorted(found)


def index_versions(python: str) -> list[Version]:
    """``pip index versions onnxruntime`` as pip is configured (its index)."""
    done = subprocess.run(
        [python, "-m", "pip", "index", "versions", "onnxruntime"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    match = re.search(r"Available versions:\s*(.+)", done.stdout)
    if match is None:
        raise SystemExit(f"pip index versions onnxruntime: {done.stderr.strip()[-500:]}")
    return sorted(Version(v.strip()) for v in match.group(1).split(",") if v.strip())


def run(
    releases_path: Path,
    *,
    python: str,
    find_links: Path | None,
    only: SpecifierSet | None,
    smoke_timeout: float,
    log: Any,
) -> int:
    from qnndoctor import matrixdata
    from qnndoctor.bisect.plan import Pair
    from qnndoctor.bisect.session import BisectOptions, run_pairs

    document = json.loads(releases_path.read_text("utf-8"))
    tag = "cp{}{}".format(*sys.version_info[:2])
    probe = subprocess.run(
        [python, "-c", "import sys; print('cp%d%d' % sys.version_info[:2])"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    tag = probe.stdout.strip() or tag
    available = wheelhouse_versions(find_links, tag) if find_links else index_versions(python)
    matrix = matrixdata.load_or_empty()
    options = BisectOptions(
        all=True,
        find_links=str(find_links) if find_links else None,
        smoke_timeout=smoke_timeout,
        record=False,
    )
    tried = 0
    for release in document["releases"]:
        version = Version(release["version"])
        spec = companion_spec(release)
        if version.major < 2 or spec is None or (only is not None and not only.contains(version)):
            continue
        companions = admitted(spec, available)
        pairs = tuple(
            Pair(str(version), "plugin-2.x", f"onnxruntime=={v}", "companion experiment")
            for v, _inside in companions
        )
        log(f"{version}: {len(pairs)} companions ({spec}; beyond: {companions[-1][0]})")
        results, stopped = run_pairs(pairs, options, python, matrix, log)
        if stopped:
            log(f"{version}: stopped: {stopped}")
        date = dt.datetime.now(dt.timezone.utc).date().isoformat()
        inside = {str(v): flag for v, flag in companions}
        rows = [
            {
                "onnxruntime": r.onnxruntime,
                "outcome": r.outcome,
                "cause": r.cause,
                "date": date,
                "platform": PLATFORM,
                "python": tag,
                "admitted": inside.get(str(r.onnxruntime), False),
            }
            for r in results
        ]
        release["companions"] = rows
        tried += len(rows)
        for row in rows:
            log(f"  {version} + {row['onnxruntime']}: {row['outcome']} {row['cause'] or ''}")
        # Saved after every release: a long run that is stopped keeps what it measured.
        releases_path.write_text(dump(document), "utf-8")
    log(f"{tried} pairs recorded in {releases_path}")
    return 0


def carry_over(previous: Mapping[str, Any] | None, document: dict[str, Any]) -> None:
    """A refresh of the wheels keeps each release's companion rows."""
    if not previous:
        return
    rows = {
        str(r.get("version")): r["companions"]
        for r in previous.get("releases") or ()
        if isinstance(r, dict) and r.get("companions")
    }
    for release in document.get("releases") or ():
        if str(release.get("version")) in rows:
            release["companions"] = rows[str(release["version"])]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m matrix.refresh.companions")
    parser.add_argument(
        "--matrix",
        type=Path,
        default=Path(__file__).resolve().parent.parent / "releases.json",
        help="the releases.json to add the rows to (default: the committed one)",
    )
    parser.add_argument("--python", default=getattr(sys, "_base_executable", sys.executable))
    parser.add_argument("--find-links", type=Path, help="a wheelhouse (offline)")
    parser.add_argument("--releases", help="only these onnxruntime-qnn releases (a specifier)")
    parser.add_argument("--smoke-timeout", type=float, default=120.0)
    args = parser.parse_args(argv)
    if sys.platform != "linux" or platform.machine() not in ("x86_64", "AMD64"):
        parser.error("the companion experiments run on Linux x86-64 (the HTP simulator)")

    def log(message: str) -> None:
        sys.stderr.write(f"companions: {message}\n")
        sys.stderr.flush()

    only = SpecifierSet(args.releases) if args.releases else None
    return run(
        args.matrix,
        python=args.python,
        find_links=args.find_links,
        only=only,
        smoke_timeout=args.smoke_timeout,
        log=log,
    )


if __name__ == "__main__":
    sys.exit(main())
