"""Groups of library kinds (as ``probes/qnn_bundled.classify`` names them),
defined once for the binary readers, the rules and the resolver."""

from __future__ import annotations

# QNN runtime libraries: built together, each with the QNN version resource.
QNN_RUNTIME = frozenset(
    {
        "backend_htp",
        "system",
        "backend_cpu",
        "backend_gpu",
        "htp_prepare",
        "htp_stub",
        "backend_saver",
        "backend_ir",
        "htp_netrun_extensions",
    }
)

# Everything the process itself loads (not the DSP-side skels or catalogues).
PROCESS_LOADED = QNN_RUNTIME | {"ort_provider_qnn", "ort_runtime", "ort_providers_shared"}
