"""Extract the options the QNN EP and onnxruntime read, from a source checkout
(a git directory read with ``git show REV:path``) and, where no source of a
release is at hand, from the strings of the release's own EP library.

    python matrix/refresh/options_source.py --git-dir MIRROR \\
        --ref 1.24.1=470ae16 --ref 2.0.0=rel-2.0.0_1.24.1 \\
        --ref 1.18.0=45737400a2f3015c11f005ed7603611eaed306a6 \\
        --read-from 1.18.0=OWNER/onnxruntime=FORK_SNAPSHOT_GIT_DIR \\
        --no-source "1.21.0=why it could not be read" \\
        --wheel 2.7.0=/path/onnxruntime_qnn-2.7.0-...whl \\
        --repo onnxruntime/onnxruntime-qnn --out matrix/options.json

For each release and each key it records the source line that reads it
(path, line, the revision), the values the code compares it with, the
default given beside the read, and what the code does with another value
(read from the lines after the read: a std::stoi/stoul parse truncates, a
``== "1"`` test reads anything else as off, a WARNING/ERROR log names it,
an ORT_THROW fails). The heuristics are plain regexes over C++; a reviewer
checks the output (``git diff matrix/options.json``) like the release matrix.
Observed behaviour from real runs lives beside it in
``matrix/options_observed.json`` (hand-curated, each entry cites its run).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import zipfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

SESSION_HEADER = "include/onnxruntime/core/session/onnxruntime_session_options_config_keys.h"
RUN_HEADER = "include/onnxruntime/core/session/onnxruntime_run_options_config_keys.h"
QNN_DIR = "onnxruntime/core/providers/qnn/"
EP_LIBRARY_NAMES = ("libonnxruntime_providers_qnn.so", "onnxruntime_providers_qnn.dll")
# onnxruntime-qnn 1.17-1.20 for Windows build the QNN EP into onnxruntime itself
# (no providers_qnn library in the wheel): its provider-option keys are strings
# there, beside onnxruntime's own session and run config keys.
MONOLITHIC_LIBRARY_NAMES = ("onnxruntime.dll", "onnxruntime_pybind11_state.pyd")
_QNN_EP_MARK = b"QNNExecutionProvider"

_HEADER_KEY = re.compile(r'static\s+const\s+char\s*\*\s*const\s+(k\w+)\s*=\s*"([^"]+)"')
_STRING_CONST = re.compile(
    r'(?:static\s+)?(?:const\s+|constexpr\s+)+(?:std::string(?:_view)?|char\s*\*|const\s+char\s*\*)\s*'
    r'(?:const\s+)?([A-Za-z_]\w*)\s*(?:\{|=)\s*"([^"]*)"'
)
_PROVIDER_READ = re.compile(
    r'(?:provider_options_map|provider_options|options)\s*\.\s*(?:find|count|at)\s*\(\s*("?[\w.]+"?)\s*\)'
    r'|FormatEPConfigKey\s*\(\s*("?[\w.]+"?)\s*\)'
)
_KORT_USE = re.compile(r"\b(kOrt(?:SessionOption|RunOption)\w*)\b")
_COMPARE = re.compile(r'([A-Za-z_][\w.>-]*)\s*==\s*"([^"]*)"|"([^"]*)"\s*==\s*([A-Za-z_][\w.>-]*)')
_DEFAULT_AFTER = re.compile(r'^\s*,\s*"([^"]*)"')


@dataclass
class Read:
    kind: str  # provider_option | session_config | run_config
    key: str
    path: str
    line: int
    values: list[str] = field(default_factory=list)
    default: str | None = None
    wrong_value: str | None = None
    parse: str | None = None


def _git_show(git_dir: Path, rev: str, path: str) -> str | None:
    done = subprocess.run(
        ["git", "--git-dir", str(git_dir), "show", f"{rev}:{path}"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
        check=False,
    )
    if done.returncode != 0:
        return None
    return done.stdout.decode("utf-8", "replace")


def _git_ls(git_dir: Path, rev: str, folder: str) -> list[str]:
    done = subprocess.run(
        ["git", "--git-dir", str(git_dir), "ls-tree", "-r", "--name-only", rev, folder],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
        check=False,
        text=True,
    )
    return [p for p in done.stdout.splitlines() if p.endswith((".cc", ".h"))]


def _commit(git_dir: Path, rev: str) -> str:
    done = subprocess.run(
        ["git", "--git-dir", str(git_dir), "rev-parse", f"{rev}^{{commit}}"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
        check=True,
        text=True,
    )
    return done.stdout.strip()


def header_keys(text: str) -> dict[str, tuple[str, int]]:
    """``kOrtName -> (key, line)`` of a config-keys header."""
    found: dict[str, tuple[str, int]] = {}
    for match in _HEADER_KEY.finditer(text):
        found[match.group(1)] = (match.group(2), text.count("\n", 0, match.start(1)) + 1)
    return found


def _behaviour(window: list[str]) -> tuple[str | None, str | None]:
    """(parse, wrong_value) read from the lines after a read."""
    text = "\n".join(window)
    parse = None
    if re.search(r"std::sto(?:i|l|ul|ull|ll)\b", text):
        parse = "std::sto*"
    elif re.search(r"ParseStringWithClassicLocale|TryParseStringWithClassicLocale", text):
        parse = "ParseStringWithClassicLocale"
    if "ORT_THROW" in text or "ORT_MAKE_STATUS" in text or "ORT_RETURN_IF" in text:
        return parse, "error"
    if parse == "std::sto*":
        return parse, "truncated"
    if re.search(r"LOGS(?:_DEFAULT)?\s*\((?:[^)]*,\s*)?(?:WARNING|ERROR)\)", text):
        return parse, "warning_then_default"
    if re.search(r'==\s*"1"|"1"\s*==', text):
        return parse, "other_values_read_as_off"
    return parse, None


def _enum_values(text: str) -> dict[str, list[str]]:
    """Identifier -> the literals it is compared with, in order (``x == "a"``)."""
    groups: dict[str, list[str]] = {}
    for match in _COMPARE.finditer(text):
        ident = match.group(1) or match.group(4)
        value = match.group(2) if match.group(1) else match.group(3)
        ident = ident.split("->")[0].split(".")[0]
        values = groups.setdefault(ident, [])
        if value not in values:
            values.append(value)
    return groups


def _stem_matches(ident: str, key: str) -> bool:
    base = re.sub(r"_(?:string|str|pos|it|value)$", "", ident)
    words = key.split(".")[-1].split("_")
    if base == key or base == key.split(".")[-1]:
        return True
    # htp_graph_finalization_opt_mode_string ~ htp_graph_finalization_optimization_mode
    parts = base.split("_")
    return len(parts) == len(words) and all(w.startswith(p) for p, w in zip(parts, words, strict=True))


def extract_source(
    git_dir: Path, rev: str, session_keys: dict[str, tuple[str, int]], run_keys: dict[str, tuple[str, int]]
) -> list[Read]:
    """Every key the QNN EP's files at ``rev`` read, with its first reading line."""
    reads: list[Read] = []
    seen: set[tuple[str, str]] = set()
    for path in sorted(_git_ls(git_dir, rev, QNN_DIR)):
        text = _git_show(git_dir, rev, path)
        if text is None:
            continue
        lines = text.splitlines()
        read_lines = {
            i
            for i, line in enumerate(lines)
            if _PROVIDER_READ.search(line) or _KORT_USE.search(line)
        }
        consts = {m.group(1): m.group(2) for m in _STRING_CONST.finditer(text)}
        enums = _enum_values(text)
        for index, line in enumerate(lines):
            found: list[tuple[str, str, int]] = []  # kind, key, column after the match
            for match in _PROVIDER_READ.finditer(line):
                token = match.group(1) or match.group(2)
                key = token.strip('"') if token.startswith('"') else consts.get(token)
                if key and re.fullmatch(r"[a-z][a-z0-9_.]*", key):
                    found.append(("provider_option", key, match.end()))
            for match in _KORT_USE.finditer(line):
                name = match.group(1)
                if name in session_keys:
                    found.append(("session_config", session_keys[name][0], match.end()))
                elif name in run_keys:
                    found.append(("run_config", run_keys[name][0], match.end()))
            for kind, key, end in found:
                if (kind, key) in seen:
                    continue
                seen.add((kind, key))
                end_at = min([i for i in read_lines if i > index] + [index + 14, len(lines)])
                window = lines[index:end_at]
                parse, wrong = _behaviour(window)
                default_match = _DEFAULT_AFTER.match(line[end:])
                values: list[str] = []
                for ident, literals in enums.items():
                    if _stem_matches(ident, key):
                        values.extend(v for v in literals if v not in values)
                for match in _COMPARE.finditer("\n".join(window[:3])):
                    value = match.group(2) if match.group(1) else match.group(3)
                    if value not in values and len(values) < 2 and value in ("0", "1"):
                        values.append(value)
                reads.append(
                    Read(
                        kind=kind,
                        key=key,
                        path=path,
                        line=index + 1,
                        values=values,
                        default=default_match.group(1) if default_match else None,
                        wrong_value=wrong,
                        parse=parse,
                    )
                )
    return reads


