"""False positives of ``qnndoctor lint`` on real, correct public code that
uses the QNN EP (onnxruntime-qnn's own Python, its examples, Olive and
olive-recipes, onnxruntime-genai, onnxruntime-inference-examples, AI Hub
apps). The code itself is never committed: bench/lint_public_manifest.json
names each file (repo, path, commit, sha256) and this script reads it from
local git mirrors (``git show COMMIT:PATH``) when they are present.

    python bench/lint_public.py                  # lint the manifest's files
    python bench/lint_public.py --select         # rebuild the manifest from the mirrors
    python bench/lint_public.py --mirrors DIR    # mirrors at DIR/<owner>+<name>/repo

Exit 0 when every file was read and none has a finding, 1 on findings, 3
when a mirror or a file is missing (the run says which).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from qnndoctor.lint import lint_text  # noqa: E402
from qnndoctor.lint.checks import Target  # noqa: E402
from qnndoctor.lint.knowledge import load  # noqa: E402

MANIFEST = Path(__file__).resolve().parent / "lint_public_manifest.json"
DEFAULT_MIRRORS = Path("/work/.mirror")
REPOS = (
    "onnxruntime/onnxruntime-qnn",
    "microsoft/onnxruntime-inference-examples",
    "microsoft/Olive",
    "microsoft/olive-recipes",
    "microsoft/onnxruntime-genai",
    "quic/ai-hub-apps",
)
# A Python file that names the QNN EP; a genai_config.json with a qnn entry.
_PY = re.compile(r"QNNExecutionProvider|onnxruntime_qnn|get_qnn_qdq_config|\"qnn\"|'qnn'")
_TEST = re.compile(r"(^|/)(tests?|testing)(/|$)|(^|/)test_[^/]*\.py$|_test\.py$|onnxruntime_test_")


def _git(mirror: Path, *args: str) -> bytes:
    done = subprocess.run(
        ["git", "--git-dir", str(mirror), *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=120,
        check=False,
    )
    if done.returncode != 0:
        raise FileNotFoundError(done.stderr.decode("utf-8", "replace").strip()[:300])
    return done.stdout


def _mirror(root: Path, repo: str) -> Path:
    return root / repo.replace("/", "+") / "repo"


def select(root: Path) -> list[dict[str, str]]:
    entries: list[dict[str, str]] = []
    for repo in REPOS:
        mirror = _mirror(root, repo)
        if not mirror.exists():
            sys.stderr.write(f"{repo}: no mirror at {mirror}\n")
            continue
        commit = _git(mirror, "rev-parse", "HEAD").decode().strip()
        paths = _git(mirror, "ls-tree", "-r", "--name-only", commit).decode().splitlines()
        for path in paths:
            if not (path.endswith(".py") or path.endswith("genai_config.json")):
                continue
            data = _git(mirror, "show", f"{commit}:{path}")
            text = data.decode("utf-8", "replace")
            wanted = _PY.search(text) if path.endswith(".py") else ('"qnn"' in text.lower())
            if not wanted:
                continue
            entries.append(
                {
                    "repo": repo,
                    "path": path,
                    "commit": commit,
                    "sha256": hashlib.sha256(data).hexdigest(),
                    "kind": "test" if _TEST.search(path) else "code",
                }
            )
    return entries


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirrors", type=Path, default=DEFAULT_MIRRORS)
    parser.add_argument("--select", action="store_true", help="rebuild the manifest from the mirrors")
    parser.add_argument("--onnxruntime-qnn", dest="version", default=None)
    args = parser.parse_args()
    if args.select:
        entries = select(args.mirrors)
        MANIFEST.write_text(json.dumps({"files": entries}, indent=1) + "\n", "utf-8")
        sys.stderr.write(f"{len(entries)} files -> {MANIFEST}\n")
        return 0
    entries = json.loads(MANIFEST.read_text("utf-8"))["files"]
    knowledge = load()
    target = Target.of(knowledge, args.version)
    missing = 0
    by_kind = {"code": [0, 0, 0], "test": [0, 0, 0]}  # files, files with findings, findings
    for entry in entries:
        try:
            data = _git(_mirror(args.mirrors, entry["repo"]), "show", f"{entry['commit']}:{entry['path']}")
        except FileNotFoundError as exc:
            sys.stderr.write(f"missing: {entry['repo']} {entry['path']}: {exc}\n")
            missing += 1
            continue
        if hashlib.sha256(data).hexdigest() != entry["sha256"]:
            sys.stderr.write(f"changed: {entry['repo']} {entry['path']}\n")
            missing += 1
            continue
        shown = f"{entry['repo']}:{entry['path']}"
        result = lint_text(data.decode("utf-8", "replace"), shown, target, knowledge)
        counts = by_kind[entry["kind"]]
        counts[0] += 1
        if result.error:
            print(f"{shown}: error: {result.error}")
        if result.findings:
            counts[1] += 1
            counts[2] += len(result.findings)
        for finding in result.findings:
            print(f"{shown}:{finding.loc.line}:{finding.loc.col}: {finding.code} {finding.message} [{entry['kind']}]")
    for kind, (files, flagged, findings) in by_kind.items():
        print(f"{kind}: {files} files, {flagged} with findings, {findings} findings (onnxruntime-qnn {target.version})")
    if missing:
        print(f"{missing} files missing or changed")
        return 3
    return 1 if by_kind["code"][2] else 0


if __name__ == "__main__":
    sys.exit(main())
