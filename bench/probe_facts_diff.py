"""Do two versions of the probe program report the same facts? (run by hand,
after changing the probes for speed).

Builds real venvs (the HTP simulator setup, an empty one, one with a
half-uninstalled onnxruntime left as ``~nnxruntime``, one with two
onnxruntime flavours sharing files, one with broken metadata, and an empty
venv of each CPython 3.8+ that pyenv has; the simulator one again with a QNN
SDK named by QNN_SDK_ROOT, LD_LIBRARY_PATH and ADSP_LIBRARY_PATH), runs the probe program of this
checkout and that of ``CHECKOUT`` in each (as ``collect.probe_argv`` does,
plus ``--deep``), and compares every probe's entry with the ``duration_ms``
fields left out, and what each printed on stderr. Prints each difference; exit status 1 if there is one.

Usage: python bench/probe_facts_diff.py CHECKOUT [--wheels DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from _common import add_wheels_argument, healthy_wheels
from helpers.monolithic import monolithic_qnn_wheel
from helpers.wheels import make_venv, pip_install, site_packages

from qnndoctor.children.launch import probe_argv
from qnndoctor.target.collect import PART_MARKER

THIS_PROBES = Path(__file__).resolve().parent.parent / "probes"


def _venvs(root: Path, wheels: list[Path]) -> dict[str, Path]:
    """The real environments to probe, by name."""
    made: dict[str, Path] = {}
    made["simulator"] = make_venv(root / "simulator", with_pip=True)
    pip_install(made["simulator"], *map(str, wheels))
    made["empty"] = make_venv(root / "empty")
    qnn_wheel = monolithic_qnn_wheel(root / "wheels")
    made["half-uninstalled"] = make_venv(root / "half")
    pip_install(made["half-uninstalled"], str(qnn_wheel), *map(str, wheels[1:]))
    site = site_packages(made["half-uninstalled"])
    shutil.move(str(site / "onnxruntime"), str(site / "~nnxruntime"))
    made["two-flavours"] = make_venv(root / "two")
    pip_install(made["two-flavours"], str(qnn_wheel))
    pip_install(made["two-flavours"], *map(str, wheels))
    made["broken-metadata"] = make_venv(root / "broken")
    pip_install(made["broken-metadata"], str(qnn_wheel))
    info = next(site_packages(made["broken-metadata"]).glob("onnxruntime_qnn-*.dist-info"))
    (info / "METADATA").write_bytes(b"\xff\xfe garbage without headers\n\x00\x01")
    (info / "RECORD").write_bytes(b'onnxruntime/__init__.py,sha256=abc\n"unterminated,\n')
    for python in sorted(Path.home().glob(".pyenv/versions/3.*/bin/python3.*[0-9]")):
        minor = int(python.name.split(".")[1])
        if minor >= 8 and f"python3.{minor}-empty" not in made:
            made[f"python3.{minor}-empty"] = make_venv(root / f"py3{minor}", str(python))
    return made


def _sdk_environment(root: Path, simulator: Path) -> dict[str, str]:
    """A QNN SDK folder (sdk.yaml, host and Hexagon libraries copied from the
    simulator wheel) named by the variables the qnn_sdk probe reads."""
    sdk = root / "qairt" / "2.37.1.250807"
    host = sdk / "lib" / "x86_64-linux-clang"
    hexagon = sdk / "lib" / "hexagon-v73" / "unsigned"
    host.mkdir(parents=True)
    hexagon.mkdir(parents=True)
    (sdk / "sdk.yaml").write_text("name: qairt\nversion: 2.37.1.250807\n")
    bundled = site_packages(simulator) / "onnxruntime_qnn"
    for library in sorted(bundled.rglob("libQnn*.so"))[:4]:
        shutil.copy(library, host / library.name)
    (hexagon / "libQnnHtpV73Skel.so").write_bytes(b"\x7fELF" + b"\x00" * 60)
    (root / "link").symlink_to(host)  # one folder under two names, and one named twice
    return {
        "QNN_SDK_ROOT": str(sdk),
        "LD_LIBRARY_PATH": f"{host}:{root / 'missing'}:{root / 'link'}:{host}",
        "ADSP_LIBRARY_PATH": f"{hexagon}:/vendor/lib/rfsa",
    }


def _sections(
    python: Path, probes: Path, extra: list[str], env: dict[str, str] | None = None
) -> dict[str, Any]:
    """Each probe's entry without its duration, and stderr as "(stderr)"."""
    argv = [*probe_argv(str(python), str(probes), probe_timeout=20), *extra]
    completed = subprocess.run(
        argv,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        env={**os.environ, **(env or {})},
    )
    sections: dict[str, Any] = {"(stderr)": completed.stderr}
    for line in completed.stdout.splitlines():
        if line.startswith(PART_MARKER):
            name, entry = json.loads(line[len(PART_MARKER) :])
            entry.pop("duration_ms", None)
            sections[name] = entry
    return sections


def _differences(path: str, a: Any, b: Any) -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        found: list[str] = []
        for key in sorted(set(a) | set(b), key=str):
            if key not in a or key not in b:
                found.append(f"{path}/{key}: only in {'this' if key in a else 'compare'}")
            else:
                found += _differences(f"{path}/{key}", a[key], b[key])
        return found
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [
            d
            for i, (x, y) in enumerate(zip(a, b, strict=True))
            for d in _differences(f"{path}[{i}]", x, y)
        ]
    return [] if a == b else [f"{path}: this {a!r} != compare {b!r}"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout", type=Path, help="the other checkout (say, main)")
    add_wheels_argument(parser)
    args = parser.parse_args()
    wheels = healthy_wheels(args.wheels)
    if wheels is None:
        raise SystemExit(f"the healthy reference wheels are missing from {args.wheels}")
    other = args.checkout.resolve() / "probes"
    failures = 0
    with tempfile.TemporaryDirectory(prefix="qnndoctor-probe-diff-") as tmp:
        venvs = _venvs(Path(tmp), wheels)
        runs: list[tuple[str, Path, dict[str, str]]] = [(n, p, {}) for n, p in venvs.items()]
        sdk = _sdk_environment(Path(tmp) / "sdk", venvs["simulator"])
        runs.append(("simulator + QNN SDK variables", venvs["simulator"], sdk))
        for name, python, env in runs:
            for extra in ([], ["--deep"]):
                mine = _sections(python, THIS_PROBES, extra, env)
                theirs = _sections(python, other, extra, env)
                found = _differences("", mine, theirs)
                errors = sorted(
                    k for k, v in mine.items() if k[0] != "(" and v.get("status") != "ok"
                )
                label = " ".join([name, *extra])
                print(f"{label}: {len(mine) - 1} probes, errors {errors}, {len(found)} differences")
                for line in found[:40]:
                    print("   ", line)
                failures += bool(found)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
