"""Rules about installed distributions: flavours, companions, files on disk."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from packaging.markers import InvalidMarker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from .. import shell
from ..facts.probed import Facts
from ..matrixdata import Matrix
from ._common import (
    distributions,
    label,
    owners_of,
    qnn_dists,
    reinstall_fix,
    target_is_windows,
)
from .declare import rule
from .findings import Evidence, Finding, FindingKind, Fix, Severity, make

NO_QNN = FindingKind("no-onnxruntime-qnn", Severity.ERROR, "onnxruntime-qnn is not installed")
MULTIPLE_OWNERS = FindingKind(
    "onnxruntime-multiple-owners",
    Severity.ERROR,
    "Several distributions install the `onnxruntime` module",
)
COMPANION_MISSING = FindingKind(
    "plugin-companion-missing",
    Severity.ERROR,
    "onnxruntime-qnn 2.x is installed without onnxruntime",
)
COMPANION_MISMATCH = FindingKind(
    "plugin-companion-mismatch",
    Severity.ERROR,
    "The onnxruntime beside onnxruntime-qnn 2.x does not meet its requirement",
)
COMPANION_KNOWN_BROKEN = FindingKind(
    "plugin-companion-known-broken",
    Severity.ERROR,
    "This onnxruntime-qnn and onnxruntime pair meets the requirement but is known to fail",
)
OVERWRITTEN = FindingKind(
    "files-overwritten",
    Severity.ERROR,
    "Key onnxruntime files on disk belong to another distribution",
)
MISSING = FindingKind(
    "files-missing", Severity.ERROR, "Files of an onnxruntime install are missing"
)
MODIFIED = FindingKind(
    "files-modified", Severity.WARNING, "Files differ from what their RECORD says"
)
LEFTOVER = FindingKind(
    "uninstall-leftover", Severity.WARNING, "Leftovers of a failed or partial uninstall"
)
SHADOWED = FindingKind(
    "module-shadowed",
    Severity.ERROR,
    "`import onnxruntime` would load files no installed distribution owns",
)
TWICE = FindingKind(
    "distribution-installed-twice",
    Severity.WARNING,
    "The same onnxruntime flavour is installed in two places on sys.path",
)
NUMPY_MISSING = FindingKind(
    "numpy-missing",
    Severity.ERROR,
    "numpy, which `import onnxruntime` needs, is not installed",
)
NUMPY_TOO_OLD = FindingKind(
    "numpy-too-old",
    Severity.ERROR,
    "The installed numpy is older than onnxruntime requires",
)
# What `import onnxruntime` itself needs of its requirements (measured with
# onnxruntime 1.31.1 installed --no-deps: only numpy; flatbuffers, packaging,
# protobuf, sympy and coloredlogs serve its tools, not a session).
_NEEDED_AT_IMPORT = "numpy"


def _requirement_env(facts: Facts) -> dict[str, str]:
    env = facts.value("interpreter", "marker_environment") or {}
    return {str(k): str(v) for k, v in env.items()}


def _applies(requirement: Requirement, env: dict[str, str]) -> bool:
    if requirement.marker is None:
        return True
    try:
        return bool(requirement.marker.evaluate({**env, "extra": ""}))
    except (InvalidMarker, KeyError, ValueError):
        return True


def _requirements_on(dist: dict[str, Any], name: str, env: dict[str, str]) -> list[Requirement]:
    """``dist``'s Requires-Dist entries on ``name`` that apply to the target."""
    found = []
    for text in dist.get("requires_dist") or []:
        try:
            requirement = Requirement(str(text))
        except InvalidRequirement:
            continue
        if canonicalize_name(requirement.name) == name and _applies(requirement, env):
            found.append(requirement)
    return found


