"""The sample dataset itself: a made-up table of lakes (Parquet and CSV), a README and three PNG images.

Every value comes from a hash of the row number, so the bytes are the same on every run and every machine (the
Parquet file also depends on the pinned pyarrow version, which writes its name into the file).
"""

from __future__ import annotations

import csv
import functools
import hashlib
import io
import math
from dataclasses import dataclass
from typing import Any

from . import png

SAMPLE_COMMIT_MESSAGE = "Add sample data"  # lakeFS's message for the same commit
ROWS = 120
_SYLLABLES = ("ar", "bel", "cor", "dun", "el", "fen", "gal", "hal", "is", "kar", "lun", "mir", "nor", "os", "ran",
              "sil", "tav", "ul", "ven", "wyn")
_COUNTRIES = ("Argentina", "Canada", "Chile", "Finland", "Iceland", "Kenya", "Mongolia", "New Zealand", "Norway",
              "Peru", "Scotland", "Switzerland", "Tanzania", "Uganda")
_KINDS = ("freshwater", "freshwater", "freshwater", "glacial", "reservoir", "saline")
COLUMNS = ("lake_id", "name", "country", "kind", "area_km2", "max_depth_m", "elevation_m")


@dataclass(frozen=True, slots=True)
class SampleObject:
    """One object of the dataset: where it goes in the repository, its bytes and its content type."""

    path: str
    data: bytes
    content_type: str


def _numbers(row: int) -> list[int]:
    digest = hashlib.sha256(f"lakelet-sample-lake-{row}".encode()).digest()
    return [int.from_bytes(digest[i : i + 4], "big") for i in range(0, 32, 4)]


def lake_rows() -> list[dict[str, Any]]:
    """The table's rows, in lake_id order."""
    rows = []
    for row in range(ROWS):
        n = _numbers(row)
        name = "Lake " + (_SYLLABLES[n[0] % 20] + _SYLLABLES[n[1] % 20] + _SYLLABLES[n[2] % 20]).capitalize()
        rows.append(
            {
                "lake_id": row + 1,
                "name": name,
                "country": _COUNTRIES[n[3] % len(_COUNTRIES)],
                "kind": _KINDS[n[4] % len(_KINDS)],
                # Areas spread over four orders of magnitude, as real lakes do; two decimals.
                "area_km2": round(10 ** (n[5] % 4000 / 1000.0), 2),
                "max_depth_m": 2 + n[6] % 600,
                "elevation_m": n[7] % 4800 - 30,
            }
        )
    return rows


def lakes_csv(rows: list[dict[str, Any]]) -> bytes:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue().encode()


def lakes_parquet(rows: list[dict[str, Any]]) -> bytes:
    import pyarrow as pa  # only when a sample repository is made
    import pyarrow.parquet as pq

    schema = pa.schema(
        [
            ("lake_id", pa.int32()),
            ("name", pa.string()),
            ("country", pa.string()),
            ("kind", pa.string()),
            ("area_km2", pa.float64()),
            ("max_depth_m", pa.int32()),
            ("elevation_m", pa.int32()),
        ]
    )
    table = pa.Table.from_pylist(rows, schema=schema)
    sink = io.BytesIO()
    pq.write_table(table, sink, compression="snappy")
    return sink.getvalue()


def _mix(a: tuple[int, int, int], b: tuple[int, int, int], t: float) -> png.Pixel:
    t = min(1.0, max(0.0, t))
    return (round(a[0] + (b[0] - a[0]) * t), round(a[1] + (b[1] - a[1]) * t), round(a[2] + (b[2] - a[2]) * t))


