"""``python -m qnndoctor``."""

from .cli import entry

entry()
