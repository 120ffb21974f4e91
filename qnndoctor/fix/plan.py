"""The plan: what ``fix`` would change, each step with why.

No second set of rules: the steps are the pip commands the report already
gives (the recommendation's, and the fixes of its error and warning
findings), read back into argument lists, merged and ordered; leftovers come
from the ``uninstall-leftover`` finding's facts. What the plan adds is only
what running them safely needs: exact pins, ``--no-deps`` on force-reinstalls
(so they rewrite one distribution's files, not its dependencies'), one
closing ``dependencies`` step (the pins again, resolved by pip) where a
force-reinstall or ``pip check`` says a dependency may be missing, and
refusals where a fix is out of reach. Plain installs resolve dependencies:
pip adds what the pinned wheels require and changes an installed
distribution outside the family only where a requirement needs it.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from ..facts.reading import Fields
from ..report.view import Finding, Recommendation, ReportView, view
from ..shell import new_venv_command
from .dependencies import Problem
from .environment import TargetEnvironment

# fix changes these distributions and nothing else.
_FAMILY = re.compile(r"^(onnxruntime|ort-nightly)([-_.].*)?$")
_LEFTOVER_KINDS = ("pip-temp-rename", "files-without-metadata", "metadata-without-files")


@dataclass(frozen=True)
class Step:
    """One change. ``pip_args`` follow ``<python> -m pip``; a leftover step
    moves ``path`` into the backup folder instead."""

    kind: str  # "remove-leftover" | "uninstall" | "install" | "reinstall" | "dependencies"
    why: str
    touches: tuple[str, ...]
    pip_args: tuple[str, ...] = ()
    path: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "why": self.why,
            "touches": list(self.touches),
            "pip_args": list(self.pip_args),
            "path": self.path,
        }


@dataclass(frozen=True)
class Plan:
    steps: tuple[Step, ...]
    refusals: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)
    healthy: bool = False

    @property
    def touched(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(n for s in self.steps for n in s.touches))

    def to_json(self) -> dict[str, Any]:
        return {
            "steps": [s.to_json() for s in self.steps],
            "refusals": list(self.refusals),
            "notes": list(self.notes),
            "healthy": self.healthy,
            "touches": list(self.touched),
        }


def pip_call(command: str) -> tuple[str, ...] | None:
    """The pip arguments of one printed command (``<python> -m pip ...``),
    or None for anything else (``pushd``, ``rm -rf``, ``winget``)."""
    try:
        words = shlex.split(command, posix=True)
    except ValueError:
        return None
    for index in range(len(words) - 1):
        if words[index] == "-m" and words[index + 1] == "pip":
            return tuple(words[index + 2 :])
    return None


def report_is_healthy(report: Mapping[str, Any]) -> bool:
    doc = view(report)
    errors = [f for f in doc.findings if f.severity == "error"]
    return doc.smoke is not None and doc.smoke.status == "passed" and not errors


def _installs(doc: ReportView) -> Fields:
    probe = doc.facts.get("installs")
    return probe.values if probe else Fields()


def _installed(doc: ReportView) -> dict[str, str]:
    return {
        str(d.value("canonical_name")): str(d.value("version"))
        for d in _installs(doc).records("distributions")
        if d.value("canonical_name")
    }


def in_family(name: str) -> bool:
    return bool(_FAMILY.match(canonicalize_name(name)))


def refusals(
    report: dict[str, Any], environment: TargetEnvironment, break_system_packages: bool
) -> list[str]:
    """Why no fix is attempted here, each reason with what to do instead."""
    reasons: list[str] = []
    doc = view(report)
    if doc.error:
        reasons.append(f"the target could not be checked: {doc.error.message}")
        return reasons
    rec = doc.recommendation
    emulation = rec.emulation if rec else Fields()
    if emulation:
        native = emulation.mapping("native_arm64")
        commands = native.elements("commands")
        python = native.value("python") or "3.12"
        reasons.append(
            f"{emulation.value('verdict')}. qnndoctor does not fix inside an emulated x64 Python: "
            f"install native ARM64 CPython {python} and set up onnxruntime-qnn there"
            + (": " + " ; ".join(f"`{c}`" for c in commands) if commands else "")
            + f'. Then check that Python: `py -V:{python}-arm64 -c "import sys; print(sys.executable)"` '
            "prints its path; run qnndoctor check with --python and that path."
        )
    status = rec.status if rec else None
    if rec and status == "nothing-fits":
        reasons.append(_nothing_fits(rec))
    elif rec and status not in ("ok", None) and not emulation:
        reasons.append(f"no recommendation to apply ({status}: {rec.reason})")
    if environment.externally_managed and not break_system_packages:
        reasons.append(
            f"this interpreter is managed by the system (PEP 668: {environment.marker}); "
            "pip refuses to change it, and so does qnndoctor. Create a virtual environment "
            f"(`{new_venv_command(environment.python, False)}`, as `qnndoctor check` recommends) and "
            "fix that one, or pass "
            "--break-system-packages if you really mean to change the system's Python"
        )
    if not environment.has_pip:
        reasons.append(
            f"pip is not available in {environment.python}: install it with "
            f"`{environment.python} -m ensurepip`, then run fix again"
        )
    return reasons


def _nothing_fits(rec: Recommendation) -> str:
    details = dict.fromkeys(str(v.reasons[0].detail) for v in rec.ruled_out if v.reasons)
    tags = rec.profile.elements("platform_tags") or ("?",)
    alternatives = "; ".join(
        f"{a.change}: " + " ; ".join(f"`{c}`" for c in a.commands) for a in rec.alternatives[:2]
    )
    return (
        f"no onnxruntime-qnn wheel fits this Python ({rec.profile.value('python')}, {tags[0]}): "
        + ("; ".join(list(details)[:3]) or "see `qnndoctor recommend`")
        + (f". Instead: {alternatives}" if alternatives else "")
    )


def _pin(name: str, installed: dict[str, str]) -> str:
    version = installed.get(canonicalize_name(name))
    return f"{name}=={version}" if version else name


def _requirement_name(text: str) -> str | None:
    try:
        return canonicalize_name(Requirement(text).name)
    except InvalidRequirement:
        return None


def _companion(rec: Recommendation | None, installed: dict[str, str]) -> str | None:
    """The onnxruntime the recommended 2.x wheel requires, when the installed
    one does not meet it: named in the install step, so the plan says why
    onnxruntime changes (pip would resolve it anyway)."""
    if rec is None or rec.era != "plugin-2.x" or not rec.file:
        return None
    from .. import matrixdata
    from ..resolver.recommend import companion_requirement

    for release in matrixdata.load_or_empty().releases.releases:
        for file in release.files:
            if file.filename == rec.file:
                requirement = companion_requirement(file)
                if requirement is None:
                    return None
                try:
                    have = Version(installed.get("onnxruntime", ""))
                except InvalidVersion:
                    return str(requirement)
                if requirement.specifier.contains(have, prereleases=True):
                    return None
                return str(requirement)
    return None


def build_plan(
    report: dict[str, Any],
    environment: TargetEnvironment,
    *,
    break_system_packages: bool = False,
    force_install: tuple[str, ...] = (),
    problems: tuple[Problem, ...] = (),
) -> Plan:
    """Steps from the report, or the reasons why none are attempted.
    ``problems``: what ``pip check`` says of the target now."""
    reasons = refusals(report, environment, break_system_packages)
    if reasons:
        return Plan((), tuple(reasons))
    # A working setup (smoke passed, no error) is not upgraded: only its
    # warnings' fixes (leftovers, files that differ from RECORD) are applied.
    healthy = report_is_healthy(report) and not force_install
    doc = view(report)
    installed = _installed(doc)
    rec = doc.recommendation
    notes: list[str] = []
    version = rec.version if rec else None
    uninstall, install, reinstall = _pip_changes(_sources(doc, healthy), version, installed, notes)
    companion = _companion(rec, installed) if "onnxruntime-qnn" in install else None
    if companion and "onnxruntime" not in install:
        install["onnxruntime"] = (companion, _companion_why(version, companion, installed))
    for name, (requirement, why) in _sharing_uninstalled(doc, uninstall, install).items():
        reinstall.setdefault(name, (requirement, why))
    if force_install:  # test-only: a plan forced onto versions the resolver did not pick
        install = {
            _requirement_name(r) or r: (r, "forced (test-only option)") for r in force_install
        }
    steps = _leftover_steps(doc, environment)
    steps += _pip_steps(
        installed, uninstall, install, reinstall, problems, forced=bool(force_install)
    )
    if not steps and healthy:
        return Plan((), healthy=True)
    if not steps:
        notes.append(
            "the report's problems have no change qnndoctor can make: see `qnndoctor check`"
        )
    if environment.externally_managed and break_system_packages:
        steps = [s if not s.pip_args else _with(s, "--break-system-packages") for s in steps]
        notes.append("--break-system-packages: changing a system-managed interpreter (PEP 668)")
    return Plan(tuple(steps), (), tuple(dict.fromkeys(notes)))


def _sources(doc: ReportView, healthy: bool) -> list[tuple[str, list[str]]]:
    """(why, commands) to take pip calls from. Priority: the resolver's
    answer, then the findings read from the facts, and the smoke session's
    diagnosis (read from log text) only when those give nothing to do."""
    findings = [f for f in doc.findings if f.severity in ("error", "warning")]
    sources: list[tuple[str, list[str]]] = []
    if not healthy:
        commands = list(doc.recommendation.commands) if doc.recommendation else []
        sources.append((_recommendation_why(doc), commands))
    sources += [_finding_source(f) for f in findings if not f.id.startswith("smoke-")]
    if not any(pip_call(c) for _why, commands in sources for c in commands):
        sources += [_finding_source(f) for f in findings if f.id.startswith("smoke-")]
    return sources


def _pip_changes(
    sources: list[tuple[str, list[str]]],
    version: str | None,
    installed: dict[str, str],
    notes: list[str],
) -> tuple[dict[str, str], dict[str, tuple[str, str]], dict[str, tuple[str, str]]]:
    """(uninstall: name -> why, install and reinstall: name -> (requirement,
    why)) from the sources' pip calls on the onnxruntime family; what is not
    applied and what is already installed goes to ``notes``."""
    uninstall: dict[str, str] = {}
    install: dict[str, tuple[str, str]] = {}
    reinstall: dict[str, tuple[str, str]] = {}
    for why, command in ((why, c) for why, commands in sources for c in commands):
        call = pip_call(command)
        if not call:
            continue
        verb, args = call[0], [a for a in call[1:] if not a.startswith("-")]
        for arg in args:
            name = canonicalize_name(arg) if verb == "uninstall" else _requirement_name(arg)
            if name is None or not in_family(name):
                notes.append(f"not applied (outside the onnxruntime family): {command}")
                continue
            if name == "onnxruntime-qnn" and verb == "install" and version:
                arg = f"onnxruntime-qnn=={version}"  # the resolver's version wins
            if verb == "uninstall":
                uninstall.setdefault(name, why)
            elif verb == "install" and "--force-reinstall" in call:
                reinstall.setdefault(name, (_pin(arg, installed) if arg == name else arg, why))
            elif verb == "install":
                install.setdefault(name, (arg, why))
    for name in [n for n in uninstall if n in install]:
        # Uninstall then install of one name: one pip call that replaces it.
        reinstall.setdefault(name, (install[name][0], uninstall.pop(name)))
    for name, (requirement, _why) in list(install.items()):
        if name not in reinstall and _satisfied(requirement, installed):
            notes.append(f"already installed: {requirement}")
            del install[name]
    return uninstall, install, reinstall


def _companion_why(version: str | None, companion: str, installed: dict[str, str]) -> str:
    return (
        f"onnxruntime-qnn {version} requires {companion} (its Requires-Dist in the "
        "release matrix) and "
        + (
            f"the installed onnxruntime {installed['onnxruntime']} does not meet it"
            if "onnxruntime" in installed
            else "no onnxruntime is installed"
        )
    )


def _leftover_steps(doc: ReportView, environment: TargetEnvironment) -> list[Step]:
    """Removal of the leftovers the uninstall-leftover finding names, inside the target."""
    if not any(f.id == "uninstall-leftover" for f in doc.findings):
        return []
    return [
        Step(
            "remove-leftover",
            f"finding uninstall-leftover: {item.value('kind')}",
            (),
            path=str(item.value("path")),
        )
        for item in _installs(doc).records("leftovers")
        if item.value("kind") in _LEFTOVER_KINDS
        and isinstance(item.value("path"), str)
        and environment.owns(item.value("path"))
    ]


def _pip_steps(
    installed: dict[str, str],
    uninstall: dict[str, str],
    install: dict[str, tuple[str, str]],
    reinstall: dict[str, tuple[str, str]],
    problems: tuple[Problem, ...],
    *,
    forced: bool,
) -> list[Step]:
    """The uninstall, install, reinstall and dependencies steps, in that order."""
    steps: list[Step] = []
    gone = [n for n in uninstall if n not in install and n not in reinstall]
    for name in uninstall:
        if name in installed:
            steps.append(Step("uninstall", uninstall[name], (name,), ("uninstall", "-y", name)))
    if install:
        names = tuple(install)
        # Reinstall over an install of the same name: --force-reinstall, so a
        # same-version "already satisfied" still rewrites the files.
        force = any(n in reinstall for n in names)
        steps.append(
            Step(
                "install",
                "; ".join(dict.fromkeys(why for _r, why in install.values())),
                names,
                (
                    "install",
                    *(("--force-reinstall",) if force else ()),
                    # forced (test-only) pins may contradict each other's requirements
                    *(("--no-deps",) if force or forced else ()),
                    *(r for r, _why in install.values()),
                ),
            )
        )
    for name, (requirement, why) in reinstall.items():
        if name in install or name in gone:
            continue
        steps.append(
            Step(
                "reinstall",
                why,
                (name,),
                ("install", "--force-reinstall", "--no-deps", requirement),
            )
        )
    closing = _dependencies_step(
        problems,
        installed,
        {n: r for n, (r, _w) in install.items()},
        {n: r for n, (r, _w) in reinstall.items() if n not in gone and n not in install},
        force=any(n in reinstall for n in install),
        removed=set(gone),
    )
    if closing is not None and not forced:
        steps.append(closing)
    return steps


def _dependencies_step(
    problems: tuple[Problem, ...],
    installed: dict[str, str],
    install: dict[str, str],
    reinstall: dict[str, str],
    *,
    force: bool,
    removed: set[str],
) -> Step | None:
    """The family's pins once more, without ``--no-deps``: pip installs what
    they require and is missing (a no-op where nothing is). Needed where
    ``pip check`` names a kept family distribution now, or a force-reinstall
    with ``--no-deps`` puts another version in place than the installed one."""
    no_deps = {**reinstall, **(install if force else {})}
    pins: dict[str, str] = {}
    reasons: list[str] = []
    for problem in problems:
        name = problem.requirer
        if not in_family(name) or name in removed:
            continue
        if not force and (name in install or problem.wanted in install):
            continue  # an install that resolves dependencies covers it
        pins.setdefault(name, install.get(name) or reinstall.get(name) or _pin(name, installed))
        reasons.append(problem.line.rstrip("."))
    for name, requirement in no_deps.items():
        if name not in pins and _version_of(requirement) != installed.get(name):
            pins[name] = requirement
            reasons.append(f"{requirement} is force-reinstalled with --no-deps")
    if not pins:
        return None
    return Step(
        "dependencies",
        "dependencies: " + "; ".join(dict.fromkeys(reasons)),
        tuple(pins),
        ("install", *pins.values()),
    )


def _version_of(requirement: str) -> str | None:
    """The version of an exact ``name==version`` pin, else None."""
    try:
        specifiers = list(Requirement(requirement).specifier)
    except InvalidRequirement:
        return None
    if len(specifiers) == 1 and specifiers[0].operator == "==":
        return specifiers[0].version
    return None


def _finding_source(finding: Finding) -> tuple[str, list[str]]:
    commands = finding.fix.commands if finding.fix else ()
    return f"finding {finding.id}: {finding.title}", list(commands)


def _satisfied(requirement: str, installed: dict[str, str]) -> bool:
    try:
        parsed = Requirement(requirement)
        have = Version(installed[canonicalize_name(parsed.name)])
    except (InvalidRequirement, InvalidVersion, KeyError):
        return False
    return bool(parsed.specifier) and parsed.specifier.contains(have, prereleases=True)


def _sharing_uninstalled(
    doc: ReportView, uninstall: dict[str, str], install: dict[str, tuple[str, str]]
) -> dict[str, tuple[str, str]]:
    """Distributions that share files with one being uninstalled (the
    installs facts' ``shared_files``): pip deletes the shared files with the
    uninstalled one, so the kept one is force-reinstalled at its version."""
    kept: dict[str, tuple[str, str]] = {}
    for shared in _installs(doc).records("shared_files"):
        claims = [str(c).split("@", 1)[0] for c in shared.elements("claimed_by")]
        parsed = [(canonicalize_name(c.split("==")[0]), c) for c in claims if "==" in c]
        removed = [n for n, _c in parsed if n in uninstall]
        for name, pin in parsed:
            if removed and name not in uninstall and name not in install and in_family(name):
                kept.setdefault(
                    name,
                    (pin, f"uninstalling {', '.join(removed)} deletes files it shares with {pin}"),
                )
    return kept


def _recommendation_why(doc: ReportView) -> str:
    rec, smoke = doc.recommendation, doc.smoke
    text = (
        f"recommendation: onnxruntime-qnn {rec.version if rec else None} "
        f"({rec.era if rec else None}), the newest "
        "release that fits this interpreter and machine"
    )
    if smoke and smoke.status not in (None, "passed", "not_run"):
        lines = (smoke.reason or "").splitlines()
        reason = lines[0] if lines else ""
        reason = reason if len(reason) <= 160 else reason[:159] + "…"
        text += f"; the smoke session {smoke.status} now" + (f": {reason}" if reason else "")
    return text


def _with(step: Step, flag: str) -> Step:
    return Step(step.kind, step.why, step.touches, (*step.pip_args, flag), step.path)
