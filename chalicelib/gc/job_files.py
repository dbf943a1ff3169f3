"""The files the prepare step writes for the job: the active commits as CSV, staged addresses as Parquet."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable

from chalicelib.graveler.records import Commit

COMMITS_HEADER = ("commit_id", "meta_range_id", "creation_date")
ADDRESS_COLUMN = "address"


def commits_csv(commits: Iterable[Commit]) -> bytes:
    """One line per commit after a header; an empty metarange id is an empty field."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COMMITS_HEADER)
    for commit in commits:
        writer.writerow((commit.id, commit.meta_range_id, int(commit.creation_date)))
    return out.getvalue().encode()


def read_commits_csv(data: bytes) -> list[tuple[str, str, int]]:
    rows = list(csv.reader(io.StringIO(data.decode())))
    if not rows or tuple(rows[0]) != COMMITS_HEADER:
        raise ValueError("not a commits.csv: unexpected header")
    return [(row[0], row[1], int(row[2])) for row in rows[1:]]


# pyarrow is imported by the two functions that use it: every API request imports this module (through the
# GC routes), few write or read an address list.


def addresses_parquet(addresses: list[str]) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([pa.field(ADDRESS_COLUMN, pa.string(), nullable=False)])
    sink = pa.BufferOutputStream()
    pq.write_table(pa.Table.from_arrays([pa.array(addresses, pa.string())], schema=schema), sink, compression="snappy")
    return bytes(sink.getvalue().to_pybytes())


def read_addresses_parquet(data: bytes) -> list[str]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    return [str(a) for a in pq.read_table(pa.BufferReader(data), columns=[ADDRESS_COLUMN]).column(0).to_pylist()]
