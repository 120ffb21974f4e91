"""The ``qnndoctor`` console command (and ``python -m qnndoctor``).

Before anything else is imported, the children of a plain ``check`` get
their head start (``headstart.py`` says why and how it stays exact); then
the command line is parsed and run as always.
"""

from __future__ import annotations

import sys


def entry() -> None:
    from . import headstart

    headstart.begin(sys.argv[1:])
    from .cli.main import entry as run_command_line

    run_command_line()
