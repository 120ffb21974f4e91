"""Text lines for the experiment keys of the ``qnndoctor model`` document."""

from __future__ import annotations

from typing import Any, TextIO

TOP_OPS = 10


def render_experiments(doc: dict[str, Any], out: TextIO) -> None:
    write = out.write
    culprit = doc.get("culprit")
    if culprit:
        steps = f"{culprit['steps_total']} trial(s), {culprit['seconds']:g} s"
        if culprit["status"] == "found":
            nodes = culprit["nodes"]
            more = f" (with {len(nodes) - 1} node(s) before it)" if len(nodes) > 1 else ""
            write(f"Culprit   {culprit['op_type']} '{culprit['node']}'{more}: {steps}\n")
            for item in culprit["inputs"]:
                write(
                    f"          input {item['name']}: {item.get('dtype')} {item.get('shape')}"
                    f"{' (initializer)' if item.get('initializer') else ''}\n"
                )
            if culprit["attributes"]:
                write(f"          attributes {culprit['attributes']}\n")
        else:
            write(f"Culprit   none ({culprit['status']}: {culprit.get('reason')}); {steps}\n")
    profile = doc.get("profile")
    if profile:
        if profile["status"] == "read":
            write(
                f"Profile   QNN execute {profile['total_us']:g} us per run "
                f"(accelerator {profile['accelerator_us']:g} us); top ops:\n"
            )
            for op in profile["ops"][:TOP_OPS]:
                write(
                    f"          {op['time_us']:>12.1f} us {op['share']:>6.1%}  "
                    f"{op['op_type']} {op['node']}\n"
                )
        else:
            write(f"Profile   {profile['status']}: {profile.get('reason')}\n")
        ends = profile["end_to_end_ms"]
        write(
            f"          end to end in the profiled session: QNN {ends['qnn']} ms, "
            f"CPU {ends['cpu']} ms (median)\n"
        )
    compare = doc.get("compare")
    if compare:
        if compare["status"] != "compared":
            write(f"Compare   failed: {compare.get('reason')}\n")
        for item in compare["outputs"]:
            verdict = "ok" if item["within_tolerance"] else "BEYOND tolerance"
            snr = f"SNR {item['snr_db']} dB"
            if item["snr_db"] is None:
                snr = "identical" if item["max_abs_error"] == 0 else "SNR n/a"
            write(
                f"Compare   {item['name']}: max abs {item['max_abs_error']}, mean abs "
                f"{item['mean_abs_error']}, cosine {item['cosine']}, {snr}: "
                f"{verdict} ({compare['tolerance']:g})\n"
            )
        first = compare.get("first_divergence")
        if first:
            write(f"          first diverging node: {first['op_type']} '{first['node']}'\n")
            for item in first["inputs"]:
                write(f"          input {item['name']} range {item['range']}\n")
    share = doc.get("npu_share")
    if share:
        verdict = "met" if share["met"] else "NOT met"
        write(
            f"NPU share {share['nodes_on_qnn']}/{share['nodes_counted']} = {share['share']:.0%}, "
            f"required {share['required']:.0%}: {verdict}\n"
        )
