"""What a QNN context binary says about itself.

Measured on binaries that onnxruntime-qnn 2.7.0 (QAIRT 2.51.0) compiled on the
Linux x86-64 HTP simulator (see docs/model.md): the binary is not a documented
format, but it carries, as plain ASCII, the QNN build that wrote it
(``v2.51.0.260929181845``, also in the EPContext node's ``ep_sdk_version``),
and the HTP graph configuration string with ``;arch=68;`` (``min_arch=68``)
and ``soc_type=UNKNOWN_SDM`` (``SM8550`` with ``htp_arch=73``, ``SM8650`` with
``soc_model=57``). These are read with patterns, never by offsets; a binary
in which none is found is reported as unreadable, not guessed at.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .loading import EpContextNode

_BUILD = re.compile(rb"v(\d+)\.(\d+)\.(\d+)\.(\d{6,})")
_ARCH = re.compile(rb"[;\x00]arch=(\d{2,3});")
_MIN_ARCH = re.compile(rb"min_arch=(\d{2,3});")
_SOC = re.compile(rb"soc_type=([A-Za-z0-9_]{2,32});")
# What a repository cloned without Git LFS holds instead of the file (the
# pointer format: https://github.com/git-lfs/git-lfs/blob/main/docs/spec.md).
LFS_POINTER = b"version https://git-lfs.github.com/spec/v1"
_MAX_READ = 256 * 1024 * 1024  # the strings sit in the header; big weights need not be read whole


@dataclass(frozen=True)
class ContextInfo:
    """One EPContext node's binary: where it is and what it says."""

    node: str
    location: str  # "embedded" or the file's path
    present: bool
    size: int | None
    qnn_build: str | None  # e.g. 2.51.0.260929181845
    qnn_version: str | None  # e.g. 2.51.0
    htp_arch: int | None
    soc: str | None
    node_sdk_version: str | None  # the EPContext node's ep_sdk_version attribute
    error: str | None = None
    lfs_pointer: bool = False  # a Git LFS pointer file stands where the binary should

    def to_json(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "location": self.location,
            "present": self.present,
            "size": self.size,
            "qnn_build": self.qnn_build,
            "qnn_version": self.qnn_version,
            "htp_arch": self.htp_arch,
            "soc": self.soc,
            "node_sdk_version": self.node_sdk_version,
            "error": self.error,
            "lfs_pointer": self.lfs_pointer,
        }


def _most_common(values: list[bytes]) -> bytes | None:
    if not values:
        return None
    return max(set(values), key=values.count)


def parse_binary(data: bytes) -> tuple[str | None, int | None, str | None]:
    """(QNN build, HTP arch, SoC) found in a context binary's bytes."""
    builds = [b".".join(m.groups()) for m in _BUILD.finditer(data)]
    build = _most_common(builds)
    arch = _most_common(_ARCH.findall(data)) or _most_common(_MIN_ARCH.findall(data))
    soc = _most_common(_SOC.findall(data))
    return (
        build.decode("ascii") if build else None,
        int(arch) if arch else None,
        soc.decode("ascii") if soc else None,
    )


def _version(build: str | None) -> str | None:
    return ".".join(build.split(".")[:3]) if build else None


def _missing(node: EpContextNode, location: str, sdk: str | None, error: str) -> ContextInfo:
    """A node whose binary could not be read: nothing known but where it was looked for."""
    return ContextInfo(node.name, location, False, None, None, None, None, None, sdk, error=error)


def read_context(model_path: Path, node: EpContextNode) -> ContextInfo:
    """The context binary of ``node``: embedded bytes or the file beside the model."""
    sdk = node.ep_sdk_version.lstrip("v") if node.ep_sdk_version else None
    if node.embedded is not None:
        data, location = node.embedded, "embedded"
    elif node.cache_path:
        path = model_path.parent / node.cache_path
        location = str(path)
        try:
            with path.open("rb") as handle:
                data = handle.read(_MAX_READ)
        except OSError as exc:
            return _missing(
                node,
                location,
                sdk,
                f"context binary {node.cache_path!r} not readable beside the model: "
                f"{exc.strerror or exc}",
            )
    else:
        return _missing(
            node, "none", sdk, "the EPContext node names no context binary (no ep_cache_context)"
        )
    if data.startswith(LFS_POINTER):
        pointer = (
            f"the context binary is a Git LFS pointer file ({len(data)} bytes), not the binary: "
            "the model was cloned or downloaded without Git LFS"
        )
        return ContextInfo(
            node.name, location, True, len(data), None, _version(sdk), None, None, sdk,
            error=pointer, lfs_pointer=True,
        )  # fmt: skip
    build, arch, soc = parse_binary(data)
    error = None
    if build is None and arch is None:
        error = "no QNN build string or HTP arch found in the context binary (not a QNN context?)"
    return ContextInfo(
        node.name,
        location,
        True,
        len(data),
        build,
        _version(build or sdk),
        arch,
        soc,
        sdk,
        error=error,
    )
