"""Exit codes of every qnndoctor command (documented in docs/cli.md)."""

OK = 0  # no finding at or above --fail-on
FINDINGS = 1  # findings at or above --fail-on
USAGE = 2  # bad command line
COULD_NOT_CHECK = 3  # target missing / not runnable, probe program failed or timed out

# What each command's exit codes mean: its --help says it (``described``), and a
# test holds the README's exit-code section to the same codes.
MEANINGS: dict[str, tuple[tuple[int, str], ...]] = {
    "check": (
        (OK, "no finding at or above --fail-on"),
        (FINDINGS, "at least one such finding"),
        (USAGE, "usage error, or a --from-report ticket that cannot be re-diagnosed"),
        (COULD_NOT_CHECK, "could not check (target missing or not runnable, probe program failed)"),
    ),
    "report": (
        (OK, "ticket written, holding no finding at or above --fail-on"),
        (FINDINGS, "ticket written, holding such a finding (as `check` would exit)"),
        (USAGE, "no ticket: usage error, a bad --from-report ticket, or FILE not writable"),
        (COULD_NOT_CHECK, "ticket written, holding the error that stopped the check"),
    ),
    "recommend": (
        (OK, "a release fits"),
        (FINDINGS, "nothing fits"),
        (USAGE, "usage error"),
        (COULD_NOT_CHECK, "could not check (no usable matrix, or the probe failed)"),
    ),
    "matrix": (
        (OK, "shown, or updated (or already current)"),
        (USAGE, "usage error"),
        (COULD_NOT_CHECK, "no usable matrix, or the update was refused (the current one stays)"),
    ),
    "explain": (
        (OK, "at least one candidate cause"),
        (FINDINGS, "none"),
        (USAGE, "usage error, a --from-report ticket that cannot be read, or a log that is "
         "not text (binary) or is a qnndoctor report"),
        (COULD_NOT_CHECK, "the log cannot be read, or the catalogue is unusable"),
    ),
    "model": (
        (OK, "no finding at or above --fail-on"),
        (FINDINGS, "at least one such finding"),
        (USAGE, "usage error"),
        (COULD_NOT_CHECK, "could not check, or the model file cannot be read"),
    ),
    "fix": (
        (OK, "fixed and proven, or nothing to fix"),
        (FINDINGS, "not fixed (dry run with steps, refused, rolled back, interrupted)"),
        (USAGE, "usage error"),
    ),
    "lint": (
        (OK, "no finding"),
        (FINDINGS, "at least one finding"),
        (USAGE, "usage error"),
        (COULD_NOT_CHECK, "a file cannot be read or parsed, or --python cannot be probed"),
    ),
    "fleet": (
        (OK, "every machine ready"),
        (FINDINGS, "a machine is not ready"),
        (USAGE, "usage error, or no readable ticket at all"),
        (COULD_NOT_CHECK, "an output file or the evidence store could not be written"),
    ),
    "bisect": (
        (OK, "a pair passed"),
        (FINDINGS, "no pair passed"),
        (USAGE, "usage error"),
        (COULD_NOT_CHECK, "could not bisect (target, matrix or venv creation failed)"),
        (130, "interrupted (every throwaway venv removed)"),
    ),
}


def described(command: str) -> str:
    """The exit codes of ``command`` as a sentence for its --help."""
    return "Exit codes: " + "; ".join(f"{code} {text}" for code, text in MEANINGS[command]) + "."
