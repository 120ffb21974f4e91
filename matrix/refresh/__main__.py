"""``python -m matrix.refresh`` from the repository root, or the folder run as
a script from anywhere (``python path/to/matrix/refresh``)."""

import sys
from pathlib import Path

if __package__:
    from .cli import main
else:  # run as a folder: make the repository importable, then the package
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from matrix.refresh.cli import main

sys.exit(main())
