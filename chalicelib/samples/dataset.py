"""The sample dataset as a list of objects, laid out as lakeFS's own sample repository is.

lakeFS's quickstart repository (``include_samples``) holds ``README.md``, ``lakes.parquet`` (over 512 KiB),
``data/lakes.source.md`` as the only object under ``data/``, and ``images/`` with 29 pictures (PNGs and one
GIF), over 1 MiB in all; tools test against that layout (lakefs-spec's suite lists ``images/``, sizes the
table and the whole branch). Lakelet generates its own content in that shape: nothing here comes from lakeFS.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from .documents import readme, source_note
from .pictures import pictures
from .table import lake_rows, lakes_parquet

SAMPLE_COMMIT_MESSAGE = "Add sample data"  # lakeFS's message for the same commit


@dataclass(frozen=True, slots=True)
class SampleObject:
    """One object of the dataset: where it goes in the repository, its bytes and its content type."""

    path: str
    data: bytes
    content_type: str


_CONTENT_TYPES = {".png": "image/png", ".gif": "image/gif"}


@functools.cache
def _static_objects() -> tuple[SampleObject, ...]:
    rows = lake_rows()
    images = [
        SampleObject(f"images/{name}", data, _CONTENT_TYPES[name[name.rindex(".") :]])
        for name, data in pictures(rows).items()
    ]
    return (
        SampleObject("data/lakes.source.md", source_note(), "text/markdown"),
        *images,
        SampleObject("lakes.parquet", lakes_parquet(rows), "application/octet-stream"),
    )


def sample_objects(repository: str) -> list[SampleObject]:
    """The dataset for a repository named ``repository`` (the README mentions it), sorted by path."""
    static = _static_objects()
    pictures_count = sum(o.path.startswith("images/") for o in static)
    objects = [*static, SampleObject("README.md", readme(repository, pictures_count), "text/markdown")]
    return sorted(objects, key=lambda o: o.path)
