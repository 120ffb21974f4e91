"""What the onnxruntime flavours require, as installed on the path: read
from folder names only (stdlib, no import of anything installed)."""

from __future__ import annotations

from ._util import canonical_name

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: the target's startup skips `typing`
    from typing import Any, Dict, Iterable, List


def requirements_present(
    entries: Iterable[Any], results: List[Dict[str, Any]]
) -> Dict[str, List[str]]:
    """Every distribution an onnxruntime flavour's Requires-Dist names, with
    the versions installed on the path ([] when none): judged by the rules
    (markers and specifiers need packaging, which the target may lack)."""
    wanted: Dict[str, List[str]] = {}
    for info in results:
        for text in info.get("requires_dist") or []:
            head = str(text).strip()
            end = 0
            while end < len(head) and (head[end].isalnum() or head[end] in "._-"):
                end += 1
            if end:
                wanted.setdefault(canonical_name(head[:end]), [])
    for entry in entries:
        for name in entry.names:
            stem, _, kind = name.rpartition(".")
            if kind not in ("dist-info", "egg-info"):
                continue
            project, _, version = stem.partition("-")
            key = canonical_name(project)
            if key in wanted and version:
                wanted[key].append(version.split("-py")[0])
    return wanted
