"""Sizes for people, shared by the CLI's output and the local GC's summary (no imports: `lakelet up` and
`lakelet gc run` load it at start-up)."""

from __future__ import annotations


def human_bytes(size: float | None) -> str:
    """``512 B``, ``1.5 KiB`` ... ``2.0 TiB``; empty for None."""
    if size is None:
        return ""
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} TiB"
