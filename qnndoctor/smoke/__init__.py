"""The isolated HTP smoke session: the proof that QNN really runs.

"Provider is listed" is not "provider works". The child (``child.py``) runs a
tiny quantized model in the target interpreter with CPU fallback disabled;
this side starts it through a ``Runner`` (hard timeout, whole-tree kill,
capped output) and classifies whatever happens, crash and hang included.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .. import headstart
from ..children import launch
from ..children.runner import Completed, Runner, Started, SubprocessRunner
from ..target.interpreter import Target

if TYPE_CHECKING:  # the outcome half (smoke/outcome.py) is imported only once a child ended
    from ..facts.probed import Facts
    from .outcome import SmokeResult

HERE = Path(launch.SMOKE_DIR)
MODEL = HERE / "qdq_add.onnx"
EXPECTED = HERE / "qdq_add.expected.json"
CHILD = HERE / "child.py"


def smoke_argv(target: Target, backend: str) -> list[str]:
    return launch.smoke_argv(target.python, backend)


def _child_env() -> dict[str, str]:
    return launch.smoke_env()


class PendingSmoke:
    """A smoke session that was started and is not classified yet."""

    def __init__(
        self,
        backend: str,
        timeout: float,
        cwd: str | None,  # the child's working folder (headstart.new_folder), removed after it
        started: Started | None = None,
        completed: Completed | None = None,
    ) -> None:
        self.backend, self.timeout, self._cwd = backend, timeout, cwd
        self._started, self._completed = started, completed

    @property
    def pid(self) -> int | None:
        return self._started.pid if self._started is not None else None

    def result(self) -> SmokeResult:
        """Wait for the child (bounded by its timeout) and classify its end."""
        try:
            completed = self._started.finish() if self._started is not None else self._completed
        finally:
            if self._cwd is not None:
                headstart.remove_folder(self._cwd)
        assert completed is not None
        from .outcome import classify

        return classify(completed, self.backend, self.timeout)


def start_smoke(
    target: Target, *, backend: str = "htp", timeout: float = 60.0, runner: Runner | None = None
) -> PendingSmoke:
    """Start the child in the target now (the real runner returns at once;
    another runner runs it to the end here). Never raises for anything the
    child does."""
    runner = runner or SubprocessRunner()
    argv, env = smoke_argv(target, backend), _child_env()
    if isinstance(runner, SubprocessRunner):
        early = headstart.claim("smoke", argv, env)
        if early is not None:
            started = runner.adopt(early, timeout=timeout)
            return PendingSmoke(backend, timeout, early.cwd, started=started)
    cwd = headstart.new_folder()
    try:
        if isinstance(runner, SubprocessRunner):
            started = runner.start(argv, timeout=timeout, env=env, cwd=cwd)
            return PendingSmoke(backend, timeout, cwd, started=started)
        completed = runner.run(argv, timeout=timeout, env=env, cwd=cwd)
    except BaseException:
        headstart.remove_folder(cwd)
        raise
    headstart.remove_folder(cwd)
    return PendingSmoke(backend, timeout, None, completed=completed)


def run_smoke(
    target: Target,
    facts: Facts,
    *,
    backend: str = "htp",
    timeout: float = 60.0,
    runner: Runner | None = None,
) -> SmokeResult:
    """Run the child in the target and classify the outcome. Never raises for
    anything the child does."""
    from .outcome import not_run, reason_not_to_run

    why_not = reason_not_to_run(facts)
    if why_not:
        return not_run(why_not, backend)
    return start_smoke(target, backend=backend, timeout=timeout, runner=runner).result()
