"""Check tests/helpers/pe_builder.py against the real pefile parser."""

from __future__ import annotations

import pathlib
from typing import Any

import pefile
import pytest
from helpers.pe_builder import (
    MACHINE_AMD64,
    MACHINE_ARM64,
    MACHINE_I386,
    build_pe,
    write_pe,
)

QNN_STRINGS = {
    "CompanyName": "Qualcomm Technologies, Inc.",
    "FileDescription": "Backend APIs for the NPU accelerator - Arm64",
    "FileVersion": "2.37.1.0",
    "ProductName": "Qualcomm AI Stack",
    "ProductVersion": "2.37.1.250807093845_124904",
}

# (machine, pe32_plus, expected OPTIONAL_HEADER.Magic)
MACHINES = [
    pytest.param(MACHINE_AMD64, True, 0x20B, id="amd64"),
    pytest.param(MACHINE_ARM64, True, 0x20B, id="arm64"),
    pytest.param(MACHINE_I386, False, 0x10B, id="i386"),
]

RESOURCE_DIR = pefile.DIRECTORY_ENTRY["IMAGE_DIRECTORY_ENTRY_RESOURCE"]
LOAD_CONFIG_DIR = pefile.DIRECTORY_ENTRY["IMAGE_DIRECTORY_ENTRY_LOAD_CONFIG"]


def _fast_parse(data: bytes) -> Any:
    """Parse like qnndoctor does: fast_load, then only the resource directory."""
    pe = pefile.PE(data=data, fast_load=True)
    pe.parse_data_directories(directories=[RESOURCE_DIR])
    return pe


def _string_tables(pe: Any) -> dict[bytes, dict[bytes, bytes]]:
    """Return {LangID: entries} for every StringTable in pe.FileInfo."""
    tables: dict[bytes, dict[bytes, bytes]] = {}
    for file_info in pe.FileInfo:
        for block in file_info:
            for table in getattr(block, "StringTable", []):
                tables[table.LangID] = dict(table.entries)
    return tables


def _translations(pe: Any) -> list[dict[bytes, str]]:
    """Return every VarFileInfo Var entry in pe.FileInfo."""
    return [
        var.entry
        for file_info in pe.FileInfo
        for block in file_info
        for var in getattr(block, "Var", [])
    ]


@pytest.mark.parametrize(("machine", "pe32_plus", "magic"), MACHINES)
def test_machine_without_version_info(
    tmp_path: pathlib.Path, machine: int, pe32_plus: bool, magic: int
) -> None:
    path = write_pe(tmp_path / "QnnSystem.dll", machine, pe32_plus=pe32_plus)
    pe = _fast_parse(path.read_bytes())
    assert pe.FILE_HEADER.Machine == machine
    assert pe.OPTIONAL_HEADER.Magic == magic
    assert pe.is_dll()
    assert not hasattr(pe, "DIRECTORY_ENTRY_RESOURCE")
    assert not hasattr(pe, "VS_FIXEDFILEINFO")
    assert not hasattr(pe, "FileInfo")
    assert [s.Name.rstrip(b"\0") for s in pe.sections] == [b".text"]
    assert pe.get_warnings() == []


@pytest.mark.parametrize(("machine", "pe32_plus", "magic"), MACHINES)
def test_machine_with_version_info(
    tmp_path: pathlib.Path, machine: int, pe32_plus: bool, magic: int
) -> None:
    path = write_pe(
        tmp_path / "QnnHtp.dll",
        machine,
        version=(2, 37, 1, 0),
        strings=QNN_STRINGS,
        pe32_plus=pe32_plus,
    )
    pe = _fast_parse(path.read_bytes())
    assert pe.FILE_HEADER.Machine == machine
    assert pe.OPTIONAL_HEADER.Magic == magic
    fixed = pe.VS_FIXEDFILEINFO[0]
    assert fixed.Signature == 0xFEEF04BD
    assert (fixed.FileVersionMS, fixed.FileVersionLS) == ((2 << 16) | 37, 1 << 16)
    assert (fixed.ProductVersionMS, fixed.ProductVersionLS) == ((2 << 16) | 37, 1 << 16)
    assert pe.VS_VERSIONINFO[0].Key == b"VS_VERSION_INFO"
    assert [block.Key for block in pe.FileInfo[0]] == [b"StringFileInfo", b"VarFileInfo"]
    assert _string_tables(pe) == {
        b"040904B0": {k.encode(): v.encode() for k, v in QNN_STRINGS.items()}
    }
    assert _translations(pe) == [{b"Translation": "0x0409 0x04b0"}]
    assert pe.get_warnings() == []


def test_full_load_from_path_is_clean_and_well_formed(tmp_path: pathlib.Path) -> None:
    path = write_pe(tmp_path / "capi" / "QnnHtp.dll", version=(2, 37, 1, 0), strings=QNN_STRINGS)
    pe = pefile.PE(str(path))  # full load, mmap-backed
    try:
        assert pe.get_warnings() == []
        assert pe.verify_checksum()
        opt = pe.OPTIONAL_HEADER
        assert (opt.FileAlignment, opt.SectionAlignment) == (0x200, 0x1000)
        assert opt.SizeOfHeaders == 0x200
        end = 0
        for section in pe.sections:
            assert section.PointerToRawData % 0x200 == 0
            assert section.SizeOfRawData % 0x200 == 0
            assert section.VirtualAddress % 0x1000 == 0
            end = max(end, section.VirtualAddress + section.Misc_VirtualSize)
        assert opt.SizeOfImage == (end + 0xFFF) // 0x1000 * 0x1000
        assert path.stat().st_size == max(s.PointerToRawData + s.SizeOfRawData for s in pe.sections)
        assert pe.FileInfo[0][0].StringTable[0].entries[b"FileVersion"] == b"2.37.1.0"
    finally:
        pe.close()


