"""``explain``'s text: the best candidate, the runners-up, where it failed,
the exit status, and what to try next when nothing matched."""

from __future__ import annotations

from typing import Any, TextIO

from ..diagnosis.engine import WEAK_SCORE
from ..diagnosis.stage import model_invocation

RUNNERS_UP = 2
# Said first when the best candidate is weak (low confidence): users act
# on the first answer; measured by leave-one-out, a third of them were wrong with the
# right entry catalogued, and all of them without it (docs/diagnosis.md); on the
# unseen held-out reports, 4 of 23 low first answers were right (8 of 11 at
# high or medium; docs/accuracy.md).
WEAK_NOTE = (
    "No catalogued cause matched this text well: what follows is a lead to check, not an answer.\n"
)

# What to do when nothing matched: narrow it down on the affected machine.
def _next_steps(model: str | None) -> str:
    """``model``: the model file the text names (its ``where``); said in words when none."""
    if model is None:
        run_model = "qnndoctor model, given the model that failed"
    else:
        run_model = model_invocation(model)
    return (
        "Next, on the machine that failed:\n"
        "  qnndoctor check                   runs a known-good model on the NPU and checks the install\n"
        f"  {run_model}\n"
        "                                    if check passes: what of your model runs on the NPU\n"
        "  qnndoctor report -o ticket.json   a redacted ticket to attach when you ask for help\n"
    )


def _write_exit_status(out: TextIO, status: dict[str, Any] | None) -> None:
    if not status or not (status["name"] or status["known_causes_needing_facts"]):
        return
    code = int(status["code"])
    shown = f"{code & 0xFFFFFFFF:#X}".replace("0X", "0x") if abs(code) > 255 else str(code)
    named = f" ({status['name']})" if status["name"] else ""
    out.write(f"The process ended with exit code {shown}{named}")
    known = status["known_causes_needing_facts"]
    if not known:
        out.write(".\n")
        return
    out.write(
        "; causes known to end a process this way, which only facts from that machine "
        "can confirm (an exit code alone names no cause):\n"
    )
    for item in known[:4]:
        out.write(f"  {item['id']}: {item['title']}\n")


def _write_candidate(out: TextIO, c: dict[str, Any], heading: str) -> None:
    out.write(f"{heading}: {c['title']}\n")
    out.write(f"  id {c['id']} · confidence {c['confidence']} (score {c['score']}; ")
    out.write(f"catalogue: {c['catalogue_confidence']})\n")
    if c.get("doubt"):
        out.write(f"  doubt: {c['doubt']}\n")
    out.write(f"  cause: {c['cause']}\n")
    out.write("  evidence:\n")
    for item in c["evidence"]:
        sign = f"{item['weight']:+d}" if item["weight"] else " 0"
        out.write(f"    {sign:>3}  {item['kind']}: {item['detail']}\n")
    out.write("  fix:\n")
    for line in str(c["fix"]).splitlines():
        out.write(f"    {line}\n")
    if c["sources"]:
        out.write(f"  sources: {' '.join(c['sources'][:3])}\n")


def render_text(document: dict[str, Any], out: TextIO) -> None:
    if document["candidates"]:
        _write_candidates(document, out)
    else:
        _write_no_match(document, out)
    _write_where(out, document.get("where"))
    if document.get("qnn_error_codes"):
        out.write("\nQNN error codes in the text (the words of QNN's API headers):\n")
        for item in document["qnn_error_codes"]:
            out.write(f"  line {item['line']}: {item['code']} {item['name']}: {item['meaning']}\n")
    if document["excluded"]:
        out.write("\nRuled out by the facts:\n")
        for item in document["excluded"][:5]:
            out.write(f"  {item['id']}: {item['because']}\n")
    _write_facts(document, out)


def _write_no_match(document: dict[str, Any], out: TextIO) -> None:
    out.write("No known failure cause matches this text.\n")
    if document.get("failure_lines"):
        out.write("Lines that read like the failure (to search for; `--json` has them redacted):\n")
        for item in document["failure_lines"]:
            out.write(f"  line {item['line']}: {item['text']}\n")
    _write_exit_status(out, document.get("exit_status"))
    out.write(_next_steps((document.get("where") or {}).get("model")))


def _write_candidates(document: dict[str, Any], out: TextIO) -> None:
    candidates = document["candidates"]
    guess = candidates[0].get("raised_by") == "resemblance"
    # (a tie of two strong matches is no weak match: the tie line says what decides)
    if candidates[0]["confidence"] == "low" and (
        not document["tie"] or candidates[0]["score"] < WEAK_SCORE
    ):
        out.write(WEAK_NOTE)
    matched = any(c.get("raised_by") != "resemblance" for c in candidates)
    heading = (
        "Closest known cause (a guess: the messages that matched are weak and doubtful)"
        if matched
        else "Closest known cause (a guess: no catalogued message matched)"
    )
    _write_candidate(out, candidates[0], heading if guess else "Most likely cause")
    if document.get("follows_from"):
        earlier = document["follows_from"]
        out.write(
            "  this message only follows from an earlier failure; the first one the log "
            f"gives (no catalogued cause matched it), line {earlier['line']}:\n"
            f"    {earlier['text']}\n"
        )
    if document["tie"]:
        out.write(f"  tied with {candidates[1]['id']}: {candidates[1].get('tell_apart', '')}\n")
    elif document["why_first"]:
        out.write(f"  why first: {'; '.join(document['why_first'])}\n")
    for rank, c in enumerate(candidates[1 : 1 + RUNNERS_UP], 2):
        guessed = (
            " (a guess: its symptoms resemble the text)"
            if c.get("raised_by") == "resemblance"
            else " (only in verbose / info lines: what the session narrated)"
            if c.get("verbose_only")
            else ""
        )
        out.write(f"\n{rank}. {c['title']}  [{c['id']}, score {c['score']}]{guessed}\n")
        out.write(f"   tell apart: {c['tell_apart']}\n")
    if len(candidates) > 1 + RUNNERS_UP:
        out.write(f"\n(+{len(candidates) - 1 - RUNNERS_UP} weaker candidates: --json lists all)\n")


def _write_facts(document: dict[str, Any], out: TextIO) -> None:
    facts = document["facts"]["used"]
    out.write("\nFacts used" + (":\n" if facts else ": none\n"))
    for fact in facts:
        value = fact["value"]
        shown = (", ".join(value) or "none") if isinstance(value, list) else value
        out.write(f"  {fact['key']} = {shown}  ({fact['source']})\n")
    for conflict in document["facts"]["conflicts"]:
        out.write(f"  conflict: {conflict}\n")
    harmless = document["harmless_lines"]
    if harmless:
        kinds = sorted({h["id"] for h in harmless})
        out.write(f"Ignored {len(harmless)} harmless line(s): {', '.join(kinds)}\n")


def _write_where(out: TextIO, where: dict[str, Any] | None) -> None:
    """Where it failed (diagnosis.stage): said for every answer, and when none."""
    if not where:
        return
    out.write(f"\nWhere it failed: {where['stage']} ({where['component']})")
    out.write(f", line {where['line']}: {where['text']}\n" if where["line"] else "\n")
    out.write(f"  to settle it: {where['experiment']}\n")
