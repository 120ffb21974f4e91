"""How the two children of a check are launched: the smoke session's and the
probe program's command lines and environments, built in this one place so
that the head start's guess (``headstart.py``) and the pipeline (the smoke
session, ``target/collect.py``) cannot drift apart.

Imports only ``os`` at load time: the head start reads it before anything
else of qnndoctor is imported.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
SMOKE_DIR = os.path.join(PACKAGE_DIR, "smoke")

# Runs child.py as ``python child.py`` would (its folder first on sys.path,
# nothing else added), but imported, so the bytecode compiled at install
# time is used instead of compiling the script on every start.
SMOKE_BOOTSTRAP = (
    "import os, sys\n"
    "sys.path[0] = os.path.dirname(sys.argv[1])\n"
    "import child\n"
    "sys.exit(child.main(sys.argv[2:]))\n"
)

# Loads the probes under a private package name straight from their folder:
# nothing is added to the target's sys.path, so what the probes see of
# sys.path is exactly what the target's own code sees. (importlib.machinery
# is built in; importlib.util would cost the target a few ms of imports.)
PROBE_BOOTSTRAP = (
    "import os, sys, types, importlib.machinery as m\n"
    "d = sys.argv[1]\n"
    "n = '_qnndoctor_probes'\n"
    "f = os.path.join(d, '__init__.py')\n"
    "l = m.SourceFileLoader(n, f)\n"
    "s = m.ModuleSpec(n, l, origin=f, is_package=True)\n"
    "s.submodule_search_locations = [d]\n"
    "p = types.ModuleType(n)\n"
    "p.__spec__, p.__loader__, p.__file__, p.__path__, p.__package__ = s, l, f, [d], n\n"
    "sys.modules[n] = p\n"
    "l.exec_module(p)\n"
    "sys.exit(p.main(sys.argv[2:]))\n"
)

# Each probe gets this share of the probe program's time limit (see probes.run_all).
PROBE_SHARE = 1 / 3
DEFAULT_TIMEOUT = 60.0  # the probe program's time limit (check --timeout)
BACKENDS = ("htp", "gpu", "cpu")  # the QNN backends a session can be asked for
DEFAULT_BACKEND = "htp"


def smoke_argv(python: str, backend: str) -> list[str]:
    return [
        python,
        "-B",
        "-c",
        SMOKE_BOOTSTRAP,
        os.path.join(SMOKE_DIR, "child.py"),
        os.path.join(SMOKE_DIR, "qdq_add.onnx"),
        os.path.join(SMOKE_DIR, "qdq_add.expected.json"),
        backend,
    ]


def smoke_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ if base is None else base)
    for variable in ("PYTHONINSPECT", "PYTHONSTARTUP"):
        env.pop(variable, None)
    # numpy (which onnxruntime imports) starts one OpenBLAS thread per core at
    # import; the session never calls BLAS, so those threads only take CPU
    # from the probes running beside it. A user's own setting is kept.
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    return env


def probe_argv(
    python: str,
    probes_dir: str,
    *,
    deep: bool = False,
    model: str | None = None,
    probe_timeout: float | None = None,
) -> list[str]:
    argv = [python, "-B", "-c", PROBE_BOOTSTRAP, probes_dir]
    if probe_timeout is not None:
        argv.append(f"--probe-timeout={probe_timeout:g}")
    if deep:
        argv.append("--deep")
    if model:
        argv.append(f"--model={model}")
    return argv


def probe_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ if base is None else base)
    # Would turn the child interactive or change what it reports about itself.
    for variable in ("PYTHONINSPECT", "PYTHONSTARTUP", "PYTHONDONTWRITEBYTECODE"):
        env.pop(variable, None)
    return env
