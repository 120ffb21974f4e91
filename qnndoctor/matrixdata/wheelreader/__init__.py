"""Reading onnxruntime-qnn wheels on a package index without downloading them:
the index's JSON simple page (PEP 691/700), then each wheel by HTTP Range
requests (stdlib ``zipfile`` over a range-reading file object), assembled into
releases.json records.

Shipped, because ``qnndoctor matrix update`` (no ``--from``) uses it to add
new releases to the user's matrix; the maintainers' tool ``matrix/refresh/``
(its command line and the companion experiments, never shipped) builds on it.

Modules, by concern: ``pip_config`` (which index: pip's own settings),
``index`` (HTTP client and the project page), ``ranged_file`` (the
range-reading file), ``members`` (zipfile over it), ``wheel`` (what one
wheel contains), ``records`` (that, as values and JSON), ``qnn_version``
(the bundled QNN version from its evidence), ``cache`` (file records and
the per-wheel cache), ``assemble`` (a whole refresh and the document),
``common`` (constants, errors, the log).
"""
