"""The target's runtime as far as a model cares: onnxruntime version, the QNN
build it bundles, and the HTP arch of the chip, from the probe facts and the
release matrix (no onnxruntime import here)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from packaging.version import InvalidVersion, Version

from ..facts.probed import Facts
from ..facts.socs import identify as identify_soc
from ..matrixdata import Matrix


@dataclass(frozen=True)
class TargetRuntime:
    onnxruntime: str | None
    onnxruntime_qnn: str | None
    era: str | None  # plugin-2.x or monolithic-1.x
    qnn_version: str | None
    qnn_version_source: str | None
    htp_arch: int | None
    soc: str | None
    soc_source: str | None
    windows: bool
    # The probe's verdict on the model path: False when a character of it has
    # no mapping in the Windows ANSI code page (None: not flagged or unknown).
    model_path_in_code_page: bool | None = None
    ansi_code_page: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "onnxruntime": self.onnxruntime,
            "onnxruntime_qnn": self.onnxruntime_qnn,
            "era": self.era,
            "qnn_version": self.qnn_version,
            "qnn_version_source": self.qnn_version_source,
            "htp_arch": self.htp_arch,
            "soc": self.soc,
            "soc_source": self.soc_source,
            "windows": self.windows,
        }

    def with_child(self, child: dict[str, Any] | None) -> TargetRuntime:
        """What the placement child saw in the running target wins over the
        static reading (it imported the real modules)."""
        if not child:
            return self
        from dataclasses import replace

        qnn = child.get("qnn_version")
        return replace(
            self,
            onnxruntime=child.get("onnxruntime_version") or self.onnxruntime,
            onnxruntime_qnn=child.get("onnxruntime_qnn_version") or self.onnxruntime_qnn,
            qnn_version=qnn or self.qnn_version,
            qnn_version_source=(
                "onnxruntime_qnn.build_and_package_info.qnn_version in the target"
                if qnn
                else self.qnn_version_source
            ),
        )


def _dist(facts: Facts, name: str) -> dict[str, Any] | None:
    for dist in facts.value("installs", "distributions", []) or []:
        if isinstance(dist, dict) and dist.get("canonical_name") == name:
            return dist
    return None


def _qnn_from_matrix(matrix: Matrix, version: str | None) -> str | None:
    if not version:
        return None
    try:
        wanted = Version(version)
    except InvalidVersion:
        return None
    for release in matrix.releases.releases:
        if release.version == wanted:
            found = {f.qnn_version for f in release.files if f.qnn_version}
            if len(found) == 1:
                return found.pop()
    return None


def target_runtime(facts: Facts, matrix: Matrix) -> TargetRuntime:
    qnn = _dist(facts, "onnxruntime-qnn")
    ort = _dist(facts, "onnxruntime")
    era = qnn.get("era") if qnn else None
    qnn_version_text = qnn.get("version") if qnn else None
    # 1.x is monolithic: its own version is the onnxruntime version.
    ort_version = (ort or {}).get("version") or (
        qnn_version_text if era == "monolithic-1.x" else None
    )
    qnn_sdk = _qnn_from_matrix(matrix, qnn_version_text)
    soc = identify_soc(facts, matrix)
    platform = facts.value("interpreter", "sys_platform")
    non_ascii = facts.value("paths", "non_ascii", []) or []
    return TargetRuntime(
        onnxruntime=ort_version,
        onnxruntime_qnn=qnn_version_text,
        era=era,
        qnn_version=qnn_sdk,
        qnn_version_source=(
            f"release matrix: onnxruntime-qnn {qnn_version_text} bundles QNN {qnn_sdk}"
            if qnn_sdk
            else None
        ),
        htp_arch=soc.soc.htp_arch if soc else None,
        soc=soc.soc.part if soc else None,
        soc_source=soc.matched_by if soc else None,
        windows=platform == "win32",
        model_path_in_code_page=next(
            (
                p.get("encodable_in_ansi_code_page")
                for p in non_ascii
                if isinstance(p, dict) and p.get("label") == "model"
            ),
            None,
        ),
        ansi_code_page=facts.value("paths", "ansi_code_page"),
    )