@rule(needs=("installs",), emits=(NO_QNN,))
def onnxruntime_qnn_present(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    if qnn_dists(facts):
        return
    others = [label(d) for d in distributions(facts)]
    yield make(
        NO_QNN,
        "No onnxruntime-qnn distribution is installed for this interpreter, so there is no QNN "
        "execution provider to reach the NPU."
        + (f" Installed onnxruntime flavours: {', '.join(others)}." if others else ""),
        (Evidence("installs.distributions", others),),
        Fix(
            "Install onnxruntime-qnn with this interpreter.",
            pip_runs=(("install", "onnxruntime-qnn"),),
        ),
    )


@rule(needs=("installs",), emits=(MULTIPLE_OWNERS,))
def multiple_owners(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    owners = owners_of(facts, "onnxruntime")
    names = {d.get("canonical_name") for d in owners}
    if len(owners) < 2 or (len(names) == 1 and len({d.get("location") for d in owners}) > 1):
        return  # one name in two places is distribution-installed-twice
    plugin = [d for d in qnn_dists(facts) if d.get("era") == "plugin-2.x"]
    # The one to keep is an owner: a 1.x onnxruntime-qnn (it *is* the module),
    # else plain onnxruntime (what a 2.x plugin needs beside it).
    monolithic = not plugin and "onnxruntime-qnn" in names
    keep = "onnxruntime-qnn" if monolithic else "onnxruntime"
    remove = sorted({str(d.get("name")) for d in owners if d.get("canonical_name") != keep})
    winner = (facts.value("installs", "would_import", {}) or {}).get("onnxruntime", {})
    yield make(
        MULTIPLE_OWNERS,
        "These distributions all install files into the same `onnxruntime` package: "
        + ", ".join(label(d) for d in owners)
        + ". pip does not stop this: each install overwrites the other's files, so the module "
        "you import is a mix, and usually not the QNN build. "
        + (
            "With onnxruntime-qnn 2.x the QNN provider is a plugin and `onnxruntime` must be "
            "plain onnxruntime."
            if not monolithic
            else "onnxruntime-qnn 1.x *is* the onnxruntime module; no other flavour may be installed."
        ),
        (
            Evidence("installs.distributions[provides onnxruntime]", [label(d) for d in owners]),
            Evidence("installs.would_import.onnxruntime", winner.get("path")),
        ),
        Fix(
            f"Uninstall every flavour except {keep}, then reinstall {keep} so its files are whole "
            "again.",
            pip_runs=(
                ("uninstall", "-y", *remove),
                ("install", "--force-reinstall", "--no-deps", keep),
            ),
        )
        if keep in names
        else Fix(
            f"Uninstall {', '.join(remove)}, then install {keep}.",
            pip_runs=(("uninstall", "-y", *remove), ("install", keep)),
        ),
    )


def _known_broken(
    facts: Facts, matrix: Matrix, qnn: dict[str, Any], ort_version: Version
) -> Iterator[Finding]:
    """Known issues (matrix/known_issues.json) that make an installed pair
    fail although pip is satisfied: e.g. the 2.0-2.3 plugin handshake with
    onnxruntime 1.28+. Only issues with public sources speak."""
    try:
        qnn_version = Version(str(qnn.get("version")))
    except InvalidVersion:
        return
    from ..resolver.recommend import profile_from_facts

    platform = profile_from_facts(facts, matrix).bucket or ""  # the matrix's name: win_arm64, ...
    for issue in matrix.releases.known_issues:
        if issue.effect != "pin-companion" or not issue.companion_pin or not issue.sources:
            continue
        if not issue.applies(qnn_version, platform):
            continue
        try:
            pin = Requirement(issue.companion_pin)
        except InvalidRequirement:
            continue
        if pin.specifier.contains(ort_version, prereleases=True):
            continue
        yield make(
            COMPANION_KNOWN_BROKEN,
            f"{label(qnn)} with onnxruntime {ort_version}: {issue.title}. {issue.explanation} "
            f"pip accepts this pair (the plugin only asks for a minimum onnxruntime), so "
            f"nothing warns at install time. ({issue.confidence}; "
            f"sources: {' '.join(issue.sources)})",
            (
                Evidence("installs.distributions[onnxruntime-qnn].version", str(qnn_version)),
                Evidence("installs.distributions[onnxruntime].version", str(ort_version)),
                Evidence("matrix.known_issues", issue.id),
            ),
            Fix(
                f"Install the onnxruntime this onnxruntime-qnn release works with ({pin}), "
                "or upgrade onnxruntime-qnn.",
                pip_runs=(("install", str(pin)),),
            ),
        )


@rule(
    needs=("installs", "interpreter"),
    emits=(COMPANION_MISSING, COMPANION_MISMATCH, COMPANION_KNOWN_BROKEN),
)
def plugin_companion(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    env = _requirement_env(facts)
    for qnn in qnn_dists(facts):
        if qnn.get("era") != "plugin-2.x":
            continue
        requirements = _requirements_on(qnn, "onnxruntime", env)
        spec = ",".join(str(r.specifier) for r in requirements if str(r.specifier))
        owners = owners_of(facts, "onnxruntime")
        needed = f"onnxruntime{spec}" if spec else "onnxruntime"
        evidence = [
            Evidence(
                "installs.distributions[onnxruntime-qnn].requires_dist", qnn.get("requires_dist")
            ),
            Evidence("installs.distributions[provides onnxruntime]", [label(d) for d in owners]),
        ]
        if not owners:
            yield make(
                COMPANION_MISSING,
                f"{label(qnn)} is a plugin execution provider: it needs a separate `onnxruntime` "
                f"({needed}) to plug into, and none is installed. `import onnxruntime` fails.",
                tuple(evidence),
                Fix("Install the onnxruntime it requires.", pip_runs=(("install", needed),)),
            )
            continue
        plain = [d for d in owners if d.get("canonical_name") == "onnxruntime"]
        if not plain:
            yield make(
                COMPANION_MISMATCH,
                f"{label(qnn)} requires the `onnxruntime` distribution ({needed}), but the "
                f"`onnxruntime` module here comes from {', '.join(label(d) for d in owners)}. "
                "Other flavours (or onnxruntime-qnn 1.x) are different builds that the plugin "
                "was not made for.",
                tuple(evidence),
                Fix(
                    "Replace the other flavour with plain onnxruntime.",
                    pip_runs=(
                        ("uninstall", "-y", *sorted({str(d.get("name")) for d in owners})),
                        ("install", needed),
                    ),
                ),
            )
            continue
        for ort in plain:
            try:
                version = Version(str(ort.get("version")))
            except InvalidVersion:
                continue
            bad = [r for r in requirements if not r.specifier.contains(version, prereleases=True)]
            if bad:
                evidence.append(
                    Evidence("installs.distributions[onnxruntime].version", str(version))
                )
                yield make(
                    COMPANION_MISMATCH,
                    f"{label(qnn)} requires {needed}, but onnxruntime {version} is installed. "
                    "The plugin's EP API handshake fails with an older onnxruntime: "
                    "registering the library raises, or the QNN device never appears in "
                    "get_ep_devices().",
                    tuple(evidence),
                    Fix(
                        "Upgrade onnxruntime to what the plugin requires.",
                        pip_runs=(("install", needed),),
                    ),
                )
            else:
                yield from _known_broken(facts, matrix, qnn, version)


def _key_file_problems(dist: dict[str, Any], statuses: tuple[str, ...]) -> list[dict[str, Any]]:
    return [k for k in dist.get("key_files", []) if k.get("status") in statuses]


@rule(needs=("installs",), emits=(OVERWRITTEN, MISSING, MODIFIED))
def files_on_disk(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    for dist in distributions(facts):
        if not dist.get("provides_modules"):
            continue
        overwritten = _key_file_problems(dist, ("overwritten",))
        if overwritten:
            by = sorted({str(k.get("owner_on_disk")) for k in overwritten})
            names = ", ".join(str(k["path"]).rsplit("/", 1)[-1] for k in overwritten[:6])
            yield make(
                OVERWRITTEN,
                f"{label(dist)} is installed, but on disk its {names} "
                f"{'is' if len(overwritten) == 1 else 'are'} the copy from {', '.join(by)}. "
                "Whatever pip list says, the code that runs is the other distribution's.",
                (
                    Evidence(
                        f"installs.distributions[{dist.get('id')}].key_files", overwritten[:10]
                    ),
                    Evidence(
                        f"installs.distributions[{dist.get('id')}].overwritten_by",
                        dist.get("overwritten_by"),
                    ),
                ),
                reinstall_fix(
                    facts,
                    dist,
                    f"Remove the other distribution, then force-reinstall {dist.get('name')}.",
                ),
            )
        missing_keys = _key_file_problems(dist, ("missing",))
        if missing_keys or dist.get("files_missing"):
            yield make(
                MISSING,
                f"{label(dist)}: {dist.get('files_missing')} of {dist.get('files_total')} files "
                "listed in its RECORD are not on disk"
                + (
                    f", including {', '.join(str(k['path']) for k in missing_keys[:5])}"
                    if missing_keys
                    else ""
                )
                + ". Typically another flavour's uninstall deleted shared files, or an "
                "antivirus quarantined a DLL.",
                (
                    Evidence(
                        f"installs.distributions[{dist.get('id')}].missing_examples",
                        dist.get("missing_examples"),
                    ),
                    Evidence(
                        f"installs.distributions[{dist.get('id')}].files_missing",
                        dist.get("files_missing"),
                    ),
                ),
                reinstall_fix(facts, dist),
                severity=Severity.ERROR if missing_keys else Severity.WARNING,
            )
        modified = _key_file_problems(dist, ("modified",))
        if modified:
            yield make(
                MODIFIED,
                f"{label(dist)}: {', '.join(str(k['path']) for k in modified[:5])} differ from "
                "the size or hash in RECORD, and no other installed distribution claims them: "
                "patched by hand, truncated, or left over from another install.",
                (Evidence(f"installs.distributions[{dist.get('id')}].key_files", modified[:10]),),
                reinstall_fix(facts, dist),
            )


def _remove_command(facts: Facts, path: str) -> str:
    return shell.remove_command(path, target_is_windows(facts))


@rule(needs=("installs",), emits=(LEFTOVER,))
def uninstall_leftovers(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    leftovers = facts.value("installs", "leftovers", []) or []
    if not leftovers:
        return
    described = {
        "pip-temp-rename": "a folder pip renamed to '~...' while uninstalling and never removed",
        "metadata-without-files": "a dist-info whose files are all gone",
        "files-without-metadata": "a package folder that no installed distribution owns",
        "broken-metadata": "a dist-info without a usable RECORD",
    }
    yield make(
        LEFTOVER,
        "Found: "
        + "; ".join(
            f"{described.get(item['kind'], item['kind'])} ({item['path']})"
            for item in leftovers[:8]
        )
        + ". These confuse pip and can be imported instead of the real install. Close every "
        "Python process first (a loaded DLL cannot be deleted on Windows), then remove them.",
        (Evidence("installs.leftovers", leftovers[:20]),),
        Fix(
            "Delete the leftovers (check each path first), then reinstall the flavour you want.",
            tuple(_remove_command(facts, str(item["path"])) for item in leftovers[:8]),
        ),
    )


@rule(needs=("installs",), emits=(SHADOWED,))
def shadowed_module(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    would = (facts.value("installs", "would_import", {}) or {}).get("onnxruntime") or {}
    if not would.get("found") or would.get("kind") == "namespace" or would.get("owners"):
        return
    if not distributions(facts) and would.get("entry_kind") in ("site", "user_site"):
        return  # files without metadata: uninstall-leftover reports it
    where = {
        "cwd": "the current directory (sys.path[0] for `python -c` and the REPL; for a script, its folder)",
        "pythonpath": "a PYTHONPATH entry",
    }.get(str(would.get("entry_kind")), "a sys.path entry")
    yield make(
        SHADOWED,
        f"`import onnxruntime` would load {would.get('path')}, found in {where}, which no "
        "installed distribution owns. It hides the installed onnxruntime; a local folder or "
        "a source checkout named `onnxruntime` is the usual cause.",
        (Evidence("installs.would_import.onnxruntime", would),),
        Fix(
            "Rename or move that folder, or run from another directory / without that PYTHONPATH entry."
        ),
    )


@rule(needs=("installs",), emits=(TWICE,))
def installed_twice(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    by_name: dict[str, list[dict[str, Any]]] = {}
    for dist in distributions(facts):
        by_name.setdefault(str(dist.get("canonical_name")), []).append(dist)
    for name, dists in sorted(by_name.items()):
        if len({d.get("location") for d in dists}) < 2:
            continue
        ordered = sorted(dists, key=lambda d: int(d.get("search_index", 0)))
        yield make(
            TWICE,
            f"{name} is installed {len(dists)} times: "
            + ", ".join(
                f"{d.get('version')} in {d.get('location')} ({d.get('location_kind')})"
                for d in ordered
            )
            + f". The one earlier on sys.path ({ordered[0].get('version')}) wins the import; pip "
            "commands may act on the other.",
            (Evidence("installs.distributions", [d.get("id") for d in ordered]),),
            Fix(
                "Keep one: usually remove the user-site copy.",
                pip_runs=(("uninstall", "-y", name),),
            ),
        )


@rule(needs=("installs", "interpreter"), emits=(NUMPY_MISSING, NUMPY_TOO_OLD))
def numpy_for_onnxruntime(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    """numpy as the onnxruntime flavours require it (their Requires-Dist,
    markers evaluated for the target): `import onnxruntime` fails without it
    ("import numpy failed") or with an older one than it was built for."""
    present = facts.value("installs", "requirements_present")
    if not isinstance(present, dict) or _NEEDED_AT_IMPORT not in present:
        return  # a saved report of an older probe, or nothing requires numpy
    if not owners_of(facts, "onnxruntime"):
        return  # no onnxruntime to import: plugin-companion-missing says what to install
    env = _requirement_env(facts)
    wanting = [
        (dist, requirement)
        for dist in distributions(facts)
        for requirement in _requirements_on(dist, _NEEDED_AT_IMPORT, env)
    ]
    if not wanting:
        return
    spec = ",".join(sorted({str(r.specifier) for _, r in wanting if str(r.specifier)}))
    needed = f"numpy{spec}"
    requirers = ", ".join(sorted({label(d) for d, _ in wanting}))
    installed = [str(v) for v in present.get(_NEEDED_AT_IMPORT) or []]
    evidence = (
        Evidence(
            "installs.distributions[requires numpy]",
            [f"{label(d)}: {r}" for d, r in wanting],
        ),
        Evidence("installs.requirements_present.numpy", installed),
    )
    fix = Fix(
        f"Install the numpy they require ({needed}) with this interpreter.",
        pip_runs=(("install", needed),),
    )
    if not installed:
        yield make(
            NUMPY_MISSING,
            f"{requirers} require {needed}, and no numpy "
            "is installed for this interpreter (typical after `pip install --no-deps`, or a "
            "copied site-packages). `import onnxruntime` then fails with 'ImportError: import "
            "numpy failed' (ModuleNotFoundError: No module named 'numpy' just before it).",
            evidence,
            fix,
        )
        return
    versions = []
    for text in installed:
        try:
            versions.append(Version(text))
        except InvalidVersion:
            continue
    if not versions or any(
        all(r.specifier.contains(v, prereleases=True) for _, r in wanting) for v in versions
    ):
        return
    yield make(
        NUMPY_TOO_OLD,
        f"numpy {', '.join(installed)} is installed, but "
        f"{requirers} require {needed}. An onnxruntime "
        "built against a newer numpy fails at import ('numpy.core.multiarray failed to "
        "import', 'module compiled against API version ...').",
        evidence,
        fix,
    )
