"""What ``qnndoctor model`` is asked to do, as one value (command line and API)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

_OPTION_KEY = re.compile(r"[a-z][a-z0-9_]{0,63}")
# Set by qnndoctor's children: the backend, and the profile's file and level.
MANAGED_OPTIONS = frozenset(
    {"backend_type", "backend_path", "profiling_level", "profiling_file_path"}
)


@dataclass(frozen=True)
class ModelOptions:
    path: str
    python: str | None = None
    backend: str = "htp"
    no_run: bool = False
    runs: int = 10
    timeout: float = 120.0
    fail_on: str = "error"
    find_culprit: bool = False
    profile: bool = False
    min_npu_share: float | None = None
    compare: bool = False
    inputs: str | None = None
    tolerance: float = 1e-2
    # Further QNN provider options for the experiment children (--qnn-option).
    qnn_options: tuple[tuple[str, str], ...] = ()

    def problem(self) -> str | None:
        """What is wrong with these options (a usage error), or None."""
        if self.runs < 1 or self.timeout <= 0:
            return "--runs and --timeout must be positive"
        if self.min_npu_share is not None and not 0.0 <= self.min_npu_share <= 1.0:
            return "--min-npu-share is a share between 0 and 1 (0.9: 90% of the nodes on QNN)"
        if self.tolerance <= 0:
            return "--tolerance must be positive"
        if self.inputs is not None and not self.compare:
            return "--inputs goes with --compare"
        if self.inputs is not None:
            import stat

            try:
                info = Path(self.inputs).stat()
            except OSError as exc:
                return f"--inputs {self.inputs}: {exc.strerror or exc}"
            if not stat.S_ISREG(info.st_mode) or info.st_size > 2**31:
                return f"--inputs {self.inputs}: not a regular .npz file of at most 2 GiB"
        asks_run = self.find_culprit or self.profile or self.compare
        for key, value in self.qnn_options:
            if not _OPTION_KEY.fullmatch(key) or not value or "\x00" in value:
                return f"--qnn-option {key}={value}: not a QNN provider option (KEY=VALUE)"
            if key in MANAGED_OPTIONS:
                return f"--qnn-option {key}: qnndoctor sets this one itself"
        if self.qnn_options and not asks_run:
            return "--qnn-option applies to --find-culprit, --profile and --compare"
        if self.no_run and (asks_run or self.min_npu_share is not None):
            return (
                "--no-run runs no session, but --find-culprit, --profile, --compare and "
                "--min-npu-share need one"
            )
        return None
