"""The sample dataset's pictures: 28 PNGs and one animated GIF under ``images/``, all drawn here.

Twelve views of one lake through the months, depth maps of the twelve deepest lakes of the table, four charts
of the table's columns, and ripples spreading on the water as the GIF. Each is a function of its parameters
only, so the bytes never change; the depth maps and charts are drawn from ``table.lake_rows()``, so the pictures
describe the data they sit next to.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from typing import Any

from . import gif, png
from .table import KINDS

Colour = tuple[int, int, int]
MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
DEPTH_MAPS = 12


def _mix(a: Colour, b: Colour, t: float) -> Colour:
    t = 0.0 if t < 0.0 else min(t, 1.0)
    return (round(a[0] + (b[0] - a[0]) * t), round(a[1] + (b[1] - a[1]) * t), round(a[2] + (b[2] - a[2]) * t))


def _grain(seed: int) -> Callable[[int, int], float]:
    """A deterministic per-pixel grain in [-1, 1): the texture of water, grass and rock (a photo's noise, too)."""
    salt = seed * 0x9E3779B1

    def at(x: int, y: int) -> float:
        h = (x * 0x27D4EB2D) ^ (y * 0x165667B1) ^ salt
        h = ((h ^ (h >> 15)) * 0x85EBCA6B) & 0xFFFFFFFF
        return ((h ^ (h >> 13)) & 0xFFFF) / 32768.0 - 1.0

    return at


def _shade(colour: Colour, amount: float) -> Colour:
    return (
        max(0, min(255, round(colour[0] + amount))),
        max(0, min(255, round(colour[1] + amount))),
        max(0, min(255, round(colour[2] + amount))),
    )


# Per month: sky, water, hillside, snow line (0: snow to the foot of the hill, 1: none), ice on the lake.
_SEASONS: tuple[tuple[Colour, Colour, Colour, float, bool], ...] = (
    ((176, 196, 214), (200, 214, 226), (92, 98, 104), 0.0, True),
    ((184, 204, 224), (196, 212, 226), (96, 102, 106), 0.1, True),
    ((160, 196, 230), (70, 110, 150), (104, 104, 92), 0.35, False),
    ((150, 196, 236), (52, 110, 160), (96, 128, 80), 0.55, False),
    ((140, 194, 240), (44, 112, 170), (78, 138, 70), 0.7, False),
    ((124, 186, 246), (36, 114, 180), (64, 132, 58), 0.85, False),
    ((112, 180, 248), (30, 112, 184), (70, 126, 52), 0.95, False),
    ((120, 182, 244), (34, 108, 176), (92, 124, 54), 0.95, False),
    ((150, 190, 230), (44, 100, 150), (150, 120, 50), 0.8, False),
    ((170, 190, 212), (50, 92, 130), (170, 96, 42), 0.6, False),
    ((168, 180, 196), (60, 90, 116), (110, 92, 70), 0.3, False),
    ((180, 194, 210), (150, 176, 196), (90, 94, 100), 0.05, True),
)


def lake_in_month(month: int, width: int = 160, height: int = 104) -> bytes:
    """The same lake, mountain and shore in month ``month`` (1 to 12): snow line, leaves, ice and light change."""
    sky, water, hill, snow_line, ice = _SEASONS[month - 1]
    grain = _grain(month)
    horizon = height * 5 // 8
    sun_x = width * (0.2 + 0.6 * month / 12)

    ridge = [
        horizon - 36 + abs(x - width * 0.55) * 0.55 + 5 * math.sin(x * 0.13) + 2.5 * math.sin(x * 0.41)
        for x in range(width)
    ]

    def pixel(x: int, y: int) -> png.Pixel:
        g = grain(x, y)
        if y >= horizon:
            depth = (y - horizon) / (height - horizon)
            if ice:
                return _shade(_mix(water, (230, 238, 244), 0.3 - depth * 0.3), g * 6)
            reflected = ridge[x] <= 2 * horizon - y  # the mountain mirrored in still water
            base = _mix(water, hill, 0.35) if reflected else water
            ripple = 10 * math.sin(x * 0.45 + y * 1.7 + month)
            return _shade(_mix(base, (12, 40, 80), depth * 0.8), ripple + g * 8)
        top = ridge[x]
        if y >= top:
            height_on_hill = (horizon - y) / (horizon - top + 1e-9)
            snowy = (horizon - y) / 36 > snow_line
            return _shade((236, 240, 244) if snowy else _mix(hill, (40, 60, 40), 1 - height_on_hill), g * 14)
        glow = max(0.0, 1 - math.hypot(x - sun_x, y - horizon * 0.3) / (width * 0.35))
        return _shade(_mix(_mix(sky, (236, 242, 248), y / horizon), (255, 236, 190), glow * 0.7), g * 3)

    return png.encode(width, height, pixel)


def deepest_lakes(rows: tuple[dict[str, Any], ...], count: int = DEPTH_MAPS) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda row: (-row["max_depth_m"], row["lake_id"]))[:count]


