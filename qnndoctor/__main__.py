"""``python -m qnndoctor``."""

from .console import entry

entry()