def lake_picture(width: int = 96, height: int = 64) -> bytes:
    """A sky, a mountain with a snowy top and a lake with ripples."""
    horizon = height * 5 // 8

    def pixel(x: int, y: int) -> png.Pixel:
        peak = horizon - 30 + abs(x - width // 2) * 0.9
        if y >= horizon:
            ripple = 0.12 * math.sin(x * 0.5 + y * 1.3)
            return _mix((40, 110, 170), (10, 40, 90), (y - horizon) / (height - horizon) + ripple)
        if y >= peak:
            return (235, 240, 245) if y < peak + 5 else _mix((90, 100, 90), (60, 80, 60), (y - peak) / 30)
        return _mix((150, 200, 240), (230, 240, 250), y / horizon)

    return png.encode(width, height, pixel)


def waves_picture(width: int = 64, height: int = 64) -> bytes:
    """Concentric waves spreading from a drop, in blues."""

    def pixel(x: int, y: int) -> png.Pixel:
        distance = math.hypot(x - width / 2, y - height / 2)
        return _mix((20, 70, 140), (170, 220, 250), 0.5 + 0.5 * math.cos(distance * 0.7))

    return png.encode(width, height, pixel)


def branches_picture(width: int = 80, height: int = 48) -> bytes:
    """A commit graph: a main line with a branch leaving it and merging back."""

    def pixel(x: int, y: int) -> png.Pixel:
        main_y, side_y = height * 2 // 3, height // 3
        on_main = abs(y - main_y) <= 1
        on_side = 20 <= x <= 60 and abs(y - side_y) <= 1
        rising = 12 <= x <= 20 and abs(y - (main_y - (x - 12) * (main_y - side_y) / 8)) <= 1.2
        falling = 60 <= x <= 68 and abs(y - (side_y + (x - 60) * (main_y - side_y) / 8)) <= 1.2
        dots = any(math.hypot(x - cx, y - main_y) <= 3.2 for cx in (8, 40, 72)) or math.hypot(x - 40, y - side_y) <= 3.2
        if dots:
            return (250, 170, 40)
        if on_main:
            return (40, 90, 160)
        if on_side or rising or falling:
            return (60, 160, 110)
        return (248, 250, 252)

    return png.encode(width, height, pixel)


def readme(repository: str) -> bytes:
    text = f"""# Sample data of {repository}

This repository was created with sample data: a small, made-up table of lakes to try versioning on.

| path | what |
| --- | --- |
| `lakes.parquet` | the table ({ROWS} rows: {", ".join(COLUMNS)}) |
| `data/lakes.csv` | the same rows as CSV |
| `images/` | three small pictures |
| `README.md` | this page |

## Try it

```python
import lakefs, pandas

repo = lakefs.repository("{repository}")
with repo.branch("main").object("lakes.parquet").reader() as f:
    lakes = pandas.read_parquet(f)
print(lakes.sort_values("area_km2", ascending=False).head())

# Change the data on a branch of its own, commit, and merge it back.
norway = repo.branch("norway").create(source_reference="main")
norway.object("data/lakes.csv").upload(lakes[lakes.country == "Norway"].to_csv(index=False))
norway.commit(message="Only the Norwegian lakes")
print([(c.path, c.type) for c in repo.ref("main").diff(norway)])
norway.merge_into(repo.branch("main"))
```

The same objects are readable through the S3 gateway as `s3://{repository}/main/lakes.parquet`, and every
commit stays reachable by its ID, so `main~1` still shows the data as it was before the merge.
"""
    return text.encode()


@functools.cache
def _static_objects() -> tuple[SampleObject, ...]:
    rows = lake_rows()
    return (
        SampleObject("data/lakes.csv", lakes_csv(rows), "text/csv"),
        SampleObject("images/branches.png", branches_picture(), "image/png"),
        SampleObject("images/lake.png", lake_picture(), "image/png"),
        SampleObject("images/waves.png", waves_picture(), "image/png"),
        SampleObject("lakes.parquet", lakes_parquet(rows), "application/octet-stream"),
    )


def sample_objects(repository: str) -> list[SampleObject]:
    """The dataset for a repository named ``repository`` (the README mentions it), sorted by path."""
    objects = [*_static_objects(), SampleObject("README.md", readme(repository), "text/markdown")]
    return sorted(objects, key=lambda o: o.path)
