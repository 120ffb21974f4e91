"""The probe program writes its JSON without importing json (~5 ms of its
start-up); the text must be what ``json.dumps(ensure_ascii=True,
default=repr, sort_keys=True)`` writes, byte for byte."""

from __future__ import annotations

import enum
import json
import math
from typing import Any

import pytest
from qnndoctor.probes import _json_out, run_all


class Colour(enum.IntEnum):
    RED = 1


class Odd:
    def __repr__(self) -> str:
        return "<odd \u00e9 \udcff>"


def _reference(value: Any) -> str:
    return json.dumps(value, ensure_ascii=True, default=repr, sort_keys=True)


VALUES: list[Any] = [
    None,
    True,
    False,
    0,
    -7,
    10**40,
    Colour.RED,
    0.1,
    -0.0,
    1e300,
    math.inf,
    -math.inf,
    math.nan,
    "",
    "plain",
    'caf\u00e9 \u674e \U0001f600 "quoted" \\ \n\t\x00\x1f\x7f',
    "lone \udcff surrogate",
    [],
    (),
    {},
    [1, [2, [3, []]], {"a": ()}],
    ("tuple", 1),
    {"b": 1, "a": {"d": [], "c": None}, "": 0},
    {2: "int", 1: "keys"},
    {1.5: "float key"},
    {True: "t", False: "f"},
    {None: "n"},
    {"bytes": b"\x00\xff", "set": {1}, "object": Odd()},
    {"nested": [{"z": 1, "y": [math.nan, "\u00e9"]}]},
]


@pytest.mark.parametrize("value", VALUES, ids=lambda v: type(v).__name__)
def test_same_text_as_json(value: Any) -> None:
    assert _json_out.dumps(value) == _reference(value)


def test_unsortable_or_bad_keys_fail_like_json() -> None:
    for value in ({1: "a", "b": 2}, {(1, 2): "tuple key"}):
        with pytest.raises(TypeError):
            _reference(value)
        with pytest.raises(TypeError):
            _json_out.dumps(value)


def test_a_real_probe_document() -> None:
    """Every probe's entry from a run here, in the same text as json writes."""
    document = run_all({"probe_timeout": 20.0})
    assert len(document["probes"]) == 7
    assert _json_out.dumps(document) == _reference(document)
    for name, entry in document["probes"].items():
        assert _json_out.dumps([name, entry]) == _reference([name, entry])
