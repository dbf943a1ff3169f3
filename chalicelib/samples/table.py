"""The sample table: a made-up survey of lakes, written as ``lakes.parquet``.

Every value comes from a hash of the row number, so the bytes are the same on every run and every machine (the
Parquet file also depends on the pinned pyarrow version, which writes its name into the file). The table is big
enough to be worth a columnar format (lakeFS's own sample ``lakes.parquet`` is over 512 KiB, and clients' tests
check that size), and coordinates, areas and survey dates carry enough entropy that compression keeps it so.
"""

from __future__ import annotations

import datetime
import functools
import hashlib
import io
from typing import Any

ROWS = 14_000
_SYLLABLES = (
    "ar",
    "bel",
    "cor",
    "dun",
    "el",
    "fen",
    "gal",
    "hal",
    "is",
    "kar",
    "lun",
    "mir",
    "nor",
    "os",
    "ran",
    "sil",
    "tav",
    "ul",
    "ven",
    "wyn",
)
# Each country with a rough latitude and longitude box, so that coordinates at least land in the right place.
_COUNTRIES: tuple[tuple[str, float, float, float, float], ...] = (
    ("Argentina", -55.0, -22.0, -73.0, -54.0),
    ("Canada", 42.0, 70.0, -140.0, -55.0),
    ("Chile", -55.0, -18.0, -75.0, -67.0),
    ("Finland", 60.0, 70.0, 21.0, 31.0),
    ("Iceland", 63.4, 66.5, -24.0, -13.5),
    ("Kenya", -4.7, 5.0, 34.0, 41.9),
    ("Mongolia", 41.6, 52.0, 87.7, 119.9),
    ("New Zealand", -46.6, -34.4, 166.5, 178.5),
    ("Norway", 58.0, 71.0, 5.0, 31.0),
    ("Peru", -18.0, 0.0, -81.0, -68.7),
    ("Scotland", 54.6, 58.7, -7.5, -1.8),
    ("Switzerland", 45.8, 47.8, 5.9, 10.5),
    ("Tanzania", -11.7, -1.0, 29.3, 40.4),
    ("Uganda", -1.5, 4.2, 29.6, 35.0),
)
KINDS = ("freshwater", "glacial", "reservoir", "saline")
_KIND_WEIGHTS = (0, 0, 0, 0, 0, 1, 1, 2, 2, 3)  # indices into KINDS: half of all lakes are plain freshwater
COLUMNS = (
    "lake_id",
    "name",
    "country",
    "kind",
    "latitude",
    "longitude",
    "area_km2",
    "max_depth_m",
    "elevation_m",
    "surveyed",
)
_FIRST_SURVEY = datetime.date(1950, 1, 1)
_SURVEY_DAYS = (datetime.date(2025, 12, 31) - _FIRST_SURVEY).days
_UNIT = 2.0**32


def _numbers(row: int) -> list[int]:
    digest = hashlib.sha512(f"lakelet-sample-lake-{row}".encode()).digest()
    return [int.from_bytes(digest[i : i + 4], "big") for i in range(0, 64, 4)]


def lake_row(row: int) -> dict[str, Any]:
    """Row ``row`` (0-based) of the table."""
    n = _numbers(row)
    country, lat_low, lat_high, lon_low, lon_high = _COUNTRIES[n[3] % len(_COUNTRIES)]
    area = 10 ** (n[5] / _UNIT * 4.0 - 1.0)  # 0.1 to 1,000 km2: over four orders of magnitude, as real lakes
    # Deeper lakes are rarer; bigger ones tend to be deeper.
    depth = 1.0 + (n[6] / _UNIT) ** 2 * 400.0 * (1.0 + area**0.25 / 6.0)
    return {
        "lake_id": row + 1,
        "name": "Lake " + (_SYLLABLES[n[0] % 20] + _SYLLABLES[n[1] % 20] + _SYLLABLES[n[2] % 20]).capitalize(),
        "country": country,
        "kind": KINDS[_KIND_WEIGHTS[n[4] % len(_KIND_WEIGHTS)]],
        "latitude": round(lat_low + n[7] / _UNIT * (lat_high - lat_low), 5),
        "longitude": round(lon_low + n[8] / _UNIT * (lon_high - lon_low), 5),
        "area_km2": round(area, 3),
        "max_depth_m": round(depth, 1),
        "elevation_m": n[9] % 4800 - 30,
        "surveyed": _FIRST_SURVEY + datetime.timedelta(days=n[10] % _SURVEY_DAYS),
    }


@functools.cache
def lake_rows() -> tuple[dict[str, Any], ...]:
    """The table's rows, in lake_id order."""
    return tuple(lake_row(row) for row in range(ROWS))


def lakes_parquet(rows: tuple[dict[str, Any], ...]) -> bytes:
    import pyarrow as pa  # only when a sample repository is made
    import pyarrow.parquet as pq

    types = {
        "lake_id": pa.int32(),
        "name": pa.string(),
        "country": pa.string(),
        "kind": pa.string(),
        "latitude": pa.float64(),
        "longitude": pa.float64(),
        "area_km2": pa.float64(),
        "max_depth_m": pa.float64(),
        "elevation_m": pa.int32(),
        "surveyed": pa.date32(),
    }
    # Column by column: several times faster than from_pylist on the row dicts.
    table = pa.table({name: pa.array([row[name] for row in rows], type=types[name]) for name in COLUMNS})
    sink = io.BytesIO()
    pq.write_table(table, sink, compression="snappy")
    return sink.getvalue()
