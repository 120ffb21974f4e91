"""Every failure a probe can detect must also be recognisable from its runtime
error text alone (issue 8): a user who pastes the error from a machine
qnndoctor never ran on gets the same cause. Each error / warning finding of the
rules is mapped to the catalogue entries that recognise it, or listed with the
reason it has no runtime message of its own; a new finding must be placed in
one of the two, and every mapped entry must be raised first by one of its own
real symptom texts."""

from __future__ import annotations

import pytest

from qnndoctor.diagnosis import diagnose, load
from qnndoctor.matrixdata import load_socs
from qnndoctor.rules.findings import FindingKind, Severity
from qnndoctor.rules.registry import all_finding_kinds

RECOGNISED_BY = {
    "uninstall-leftover": ("pip-leftover-tilde-onnxruntime-dirs",),
    "non-ascii-path": (
        "non-ascii-path-no-unicode-mapping",
        "provider-dll-non-ascii-install-path",
        "backend-path-non-ascii-load-library-failed",
        "non-ascii-model-path-misencoded",
    ),
    "fastrpc-device-missing": ("libcdsprpc-missing-no-dsp-runtime",),
    # On Windows the FastRPC client (libcdsprpc.dll) ships with the NPU driver.
    "npu-driver-missing": ("libcdsprpc-missing-no-dsp-runtime",),
    "fastrpc-access-denied": ("fastrpc-cdsp-session-open-failed",),
    "adsp-library-path-bad-entry": ("skel-not-found-adsp-library-path-linux-android",),
    "adsp-library-path-colon": ("adsp-library-path-colon-separated",),
    "system-qnn-on-loader-path": ("qnn-incompatible-binaries-mixed-libraries",),
    "no-onnxruntime-qnn": ("onnxruntime-qnn-module-not-found", "onnxruntime-module-not-found"),
    "onnxruntime-multiple-owners": (
        "provider-not-listed-shadowed-by-other-onnxruntime",
        "qai-hub-models-mixed-onnxruntime-flavours",
    ),
    "files-overwritten": ("provider-not-listed-shadowed-by-other-onnxruntime",),
    "files-missing": ("onnxruntime-module-emptied-by-flavour-swap",),
    "plugin-companion-missing": ("onnxruntime-module-not-found",),
    "numpy-missing": ("onnxruntime-numpy-not-installed",),
    "numpy-too-old": ("numpy-older-than-onnxruntime-build",),
    "plugin-companion-mismatch": ("plugin-host-ort-too-old", "plugin-ort-version-supported-zero"),
    "plugin-companion-known-broken": ("plugin-ort-version-supported-zero",),
    "emulated-interpreter": (
        "x64-emulation-htp-process-exit-127",
        "x64-wheel-qnn-load-library-failed",
        "arm64ec-pyd-under-x64-emulation-0xc000026f",
    ),
    "wrong-arch-interpreter": ("win32-error-193-wrong-architecture",),
    "qnn-libs-wrong-arch": (
        "x64-wheel-qnn-load-library-failed",
        "win32-error-193-wrong-architecture",
    ),
    "qnn-htp-backend-missing": (
        "bundled-qnn-backend-library-missing",
        "backend-path-load-library-failed",
    ),
    "qnn-library-corrupt": ("truncated-qnn-library-sigbus",),
    "qnn-stub-missing-for-htp-arch": ("htp-stub-library-missing-for-arch",),
    # a local onnxruntime_qnn.py / numpy.py imported in the package's place fails
    # as 'partially initialized module' or "'numpy' is not a package" (made for real)
    "module-shadowed": ("local-file-shadows-package",),
}

# Information findings whose situation also has a runtime message of its own
# (the command the user ran next fails with it): held to the same test.
INFO_RECOGNISED_BY = {
    "pip-absent": ("pip-missing-in-venv",),
    "pip-unobtainable": ("pip-missing-in-venv",),
    "system-managed-python": ("pip-externally-managed-environment",),
}

# Findings with no runtime message of their own, and why (an honest gap list:
# moving one to RECOGNISED_BY needs a catalogue entry with real sources).
NO_MESSAGE_OF_ITS_OWN = {
    "files-modified": "a file that differs from its RECORD fails however the change makes it "
    "fail; truncated QNN libraries and overwritten flavour files have entries of their own",
    "distribution-installed-twice": "the import system silently takes the first copy on sys.path",
    "npu-device-problem": "Windows' device problem code is not printed by onnxruntime or QNN",
    "installed-release-unsuitable": "a resolver verdict (platform, Python, SoC), not a runtime "
    "failure; its symptoms are the other entries' (no wheel, load failures)",
}

# Not probe findings about the environment: the smoke session reports the
# session's own error text (which the engine diagnoses), and a probe that
# failed is a gap in the check, not a failure of the environment.
NOT_ENVIRONMENT_FAILURES = {
    "probe-failed",
    "smoke-failed",
    "smoke-crashed",
    "smoke-timed-out",
    "smoke-cut-short",
    "smoke-wrong-output",
    "smoke-fell-back-to-cpu",
}


def _failure_findings() -> dict[str, FindingKind]:
    return {k.id: k for k in all_finding_kinds() if k.severity >= Severity.WARNING}


def test_every_failure_finding_is_mapped_or_has_its_reason() -> None:
    found = set(_failure_findings()) - NOT_ENVIRONMENT_FAILURES
    assert len(found) >= 20
    placed = set(RECOGNISED_BY) | set(NO_MESSAGE_OF_ITS_OWN)
    assert found - placed == set(), "a new finding: map it to catalogue entries or say why not"
    assert placed - found == set(), "a mapped finding that no rule raises any more"
    assert not set(RECOGNISED_BY) & set(NO_MESSAGE_OF_ITS_OWN)


def test_the_information_findings_mapped_are_raised_by_a_rule() -> None:
    info = {k.id for k in all_finding_kinds() if k.severity < Severity.WARNING}
    assert set(INFO_RECOGNISED_BY) <= info


@pytest.mark.parametrize("finding", sorted({**RECOGNISED_BY, **INFO_RECOGNISED_BY}))
def test_a_findings_entries_are_named_by_their_real_texts_alone(finding: str) -> None:
    """From a real symptom text alone, with no fact from a probe or a ticket:
    each entry is among the first three candidates for one of its texts, and
    one entry of the finding comes first for one of its texts. (Where several
    causes share one message, e.g. 'Unable to load backend', which of them is
    first is decided by a fact such as emulation or a non-ASCII path, which the
    pasted text may not state.)"""
    signatures = {s.id: s for s in load().signatures}
    socs = load_socs()
    firsts: list[str] = []
    mapped = {**RECOGNISED_BY, **INFO_RECOGNISED_BY}[finding]
    for entry in mapped:
        assert entry in signatures, f"{finding}: no catalogue entry {entry}"
        ranked = [diagnose(text, socs=socs).ids() for text in signatures[entry].examples]
        assert any(entry in ids[:3] for ids in ranked), (finding, entry, ranked)
        firsts.extend(ids[0] for ids in ranked if ids)
    assert set(firsts) & set(mapped), (finding, firsts)
