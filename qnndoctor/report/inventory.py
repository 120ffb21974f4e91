"""Every source of the QNN execution provider and QNN libraries the facts
show, like an inventory: onnxruntime flavours in this environment, system
QNN / QAIRT SDKs, QNN libraries on the loader's search path, DSP skel
folders and Android vendor libraries; each marked with whether this
interpreter would load it, or what shadows it.

A pure function of the facts (a saved ticket gets the same inventory).
Windows ML's execution-provider catalog and Foundry Local are not probed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..facts.probed import Facts, bundles
from ..facts.reading import records, strings


def _under(path: str, root: str) -> bool:
    norm = path.replace("\\", "/").rstrip("/").lower()
    base = root.replace("\\", "/").rstrip("/").lower()
    return bool(base) and (norm == base or norm.startswith(base + "/"))


def _packages(facts: Facts) -> list[dict[str, Any]]:
    would = facts.value("installs", "would_import", {}) or {}
    loaded_owners = {
        module: set((info or {}).get("owners") or [])
        for module, info in would.items()
        if isinstance(info, Mapping)
    }
    # What an import finds when no installed distribution owns it (a local folder).
    loaded_paths = {
        module: str(info.get("path"))
        for module, info in would.items()
        if isinstance(info, Mapping) and info.get("found") and not info.get("owners")
    }
    qnn_by_dist = {str(b.get("dist")): b for b in bundles(facts)}
    entries = []
    for dist in records(facts.value("installs", "distributions")):
        modules = [m for m in strings(dist.get("provides_modules")) if m in loaded_owners]
        if not modules:
            continue
        ident = str(dist.get("id"))
        loads = [m for m in modules if ident in loaded_owners[m]]
        shadowed_by = sorted(
            {o for m in modules if m not in loads for o in loaded_owners[m] if o != ident}
            | {loaded_paths[m] for m in modules if m not in loads and m in loaded_paths}
        )
        bundle = qnn_by_dist.get(ident) or {}
        entries.append(
            {
                "kind": "python-package",
                "name": dist.get("name"),
                "version": dist.get("version"),
                "era": dist.get("era"),
                "path": dist.get("location"),
                "qnn_version": bundle.get("qnn_version"),
                "provides": modules,
                "loaded_by_this_interpreter": bool(loads),
                "shadowed_by": shadowed_by,
                "source": "installs.distributions, installs.would_import",
            }
        )
    return entries


def _system(facts: Facts) -> list[dict[str, Any]]:
    on_path = []
    for variable in ("ld_library_path", "path"):
        for entry in records(facts.value("qnn_sdk", f"qnn_on_{variable}")):
            on_path.append((variable.upper(), entry))
    entries = []
    roots = records(facts.value("qnn_sdk", "roots"))
    for root in roots:
        version = root.get("version") or {}
        via = sorted(
            {var for var, e in on_path if _under(str(e.get("path")), str(root.get("path")))}
        )
        entries.append(
            {
                "kind": "qnn-sdk",
                "path": root.get("path"),
                "exists": root.get("exists"),
                "version": version.get("sdk_yaml") or version.get("from_folder_name"),
                "origin": root.get("origin"),
                "on_loader_path": via,
                # On the loader's path it can shadow the bundled QNN libraries.
                "shadows_bundled_qnn": bool(via),
                "source": "qnn_sdk.roots",
            }
        )
    for variable, entry in on_path:
        if any(_under(str(entry.get("path")), str(r.get("path"))) for r in roots):
            continue
        entries.append(
            {
                "kind": "qnn-libraries-on-loader-path",
                "path": entry.get("path"),
                "variable": variable,
                "libraries": strings(entry.get("qnn_libraries"))[:12],
                "shadows_bundled_qnn": True,
                "source": f"qnn_sdk.qnn_on_{variable.lower()}",
            }
        )
    adsp = facts.value("qnn_sdk", "adsp_library_path") or {}
    for entry in records(adsp.get("entries")) if isinstance(adsp, Mapping) else []:
        if entry.get("skels"):
            entries.append(
                {
                    "kind": "dsp-skels-on-adsp-library-path",
                    "path": entry.get("path"),
                    "skels": strings(entry.get("skels"))[:12],
                    "source": "qnn_sdk.adsp_library_path",
                }
            )
    for folder in records(facts.value("soc", "dsp_library_dirs")):
        if folder.get("qnn_skels"):
            entries.append(
                {
                    "kind": "dsp-skels-in-default-folder",
                    "path": folder.get("path"),
                    "skels": strings(folder.get("qnn_skels")),
                    "source": "soc.dsp_library_dirs",
                }
            )
    for folder in records(facts.value("soc", "android_vendor_qnn")):
        entries.append(
            {
                "kind": "android-vendor-qnn",
                "path": folder.get("path"),
                "libraries": strings(folder.get("qnn_libraries"))[:12],
                "source": "soc.android_vendor_qnn",
            }
        )
    return entries


def inventory(facts: Facts) -> list[dict[str, Any]]:
    """The QNN EP sources on this machine, packages first."""
    return [*_packages(facts), *_system(facts)]
