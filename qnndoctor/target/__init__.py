"""The target: resolving ``--python``, collecting its facts, loading saved tickets, reading its binaries."""
