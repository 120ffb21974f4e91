"""The probes' string tests that stand in for regular expressions (compiling
them cost the probe program's start-up) match exactly what the regexes
matched: the original patterns are the oracle, over real library names and
random names built from the characters that matter (case, digits, dots,
newlines, non-ASCII letters that Unicode case folding maps onto ASCII)."""

from __future__ import annotations

import random
import re

from qnndoctor.probes import _names, _util, qnn_bundled, qnn_sdk

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
FLAVOUR_NAME = re.compile(r"^(onnxruntime|ort-nightly)([-_.].*)?$", re.IGNORECASE)
HEXAGON = re.compile(r"v(\d{2,3})", re.IGNORECASE)
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


def _sample_names(count: int) -> list[str]:
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
    names = _sample_names(20000)
    assert sum(_old_classify(n) is not None for n in names) > 300  # the sample reaches them
    assert [n for n in names if qnn_bundled.classify(n) != _old_classify(n)] == []


def test_library_suffix_matches_the_regex() -> None:
    names = [n.lower() for n in _sample_names(20000)]
    assert [
        n for n in names if qnn_bundled.has_library_suffix(n) != bool(LIB_SUFFIX.search(n))
    ] == []


def test_key_file_test_matches_the_regex() -> None:
    names = _sample_names(20000)
    assert sum(bool(KEY_FILE.search(n)) for n in names) > 300
    assert [n for n in names if _names.is_key_file_name(n) != bool(KEY_FILE.search(n))] == []


def test_qnn_library_prefilter_keeps_every_match() -> None:
    names = [*_sample_names(20000), "l\u0131bqnnx.so", "QNNHTP.DLL"]
    matched = [n for n in names if QNN_LIB.match(n)]
    assert len(matched) > 50
    assert [n for n in matched if not qnn_sdk._may_be_qnn_lib(n)] == []
    assert [n for n in matched if "qnn" not in n.lower()] == []  # the whole-folder test


def test_flavour_folder_test_matches_the_regex() -> None:
    names = _sample_names(20000)
    names += ["onnxruntime-1.31.1.dist-info", "ORT-Nightly-QNN-1.0.dist-info", "onnxruntime\n"]
    names += ["onnxruntimex-1.0.dist-info", "onnxruntime_qnn-2.7.0.dist-info", "ort_nightly-1.0"]
    assert sum(bool(FLAVOUR_NAME.match(n)) for n in names) > 100
    assert [n for n in names if _names.is_flavour_folder(n) != bool(FLAVOUR_NAME.match(n))] == []


def test_hexagon_version_matches_the_regex() -> None:
    names = [
        *_sample_names(10000),
        "libQnnHtpV73Skel.so",
        "libqnnhtpv79.cat",
        "QnnHtpV1234Stub.dll",
    ]
    names += ["v7", "vv73", "v\u0663\u0663", "libQnnHtpV68Skel.so.v81"]
    for name in names:
        match = HEXAGON.search(name.lower().replace("qnnhtp", ""))
        expected = int(match.group(1)) if match else None
        assert qnn_bundled.hexagon_version(name, "htp_skel") == expected, name


def test_assigned_string_matches_the_regex() -> None:
    texts = [
        "qnn_version = '2.51.0'\n__version__ = \"2.7.0\"\n",
        "# qnn_version = '1'\nqnn_version='2.37.1.250807093845_124904'",
        "x = 1\nqnn_version =\n  '2.3'\n",
        "qnn_version = ''\nqnn_version = 'second'\n",
        "qnn_version = 'unterminated",
        "qnn_version = '\u00e9\n' ",
        'qnn_version\u00a0=\u2003"nbsp"',
        "qnn_versions = 'no'\n",
        "\r\nqnn_version = 'after crlf'",
        "",
    ]
    rng = random.Random(7)
    spaces = ["", " ", "\t", "\n", " \u00a0"]
    values = ["", "2.1", "a'b", "x\ny", "\u00e9"]
    for _ in range(8000):
        lines = []
        for _ in range(rng.randint(1, 4)):
            line = [rng.choice(["", "", "x", " "]), rng.choice(["qnn_version", "__version__"])]
            line += [rng.choice(spaces), rng.choice(["=", "=", ":"]), rng.choice(spaces)]
            line += [rng.choice("'\"x"), rng.choice(values), rng.choice(["'", '"', "", "x"])]
            lines.append("".join(line))
        texts.append(rng.choice(["\n", "\r\n", ""]).join(lines))
    for name in ("qnn_version", "__version__"):
        pattern = re.compile(r"(?m)^" + name + r"""\s*=\s*['"]([^'"]+)['"]""")
        found = 0
        for text in texts:
            match = pattern.search(text)
            found += match is not None
            assert qnn_bundled.assigned_string(text, name) == (match.group(1) if match else None)
        assert found > 100


def test_canonical_name_matches_the_regex() -> None:
    names = [*_sample_names(20000), "Foo.Bar__baz--1", "A-_.-B", "...", ""]
    assert [n for n in names if _util.canonical_name(n) != re.sub(r"[-_.]+", "-", n).lower()] == []
