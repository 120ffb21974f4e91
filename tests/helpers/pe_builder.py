"""Build tiny, valid Windows PE (DLL) images for use as test fixtures.

The images stand in for Qualcomm QNN DLLs (``QnnHtp.dll``, ``QnnSystem.dll``...)
and ``onnxruntime.dll``.  They are a few KB, stdlib-only to produce, and parse
cleanly with :mod:`pefile` (no entries in ``pe.get_warnings()``).

Layout of every image::

    headers (0x200 bytes: DOS header, PE signature, file header, optional header,
             section table)
    .text   one tiny "return TRUE" DllMain for the machine's instruction set
    .rdata  only with ``chpe_arm64x=True``: load config directory + CHPE metadata
    .rsrc   only with ``version`` or ``strings``: an RT_VERSION (VERSIONINFO) resource

FileAlignment is 0x200, SectionAlignment 0x1000, and the optional header
CheckSum is computed, so ``pe.verify_checksum()`` holds.  The slack after the
section table and after each section's data (up to FileAlignment) is filled with
a 1..255 byte ramp instead of zeros: in images this small, zero padding would
trip pefile's full-load heuristic "Byte 0x00 makes up N% of the file's contents".
(That heuristic only runs without ``fast_load``; very large or repetitive
``strings`` can still trip it, since the text itself then dominates the file.)
"""

from __future__ import annotations

import pathlib
import string
import struct
from collections.abc import Mapping, Sequence

__all__ = [
    "DEFAULT_LANG_CODEPAGE",
    "MACHINE_AMD64",
    "MACHINE_ARM64",
    "MACHINE_ARM64EC",
    "MACHINE_ARM64X",
    "MACHINE_I386",
    "build_pe",
    "write_pe",
]

MACHINE_AMD64 = 0x8664
MACHINE_ARM64 = 0xAA64
MACHINE_I386 = 0x14C
# ARM64EC/ARM64X are IMAGE_FILE_MACHINE_* values, but real images never carry them
# in FILE_HEADER.Machine: ARM64X DLLs say ARM64 (ARM64EC ones AMD64) and are told
# apart by a non-zero CHPEMetadataPointer in the load config (``chpe_arm64x=True``).
MACHINE_ARM64EC = 0xA641
MACHINE_ARM64X = 0xA64E

DEFAULT_LANG_CODEPAGE = "040904B0"
"""StringTable key: language 0x0409 (en-US), code page 0x04B0 (1200, UTF-16)."""

FILE_ALIGNMENT = 0x200
SECTION_ALIGNMENT = 0x1000

_E_LFANEW = 0x40
_IMAGE_BASE_PE32_PLUS = 0x180000000
_IMAGE_BASE_PE32 = 0x10000000
_TIMESTAMP = 0x66B2F0C0  # fixed, so builds are byte-for-byte reproducible

# IMAGE_FILE_HEADER.Characteristics
_FILE_EXECUTABLE_IMAGE = 0x0002
_FILE_LARGE_ADDRESS_AWARE = 0x0020
_FILE_32BIT_MACHINE = 0x0100
_FILE_DLL = 0x2000

# IMAGE_OPTIONAL_HEADER.DllCharacteristics
_DLL_HIGH_ENTROPY_VA = 0x0020
_DLL_NX_COMPAT = 0x0100

# IMAGE_SECTION_HEADER.Characteristics
_SCN_TEXT = 0x60000020  # CNT_CODE | MEM_EXECUTE | MEM_READ
_SCN_RDATA = 0x40000040  # CNT_INITIALIZED_DATA | MEM_READ

_DIR_LOAD_CONFIG = 10
_DIR_RESOURCE = 2
_RT_VERSION = 16
_VS_VERSION_INFO_ID = 1

# "return TRUE" entry points: mov w0,#1; ret  /  mov eax,1; ret  /  mov eax,1; ret 12
_ARM64_CODE = bytes.fromhex("20008052c0035fd6")
_AMD64_CODE = bytes.fromhex("b801000000c3")
_I386_CODE = bytes.fromhex("b801000000c20c00")
_CODE_BY_MACHINE: dict[int, bytes] = {
    MACHINE_ARM64: _ARM64_CODE,
    MACHINE_ARM64EC: _ARM64_CODE,
    MACHINE_ARM64X: _ARM64_CODE,
    MACHINE_AMD64: _AMD64_CODE,
    MACHINE_I386: _I386_CODE,
}

