"""Small charts as inline SVG for the fleet's HTML report: no script, no
network, the same on screen and on paper. Every text is escaped here."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

GOOD = "#2e7d32"
BAD = "#c62828"
NEUTRAL = "#1565c0"
TRACK = "#e8eaf0"


def _n(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def donut(part: int, whole: int, label: str, size: int = 132) -> str:
    """A ring: ``part`` of ``whole`` in green, the rest in red, the share in the middle."""
    radius, stroke = size / 2 - 10, 16
    circumference = 2 * 3.141592653589793 * radius
    share = part / whole if whole else 0.0
    centre = size / 2
    return (
        f'<svg class="donut" width="{size}" height="{size}" viewBox="0 0 {size} {size}" '
        f'role="img" aria-label="{escape(label)}: {share:.0%}">'
        f'<circle cx="{centre}" cy="{centre}" r="{_n(radius)}" fill="none" '
        f'stroke="{BAD if whole else TRACK}" stroke-width="{stroke}"/>'
        f'<circle cx="{centre}" cy="{centre}" r="{_n(radius)}" fill="none" stroke="{GOOD}" '
        f'stroke-width="{stroke}" stroke-dasharray="{_n(circumference * share)} '
        f'{_n(circumference)}" transform="rotate(-90 {centre} {centre})"/>'
        f'<text x="{centre}" y="{centre + 2}" text-anchor="middle" font-size="26" '
        f'font-weight="700" fill="#111">{share:.0%}</text>'
        f'<text x="{centre}" y="{centre + 22}" text-anchor="middle" font-size="12" '
        f'fill="#555">{escape(label)}</text></svg>'
    )


def bars(
    items: Sequence[tuple[str, int]],
    total: int,
    color: str = NEUTRAL,
    width: int = 460,
    label_w: int = 190,
) -> str:
    """Horizontal bars, one per (label, count), scaled to ``total``."""
    row, gap = 22, 6
    fits = max(8, (label_w - gap) // 7)  # characters of 12 px text that fit
    height = len(items) * row + 4
    bar_w = width - label_w - 70
    parts = [
        f'<svg class="bars" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        'role="img">'
    ]
    for i, (label, count) in enumerate(items):
        y = i * row + 2
        length = bar_w * count / total if total else 0
        shown = label if len(label) <= fits else label[: fits - 1] + "\u2026"
        parts.append(
            f'<text x="{label_w - gap}" y="{y + 14}" text-anchor="end" font-size="12" '
            f'fill="#222"><title>{escape(label)}</title>{escape(shown)}</text>'
            f'<rect x="{label_w}" y="{y + 2}" width="{_n(bar_w)}" height="15" fill="{TRACK}"/>'
            f'<rect x="{label_w}" y="{y + 2}" width="{_n(max(length, 1))}" height="15" '
            f'fill="{color}"/>'
            f'<text x="{label_w + bar_w + gap}" y="{y + 14}" font-size="12" fill="#222">'
            f"{count:,}</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


def split_bar(passed: int, failed: int, width: int = 140) -> str:
    """One bar: passed (green) and failed (red) side by side."""
    total = passed + failed
    good = width * passed / total if total else 0
    return (
        f'<svg class="split" width="{width}" height="14" viewBox="0 0 {width} 14" role="img" '
        f'aria-label="{passed} passed, {failed} failed">'
        f'<rect x="0" y="0" width="{width}" height="14" fill="{BAD if total else TRACK}"/>'
        f'<rect x="0" y="0" width="{_n(good)}" height="14" fill="{GOOD}"/></svg>'
    )


def histogram(items: Sequence[tuple[str, int]], width: int = 460, height: int = 150) -> str:
    """Vertical bars with labels below (the smoke sessions' times)."""
    if not items:
        return ""
    top = max(c for _, c in items) or 1
    slot = width / len(items)
    chart_h = height - 34
    parts = [
        f'<svg class="hist" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        'role="img">'
    ]
    for i, (label, count) in enumerate(items):
        h = chart_h * count / top
        x = i * slot + 4
        parts.append(
            f'<rect x="{_n(x)}" y="{_n(chart_h - h + 14)}" width="{_n(slot - 8)}" '
            f'height="{_n(h)}" fill="{NEUTRAL}"/>'
            f'<text x="{_n(x + (slot - 8) / 2)}" y="{_n(chart_h - h + 10)}" '
            f'text-anchor="middle" font-size="11">{count:,}</text>'
            f'<text x="{_n(x + (slot - 8) / 2)}" y="{height - 4}" text-anchor="middle" '
            f'font-size="10" fill="#444">{escape(label)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)
