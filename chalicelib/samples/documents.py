"""The sample dataset's two Markdown documents: the repository's quickstart ``README.md`` and
``data/lakes.source.md``, the note on where the table comes from.

The README is a newcomer's first page (the web UI renders it, table and code included), so it says what is in
the repository and gives code that runs as pasted against it: tests/unit/samples runs its Python block through
the official ``lakefs`` client.
"""

from __future__ import annotations

from .table import COLUMNS, ROWS


def readme(repository: str, pictures: int) -> bytes:
    text = f"""# Quickstart: {repository}

This repository was created with sample data: a made-up survey of {ROWS:,} lakes, a note on where it comes
from and {pictures} pictures, committed on `main` as "Add sample data". Try versioning on it: branch, change,
commit, compare and merge, as in git, without copying a byte.

| path | what |
| --- | --- |
| `lakes.parquet` | the table: {", ".join(f"`{name}`" for name in COLUMNS)} |
| `data/lakes.source.md` | where the table comes from, column by column |
| `images/` | one lake through the twelve months, depth maps of the twelve deepest lakes, four charts and a GIF |
| `README.md` | this page |

## Try it

With the `lakefs` Python client (`pip install lakefs pandas pyarrow`), the endpoint and the key pair in
`~/.lakectl.yaml` or in `LAKECTL_SERVER_ENDPOINT_URL`, `LAKECTL_CREDENTIALS_ACCESS_KEY_ID` and
`LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY`:

```python
import io

import lakefs
import pandas

repo = lakefs.repository("{repository}")
with repo.branch("main").object("lakes.parquet").reader(mode="rb") as f:
    lakes = pandas.read_parquet(io.BytesIO(f.read()))
print(lakes.sort_values("max_depth_m", ascending=False).head())

# Change the data on a branch of its own, commit, look at the difference and merge it back.
deep = repo.branch("deep-lakes").create(source_reference="main", exist_ok=True)
deep.object("lakes.parquet").upload(lakes[lakes.max_depth_m > 100].to_parquet(index=False), mode="wb")
deep.commit(message="Keep the lakes deeper than 100 m")
print([(change.path, change.type) for change in repo.ref("main").diff(deep)])
deep.merge_into(repo.branch("main"))
```

The same objects are readable through the S3 gateway, as `s3://{repository}/main/lakes.parquet`. Every
commit stays reachable by its ID, so `main~1` still holds the table as it was before the merge.
"""
    return text.encode()


def source_note() -> bytes:
    text = f"""# Where `lakes.parquet` comes from

The table is made up. No lake in it exists: Lakelet generates every row from a hash of its number, so the file
is the same, byte for byte, on every machine (with the same pyarrow), and nothing is downloaded or shipped.

It has {ROWS:,} rows, one per lake, in `lake_id` order:

| column | type | what |
| --- | --- | --- |
| `lake_id` | int32 | 1 to {ROWS:,} |
| `name` | string | three syllables after "Lake"; names repeat, as they do in real atlases |
| `country` | string | one of fourteen countries with many lakes |
| `kind` | string | `freshwater` (half of them), `glacial`, `reservoir` or `saline` |
| `latitude`, `longitude` | float64 | degrees, five decimals, inside a rough box around the country |
| `area_km2` | float64 | 0.1 to 1,000, spread evenly over the orders of magnitude |
| `max_depth_m` | float64 | metres; deep lakes are rare, and big lakes tend to be deeper |
| `elevation_m` | int32 | metres above sea level, -30 to 4,769 |
| `surveyed` | date32 | the day of the survey, 1950 to 2025 |

The pictures under `images/` are drawn from the same table: `depth-lake-<lake_id>.png` are the twelve deepest
lakes (a contour line every tenth of the depth) and the `chart-*.png` are histograms of its columns.
"""
    return text.encode()