def library_strings(wheel: Path) -> tuple[set[str], str, bool]:
    """The printable strings (length >= 4) of the QNN EP's library inside a
    wheel, the library's file name, and whether it is onnxruntime itself with
    the EP built in (1.17-1.20 on Windows): then its session and run config
    key strings are onnxruntime's, and only provider options speak for the EP."""
    with zipfile.ZipFile(wheel) as archive:
        by_name = {n.rsplit("/", 1)[-1]: n for n in archive.namelist()}
        for library in EP_LIBRARY_NAMES:
            if library in by_name:
                return _printable(archive.read(by_name[library])), library, False
        for library in MONOLITHIC_LIBRARY_NAMES:
            if library in by_name:
                data = archive.read(by_name[library])
                if _QNN_EP_MARK in data:
                    return _printable(data), library, True
    raise SystemExit(f"{wheel}: no QNN EP library inside")


def _printable(data: bytes) -> set[str]:
    return {m.group().decode("ascii") for m in re.finditer(rb"[\x20-\x7e]{4,}", data)}


def _in_strings(key: str, strings: set[str]) -> bool:
    """The key alone, or delimited inside a longer string (a message, a prefixed key)."""
    if key in strings:
        return True
    pattern = re.compile(r"(?<![a-z0-9_])" + re.escape(key) + r"(?![a-z0-9_])")
    return any(key in text and pattern.search(text) for text in strings)