def test_strings_only_gives_zero_fixed_version() -> None:
    pe = _fast_parse(build_pe(MACHINE_ARM64, strings={"FileVersion": "1.0"}))
    fixed = pe.VS_FIXEDFILEINFO[0]
    assert (fixed.FileVersionMS, fixed.FileVersionLS) == (0, 0)
    assert _string_tables(pe) == {b"040904B0": {b"FileVersion": b"1.0"}}


def test_version_only_has_no_string_table() -> None:
    pe = _fast_parse(build_pe(MACHINE_AMD64, version=(1, 23, 2, 0)))
    fixed = pe.VS_FIXEDFILEINFO[0]
    assert (fixed.FileVersionMS, fixed.FileVersionLS) == ((1 << 16) | 23, 2 << 16)
    assert [block.Key for block in pe.FileInfo[0]] == [b"VarFileInfo"]
    assert _string_tables(pe) == {}


def test_onnxruntime_like_strings_non_ascii_and_other_codepage() -> None:
    strings = {
        "CompanyName": "Microsoft Corporation",
        "FileVersion": "1.23.20251021.3.a83fc4d",
        "LegalCopyright": "\u00a9 Microsoft Corporation. All rights reserved.",
        "Comments": "",
    }
    pe = _fast_parse(
        build_pe(MACHINE_AMD64, version=(1, 23, 2, 0), strings=strings, lang_codepage="040904E4")
    )
    # pefile hands the UTF-16 strings back UTF-8 encoded.
    assert _string_tables(pe) == {b"040904E4": {k.encode(): v.encode() for k, v in strings.items()}}
    assert _translations(pe) == [{b"Translation": "0x0409 0x04e4"}]


@pytest.mark.parametrize(
    "machine",
    [
        pytest.param(MACHINE_ARM64, id="arm64x"),  # like QnnHtp.dll in the win_amd64 wheel
        pytest.param(MACHINE_AMD64, id="arm64ec"),  # like its onnxruntime.dll
    ],
)
def test_chpe_arm64x_sets_chpe_metadata_pointer(machine: int) -> None:
    data = build_pe(machine, version=(2, 37, 1, 0), strings=QNN_STRINGS, chpe_arm64x=True)
    pe = pefile.PE(data=data, fast_load=True)
    pe.parse_data_directories(directories=[RESOURCE_DIR, LOAD_CONFIG_DIR])
    assert pe.FILE_HEADER.Machine == machine
    config = pe.DIRECTORY_ENTRY_LOAD_CONFIG.struct
    assert config.Size == 0x140
    metadata_rva = config.CHPEMetadataPointer - pe.OPTIONAL_HEADER.ImageBase
    assert config.CHPEMetadataPointer != 0
    rdata = pe.get_section_by_rva(metadata_rva)
    assert rdata is not None and rdata.Name.rstrip(b"\0") == b".rdata"
    assert pe.get_dword_at_rva(metadata_rva) == 1  # IMAGE_ARM64EC_METADATA.Version
    assert pe.FileInfo[0][0].StringTable[0].entries[b"ProductName"] == b"Qualcomm AI Stack"
    assert pe.get_warnings() == []


def test_plain_images_have_no_load_config() -> None:
    pe = pefile.PE(data=build_pe(MACHINE_ARM64, version=(1, 0, 0, 0)))
    assert not hasattr(pe, "DIRECTORY_ENTRY_LOAD_CONFIG")


def test_chpe_arm64x_needs_pe32_plus() -> None:
    with pytest.raises(ValueError, match="PE32"):
        build_pe(MACHINE_I386, pe32_plus=False, chpe_arm64x=True)


def test_bad_arguments_are_rejected() -> None:
    with pytest.raises(ValueError, match="version"):
        build_pe(version=(1, 0x10000, 0, 0))
    with pytest.raises(ValueError, match="lang_codepage"):
        build_pe(strings={"A": "b"}, lang_codepage="0409")


def test_builds_are_deterministic_and_small() -> None:
    first = build_pe(MACHINE_ARM64, version=(2, 37, 1, 0), strings=QNN_STRINGS)
    assert first == build_pe(MACHINE_ARM64, version=(2, 37, 1, 0), strings=QNN_STRINGS)
    assert len(first) <= 4096


def test_truncated_image_is_not_an_exception_but_loses_everything() -> None:
    """Record pefile's behaviour: 300 bytes parse without raising PEFormatError.

    The file header survives (Machine still reads back), but the optional header
    is cut and zero-padded, the section table is gone, and the version resource
    is missing; the damage only shows up in get_warnings().
    """
    data = build_pe(MACHINE_ARM64, version=(2, 37, 1, 0), strings=QNN_STRINGS)[:300]
    pe = _fast_parse(data)
    assert pe.FILE_HEADER.Machine == MACHINE_ARM64
    assert not hasattr(pe, "VS_FIXEDFILEINFO")
    assert not hasattr(pe, "FileInfo")
    warnings = pe.get_warnings()
    assert any("Invalid section 0" in w for w in warnings)
    assert any("Invalid resources directory" in w for w in warnings)


def test_image_cut_before_nt_headers_raises() -> None:
    with pytest.raises(pefile.PEFormatError, match="NT Headers not found"):
        _fast_parse(build_pe(MACHINE_ARM64)[:64])
