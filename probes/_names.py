"""Name tests of the installs probe: which dist-info folders are onnxruntime
flavours, and which RECORD files decide what runs.

The regexes are the definitions; the string tests give the same answers
without compiling them (a typical run of the probe program then never
imports ``re``; tests check each against its regex). Names with non-ASCII
letters (Unicode case folding: "\u017f" matches "s") or a newline ("$" and
"." treat it specially) are left to the regexes.
"""

from __future__ import annotations

from ._util import LazyPattern

# Distribution names that are onnxruntime flavours even when they do not
# (or no longer) provide the ``onnxruntime`` module themselves.
FLAVOUR_NAME = LazyPattern(r"^(onnxruntime|ort-nightly)([-_.].*)?$", ignore_case=True)

# Files whose owner decides what actually runs: the native extension, the
# runtime libraries, the QNN backend libraries and their signed catalogues.
KEY_FILE = LazyPattern(
    r"(pybind11_state|^(lib)?onnxruntime|qnn|htpprepare|genie).*\.(dll|so(\.[\d.]+)?|dylib|pyd|cat)$",
    ignore_case=True,
)


def _plain(name: str) -> bool:
    return name.isascii() and "\n" not in name


def is_flavour_folder(name: str) -> bool:
    """``FLAVOUR_NAME.match(name)``."""
    if not _plain(name):
        return FLAVOUR_NAME.match(name) is not None
    lower = name.lower()
    for prefix in ("onnxruntime", "ort-nightly"):
        if lower.startswith(prefix):
            rest = lower[len(prefix) :]
            return not rest or rest[0] in "-_."
    return False


_KEY_HEADS = ("pybind11_state", "qnn", "htpprepare", "genie")
_KEY_ENDINGS = (".dll", ".dylib", ".pyd", ".cat", ".so")  # one "." each, at the start


def _key_suffix_start(lower: str) -> int:
    """Where ``\\.(dll|so(\\.[\\d.]+)?|dylib|pyd|cat)$`` matches (the last such
    place), or -1."""
    if lower.endswith(_KEY_ENDINGS):
        return lower.rfind(".")
    start = lower.rfind(".so.")  # an earlier ".so." has this one's letters after it
    if start == -1:
        return -1
    rest = lower[start + 4 :]
    return start if rest and all(char in "0123456789." for char in rest) else -1


def is_key_file_name(name: str) -> bool:
    """``KEY_FILE.search(name)``: a head, then anything, then the suffix."""
    if not name.isascii() or "\n" in name:
        return KEY_FILE.search(name) is not None
    lower = name.lower()
    start = _key_suffix_start(lower)
    if start == -1:
        return False
    before = lower[:start]
    return any(head in before for head in _KEY_HEADS) or before.startswith(
        ("onnxruntime", "libonnxruntime")
    )