def depth_map(lake: dict[str, Any], size: int = 112) -> bytes:
    """A depth map of one lake of the table: its shore an irregular ring, darker blue the deeper, a contour
    line every tenth of its ``max_depth_m``, on land textured green."""
    seed = int.from_bytes(hashlib.sha256(f"lakelet-sample-shore-{lake['lake_id']}".encode()).digest()[:8], "big")
    lobes = [(2 + (seed >> (8 * i)) % 5, ((seed >> (8 * i + 3)) % 100) / 100 * math.tau) for i in range(4)]
    grain = _grain(lake["lake_id"])
    centre = size / 2

    def shore(angle: float) -> float:
        return size * 0.4 * (1 + sum(0.09 * math.sin(k * angle + phase) for k, phase in lobes))

    def pixel(x: int, y: int) -> png.Pixel:
        dx, dy = x - centre, y - centre
        r = math.hypot(dx, dy) / shore(math.atan2(dy, dx))
        g = grain(x, y)
        if r >= 1:
            return _shade((88, 132, 72) if r > 1.06 else (196, 184, 140), g * 12)
        depth = 1 - r * r  # 0 on the shore, 1 at the deepest point
        if abs(depth * 10 - round(depth * 10)) < 0.08 and depth > 0.05:
            return (24, 36, 60)
        return _shade(_mix((160, 214, 240), (8, 30, 92), depth), g * 4)

    return png.encode(size, size, pixel)


def _histogram(values: list[float], bins: int, low: float, high: float) -> list[int]:
    counts = [0] * bins
    for value in values:
        counts[min(bins - 1, max(0, int((value - low) / (high - low) * bins)))] += 1
    return counts


def bar_chart(counts: list[int], colour: Colour, width: int = 160, height: int = 96) -> bytes:
    """Bars of ``counts`` on a light grid, scaled to the largest."""
    top = max(counts) or 1
    margin, bars = 10, len(counts)
    slot = (width - 2 * margin) / bars
    grain = _grain(bars)

    def pixel(x: int, y: int) -> png.Pixel:
        if not margin <= x < width - margin or not margin <= y < height - margin:
            return (250, 251, 252)
        index = int((x - margin) / slot)
        inside = (x - margin) - index * slot
        bar_top = height - margin - counts[index] / top * (height - 2 * margin)
        if y >= bar_top and 1 <= inside < slot - 1:
            return _shade(colour, (y - bar_top) / height * 40 + grain(x, y) * 5)
        if (height - margin - y) % 20 == 0:
            return (222, 226, 232)
        return (244, 246, 249)

    return png.encode(width, height, pixel)


def charts(rows: tuple[dict[str, Any], ...]) -> dict[str, bytes]:
    """The table at a glance: log-area, depth and elevation histograms and the count of each kind of lake."""
    return {
        "chart-area.png": bar_chart(
            _histogram([math.log10(r["area_km2"]) for r in rows], 32, -1.0, 3.0), (46, 120, 190)
        ),
        "chart-depth.png": bar_chart(_histogram([r["max_depth_m"] for r in rows], 32, 0.0, 800.0), (20, 70, 140)),
        "chart-elevation.png": bar_chart(
            _histogram([r["elevation_m"] for r in rows], 32, -30.0, 4770.0), (110, 140, 70)
        ),
        "chart-kinds.png": bar_chart([sum(r["kind"] == kind for r in rows) for kind in KINDS], (200, 130, 40)),
    }


def ripples(size: int = 80, frames: int = 10) -> bytes:
    """A drop falling into still water: rings spreading and fading, looped (the dataset's one GIF)."""
    palette = [_mix((10, 40, 100), (210, 236, 252), i / 31) for i in range(32)]
    centre = size / 2
    distances = [math.hypot(x - centre, y - centre) for y in range(size) for x in range(size)]
    animation = []
    for frame in range(frames):
        front = (frame + 1) / frames * size * 0.7
        fade = 1 - frame / frames
        indices = bytearray()
        for d in distances:
            wave = math.cos((d - front) * 0.6) * math.exp(-abs(d - front) / 14) * fade if d < front else 0.0
            indices.append(max(0, min(31, round(12 + wave * 16))))
        animation.append(bytes(indices))
    return gif.encode(size, size, palette, animation, delay_cs=8)


def pictures(rows: tuple[dict[str, Any], ...]) -> dict[str, bytes]:
    """Every picture, by its name under ``images/``."""
    out = {f"lake-{month:02d}-{MONTHS[month - 1]}.png": lake_in_month(month) for month in range(1, 13)}
    for lake in deepest_lakes(rows):
        out[f"depth-lake-{lake['lake_id']}.png"] = depth_map(lake)
    out.update(charts(rows))
    out["ripples.gif"] = ripples()
    return out
