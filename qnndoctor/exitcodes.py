"""Exit codes of every qnndoctor command (documented in docs/cli.md)."""

OK = 0  # no finding at or above --fail-on
FINDINGS = 1  # findings at or above --fail-on
USAGE = 2  # bad command line
COULD_NOT_CHECK = 3  # target missing / not runnable, probe program failed or timed out
