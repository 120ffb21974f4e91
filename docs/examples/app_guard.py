"""An application that refuses to start on a setup that would silently fall
back to the CPU, and says why and how to fix it."""

from __future__ import annotations

import sys

import qnndoctor


def main() -> int:
    try:
        # Probes this interpreter and runs the tiny smoke model on the NPU in a
        # child process (CPU fallback off); a crash there cannot take us down.
        report = qnndoctor.ensure_ready()
    except qnndoctor.NotReady as not_ready:
        print(f"The NPU is not usable: {not_ready}", file=sys.stderr)
        for finding in not_ready.findings[1:]:
            print(f"  also: {finding.title} ({finding.id})", file=sys.stderr)
        return 1
    smoke = report.smoke
    print(f"NPU ready (smoke session {smoke.status if smoke else 'not run'})")
    return 0  # ... start the real work here


if __name__ == "__main__":
    sys.exit(main())
