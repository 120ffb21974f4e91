"""The probes' cheap stand-ins for ``platform`` answer what platform answers:
platform itself is the oracle, on this interpreter and on other shapes of
``sys.version``."""

from __future__ import annotations

import locale
import os
import platform
import subprocess
import sys

import pytest
from qnndoctor.probes import _util, interpreter


def test_uname_fields_are_platforms() -> None:
    found = platform.uname()
    assert _util.uname_fields() == (found.system, found.release, found.version, found.machine)
    assert _util.machine() == platform.machine()


def test_libc_version_is_platforms() -> None:
    assert _util.libc_version() == platform.libc_ver()


@pytest.mark.parametrize(
    "version",
    [
        "3.11.7 (main, Dec  4 2023, 12:00:00) [GCC 11.4.0]",
        "3.14 (main, Oct  7 2025, 10:00:00) [Clang 17.0.0]",
        "3.13.0rc1+ (heads/3.13:abc, Sep  1 2024, 09:00:00) [GCC 13.2.0]",
        "3.11.5 | packaged by conda-forge | (main, Aug 27 2023, 03:34:09) [GCC 12.3.0]",
        "3.13.0 experimental free-threading build (main, Oct  8 2024, 08:51:28) [GCC 13.2.0]",
        "3.12.1 (tags/v3.12.1:2305ca5, Dec  7 2023, 22:03:25) [MSC v.1937 64 bit (AMD64)]",
    ],
)
def test_python_version_fields_are_platforms(monkeypatch: pytest.MonkeyPatch, version: str) -> None:
    """The same answer, or the same error where platform cannot parse the
    shape (this interpreter's platform may be older than the string)."""
    monkeypatch.setattr(sys, "version", version)
    try:
        expected = (platform.python_version(), platform.python_implementation())
    except ValueError as exc:
        with pytest.raises(ValueError, match="failed to parse"):
            _util.python_version_fields()
        assert "failed to parse" in str(exc)
        return
    assert _util.python_version_fields() == expected


def test_python_version_fields_on_this_interpreter() -> None:
    expected = (platform.python_version(), platform.python_implementation())
    assert _util.python_version_fields() == expected


def test_locale_encoding_is_locales() -> None:
    assert interpreter.locale_encoding() == locale.getpreferredencoding(False)


@pytest.mark.parametrize(
    "flags", [["-X", "utf8"], ["-X", "utf8=0"], ["-X", "warn_default_encoding"]]
)
@pytest.mark.parametrize("lang", ["C", "C.UTF-8"])
def test_locale_encoding_under_other_modes(flags: list[str], lang: str) -> None:
    """In a child with another UTF-8 mode / locale: the same answer as locale."""
    code = (
        "import locale\n"
        "from qnndoctor.probes import interpreter\n"
        "print(interpreter.locale_encoding(), locale.getpreferredencoding(False))"
    )
    out = subprocess.run(
        [sys.executable, *flags, "-c", code],
        env={**os.environ, "LC_ALL": lang, "PYTHONWARNINGS": "ignore"},
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
        check=True,
    ).stdout.split()
    assert len(out) == 2 and out[0] == out[1]
