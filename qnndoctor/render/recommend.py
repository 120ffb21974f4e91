"""``recommend``'s text (the target, the release to install, its commands and
why no newer release fits) and ``matrix show``'s table."""

from __future__ import annotations

from typing import Any, TextIO


def render_recommendation(rec: dict[str, Any], out: TextIO) -> None:
    out.write(_target_line(rec.get("profile") or {}))
    status = rec.get("status")
    emulation = rec.get("emulation")
    if emulation:
        _write_emulation(emulation, out)
    if status == "ok" and not emulation:
        _write_install(rec, out)
    elif status == "nothing-fits":
        _write_nothing_fits(rec, emulation, out)
    elif status != "ok":
        out.write(f"\nNo recommendation: {rec.get('reason') or '; '.join(rec.get('notes', []))}\n")
    if rec.get("ruled_out"):
        _write_ruled_out(rec["ruled_out"], out)
    for note in rec.get("notes", []):
        out.write(f"note: {note}\n")
    if rec.get("fleet_evidence"):
        from ..evidence.fleet import evidence_lines

        for line in evidence_lines(rec["fleet_evidence"]):
            out.write(line + "\n")


def _target_line(profile: dict[str, Any]) -> str:
    return (
        f"Target: Python {profile.get('python')} {profile.get('arch')} on {profile.get('os')}"
        + (
            f" (emulated; machine is {profile.get('native_arch')})"
            if profile.get("emulated")
            else ""
        )
        + (
            f", HTP v{profile['htp_arch']} ({profile.get('htp_arch_source')})"
            if profile.get("htp_arch")
            else ""
        )
        + (f", system QNN {profile['system_qnn']}" if profile.get("system_qnn") else "")
        + (f", NPU driver {profile['npu_driver']}" if profile.get("npu_driver") else "")
        + "\n"
    )


def _write_emulation(emulation: dict[str, Any], out: TextIO) -> None:
    out.write(f"\nEmulation: {emulation.get('verdict')}.\n")
    native = emulation.get("native_arm64") or {}
    if native.get("commands"):
        out.write(f"Recommended: native ARM64 Python with onnxruntime-qnn {native.get('version')}:\n")
        for command in native["commands"]:
            out.write(f"    {command}\n")
    if emulation.get("this_interpreter_commands"):
        out.write("Or, staying in this emulated x64 Python:\n")
        for command in emulation["this_interpreter_commands"]:
            out.write(f"    {command}\n")


def _write_install(rec: dict[str, Any], out: TextIO) -> None:
    out.write(
        f"\nInstall onnxruntime-qnn {rec['version']} ({rec['era']}, bundled QNN "
        f"{rec.get('bundled_qnn') or 'unknown'}; wheel {rec['file']}):\n"
    )
    for command in rec.get("commands", []):
        out.write(f"    {command}\n")
    if rec.get("already_installed"):
        out.write("    (already installed: nothing to do)\n")
    for alternative in rec.get("alternatives", []):
        out.write(f"Better: {alternative['change']}, then onnxruntime-qnn {alternative['version']}\n")


def _write_nothing_fits(
    rec: dict[str, Any], emulation: dict[str, Any] | None, out: TextIO
) -> None:
    out.write("\nNo onnxruntime-qnn release works for this interpreter.\n")
    shown = ((emulation or {}).get("native_arm64") or {}).get("commands")
    for alternative in rec.get("alternatives", []):
        if alternative.get("commands") == shown:  # the route just recommended
            continue
        out.write(
            f"  instead: {alternative['change']}, then install onnxruntime-qnn "
            f"{alternative['version']}\n"
        )
        for command in alternative.get("commands") or []:
            out.write(f"      {command}\n")


def _write_ruled_out(ruled_out: list[dict[str, Any]], out: TextIO) -> None:
    out.write("\nNewer releases, and why they are ruled out:\n")
    from ..resolver.compat_rules import confidence_words

    # Consecutive releases ruled out for the same reasons share one entry.
    groups: list[tuple[list[str], list[dict[str, Any]]]] = []
    for verdict in ruled_out:
        if groups and groups[-1][1] == verdict["reasons"]:
            groups[-1][0].append(verdict["version"])
        else:
            groups.append(([verdict["version"]], verdict["reasons"]))
    for versions, reasons in groups:
        label = versions[0] if len(versions) == 1 else f"{versions[-1]} to {versions[0]}"
        count = f" ({len(versions)} releases)" if len(versions) > 1 else ""
        out.write(f"  {label}{count}:\n")
        for r in reasons:
            sources = ", ".join(r.get("sources") or [])
            out.write(
                f"      {r['detail']} ({confidence_words(r['confidence'])}"
                + (f"; see {sources}" if sources else "")
                + ")\n"
            )


def matrix_table(rows: list[dict[str, Any]]) -> str:
    """The rows of `qnndoctor matrix` as aligned columns, each as wide as its
    widest cell (the stubs of a Linux ARM64 wheel are 23 characters)."""
    header = ("version", "platform", "python", "QNN", "stubs", "companion")
    cells = [
        (
            str(row["version"]),
            str(row["platform"]),
            ",".join(row["python"]),
            row["qnn_version"] or "-",
            ",".join(f"v{s}" for s in row["stubs"]) or "-",
            row["companion"] or "-",
        )
        for row in rows
    ]
    lines = (header, *cells)
    widths = [max(len(line[i]) for line in lines) for i in range(len(header) - 1)]
    return "".join(
        " ".join(line[i].ljust(width) for i, width in enumerate(widths)) + f" {line[-1]}\n"
        for line in lines
    )
