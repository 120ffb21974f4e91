"""The SoC table: today's chips with their Hexagon (HTP) version and public
sources, and every way to name one (marketing name, part number, Windows
processor name, QNN soc_model, Linux soc_id) through every lookup branch."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

import pytest

from qnndoctor._layout import package_dir
from qnndoctor.facts.probed import Facts
from qnndoctor.facts.socs import SocLookupError, find_soc, find_socs, normalize
from qnndoctor.facts.socs import identify as identify_soc
from qnndoctor.matrixdata import Soc, load

MATRIX_DIR = package_dir("matrix")
assert MATRIX_DIR is not None
RAW = json.loads((MATRIX_DIR / "socs.json").read_text("utf-8"))["socs"]
SOCS = load().socs


def test_every_entry_cites_public_urls_and_a_plausible_hexagon_version() -> None:
    for entry in RAW:
        assert entry["sources"], entry["part"]
        assert all(s.startswith("https://") for s in entry["sources"]), entry["part"]
        assert "/work/" not in json.dumps(entry)
        assert entry["htp_arch"] in (66, 68, 69, 73, 75, 79, 81), entry["part"]


def test_ids_are_unique_within_each_numbering_space() -> None:
    models: dict[int, list[str]] = defaultdict(list)
    soc_ids: dict[int, list[str]] = defaultdict(list)
    for soc in SOCS:
        if soc.qnn_soc_model is not None:
            models[soc.qnn_soc_model].append(soc.part)
        for soc_id in soc.linux_soc_ids:
            soc_ids[soc_id].append(soc.part)
    assert all(len(parts) == 1 for parts in models.values()), models
    assert all(len(parts) == 1 for parts in soc_ids.values()), soc_ids


def test_no_name_points_at_two_hexagon_versions() -> None:
    arches: dict[str, set[int | None]] = defaultdict(set)
    for soc in SOCS:
        for name in (soc.part, *soc.aliases, *soc.marketing_names, *soc.windows_patterns):
            arches[normalize(name)].add(soc.htp_arch)
    assert {n: a for n, a in arches.items() if len(a) > 1} == {}


@pytest.mark.parametrize(
    ("name", "part", "arch"),
    [
        ("Snapdragon 8cx Gen 3", "SC8280XP", 68),
        ("8cx Gen 3", "SC8280XP", 68),
        ("Snapdragon X Elite", "SC8380XP", 73),
        ("X1E-78-100", "SC8380XP", 73),
        ("x1e80100", "SC8380XP", 73),
        ("SC8380XP", "SC8380XP", 73),
        ("Snapdragon X Plus", None, 73),
        ("X1P42100", "X1P42100", 73),
        ("Snapdragon(R) X 10-core X1P64100 @ 3.40 GHz", "X1P64100", 73),
        ("Snapdragon(R) X Elite - X1E78100 - Qualcomm(R) Oryon(TM) CPU", "SC8380XP", 73),
        ("X1-26-100", "X126100", 73),
        ("Snapdragon X2 Elite", "SC8480XP", 81),
        ("X2E-88-100", "SC8480XP", 81),
        ("SC8480XP", "SC8480XP", 81),
        ("Snapdragon 8 Gen 2", "SM8550", 73),
        ("8 Gen 3", "SM8650", 75),
        ("Snapdragon 8 Elite", "SM8750", 79),
        ("Snapdragon 8 Elite Gen 5", "SM8850", 81),
        ("Snapdragon 8+ Gen 1", "SM8475", 69),
        ("8 Gen 1+", "SM8475", 69),  # as reporters write it
        ("8gen3", "SM8650", 75),
        ("Snapdragon 8 Gen 1", "SM8450", 69),
        ("Snapdragon 865", "SM8250", 66),
        ("SDM865", "SM8250", 66),
        ("QCS6490", "QCS6490", 68),
        ("QCM6490", "QCS6490", 68),
        ("QCS9075", "QCS9100", 73),
        ("SA8797P", "SA8797", 81),
        ("soc_model=60", "SC8380XP", 73),
        ("soc-model: 87", "SM8850", 81),
        ("soc_id=555", "SC8380XP", 73),
        ("SOC_ID=660", "SM8850", 81),
    ],
)
def test_names_map(name: str, part: str | None, arch: int) -> None:
    soc = find_soc(name, SOCS)
    assert soc.htp_arch == arch
    if part is not None:
        assert soc.part == part


def test_soc_model_and_soc_id_are_different_numbering_spaces() -> None:
    # 60 is the X Elite's soc_model; as a Linux soc_id it is nothing here.
    assert [s.part for s in find_socs("soc_model=60", SOCS)] == ["SC8380XP"]
    assert "SC8380XP" not in [s.part for s in find_socs("soc_id=60", SOCS)]
    with pytest.raises(SocLookupError, match="different numbering spaces"):
        find_soc("60", SOCS)


def test_no_substring_guesses() -> None:
    """'8 Elite' is the SM8750, never the SM8850 ('8 Elite Gen 5')."""
    assert [s.part for s in find_socs("8 Elite", SOCS)] == ["SM8750"]
    assert find_socs("Elite", SOCS) == ()
    assert find_socs("", SOCS) == ()
    assert find_socs("®", SOCS) == ()


def test_unknown_and_ambiguous_names_are_clear_errors() -> None:
    with pytest.raises(SocLookupError, match="no SoC in the table is called 'Snapdragon 9000'"):
        find_soc("Snapdragon 9000", SOCS)
    twins = (
        Soc("A1", (), ("Chip",), 73, None, (), ()),
        Soc("B2", (), ("Chip",), 75, None, (), ()),
    )
    with pytest.raises(SocLookupError, match=r"A1 \(v73\), B2 \(v75\)"):
        find_soc("Chip", twins)
    same = (Soc("A1", (), ("Chip",), 73, None, (), ()), Soc("B2", (), ("Chip",), 73, None, (), ()))
    assert find_soc("Chip", same).part == "A1"


def _facts(**soc: Any) -> Facts:
    return Facts.from_json({"soc": {"status": "ok", "values": soc, "sources": {}}})


def test_identify_soc_from_probe_facts_every_branch() -> None:
    matrix = load()
    by_name = identify_soc(
        _facts(processor_name="Snapdragon(R) X Plus - X1P42100 - Qualcomm(R) Oryon(TM) CPU"), matrix
    )
    assert by_name is not None and by_name.soc.part == "X1P42100"  # SKU before the family phrase
    by_family = identify_soc(
        _facts(processor_name="Snapdragon(R) X Elite - Qualcomm(R) Oryon(TM) CPU"), matrix
    )
    assert by_family is not None and by_family.soc.part == "SC8380XP"
    by_id = identify_soc(_facts(socinfo={"soc_id": "557\n"}), matrix)
    assert by_id is not None and by_id.soc.part == "SM8650" and by_id.fact == "soc.socinfo.soc_id"
    by_machine = identify_soc(_facts(socinfo={"soc_id": "garbage", "machine": "SM8750"}), matrix)
    assert by_machine is not None and by_machine.soc.htp_arch == 79
    assert identify_soc(_facts(processor_name="Intel(R) Core(TM) i7"), matrix) is None
    assert identify_soc(_facts(socinfo={"soc_id": None, "machine": 7}), matrix) is None
    assert identify_soc(_facts(), matrix) is None


@pytest.mark.parametrize(
    "soc_values",
    [
        {"android_properties": {"ro.soc.model": "SM8650"}},
        {"socinfo": {"device_tree_compatible": "qcom,sm8650"}},
    ],
    ids=["android-only", "device-tree-only"],
)
def test_one_identifier_for_check_model_and_explain(soc_values: dict[str, Any]) -> None:
    """Facts that name the chip only through Android properties or the device
    tree give SM8650 to every consumer: check's rules and resolver, model's
    target runtime and explain's facts from a ticket (model and explain once
    used a second identifier that knew neither)."""
    from qnndoctor.diagnosis.facts import from_report_facts
    from qnndoctor.model.runtime import target_runtime
    from qnndoctor.resolver.recommend import profile_from_facts

    matrix = load()
    facts = _facts(**soc_values)
    checked = identify_soc(facts, matrix)
    assert checked is not None and checked.soc.part == "SM8650"
    assert profile_from_facts(facts, matrix).htp_arch == checked.soc.htp_arch == 75
    assert target_runtime(facts, matrix).soc == "SM8650"
    explained = from_report_facts(facts, "ticket", matrix.socs)
    assert explained.value("htp_arch") == "v75"