# IMAGE_LOAD_CONFIG_DIRECTORY64 field types up to and including CHPEMetadataPointer,
# then the remaining fields of the 0x140-byte structure that current linkers emit.
_LOAD_CONFIG64_HEAD = "<IIHHIIIQQQQQQIHHQQQQQQQQIHHIIQQQQQQ"
_LOAD_CONFIG64_TAIL = "QQIHHQIIQQQQQQQQQ"
_LOAD_CONFIG64_SIZE = struct.calcsize(_LOAD_CONFIG64_HEAD + _LOAD_CONFIG64_TAIL)  # 0x140
_CHPE_POINTER_OFFSET = struct.calcsize(_LOAD_CONFIG64_HEAD) - 8
_ARM64EC_METADATA_SIZE = 0x50  # stand-in IMAGE_ARM64EC_METADATA: zeros but Version
_ARM64EC_METADATA_VERSION = 1


def _align(value: int, alignment: int) -> int:
    """Round ``value`` up to a multiple of ``alignment``."""
    return (value + alignment - 1) // alignment * alignment


def _filler(size: int) -> bytes:
    """Return ``size`` bytes of non-zero, evenly spread slack filler (1, 2, ... 255, 1, ...)."""
    ramp = bytes(range(1, 256))
    return (ramp * (size // len(ramp) + 1))[:size]


def _pad4(data: bytes) -> bytes:
    """Zero-pad ``data`` to a multiple of four bytes."""
    return data + b"\0" * (-len(data) % 4)


def _wstr(text: str) -> bytes:
    """Encode ``text`` as a NUL-terminated UTF-16LE string."""
    return (text + "\0").encode("utf-16-le")


def _version_node(
    key: str, value: bytes, value_length: int, wtype: int, children: Sequence[bytes] = ()
) -> bytes:
    """Encode one VERSIONINFO block (wLength, wValueLength, wType, szKey, Value, Children)."""
    body = _pad4(struct.pack("<HHH", 0, value_length, wtype) + _wstr(key)) + value
    if children:
        body = _pad4(body) + b"".join(_pad4(child) for child in children)
    if len(body) > 0xFFFF:
        raise ValueError(f"VERSIONINFO block {key!r} is too large")
    return struct.pack("<H", len(body)) + body[2:]


def _parse_lang_codepage(lang_codepage: str) -> tuple[int, int]:
    """Split a StringTable key such as ``"040904B0"`` into (language, code page)."""
    if len(lang_codepage) != 8 or any(c not in string.hexdigits for c in lang_codepage):
        raise ValueError(
            f"lang_codepage must be 8 hex digits like '040904B0', got {lang_codepage!r}"
        )
    return int(lang_codepage[:4], 16), int(lang_codepage[4:], 16)


def _version_info(
    version: tuple[int, int, int, int],
    strings: Mapping[str, str] | None,
    lang_codepage: str,
) -> bytes:
    """Encode a complete VS_VERSIONINFO resource."""
    for part in version:
        if not 0 <= part <= 0xFFFF:
            raise ValueError(f"version parts must be in 0..65535, got {version!r}")
    language, codepage = _parse_lang_codepage(lang_codepage)
    ms = (version[0] << 16) | version[1]
    ls = (version[2] << 16) | version[3]
    fixed = struct.pack(
        "<13I",
        0xFEEF04BD,  # Signature
        0x00010000,  # StrucVersion
        ms,  # FileVersionMS
        ls,  # FileVersionLS
        ms,  # ProductVersionMS
        ls,  # ProductVersionLS
        0x3F,  # FileFlagsMask (VS_FFI_FILEFLAGSMASK)
        0,  # FileFlags
        0x00040004,  # FileOS: VOS_NT_WINDOWS32
        2,  # FileType: VFT_DLL
        0,  # FileSubtype
        0,  # FileDateMS
        0,  # FileDateLS
    )
    children: list[bytes] = []
    if strings is not None:
        entries = []
        for name, text in strings.items():
            if not name:
                raise ValueError("StringTable keys must be non-empty")
            value = _wstr(text)
            entries.append(_version_node(name, value, len(value) // 2, 1))  # in WCHARs
        table = _version_node(lang_codepage, b"", 0, 1, entries)
        children.append(_version_node("StringFileInfo", b"", 0, 1, [table]))
    translation = struct.pack("<HH", language, codepage)
    var = _version_node("Translation", translation, len(translation), 0)
    children.append(_version_node("VarFileInfo", b"", 0, 1, [var]))
    return _version_node("VS_VERSION_INFO", fixed, len(fixed), 0, children)


def _resource_section(section_rva: int, language: int, blob: bytes) -> bytes:
    """Encode a .rsrc section holding one RT_VERSION/1/<language> resource."""

    def directory(entry_id: int, offset: int) -> bytes:
        header = struct.pack("<IIHHHH", 0, 0, 0, 0, 0, 1)  # one ID entry, no named ones
        return header + struct.pack("<II", entry_id, offset)

    data_entry_offset = 3 * 24
    blob_offset = data_entry_offset + 16
    tree = (
        directory(_RT_VERSION, 0x80000000 | 24)
        + directory(_VS_VERSION_INFO_ID, 0x80000000 | 48)
        + directory(language, data_entry_offset)
        + struct.pack("<IIII", section_rva + blob_offset, len(blob), 0, 0)
    )
    return tree + blob


def _load_config_section(section_rva: int, image_base: int) -> bytes:
    """Encode a .rdata section with a load config directory and ARM64EC metadata."""
    metadata_rva = section_rva + _LOAD_CONFIG64_SIZE
    config = bytearray(_LOAD_CONFIG64_SIZE)
    struct.pack_into("<I", config, 0, _LOAD_CONFIG64_SIZE)
    struct.pack_into("<Q", config, _CHPE_POINTER_OFFSET, image_base + metadata_rva)
    metadata = bytearray(_ARM64EC_METADATA_SIZE)
    struct.pack_into("<I", metadata, 0, _ARM64EC_METADATA_VERSION)
    return bytes(config + metadata)


def _checksum(image: bytes, checksum_offset: int) -> int:
    """Compute the PE optional-header CheckSum (the imagehlp algorithm)."""
    data = bytearray(image + b"\0" * (len(image) % 2))
    data[checksum_offset : checksum_offset + 4] = bytes(4)  # the field itself counts as 0
    total = 0
    for (word,) in struct.iter_unpack("<H", data):
        total += word
        total = (total & 0xFFFF) + (total >> 16)
    return total + len(image)


def build_pe(
    machine: int = MACHINE_ARM64,
    *,
    version: tuple[int, int, int, int] | None = None,
    strings: Mapping[str, str] | None = None,
    pe32_plus: bool = True,
    chpe_arm64x: bool = False,
    lang_codepage: str = DEFAULT_LANG_CODEPAGE,
) -> bytes:
    """Return the bytes of a minimal DLL for ``machine``.

    ``version`` fills VS_FIXEDFILEINFO (file and product version numbers);
    ``strings`` fills one StringTable keyed ``lang_codepage``.  A VarFileInfo
    Translation block is always added with the resource.  With only ``strings``
    the fixed version numbers are 0.0.0.0; with neither there is no .rsrc.
    ``chpe_arm64x`` adds a load config directory whose CHPEMetadataPointer is
    non-zero, as in ARM64X images (or ARM64EC ones when ``machine`` is AMD64);
    it needs ``pe32_plus``.
    """
    if not 0 <= machine <= 0xFFFF:
        raise ValueError(f"machine must fit in 16 bits, got {machine:#x}")
    if chpe_arm64x and not pe32_plus:
        raise ValueError("chpe_arm64x needs a PE32+ image (pe32_plus=True)")

    image_base = _IMAGE_BASE_PE32_PLUS if pe32_plus else _IMAGE_BASE_PE32
    optional_header_size = 0xF0 if pe32_plus else 0xE0
    code = _CODE_BY_MACHINE.get(machine, _AMD64_CODE)

    # (name, characteristics, content); RVAs are assigned in order below.
    sections: list[tuple[bytes, int, bytes]] = [(b".text", _SCN_TEXT, code)]
    rva = SECTION_ALIGNMENT
    rvas: list[int] = [rva]
    load_config_rva = 0
    if chpe_arm64x:
        rva += SECTION_ALIGNMENT
        load_config_rva = rva
        sections.append((b".rdata", _SCN_RDATA, _load_config_section(rva, image_base)))
        rvas.append(rva)
    resource_rva = 0
    resource_size = 0
    if version is not None or strings is not None:
        rva += SECTION_ALIGNMENT
        resource_rva = rva
        blob = _version_info(version or (0, 0, 0, 0), strings, lang_codepage)
        language = _parse_lang_codepage(lang_codepage)[0]
        rsrc = _resource_section(rva, language, blob)
        resource_size = len(rsrc)
        sections.append((b".rsrc", _SCN_RDATA, rsrc))
        rvas.append(rva)

    headers_size = _align(
        _E_LFANEW + 4 + 20 + optional_header_size + 40 * len(sections), FILE_ALIGNMENT
    )
    size_of_image = rvas[-1] + _align(len(sections[-1][2]), SECTION_ALIGNMENT)

    section_table = b""
    raw_sections = b""
    raw_pointer = headers_size
    size_of_code = 0
    size_of_data = 0
    for (name, characteristics, content), section_rva in zip(sections, rvas, strict=True):
        raw_size = _align(len(content), FILE_ALIGNMENT)
        section_table += struct.pack(
            "<8sIIIIIIHHI",
            name,
            len(content),  # VirtualSize
            section_rva,
            raw_size,
            raw_pointer,
            0,  # PointerToRelocations
            0,  # PointerToLinenumbers
            0,  # NumberOfRelocations
            0,  # NumberOfLinenumbers
            characteristics,
        )
        raw_sections += content + _filler(raw_size - len(content))
        raw_pointer += raw_size
        if characteristics == _SCN_TEXT:
            size_of_code += raw_size
        else:
            size_of_data += raw_size

    characteristics = _FILE_EXECUTABLE_IMAGE | _FILE_DLL
    characteristics |= _FILE_LARGE_ADDRESS_AWARE if pe32_plus else _FILE_32BIT_MACHINE
    file_header = struct.pack(
        "<HHIIIHH",
        machine,
        len(sections),
        _TIMESTAMP,
        0,  # PointerToSymbolTable
        0,  # NumberOfSymbols
        optional_header_size,
        characteristics,
    )

    dll_characteristics = _DLL_NX_COMPAT | (_DLL_HIGH_ENTROPY_VA if pe32_plus else 0)
    standard = struct.pack(
        "<HBBIIIII",
        0x20B if pe32_plus else 0x10B,  # Magic
        14,  # MajorLinkerVersion
        38,  # MinorLinkerVersion
        size_of_code,
        size_of_data,
        0,  # SizeOfUninitializedData
        rvas[0],  # AddressOfEntryPoint: start of .text
        rvas[0],  # BaseOfCode
    )
    if pe32_plus:
        base = struct.pack("<Q", image_base)
    else:
        base = struct.pack("<II", rvas[1] if len(rvas) > 1 else 0, image_base)  # BaseOfData
    windows = struct.pack(
        "<IIHHHHHHIIIIHH",
        SECTION_ALIGNMENT,
        FILE_ALIGNMENT,
        6,  # MajorOperatingSystemVersion
        0,  # MinorOperatingSystemVersion
        0,  # MajorImageVersion
        0,  # MinorImageVersion
        6,  # MajorSubsystemVersion
        2 if machine in (MACHINE_ARM64, MACHINE_ARM64X) else 0,  # MinorSubsystemVersion
        0,  # Win32VersionValue
        size_of_image,
        headers_size,
        0,  # CheckSum, patched below
        2,  # Subsystem: WINDOWS_GUI
        dll_characteristics,
    )
    stack_heap = struct.pack("<QQQQ" if pe32_plus else "<IIII", 0x100000, 0x1000, 0x100000, 0x1000)
    data_directories = [(0, 0)] * 16
    if resource_rva:
        data_directories[_DIR_RESOURCE] = (resource_rva, resource_size)
    if load_config_rva:
        data_directories[_DIR_LOAD_CONFIG] = (load_config_rva, _LOAD_CONFIG64_SIZE)
    optional_header = (
        standard
        + base
        + windows
        + stack_heap
        + struct.pack("<II", 0, 16)  # LoaderFlags, NumberOfRvaAndSizes
        + b"".join(struct.pack("<II", d_rva, d_size) for d_rva, d_size in data_directories)
    )
    assert len(optional_header) == optional_header_size

    dos_header = bytearray(_E_LFANEW)
    struct.pack_into("<2sHHHHH", dos_header, 0, b"MZ", 0x90, 3, 0, 4, 0)  # e_cblp..e_minalloc
    struct.pack_into("<HHHHH", dos_header, 0x0C, 0xFFFF, 0, 0xB8, 0, 0)  # e_maxalloc..e_ip
    struct.pack_into("<H", dos_header, 0x18, 0x40)  # e_lfarlc
    struct.pack_into("<I", dos_header, 0x3C, _E_LFANEW)

    headers = bytes(dos_header) + b"PE\0\0" + file_header + optional_header + section_table
    image = bytearray(headers + _filler(headers_size - len(headers)) + raw_sections)
    checksum_offset = _E_LFANEW + 4 + 20 + 64
    struct.pack_into("<I", image, checksum_offset, _checksum(bytes(image), checksum_offset))
    return bytes(image)


def write_pe(
    path: pathlib.Path,
    machine: int = MACHINE_ARM64,
    *,
    version: tuple[int, int, int, int] | None = None,
    strings: Mapping[str, str] | None = None,
    pe32_plus: bool = True,
    chpe_arm64x: bool = False,
    lang_codepage: str = DEFAULT_LANG_CODEPAGE,
) -> pathlib.Path:
    """Write :func:`build_pe` output to ``path`` (creating parent dirs) and return ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(
        build_pe(
            machine,
            version=version,
            strings=strings,
            pe32_plus=pe32_plus,
            chpe_arm64x=chpe_arm64x,
            lang_codepage=lang_codepage,
        )
    )
    return path
