"""The resolver's compatibility rules as data: what each rules out, how sure
that is, and the public sources a user can open to check it.

A rule without sources never rules a release out (the resolver turns it
into a note instead): "how sure" must always be answerable with a link.
"""

from __future__ import annotations

from dataclasses import dataclass

# How sure a rule is, in words for the text output (the ids stay in JSON).
CONFIDENCE_WORDS = {
    "artifact": "certain: read from the published wheel files",
    "documented": "documented by the publisher or the packaging standard",
    "maintainer-confirmed": "confirmed by the project's maintainers",
    "field-report": "reported by users, not confirmed by the maintainers",
}

PACKAGING_TAGS = (
    "https://packaging.python.org/en/latest/specifications/platform-compatibility-tags/"
)
REQUIRES_PYTHON_SPEC = (
    "https://packaging.python.org/en/latest/specifications/core-metadata/#requires-python"
)
PRERELEASE_SPEC = "https://packaging.python.org/en/latest/specifications/version-specifiers/#handling-of-pre-releases"
YANKED_SPEC = "https://peps.python.org/pep-0592/"
ORT_QNN_DOCS = "https://onnxruntime.ai/docs/execution-providers/QNN-ExecutionProvider.html"
QNN_HTP_BACKEND = (
    "https://docs.qualcomm.com/bundle/publicresource/80-63442-10/topics/htp_backend.md"
)
# One HTP stub / skel pair per Hexagon version (libQnnHtpV73Stub + libQnnHtpV73Skel).
EXECUTORCH_QNN_STUBS = (
    "https://github.com/pytorch/executorch/blob/main/docs/source/backends-qualcomm.md"
)
QNN_ARM64X = "https://docs.qualcomm.com/doc/80-63442-2/topic/arm64x_support.html"
MS_ARM64X = "https://learn.microsoft.com/en-us/windows/arm/arm64x-pe"
MS_ARM64EC = "https://learn.microsoft.com/en-us/windows/arm/arm64ec"
NPU_DRIVER_COMPAT = (
    "https://docs.qualcomm.com/bundle/publicresource/80-63442-10/topics/"
    "htp_hexagon_npu_runtime_driver.md"
)
LINUX_X86_SIMULATOR = "https://github.com/onnxruntime/onnxruntime-qnn/releases/tag/v2.3.0"


@dataclass(frozen=True)
class CompatRule:
    """One axis that can rule a release out."""

    axis: str
    confidence: str
    sources: tuple[str, ...]
    # Shown as "Why not: ..." headings in the text output.
    summary: str


NO_PLATFORM = "no-wheel-for-platform"
NO_PYTHON = "no-wheel-for-python"
REQUIRES_PYTHON = "requires-python"
NO_STUB = "no-stub-for-htp-arch"
EMULATION = "x64-libraries-under-emulation"
X64_MACHINE = "arm64-libraries-on-x64-machine"
NO_QNN_LIBRARIES = "no-bundled-qnn"
KNOWN_ISSUE = "known-issue"
PRERELEASE = "prerelease"
YANKED = "yanked"

RULES: dict[str, CompatRule] = {
    rule.axis: rule
    for rule in (
        CompatRule(
            NO_PLATFORM,
            "artifact",
            (PACKAGING_TAGS,),
            "no wheel was published for this operating system and processor",
        ),
        CompatRule(
            NO_PYTHON,
            "artifact",
            (PACKAGING_TAGS,),
            "no wheel was published for this Python version",
        ),
        CompatRule(
            REQUIRES_PYTHON,
            "documented",
            (REQUIRES_PYTHON_SPEC,),
            "the wheel declares it does not support this Python version",
        ),
        CompatRule(
            NO_STUB,
            "artifact",
            (QNN_HTP_BACKEND, EXECUTORCH_QNN_STUBS),
            "the wheel has no HTP library (stub) for this chip's Hexagon version",
        ),
        CompatRule(
            EMULATION,
            "artifact",
            (QNN_ARM64X, MS_ARM64X, MS_ARM64EC),
            "an x64 (emulated) Python cannot load this wheel's QNN libraries and reach the NPU",
        ),
        CompatRule(
            X64_MACHINE,
            "artifact",
            (MS_ARM64X, MS_ARM64EC),
            "the wheel's QNN libraries are built for Windows on ARM: an x64 PC cannot load them",
        ),
        CompatRule(
            NO_QNN_LIBRARIES,
            "artifact",
            (ORT_QNN_DOCS,),
            "the wheel ships no QNN libraries at all, so it cannot use the NPU by itself",
        ),
        CompatRule(
            PRERELEASE,
            "documented",
            (PRERELEASE_SPEC,),
            "a pre-release, which pip installs only when asked",
        ),
        CompatRule(YANKED, "documented", (YANKED_SPEC,), "withdrawn by its publisher"),
    )
}


def confidence_words(confidence: str) -> str:
    return CONFIDENCE_WORDS.get(confidence, confidence)