@dataclass(frozen=True)
class ReadFrom:
    """Where a release's commit is read when it is not in ``--git-dir``: a
    snapshot of another repository that holds the same commit (a fork keeps
    the upstream's objects, so ``git show COMMIT:path`` is the upstream's file)."""

    git_dir: Path
    snapshot: str  # owner/name of the repository the snapshot is of
    repo: str  # the repository the commit belongs to (cited)


def _add_library_strings(
    options: dict[tuple[str, str], dict[str, Any]],
    sources: list[dict[str, Any]],
    wheels: list[tuple[str, Path]],
    candidate_keys: set[str],
) -> None:
    """A key read by some source, or named by a run, counts as present in a
    release whose EP library holds it as a string."""
    for release, wheel in wheels:
        strings, library, monolithic = library_strings(wheel)
        sources.append(
            {
                "release": release,
                "kind": "library-strings",
                "wheel": wheel.name,
                "library": library,
                "monolithic": monolithic,
            }
        )
        for (kind, key), entry in options.items():
            if monolithic and kind != "provider_option":
                continue  # onnxruntime's own string in the same library: says nothing of the EP
            if (entry["read_by_qnn_ep"] or key in candidate_keys) and _in_strings(key, strings):
                entry["in_library_strings"].append(release)
                _add_release(entry, release)


