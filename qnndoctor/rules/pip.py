"""Rules about the target's own pip: can the commands this report prints run?

Every fix is ``<python> -m pip ...``. A venv made by uv (which seeds no pip
unless asked, ``uv venv --seed``) or by ``python -m venv --without-pip`` has
none, and the command then fails with "No module named pip". The report's
commands start with ``-m ensurepip`` there (consistency.py, advice.py);
these findings say why, and what to do where that cannot work.
"""

from __future__ import annotations

from collections.abc import Iterator

from .. import shell
from ..facts.probed import Facts, externally_managed, target_pip
from ..matrixdata import Matrix
from ._common import target_is_windows
from .declare import rule
from .findings import Evidence, Finding, FindingKind, Fix, Severity, make

PIP_ABSENT = FindingKind(
    "pip-absent", Severity.INFO, "The target has no pip: fix commands start with ensurepip"
)
SYSTEM_MANAGED = FindingKind(
    "system-managed-python",
    Severity.INFO,
    "The target is the system's Python (PEP 668): installs go to a new virtual environment",
)
PIP_UNOBTAINABLE = FindingKind(
    "pip-unobtainable",
    Severity.INFO,
    "The target has neither pip nor ensurepip: the printed pip commands need a pip first",
)

_SOURCES = (
    " (sources: https://github.com/astral-sh/uv/issues/8354 "
    "https://github.com/astral-sh/uv/issues/2405 https://docs.python.org/3/library/ensurepip.html)"
)


def _venv_package(facts: Facts) -> str:
    """Debian's and Ubuntu's package with this Python's ensurepip (python3.11-venv)."""
    version = facts.value("interpreter", "version_info") or []
    if isinstance(version, list) and len(version) >= 2:
        return f"python{version[0]}.{version[1]}-venv"
    return "python3.X-venv, X this Python's minor version"


def _uv_note(created_by: object, exe: str, windows: bool) -> str:
    if not str(created_by or "").startswith("uv"):
        return ""
    return (
        f" This venv was made by uv (pyvenv.cfg: {created_by}): uv can install into it without "
        f"pip (`uv pip install --python {shell.quote(exe, windows)} onnxruntime-qnn`), and in a uv "
        "project `uv sync` removes packages the project does not declare, pip among them: "
        "add onnxruntime-qnn to the project (`uv add`) to keep it."
    )


@rule(needs=("installs", "interpreter"), emits=(PIP_ABSENT, PIP_UNOBTAINABLE))
def target_without_pip(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    state = target_pip(facts)
    if state not in ("absent", "unobtainable") or externally_managed(facts):
        return  # a system Python gets a new venv instead (system_managed_python)
    exe = str(facts.value("interpreter", "executable") or "python")
    windows = target_is_windows(facts)
    created_by = facts.value("interpreter", "venv_created_by")
    tools = facts.value("installs", "pip_tools") or {}
    ensurepip = tools.get("ensurepip") or {}
    evidence = (
        Evidence("installs.pip_tools.pip.found", False),
        Evidence(
            "installs.pip_tools.ensurepip." + ("path" if ensurepip.get("found") else "found"),
            ensurepip.get("path") if ensurepip.get("found") else False,
        ),
        Evidence("interpreter.venv_created_by", created_by),
    )
    # Worded without failure words (no pip error message, no "cannot"): a
    # healthy check's output, pasted into `explain`, must not read as a failure.
    command = f"`{shell.pip_command(exe, windows, 'install', '...')}`"
    if state == "absent":
        bootstrap = shell.ensurepip_command(exe, windows)
        yield make(
            PIP_ABSENT,
            "This environment has no pip (venvs made by uv, or by `python -m venv "
            f"--without-pip`, have none), so {command} would find no pip. Every command this "
            "report prints that runs its pip "
            f"therefore starts with `{bootstrap}`, which installs the pip bundled with this "
            "Python (nothing is downloaded)." + _uv_note(created_by, exe, windows) + _SOURCES,
            evidence,
            Fix("Install the pip bundled with this Python:", (bootstrap,)),
        )
        return
    yield make(
        PIP_UNOBTAINABLE,
        f"This environment has no pip for {command}, and this Python has no ensurepip to "
        "install its bundled pip (Debian and "
        f"Ubuntu ship ensurepip in a separate package, python3-venv ({_venv_package(facts)} for "
        "this Python); "
        "embeddable Python distributions leave it out). The pip commands this report prints "
        "need a pip first." + _uv_note(created_by, exe, windows) + _SOURCES,
        evidence,
        Fix(
            "Give this environment a pip: on Debian or Ubuntu install python3-venv "
            f"({_venv_package(facts)} for this Python) and run ensurepip, or create a new venv with a Python that has pip and install "
            "there; with uv, run the same installs as "
            f"`uv pip install --python {shell.quote(exe, windows)} onnxruntime-qnn`."
        ),
    )


@rule(needs=("installs", "interpreter"), emits=(SYSTEM_MANAGED,))
def system_managed_python(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    marker = externally_managed(facts)
    if marker is None:
        return
    exe = str(facts.value("interpreter", "executable") or "python")
    windows = target_is_windows(facts)
    make_venv = shell.new_venv_command(exe, windows)
    inside = shell.new_venv_python(windows)
    # `-m venv` puts pip into the new venv with ensurepip, whether or not this
    # Python has pip itself (Debian: python3-pip without python3-venv).
    ensurepip = (facts.value("installs", "pip_tools") or {}).get("ensurepip") or {}
    no_ensurepip = ensurepip.get("found") is False
    yield make(
        SYSTEM_MANAGED,
        f"This Python is managed by the system: its standard library folder holds {marker} "
        "(PEP 668: Debian 12 and newer, Ubuntu 23.04 and newer, Fedora 38 and newer, "
        "Homebrew), so pip stops with 'externally-managed-environment' instead of installing "
        f"into it. The commands in this report therefore make a virtual environment with this "
        f"Python (`{make_venv}`, in the current folder) and install onnxruntime-qnn there: run "
        f"your application with `{inside}`, and check it with `qnndoctor check --python "
        f"{shell.NEW_VENV}`. (pip's --break-system-packages would install into the system's Python "
        "anyway, at the risk its name says.)"
        + (
            " This Python has no ensurepip, which `-m venv` needs to put pip into the new "
            f"venv: on Debian and Ubuntu install python3-venv ({_venv_package(facts)}) first."
            if no_ensurepip
            else ""
        )
        + " (source: https://packaging.python.org/en/latest/specifications/"
        "externally-managed-environments/)",
        (
            Evidence("interpreter.externally_managed", marker),
            Evidence("interpreter.in_venv", facts.value("interpreter", "in_venv")),
        ),
        Fix("Make a virtual environment with this Python and install there:", (make_venv,)),
    )
