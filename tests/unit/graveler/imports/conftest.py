"""An engine on in-memory twins with its import use case over them; sources are objects put into the same memory block
store at s3://source/..., outside the repository's namespace (s3://bucket/repo)."""

from __future__ import annotations

import pytest

from chalicelib.adapters.import_records import MemoryImportRecords
from chalicelib.adapters.memory_source import MemorySourceLister
from chalicelib.graveler.engine import build_engine
from chalicelib.graveler.imports import ImportParts

SETTING = "LAKELET_IMPORT_ALLOWED_LOCATIONS"


@pytest.fixture
def lister(g):
    return MemorySourceLister(g.ports.blocks, page_size=3)


@pytest.fixture
def records():
    return MemoryImportRecords()


@pytest.fixture
def importer(g, repo, lister, records):
    """The import use case of an engine over g's parts (and clock) with this lister and these records."""
    return build_engine(g.ports, ImportParts(lister, records, ("s3://source/allowed/",), SETTING)).imports


def put_source(g, **files: bytes) -> None:
    """Source objects under s3://source/allowed/; "__" in a name is "/"."""
    for name, data in files.items():
        g.ports.blocks.put("s3://source/allowed/" + name.replace("__", "/"), data)
