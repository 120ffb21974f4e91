"""Values several tests share about the smoke session: facts naming an
onnxruntime-qnn install, and the line a passing smoke child prints."""

from __future__ import annotations

import json

from qnndoctor.facts.probed import Facts

QNN_FACTS = Facts.from_json(
    {
        "installs": {
            "status": "ok",
            "values": {
                "distributions": [
                    {"canonical_name": "onnxruntime-qnn", "provides_modules": ["onnxruntime_qnn"]}
                ]
            },
            "sources": {},
        }
    }
)

GOOD_RESULT = "@@qnndoctor-smoke@@" + json.dumps({"status": "passed", "path": "plugin-2.x"})
