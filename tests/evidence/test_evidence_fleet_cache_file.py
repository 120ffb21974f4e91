"""A cache path that is a file, not a folder: the fleet evidence store reads as empty (found by QA:
`XDG_CACHE_HOME=<a file> qnndoctor recommend` printed a NotADirectoryError traceback)."""

from __future__ import annotations

from pathlib import Path

from qnndoctor.evidence.fleet import EvidenceStore


def test_store_under_a_file_reads_as_empty(tmp_path: Path) -> None:
    blocker = tmp_path / "cachefile"
    blocker.write_text("x")
    store = EvidenceStore(blocker / "qnndoctor" / "evidence")
    assert list(store.records()) == []
