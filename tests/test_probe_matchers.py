"""The probes' string tests that stand in for regular expressions (compiling
them cost the probe program's start-up) match exactly what the regexes
matched: the original patterns are the oracle, over real library names and
random names built from the characters that matter (case, digits, dots,
newlines, non-ASCII letters that Unicode case folding maps onto ASCII)."""

from __future__ import annotations

import random
import re

from qnndoctor.probes import installs, qnn_bundled, qnn_sdk

# qnn_bundled's patterns before they became string tests.
LIB_SUFFIX = re.compile(r"\.(dll|so(\.\d+)*|dylib|cat)$", re.IGNORECASE)
KINDS = [
    (re.compile(r"qnnhtpv\d+stub"), "htp_stub"),
    (re.compile(r"qnnhtpv\d+skel"), "htp_skel"),
    (re.compile(r"\.cat$"), "signed_catalog"),
    (re.compile(r"qnnhtpprepare|^(lib)?htpprepare"), "htp_prepare"),
    (re.compile(r"qnnhtpnetrun"), "htp_netrun_extensions"),
    (re.compile(r"qnnhtp\."), "backend_htp"),
    (re.compile(r"qnnsystem"), "system"),
    (re.compile(r"qnncpu"), "backend_cpu"),
    (re.compile(r"qnngpu"), "backend_gpu"),
    (re.compile(r"qnnsaver"), "backend_saver"),
    (re.compile(r"qnnir"), "backend_ir"),
    (re.compile(r"genie"), "genie"),
    (re.compile(r"onnxruntime_providers_qnn"), "ort_provider_qnn"),
    (re.compile(r"onnxruntime_providers_shared"), "ort_providers_shared"),
    (re.compile(r"^(lib)?onnxruntime[._]"), "ort_runtime"),
    (re.compile(r"qnn"), "qnn_other"),
]
KEY_FILE = re.compile(
    r"(pybind11_state|^(lib)?onnxruntime|qnn|htpprepare|genie).*\.(dll|so(\.[\d.]+)?|dylib|pyd|cat)$",
    re.IGNORECASE,
)
QNN_LIB = re.compile(r"^(lib)?qnn[a-z0-9]*\.(dll|so)$", re.IGNORECASE)

REAL_NAMES = [
    "libQnnHtp.so",
    "libQnnHtpV73Skel.so",
    "libQnnHtpV75Stub.so",
    "libqnnhtpv73.cat",
    "QnnHtpPrepare.dll",
    "libHtpPrepare.so",
    "QnnHtpNetRunExtensions.dll",
    "QnnSystem.dll",
    "QnnCpu.dll",
    "QnnGpu.dll",
    "QnnSaver.dll",
    "QnnIr.dll",
    "Genie.dll",
    "onnxruntime_providers_qnn.dll",
    "libonnxruntime_providers_shared.so",
    "libonnxruntime.so.1.31.1",
    "onnxruntime.dll",
    "onnxruntime_pybind11_state.cpython-311-x86_64-linux-gnu.so",
    "libqnn_other.so.2",
    "__init__.py",
    "qnn.so.1.x",
    "libQnnHtp.so\n",
    "x.cat\n",
    "qnnhtpv\u0663stub.so",  # an Arabic-Indic digit: \d matches it
    "libQnnHtp.\u017fo",  # LATIN SMALL LETTER LONG S folds to "s"
]


def _names(count: int) -> list[str]:
    # long s, dotless i, an Arabic-Indic digit, the Kelvin sign
    alphabet = [*"qnhtpvskelubcasoyirdgm.x_-0123456789QNHTPVSDL\n", *"\u017f\u0131\u0663\u212a"]
    pieces = ["qnnhtpv", "stub", "skel", ".cat", ".so", ".dll", ".dylib", "qnn", "lib"]
    pieces += ["onnxruntime", "htpprepare", "genie", "pybind11_state", ".pyd", ".1"]
    rng = random.Random(20261123)
    names = list(REAL_NAMES)
    for _ in range(count):
        parts = [rng.choice(pieces) if rng.random() < 0.5 else rng.choice(alphabet)]
        parts += [
            rng.choice(pieces) if rng.random() < 0.3 else rng.choice(alphabet)
            for _ in range(rng.randint(0, 6))
        ]
        names.append("".join(parts))
    return names


def _old_classify(file_name: str) -> str | None:
    lower = file_name.lower()
    if not LIB_SUFFIX.search(lower) and "pybind11_state" not in lower:
        return None
    if "pybind11_state" in lower:
        return "ort_pybind"
    return next((kind for pattern, kind in KINDS if pattern.search(lower)), None)


def test_classify_matches_the_regex_table() -> None:
    names = _names(60000)
    assert sum(_old_classify(n) is not None for n in names) > 1000  # the sample reaches them
    assert [n for n in names if qnn_bundled.classify(n) != _old_classify(n)] == []


def test_library_suffix_matches_the_regex() -> None:
    names = [n.lower() for n in _names(60000)]
    assert [
        n for n in names if qnn_bundled.has_library_suffix(n) != bool(LIB_SUFFIX.search(n))
    ] == []


def test_key_file_test_matches_the_regex() -> None:
    names = _names(60000)
    assert sum(bool(KEY_FILE.search(n)) for n in names) > 1000
    assert [n for n in names if installs.is_key_file_name(n) != bool(KEY_FILE.search(n))] == []


def test_qnn_library_prefilter_keeps_every_match() -> None:
    names = [*_names(60000), "l\u0131bqnnx.so", "QNNHTP.DLL"]
    matched = [n for n in names if QNN_LIB.match(n)]
    assert len(matched) > 50
    assert [n for n in matched if not qnn_sdk._may_be_qnn_lib(n)] == []
