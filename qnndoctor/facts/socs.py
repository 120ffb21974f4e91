"""Finding a SoC in the table by any name a person or a tool uses for it:
marketing name ("Snapdragon X Elite", "8 Gen 3"), part number ("SC8380XP",
"X1E-78-100"), the Windows processor name, ``soc_model=60`` (QNN's
numbering) or ``soc_id=555`` (Linux ``/sys/devices/soc0/soc_id``: another
numbering space, never mixed up with soc_model)."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from ..matrixdata import Matrix, Soc, SocMatch
from .probed import Facts

_NOISE = re.compile(r"\((?:r|tm)\)|®|™|qualcomm|snapdragon|processor|compute platform", re.I)


class SocLookupError(ValueError):
    """The name matches no SoC, or SoCs of different Hexagon versions."""


@functools.lru_cache(maxsize=1024)
def normalize(name: str) -> str:
    """'Snapdragon(R) X Elite - X1E78100' and 'x1e-78-100' compare on letters and digits."""
    return re.sub(r"[^a-z0-9+]", "", _NOISE.sub(" ", name.lower()))


def _numbered(text: str) -> tuple[str, int] | None:
    match = re.fullmatch(r"\s*(soc[_-]?model|soc[_-]?id)\s*[=:]\s*(\d+)\s*", text, re.I)
    if match is None:
        return None
    kind = "soc_model" if "model" in match.group(1).lower() else "soc_id"
    return kind, int(match.group(2))


def find_socs(text: str, socs: Sequence[Soc]) -> tuple[Soc, ...]:
    """Every SoC the text names exactly (no substring guesses: "8 Elite" is
    not "8 Elite Gen 5")."""
    numbered = _numbered(text)
    if numbered is not None:
        kind, number = numbered
        if kind == "soc_model":
            return tuple(s for s in socs if s.qnn_soc_model == number)
        return tuple(s for s in socs if number in s.linux_soc_ids)
    wanted = normalize(text)
    if not wanted:
        return ()
    spellings = {wanted, re.sub(r"^(\d+)gen(\d+)\+$", r"\1+gen\2", wanted)}  # "8 Gen 1+"
    found = []
    for soc in socs:
        names = (soc.part, *soc.aliases, *soc.marketing_names, *soc.windows_patterns)
        if spellings & {normalize(n) for n in names if n}:
            found.append(soc)
    if not found:
        # A Windows processor name with a SKU inside ("Snapdragon(R) X Elite - X1E78100 - Qualcomm(R) Oryon(TM) CPU").
        for soc in socs:
            skus = [p for p in (soc.part, *soc.aliases, *soc.windows_patterns) if " " not in p]
            if any(len(normalize(s)) >= 6 and normalize(s) in wanted for s in skus):
                found.append(soc)
    return tuple(found)


def find_soc(text: str, socs: Sequence[Soc]) -> Soc:
    """The one SoC (or SoC family of one Hexagon version) the text names."""
    if re.fullmatch(r"\s*\d+\s*", text):
        raise SocLookupError(
            f"{text.strip()!r} is a bare number: write soc_model={text.strip()} (QNN's SoC "
            f"model id) or soc_id={text.strip()} (Linux /sys/devices/soc0/soc_id); they are "
            "different numbering spaces"
        )
    found = find_socs(text, socs)
    if not found:
        known = sorted({n for s in socs for n in (*s.marketing_names, s.part)})
        raise SocLookupError(
            f"no SoC in the table is called {text!r}; known names include: {', '.join(known)}"
        )
    arches = {s.htp_arch for s in found}
    if len(arches) > 1:
        raise SocLookupError(
            f"{text!r} names SoCs of different Hexagon versions: "
            + ", ".join(f"{s.part} (v{s.htp_arch})" for s in found)
            + "; give the part number"
        )
    return found[0]


_NOT_ALNUM = bytes(b for b in range(128) if not chr(b).isdigit() and not "a" <= chr(b) <= "z")


def mentioned_soc(text: str, socs: Sequence[Soc]) -> tuple[Soc, str] | None:
    """The SoC a free text (a pasted log) mentions somewhere, and the name it
    used: a part number first, then the longest marketing name."""
    from ..diagnosis.prefilter import Literals, fold, search  # (diagnosis imports this module)

    if "骁龙" in text:  # Snapdragon in Chinese; the regexes stay ASCII for the pre-filter
        text = text.replace("骁龙", " Snapdragon ")
    # text.lower() without anything but a-z and 0-9 (bytes.translate: fast on a big log)
    squashed = text.lower().encode("ascii", "ignore").translate(None, _NOT_ALNUM)
    literals = Literals(fold(text))
    best: tuple[int, Soc, str] | None = None
    for soc in socs:
        for name in (soc.part, *soc.aliases):
            token = re.sub(r"[^a-z0-9]", "", name.lower())
            if (
                len(token) >= 5
                and token.encode("ascii", "ignore") in squashed
                and (best is None or best[0] < 1000 + len(token))
            ):
                best = (1000 + len(token), soc, name)
        for name in soc.marketing_names:
            if _model_token(name) not in squashed:  # every spelling has these letters and digits
                continue
            if search(_spoken(name), text, literals) and (best is None or best[0] < len(name)):
                best = (len(name), soc, name)
    return None if best is None else (best[1], best[2])


# "8 Gen 3", "8+ Gen 1", "8s Gen 3", "8cx Gen 3": a model line specific enough
# to name the chip without the brand ("on 8gen2 it works", "小米14 骁龙8Gen3").
_GENERATION = re.compile(r"\d+(?:\+|s|cx)?\s+Gen\s+\d+", re.IGNORECASE)


def _branded(name: str) -> tuple[bool, str]:
    """Whether a marketing name carries the Snapdragon brand, and its model
    line ("8+ Gen 1"; the whole name when it has no brand)."""
    brand, _, model = name.partition(" ")
    return (True, model) if brand.lower() == "snapdragon" else (False, name)


@functools.lru_cache(maxsize=256)
def _model_token(name: str) -> bytes:
    """The letters and digits of a marketing name without its brand ("8gen1"
    for "Snapdragon 8+ Gen 1"): what any spelling of it leaves in a squashed text."""
    return re.sub(r"[^a-z0-9]", "", _branded(name)[1].lower()).encode()


@functools.lru_cache(maxsize=256)
def _spoken(name: str) -> re.Pattern[str]:
    """How people write a marketing name in a report: spaces optional
    ("8gen3"), the brand left out where the model line alone is specific,
    "8 Gen 1+" for "8+ Gen 1"; next to CJK text, whose characters are word
    characters to ``\\w`` (the brand in Chinese is replaced before)."""
    brand, model = _branded(name)
    spellings = [model]
    if plus := re.fullmatch(r"(\d+)\+ (Gen \d+)", model):
        spellings.append(f"{plus.group(1)} {plus.group(2)}+")
    words = "|".join(re.escape(m).replace(r"\ ", r"[\s\-]*") for m in spellings)
    prefix = r"snapdragon[\s\-]*" if brand else ""
    if brand and _GENERATION.fullmatch(model):
        prefix = f"(?:{prefix})?"
    return re.compile(rf"(?<![A-Za-z0-9_]){prefix}(?:{words})(?![A-Za-z0-9_+])", re.IGNORECASE)


def identify(facts: Facts, matrix: Matrix) -> SocMatch | None:
    """The SoC the soc probe's facts name: the Windows processor name and
    Linux socinfo first, then the device tree's ``compatible``
    (``qcom,x1e80100``) and Android's ``ro.soc.model``. The one identifier:
    ``check``, ``model``, ``explain`` and the resolver all ask it."""
    match = _by_processor_name_or_socinfo(facts, matrix)
    if match is not None:
        return match
    socinfo = facts.value("soc", "socinfo") or {}
    compatible = socinfo.get("device_tree_compatible") if isinstance(socinfo, dict) else None
    if isinstance(compatible, str):
        for token in compatible.split(","):
            token = token.strip()
            if token and token != "qcom":
                found = find_socs(token, matrix.socs)
                if found:
                    return SocMatch(
                        found[0],
                        f"device tree compatible {token!r}",
                        "soc.socinfo.device_tree_compatible",
                        compatible,
                    )
    props = facts.value("soc", "android_properties") or {}
    for prop in ("ro.soc.model", "ro.board.platform"):
        value = props.get(prop) if isinstance(props, dict) else None
        if isinstance(value, str) and value.strip():
            found = find_socs(value, matrix.socs)
            if found:
                return SocMatch(
                    found[0], f"Android {prop} {value}", f"soc.android_properties.{prop}", value
                )
    return None


def _token(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def _by_processor_name_or_socinfo(facts: Facts, matrix: Matrix) -> SocMatch | None:
    """The Windows processor name, then Linux socinfo (id, machine)."""
    name = facts.value("soc", "processor_name")
    if isinstance(name, str) and name:
        squashed = _token(name)
        # SKU tokens (X1E78100) before family phrases ("Snapdragon(R) X Plus").
        for specific in (True, False):
            for soc in matrix.socs:
                for pattern in soc.windows_patterns:
                    is_sku = " " not in pattern
                    if is_sku == specific and _token(pattern) and _token(pattern) in squashed:
                        return SocMatch(
                            soc, f"processor name contains {pattern!r}", "soc.processor_name", name
                        )
    socinfo = facts.value("soc", "socinfo") or {}
    soc_id = socinfo.get("soc_id") if isinstance(socinfo, dict) else None
    if isinstance(soc_id, str) and soc_id.strip().isdigit():
        for soc in matrix.socs:
            if int(soc_id) in soc.linux_soc_ids:
                return SocMatch(soc, f"Linux soc_id {soc_id}", "soc.socinfo.soc_id", soc_id)
    machine = socinfo.get("machine") if isinstance(socinfo, dict) else None
    if isinstance(machine, str) and machine:
        for soc in matrix.socs:
            if _token(machine) in {_token(p) for p in (soc.part, *soc.aliases)}:
                return SocMatch(
                    soc, f"Linux soc0 machine {machine}", "soc.socinfo.machine", machine
                )
    return None
