"""The commands qnndoctor prints, collected and judged.

- ``placeholders``: the parts of a command a person would have to edit
  before it runs (``==the installed version``, ``==onnxruntime.version``,
  ``{fact}``, an unexplained ``<...>``, ``X.Y``, ``VERSION``).
- ``report_commands`` / ``commands_in_text``: every command of a report
  (JSON fields) or a printed text (indented command lines, `backticked`
  commands and ``python -m pip ...`` inside sentences).
- ``windows_problems``: a Windows command tokenised by cmd's and
  PowerShell's rules (not run): unbalanced quotes, characters either shell
  would take as syntax outside quotes, a quoted program PowerShell cannot
  start without ``&`` (which cmd rejects), ``$`` / ``%`` expansions inside
  double quotes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

_PLACEHOLDERS = (
    re.compile(r"==\s*the\b"),  # ==the installed version
    re.compile(r"==\s*[A-Za-z_]+(?:\.[A-Za-z_]+)*\.version\b"),  # ==onnxruntime.version
    re.compile(r"\{[a-z_]+(?:\.[a-z_]+)*\}"),  # an unfilled {fact}
    re.compile(r"(?<![\w.])X\.Y(?:\.Z)?(?![\w.])"),
    re.compile(r"\bVERSION\b"),
    re.compile(r"(?<=[A-Za-z0-9_\]])==\s*(?=$|[\s'\"])"),  # a pin without a version
    re.compile(r"\bNN\b"),  # libQnnHtpVNN
)
# <...> that is not syntax: redaction marks are explained in the README.
_ANGLE = re.compile(r"<([^<>\s=|]{1,60})>")
_EXPLAINED_ANGLE = {"redacted", "user", "host"}


def placeholders(command: str, context: str = "") -> list[str]:
    """What in ``command`` is a placeholder rather than a real value. A
    ``<name>`` counts as explained when ``context`` (the text around the
    command) says what it is: ``(<name>: ...)`` or ``<name> is ...``."""
    found = [m.group(0) for p in _PLACEHOLDERS for m in p.finditer(command)]
    for match in _ANGLE.finditer(command):
        angle = match.group(0)
        if match.group(1) in _EXPLAINED_ANGLE:
            continue
        if f"({angle}:" in context or f"{angle} is " in context:
            continue
        found.append(angle)
    return found


# A command inside prose: `...` whose first word is a program people type.
_PROGRAMS = (
    "python",
    "python3",
    "py",
    "pip",
    "pipx",
    "winget",
    "cmd",
    "rm",
    "export",
    "set",
    "$env:",
    "pushd",
    "popd",
    "sudo",
    "usermod",
    "pnputil",
    "qnndoctor",
    "uv",
)
_BACKTICKED = re.compile(r"`([^`\n]+)`")
_INLINE_PYTHON_C = re.compile(r'(?<![`\w])python -c "[^"`]*"')
_INLINE_PIP = re.compile(r"(?<![`\w])(python -m pip [^;`\n]+?)(?=;|,? or |\s+with the\b| \(|\.\s|\.?$)")


def _looks_like_command(text: str) -> bool:
    first = text.strip().split(" ", 1)[0]
    if first.startswith(("/", ".\\", "./", '"', "'")) and (" -m " in text or " -c " in text):
        return True
    return first in _PROGRAMS or first.startswith("$env:")


def commands_in_text(text: str) -> list[str]:
    """Commands inside a printed text: `backticked` ones and bare
    ``python -m pip ...`` in sentences."""
    found = [m.group(1).strip() for m in _BACKTICKED.finditer(text)]
    found = [c for c in found if _looks_like_command(c)]
    stripped = _BACKTICKED.sub(" ", text)
    found += [m.group(1).strip() for m in _INLINE_PIP.finditer(stripped)]
    found += [m.group(0) for m in _INLINE_PYTHON_C.finditer(stripped)]
    return found


def _walk_commands(node: Any) -> Iterator[str]:
    """Every string in a ``commands`` list anywhere in a JSON document."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "commands" and isinstance(value, list):
                yield from (str(v) for v in value if isinstance(v, str))
            else:
                yield from _walk_commands(value)
    elif isinstance(node, list):
        for item in node:
            yield from _walk_commands(item)


def _walk_texts(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("text", "fix", "reason", "explanation") and isinstance(value, str):
                yield value
            else:
                yield from _walk_texts(value)
    elif isinstance(node, list):
        for item in node:
            yield from _walk_texts(item)


def report_commands(document: dict[str, Any]) -> list[str]:
    """The commands of a JSON document (a report, explain's, fix's, recommend's):
    every ``commands`` list, plus commands written inside fix texts."""
    found = list(_walk_commands(document))
    for text in _walk_texts(
        {k: v for k, v in document.items() if k not in ("facts", "smoke")}
    ):
        found += commands_in_text(text)
    return list(dict.fromkeys(found))


def indented_commands(output: str, programs: Iterable[str]) -> list[str]:
    """Lines of a text output that are commands: indented, starting with one of
    ``programs`` (the target's interpreter as printed, ``rm``, ...)."""
    starts = tuple(programs)
    return [
        line.strip()
        for line in output.splitlines()
        if line.startswith(" ") and line.strip().startswith(starts)
    ]


# -- Windows ----------------------------------------------------------------

_CMD_SPECIAL = set("&|<>^")
_PS_SPECIAL = set("&|<>;(){}@`$,#")


def _unquoted(command: str) -> Iterator[tuple[int, str]]:
    """(index, char) outside double quotes (both shells quote with ")."""
    inside = False
    for index, char in enumerate(command):
        if char == '"':
            inside = not inside
            continue
        if not inside:
            yield index, char


def windows_problems(command: str) -> list[str]:
    """Why ``command`` would not run as printed in the Windows shell(s) it is
    meant for: PowerShell-only (``$env:``), cmd-only (``set NAME=``), or both."""
    problems: list[str] = []
    if command.count('"') % 2:
        problems.append("unbalanced double quotes")
    ps_only = command.startswith("$env:")
    cmd_only = command.startswith(("set ", "cmd /c ", "for /f "))
    if not ps_only:
        for _index, char in _unquoted(command):
            if char in _CMD_SPECIAL:
                problems.append(f"cmd: unquoted {char!r}")
        if re.search(r"%[A-Za-z_]\w*%", command) and not cmd_only:
            problems.append("cmd: %VAR% expands")
    if not cmd_only:
        if command.startswith('"'):
            problems.append("PowerShell: a quoted program needs '&', which cmd rejects")
        for index, char in _unquoted(command):
            if char in _PS_SPECIAL and not (ps_only and char in "$:;+()"):
                # a lone ; or , inside a word is still syntax; $ starts a variable
                problems.append(f"PowerShell: unquoted {char!r} at {index}")
        inside_quotes = re.findall(r'"([^"]*)"', command)
        if not ps_only and any("$" in q or "`" in q for q in inside_quotes):
            problems.append("PowerShell: $ or ` inside double quotes expands")
    outside = "".join(char for _index, char in _unquoted(command))
    if "'" in outside and not ps_only and not command.startswith("for /f "):
        problems.append("single quotes outside double quotes do not quote in cmd")
    return problems
