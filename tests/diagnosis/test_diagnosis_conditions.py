"""Catalogue fact conditions that can fit: a condition on a value its fact
never holds is dead, and under the "a known fact that fits none of the
support values counts against the entry" rule it is worse than dead."""

from __future__ import annotations

from qnndoctor.diagnosis import catalogue, diagnose, textfacts
from qnndoctor.diagnosis.textfacts import _MODULE_FLAVOURS
from qnndoctor.matrixdata import load_socs

SOCS = load_socs()


def test_flavour_conditions_name_a_distribution_that_provides_the_module() -> None:
    """`flavours` holds only distributions that provide the `onnxruntime`
    module (probe: provides_modules; text: the module flavours), so a
    condition naming anything else (onnxruntime-genai provides
    onnxruntime_genai) can never fit."""
    dead = [
        (s.id, c.describe())
        for s in catalogue.load().signatures
        for c in s.conditions
        if c.fact == "flavours" and c.op == "contains" and c.expected not in _MODULE_FLAVOURS
    ]
    assert dead == []


# A pasted session: a full `pip list` with the DirectML genai stack and
# onnxruntime-qnn side by side, then genai's error for the QNN provider.
GENAI_MIX = """\
PS C:\\Users\\dev\\llm> python -m pip list
Package                    Version
-------------------------- ---------
numpy                      1.26.4
onnxruntime-directml       1.20.1
onnxruntime-genai-directml 0.5.2
onnxruntime-qnn            1.20.1
pip                        24.2
PS C:\\Users\\dev\\llm> python chat.py
onnxruntime_genai.onnxruntime_genai.OrtException: Specified provider is not supported.
"""


def test_genai_provider_mix_is_not_held_against_by_the_flavours_it_shows() -> None:
    """The genai entry's flavours condition asked for onnxruntime-genai, which
    the flavours fact never contains: a full listing made it count -3 against
    the very mix the entry describes. Without it, nothing speaks against it."""
    facts = textfacts.from_text(GENAI_MIX)
    assert facts.value("flavours") == frozenset({"onnxruntime-directml", "onnxruntime-qnn"})
    result = diagnose(GENAI_MIX, socs=SOCS)
    assert result.ids()[0] == "genai-specified-provider-not-supported"
    assert [e for e in result.candidates[0].evidence if e.weight < 0] == []
    assert result.doubt(0) is None
