"""Listing more objects than one page holds, page by page, staged and committed, through the official client."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import lakefs
import pytest
from lakefs import CommonPrefix, ObjectInfo
from lakefs.client import Client

pytestmark = pytest.mark.e2e

COUNT = 1050
MAX_PAGE = 1000
# Unpadded numbers, so byte order ("many/10" < "many/2") differs from the order they were written in.
KEYS = [f"many/{i}" for i in range(COUNT)]


def _pages(client: Client, repo_id: str, ref: str, prefix: str, amount: int) -> list[list[str]]:
    """Walks a listing with the SDK, one request a page, following next_offset as the lakeFS client does."""
    pages: list[list[str]] = []
    after = ""
    while True:
        page = client.sdk_client.objects_api.list_objects(repo_id, ref, prefix=prefix, after=after, amount=amount)
        paths = [result.path for result in page.results]
        pages.append(paths)
        if not page.pagination.has_more:
            assert page.pagination.next_offset in ("", None)
            return pages
        assert page.pagination.next_offset == paths[-1]
        after = page.pagination.next_offset
        assert len(pages) <= COUNT, "listing does not terminate"


def _assert_listed_once_in_order(client: Client, repo: lakefs.Repository, ref: str, page_size: int | None) -> None:
    expected = sorted(KEYS, key=lambda key: key.encode("utf-8"))
    pages = _pages(client, repo.id, ref, "many/", MAX_PAGE)
    assert [len(page) for page in pages] == [MAX_PAGE, COUNT - MAX_PAGE]
    assert [path for page in pages for path in page] == expected
    # The client's own generator follows next_offset too; page_size=None leaves the page size to the server.
    extra = {} if page_size is None else {"amount": page_size}
    listed = list(repo.ref(ref).objects(prefix="many/", **extra))
    assert all(isinstance(entry, ObjectInfo) for entry in listed)
    assert [entry.path for entry in listed] == expected


def test_more_than_a_thousand_objects_list_page_by_page(repo: lakefs.Repository, client: Client) -> None:
    main = repo.branch("main")

    def upload(key: str) -> None:
        # pre_sign=False skips the client's per-object GET /repositories probe; the upload itself is the same.
        main.object(key).upload(f"content of {key}", pre_sign=False)

    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(upload, KEYS))
    main.object("other/x").upload("not under many/")

    _assert_listed_once_in_order(client, repo, "main", MAX_PAGE)  # from staging
    main.commit(message=f"{COUNT} objects")
    _assert_listed_once_in_order(client, repo, "main", None)  # from the committed ranges
    # Pages of 100, the server default (lakeFS's) that the generator above used: 10 full pages and the rest.
    assert [len(page) for page in _pages(client, repo.id, "main", "many/", 100)] == [100] * 10 + [50]

    top = list(main.objects(delimiter="/"))
    assert [(type(entry), entry.path) for entry in top] == [(CommonPrefix, "many/"), (CommonPrefix, "other/")]
    with main.object("many/1049").reader(mode="r") as reader:
        assert reader.read() == "content of many/1049"
