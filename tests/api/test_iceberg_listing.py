"""Listing the tables of a repository or a ref level (namespaces that hold no tables) through pyiceberg, in process:
an empty list, as DuckDB's iceberg extension needs when it browses every namespace (tests/spark/test_iceberg.py
runs DuckDB itself); a repository or ref that does not exist is still a 404."""

from __future__ import annotations

import pytest
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.exceptions import NoSuchNamespaceError
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField

from .iceberg_support import bridge, rest_catalog  # noqa: F401

pytestmark = pytest.mark.usefixtures("bridge")


@pytest.fixture
def catalog(repo: str, credentials: tuple[str, str]) -> RestCatalog:
    cat = rest_catalog(credentials)
    cat.create_namespace(("repo1", "main", "sales"))
    cat.create_table(("repo1", "main", "sales", "orders"), Schema(NestedField(1, "id", LongType(), required=False)))
    return cat


def test_a_repository_and_a_ref_list_no_tables(catalog: RestCatalog) -> None:
    assert catalog.list_tables(("repo1",)) == []
    assert catalog.list_tables(("repo1", "main")) == []
    assert catalog.list_tables(("repo1", "main", "sales")) == [("repo1", "main", "sales", "orders")]


def test_listing_a_missing_repository_or_ref_is_404(catalog: RestCatalog) -> None:
    with pytest.raises(NoSuchNamespaceError):
        catalog.list_tables(("norepo",))
    with pytest.raises(NoSuchNamespaceError):
        catalog.list_tables(("repo1", "nobranch"))
