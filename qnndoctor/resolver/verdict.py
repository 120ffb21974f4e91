"""The resolver's answer for one release: the file pip would take, or the
reasons none fits. Values only, below the resolver and the modules that make
its commands and alternatives (advice, alternatives), which read them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from packaging.version import Version

    from ..matrixdata.releases import WheelFile


@dataclass(frozen=True)
class Reason:
    """Why one release is ruled out: the rule, how sure, and where to check."""

    axis: str
    detail: str
    confidence: str
    sources: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "axis": self.axis,
            "detail": self.detail,
            "confidence": self.confidence,
            "sources": list(self.sources),
        }


@dataclass(frozen=True)
class Verdict:
    """One release for this target: the file pip would take, or why none fits."""

    version: Version
    era: str
    file: WheelFile | None
    reasons: tuple[Reason, ...]
    notes: tuple[str, ...] = ()
    companion_pin: str | None = None

    @property
    def fits(self) -> bool:
        return self.file is not None and not self.reasons

    def to_json(self) -> dict[str, Any]:
        return {
            "version": str(self.version),
            "era": self.era,
            "fits": self.fits,
            "file": self.file.filename if self.file else None,
            "qnn_version": self.file.qnn_version if self.file else None,
            "reasons": [r.to_json() for r in self.reasons],
            "notes": list(self.notes),
        }