def build(
    git_dir: Path,
    refs: list[tuple[str, str]],
    wheels: list[tuple[str, Path]],
    repo: str,
    candidates: tuple[tuple[str, str], ...] = (),
    read_from: dict[str, ReadFrom] | None = None,
    uncovered: tuple[tuple[str, str], ...] = (),
) -> dict[str, Any]:
    """The options document. ``candidates``: (key, evidence) pairs, provider
    options named by a run or the docs, looked up in each wheel's library.
    ``read_from``: per release, the snapshot its commit is read from;
    ``uncovered``: (release, why) for releases whose source could not be read."""
    options: dict[tuple[str, str], dict[str, Any]] = {}
    sources: list[dict[str, Any]] = []
    for release, rev in refs:
        where = (read_from or {}).get(release)
        ref_git_dir, ref_repo = (where.git_dir, where.repo) if where else (git_dir, repo)
        commit = _commit(ref_git_dir, rev)
        session_text = _git_show(ref_git_dir, rev, SESSION_HEADER) or ""
        run_text = _git_show(ref_git_dir, rev, RUN_HEADER) or ""
        session_keys = header_keys(session_text)
        run_keys = header_keys(run_text)
        source = {"release": release, "kind": "source", "repo": ref_repo, "rev": rev, "commit": commit}
        if where:
            source["read_from"] = where.snapshot
        sources.append(source)
        cite = {"repo": ref_repo, "commit": commit, "rev": rev, "release": release}
        for kind, table, header in (("session_config", session_keys, SESSION_HEADER), ("run_config", run_keys, RUN_HEADER)):
            for key, line in table.values():
                entry = options.setdefault((kind, key), _new(kind, key))
                entry["defined"].append({**cite, "path": header, "line": line})
                _add_release(entry, release)
        for read in extract_source(ref_git_dir, rev, session_keys, run_keys):
            entry = options.setdefault((read.kind, read.key), _new(read.kind, read.key))
            entry["read_by_qnn_ep"].append({**cite, "path": read.path, "line": read.line})
            _add_release(entry, release)
            for value in read.values:
                if value not in entry["values"]:
                    entry["values"].append(value)
            entry["default"] = entry["default"] if read.default is None else read.default
            entry["wrong_value"] = read.wrong_value or entry["wrong_value"]
            entry["parse"] = read.parse or entry["parse"]
    candidate_keys = {key for key, _ in candidates}
    for key, evidence in candidates:  # provider options named by a run, not found in a source read
        entry = options.setdefault(("provider_option", key), _new("provider_option", key))
        entry["evidence"].append(evidence)
    _add_library_strings(options, sources, wheels, candidate_keys)
    for entry in options.values():  # releases oldest first (a revision label such as main-... last)
        entry["releases"].sort(key=_release_order)
    for release, why in uncovered:
        sources.append({"release": release, "kind": "none", "why": why})
    for entry in options.values():  # the newest reading line, or null: no source was read
        reads = entry["read_by_qnn_ep"] or entry["defined"]
        entry["source"] = dict(reads[-1]) if reads else None
    rows = sorted(options.values(), key=lambda e: (e["kind"], e["key"]))
    return {
        "schema_version": 1,
        "provenance": {
            "tool": "matrix/refresh/options_source.py",
            "generated": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "sources": sources,
        },
        "options": rows,
    }


def _release_order(label: str) -> tuple[int, Version | str]:
    try:
        return (0, Version(label))
    except InvalidVersion:
        return (1, label)


def _new(kind: str, key: str) -> dict[str, Any]:
    return {
        "kind": kind,
        "key": key,
        "releases": [],
        "values": [],
        "default": None,
        "parse": None,
        "wrong_value": None,
        "defined": [],
        "read_by_qnn_ep": [],
        "in_library_strings": [],
        "evidence": [],
        "source": None,
    }


def _add_release(entry: dict[str, Any], release: str) -> None:
    if release not in entry["releases"]:
        entry["releases"].append(release)


def _pair(text: str) -> tuple[str, str]:
    label, sep, value = text.partition("=")
    if not sep or not label or not value:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, not {text!r}")
    return label, value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--git-dir", type=Path, required=True)
    parser.add_argument("--ref", type=_pair, action="append", default=[], metavar="RELEASE=REV")
    parser.add_argument("--wheel", type=_pair, action="append", default=[], metavar="RELEASE=WHEEL")
    parser.add_argument(
        "--candidate",
        type=_pair,
        action="append",
        default=[],
        metavar="KEY=EVIDENCE",
        help="a provider option a run used (EVIDENCE: where it is recorded); looked up in each --wheel's EP library",
    )
    parser.add_argument(
        "--read-from",
        type=_pair,
        action="append",
        default=[],
        metavar="RELEASE=SNAPSHOT=GITDIR",
        help="read RELEASE's commit in GITDIR, a snapshot of the repository SNAPSHOT (owner/name) that holds it",
    )
    parser.add_argument(
        "--commit-repo",
        default="microsoft/onnxruntime",
        help="the repository the --read-from commits belong to (cited in the data)",
    )
    parser.add_argument(
        "--no-source",
        type=_pair,
        action="append",
        default=[],
        metavar="RELEASE=WHY",
        help="a release whose source could not be read, and why (recorded in the data)",
    )
    parser.add_argument("--repo", default="onnxruntime/onnxruntime-qnn")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent / "options.json")
    args = parser.parse_args(argv)
    if not args.ref:
        parser.error("give at least one --ref")
    read_from: dict[str, ReadFrom] = {}
    for release, value in args.read_from:
        snapshot, sep, folder = value.partition("=")
        if not sep or not snapshot or not folder:
            parser.error(f"--read-from {release}={value}: expected RELEASE=OWNER/NAME=GITDIR")
        read_from[release] = ReadFrom(Path(folder), snapshot, args.commit_repo)
    document = build(
        args.git_dir,
        args.ref,
        [(r, Path(w)) for r, w in args.wheel],
        args.repo,
        tuple(args.candidate),
        read_from,
        tuple(args.no_source),
    )
    args.out.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n", "utf-8")
    sys.stderr.write(f"{len(document['options'])} options -> {args.out}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
