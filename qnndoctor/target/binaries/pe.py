"""PE (Windows DLL) details with ``pefile``: machine, ARM64X, version resource."""

from __future__ import annotations

from typing import Any

# Same table as probes/_util.PE_MACHINES: the probes must stay standalone
# (stdlib only, loaded outside this package), so they keep their own copy.
MACHINES = {
    0x014C: "I386",
    0x01C4: "ARMNT",
    0x8664: "AMD64",
    0xAA64: "ARM64",
    0xA641: "ARM64EC",
    0xA64E: "ARM64X",
}

_STRING_KEYS = ("FileVersion", "ProductVersion", "ProductName", "CompanyName", "FileDescription")


def _fixed_version(ms: int, ls: int) -> str:
    return f"{ms >> 16}.{ms & 0xFFFF}.{ls >> 16}.{ls & 0xFFFF}"


def read_pe(path: str) -> dict[str, Any]:
    """Never raises for a bad file: a truncated or corrupt DLL gives ``error``."""
    import pefile  # imported lazily: only needed when a PE file is present

    try:
        image = pefile.PE(path, fast_load=True)
    except (OSError, pefile.PEFormatError) as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}
    return _describe(image, "on disk")


def read_pe_bytes(data: bytes) -> dict[str, Any]:
    """``read_pe`` for an image held in memory (a DLL read out of a wheel
    without writing it to disk)."""
    import pefile

    try:
        image = pefile.PE(data=data, fast_load=True)
    except pefile.PEFormatError as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}
    return _describe(image, "in memory")


def read_pe_header(head: bytes) -> dict[str, Any]:
    """The machine type from the first bytes of a DLL (its DOS, file and
    optional headers), e.g. a member inflated only that far out of a wheel.
    ``error`` when those headers are not there (not a PE, or cut too short)."""
    import pefile

    try:
        image = pefile.PE(data=head, fast_load=True)
    except pefile.PEFormatError as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}
    try:
        machine = int(image.FILE_HEADER.Machine)
    finally:
        image.close()
    return {"machine_code": machine, "machine": MACHINES.get(machine, f"0x{machine:04X}")}


def _describe(image: Any, where: str) -> dict[str, Any]:
    """The details ``read_pe`` reports, from an image pefile has opened."""
    import pefile

    try:
        size = len(image.__data__)
        needed = max(
            [int(sec.PointerToRawData) + int(sec.SizeOfRawData) for sec in image.sections]
            + [int(image.OPTIONAL_HEADER.SizeOfHeaders)],
        )
        # pefile drops sections whose data lies past the end of the file.
        dropped = len(image.sections) < int(image.FILE_HEADER.NumberOfSections)
        if needed > size or dropped:
            # pefile parses truncated images without complaint; the section
            # table says how long the file must be.
            return {
                "machine_code": int(image.FILE_HEADER.Machine),
                "machine": MACHINES.get(int(image.FILE_HEADER.Machine)),
                "error": f"truncated: {size} bytes {where}, headers/sections need more"
                if dropped
                else f"truncated: {size} bytes {where}, sections need {needed}",
            }
        machine = int(image.FILE_HEADER.Machine)
        result: dict[str, Any] = {
            "machine_code": machine,
            "machine": MACHINES.get(machine, f"0x{machine:04X}"),
        }
        try:
            image.parse_data_directories(
                directories=[
                    pefile.DIRECTORY_ENTRY["IMAGE_DIRECTORY_ENTRY_RESOURCE"],
                    pefile.DIRECTORY_ENTRY["IMAGE_DIRECTORY_ENTRY_LOAD_CONFIG"],
                ]
            )
        except Exception as exc:
            result["error"] = f"resource directory unreadable: {type(exc).__name__}: {exc}"
            return result
        load_config = getattr(image, "DIRECTORY_ENTRY_LOAD_CONFIG", None)
        chpe = getattr(getattr(load_config, "struct", None), "CHPEMetadataPointer", 0) or 0
        result["chpe_metadata"] = bool(chpe)
        if machine == 0xAA64 and chpe:
            # ARM64 code plus an x64-compatible (EC) view: loads into both.
            result["machine"] = "ARM64X"
        elif machine == 0x8664 and chpe:
            # x64 header over ARM64EC code: loads into an emulated x64 process
            # on Windows on ARM, runs natively there.
            result["machine"] = "ARM64EC"
        fixed = getattr(image, "VS_FIXEDFILEINFO", None)
        if fixed:
            info = fixed[0]
            result["file_version_fixed"] = _fixed_version(info.FileVersionMS, info.FileVersionLS)
            result["product_version_fixed"] = _fixed_version(
                info.ProductVersionMS, info.ProductVersionLS
            )
        strings: dict[str, str] = {}
        for file_info in getattr(image, "FileInfo", None) or []:
            for entry in file_info:
                for table in getattr(entry, "StringTable", []) or []:
                    for key, value in table.entries.items():
                        name = key.decode("utf-8", "replace")
                        if name in _STRING_KEYS:
                            strings[name] = value.decode("utf-8", "replace")
        result["strings"] = strings
        return result
    finally:
        image.close()
