"""Every source of the QNN execution provider and QNN libraries the facts
show, like an inventory: onnxruntime flavours in this environment, system
QNN / QAIRT SDKs, QNN libraries on the loader's search path, DSP skel
folders and Android vendor libraries; each marked with whether this
interpreter would load it, or what shadows it.

A pure function of the facts (a saved ticket gets the same inventory).
Windows ML's execution-provider catalog and Foundry Local are not probed.
"""

from __future__ import annotations

from typing import Any

from ..facts.probed import Facts, bundles
from ..facts.reading import Fields


def _under(path: str, root: str) -> bool:
    norm = path.replace("\\", "/").rstrip("/").lower()
    base = root.replace("\\", "/").rstrip("/").lower()
    return bool(base) and (norm == base or norm.startswith(base + "/"))


def _packages(facts: Facts) -> list[dict[str, Any]]:
    would = Fields.of(facts.value("installs", "would_import")).children()
    loaded_owners = {module: set(info.strings("owners")) for module, info in would}
    # What an import finds when no installed distribution owns it (a local folder).
    loaded_paths = {
        module: str(info.value("path"))
        for module, info in would
        if info.value("found") and not info.value("owners")
    }
    qnn_by_dist = {str(b.get("dist")): Fields(b) for b in bundles(facts)}
    entries = []
    for dist in _values(facts, "installs").records("distributions"):
        modules = [m for m in dist.strings("provides_modules") if m in loaded_owners]
        if not modules:
            continue
        ident = str(dist.value("id"))
        loads = [m for m in modules if ident in loaded_owners[m]]
        shadowed_by = sorted(
            {o for m in modules if m not in loads for o in loaded_owners[m] if o != ident}
            | {loaded_paths[m] for m in modules if m not in loads and m in loaded_paths}
        )
        bundle = qnn_by_dist.get(ident) or Fields()
        entries.append(
            {
                "kind": "python-package",
                "name": dist.value("name"),
                "version": dist.value("version"),
                "era": dist.value("era"),
                "path": dist.value("location"),
                "qnn_version": bundle.value("qnn_version"),
                "provides": modules,
                "loaded_by_this_interpreter": bool(loads),
                "shadowed_by": shadowed_by,
                "source": "installs.distributions, installs.would_import",
            }
        )
    return entries


def _values(facts: Facts, probe: str) -> Fields:
    """A probe's values (empty: not run, failed, or not an object)."""
    found = facts.probe(probe)
    return Fields.of(found.values) if found is not None and found.ok else Fields()


def _system(facts: Facts) -> list[dict[str, Any]]:
    sdk = _values(facts, "qnn_sdk")
    on_path = []
    for variable in ("ld_library_path", "path"):
        for entry in sdk.records(f"qnn_on_{variable}"):
            on_path.append((variable.upper(), entry))
    entries = []
    roots = sdk.records("roots")
    for root in roots:
        version = root.mapping("version")
        via = sorted(
            {var for var, e in on_path if _under(str(e.value("path")), str(root.value("path")))}
        )
        entries.append(
            {
                "kind": "qnn-sdk",
                "path": root.value("path"),
                "exists": root.value("exists"),
                "version": version.value("sdk_yaml") or version.value("from_folder_name"),
                "origin": root.value("origin"),
                "on_loader_path": via,
                # On the loader's path it can shadow the bundled QNN libraries.
                "shadows_bundled_qnn": bool(via),
                "source": "qnn_sdk.roots",
            }
        )
    for variable, entry in on_path:
        if any(_under(str(entry.value("path")), str(r.value("path"))) for r in roots):
            continue
        entries.append(
            {
                "kind": "qnn-libraries-on-loader-path",
                "path": entry.value("path"),
                "variable": variable,
                "libraries": list(entry.strings("qnn_libraries"))[:12],
                "shadows_bundled_qnn": True,
                "source": f"qnn_sdk.qnn_on_{variable.lower()}",
            }
        )
    for entry in sdk.mapping("adsp_library_path").records("entries"):
        if entry.value("skels"):
            entries.append(
                {
                    "kind": "dsp-skels-on-adsp-library-path",
                    "path": entry.value("path"),
                    "skels": list(entry.strings("skels"))[:12],
                    "source": "qnn_sdk.adsp_library_path",
                }
            )
    soc = _values(facts, "soc")
    for folder in soc.records("dsp_library_dirs"):
        if folder.value("qnn_skels"):
            entries.append(
                {
                    "kind": "dsp-skels-in-default-folder",
                    "path": folder.value("path"),
                    "skels": list(folder.strings("qnn_skels")),
                    "source": "soc.dsp_library_dirs",
                }
            )
    for folder in soc.records("android_vendor_qnn"):
        entries.append(
            {
                "kind": "android-vendor-qnn",
                "path": folder.value("path"),
                "libraries": list(folder.strings("qnn_libraries"))[:12],
                "source": "soc.android_vendor_qnn",
            }
        )
    return entries


def inventory(facts: Facts) -> list[dict[str, Any]]:
    """The QNN EP sources on this machine, packages first."""
    return [*_packages(facts), *_system(facts)]
