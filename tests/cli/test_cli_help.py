"""`--help` is complete and the docs say what it says: every sub-command has
a description, every option a help text, the options the command reference
(docs/cli.md) lists for each sub-command are the parser's, the exit codes it
documents are the ones each command's --help states, and the README's table
of commands names exactly the parser's sub-commands (issue 25)."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from qnndoctor import exitcodes
from qnndoctor.cli.parser import build as _parser

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "docs" / "cli.md").read_text("utf-8")  # the reference the README links to
FRONT_DOOR = (ROOT / "README.md").read_text("utf-8")
_OPTION = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")


def _commands() -> dict[str, argparse.ArgumentParser]:
    parser = _parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def _hidden(action: argparse.Action) -> bool:
    """A test-only switch (``--x-...``, e.g. fix's --x-force-install), hidden on purpose."""
    return action.help == argparse.SUPPRESS and action.option_strings[0].startswith("--x-")


def _options(parser: argparse.ArgumentParser) -> list[tuple[str, ...]]:
    """Each optional argument's spellings (-h/--help and test-only switches aside)."""
    return [
        tuple(a.option_strings)
        for a in parser._actions
        if a.option_strings and not isinstance(a, argparse._HelpAction) and not _hidden(a)
    ]


def test_every_command_has_a_description_and_every_argument_a_help_text() -> None:
    top = _parser()
    assert all(a.help for a in top._actions), "the top-level parser"
    commands = _commands()
    assert {"check", "report", "recommend", "matrix", "explain", "model", "fix"} <= set(commands)
    for name, parser in commands.items():
        assert parser.description and len(parser.description) > 30, name
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction) or _hidden(action):
                continue
            shown = action.option_strings or [action.dest]
            assert action.help and action.help != argparse.SUPPRESS, (name, shown)


def _between(start: str, end: str) -> str:
    at = README.index(start)
    return README[at : README.index(end, at + len(start))]


# Where the README lists each sub-command's options (its usage line or paragraph).
README_OPTIONS = {
    "check": ("Options of `check`:", "`report -o FILE|-`"),
    "recommend": ("`recommend [--python", "`matrix [show|update]"),
    "matrix": ("`matrix [show|update]", "`explain --log"),
    "explain": ("`explain --log", "\n\n"),
    "model": ("`qnndoctor model MODEL.onnx", "(install with"),
    "fix": ("`qnndoctor fix [", "does what the report says"),
}


@pytest.mark.parametrize("command", sorted(README_OPTIONS))
def test_the_readme_lists_exactly_the_options_of_each_command(command: str) -> None:
    mentioned = set(_OPTION.findall(_between(*README_OPTIONS[command])))
    options = _options(_commands()[command])
    spelled = {spelling for spellings in options for spelling in spellings}
    assert mentioned - spelled == set(), f"the README names options `{command}` does not have"
    missing = [spellings for spellings in options if not set(spellings) & mentioned]
    assert missing == [], f"options of `{command}` the README does not list"


def test_report_takes_the_options_of_check_but_the_display_ones() -> None:
    assert "`report -o FILE|-`\ntakes the same options as `check` (but the display ones)" in README
    commands = _commands()
    check = {s for spellings in _options(commands["check"]) for s in spellings}
    report = {s for spellings in _options(commands["report"]) for s in spellings}
    display = {"--format", "--json", "-q", "--quiet", "--list-findings"}
    assert report == (check - display) | {"-o"}


def _readme_codes(command: str) -> set[int]:
    """The exit codes the README's "Exit codes" section gives ``command``: the
    table's (check's), or those of the command's own sentence below it and of
    the table rows that name it."""
    section = _between("## Exit codes", "\nWhich release matrix")
    rows = re.findall(r"^\| (\d) \| (.*)$", section, re.M)
    if command == "check":
        return {int(code) for code, _ in rows}
    codes = {int(code) for code, text in rows if f"`{command}`" in text}
    below = section[section.index("\n\n", section.rindex("\n|")) :]  # after the table
    sentence = re.search(rf"`{command}[^`]*`: (.*?)(?=`[a-z ]+`: |\Z)", below, re.S)
    assert sentence is not None, f"the README's exit codes say nothing of `{command}`"
    codes |= {int(code) for code in re.findall(r"(?<![\w.-])([0-3]|130)(?= [a-z(])", sentence[1])}
    if sentence[1].startswith("as `check`"):
        codes |= _readme_codes("check")
    return codes


@pytest.mark.parametrize("command", sorted(exitcodes.MEANINGS))
def test_the_readme_exit_codes_are_the_ones_help_states(command: str) -> None:
    stated = {code for code, _ in exitcodes.MEANINGS[command]}
    documented = _readme_codes(command)
    # a usage error exits 2 everywhere (the table says so for every command)
    assert documented | {exitcodes.USAGE} == stated | {exitcodes.USAGE}, command
    if command != "fix":  # fix's parser is its own module's (qnndoctor/cli/fix.py)
        description = _commands()[command].description or ""
        assert exitcodes.described(command) in " ".join(description.split())


def test_the_front_door_readme_names_every_command_and_no_other() -> None:
    table = FRONT_DOOR[FRONT_DOOR.index("## Commands") : FRONT_DOOR.index("## Exit codes")]
    named = set(re.findall(r"^\| `qnndoctor ([a-z]+)", table, re.M))
    assert named == set(_commands())


def test_the_front_door_exit_code_table_is_checks() -> None:
    table = FRONT_DOOR[FRONT_DOOR.index("## Exit codes") : FRONT_DOOR.index("## Python API")]
    rows = {int(code) for code in re.findall(r"^\| (\d) \|", table, re.M)}
    assert rows == {code for code, _ in exitcodes.MEANINGS["check"]}
