"""Object listings read committed rows column by column (ListedRows): the same pages as the row-by-row paginator,
without a Python object per row."""

import gc

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chalicelib.adapters.memory import MemoryBlockStore
from chalicelib.graveler.committed import CommittedManager, RangeParams
from chalicelib.graveler.reads.listing import ListedRows, overlay, paginate, paginate_objects
from chalicelib.graveler.records import Entry, EntryRecord, Key, ListedObject, StagedEntry

NS = "s3://bucket/repo"
# Ranges of a few rows each, so that pages, seeks and staged changes cross range boundaries.
SMALL = RangeParams(max_range_bytes=1 << 30, min_range_bytes=0, raggedness=3)


def _entry(key: str, version: int = 0, metadata: dict[str, str] | None = None) -> Entry:
    return Entry(
        f"{NS}/data/{key}-{version}",
        len(key) + version,
        f"etag-{key}-{version}",
        1_700_000_000 + version,
        "text/plain",
        metadata or {},
    )


def _committed(keys: list[str]) -> tuple[CommittedManager, str]:
    manager = CommittedManager(MemoryBlockStore(), SMALL)
    records = [EntryRecord(Key(k), _entry(k, metadata={"n": k} if len(k) % 2 else None)) for k in sorted(keys)]
    return manager, manager.write_metarange(NS, records)


def _staged_view(changes: list[StagedEntry]):
    ordered = sorted(changes, key=lambda c: c.key)
    return lambda start: iter([c for c in ordered if c.key >= start])


def _old_page(manager, metarange, changes, prefix, delimiter, after, amount):
    """The row-by-row paginator over the overlay, as engine.objects.list_objects listed before."""
    staged = _staged_view(changes)
    return paginate(
        lambda start: (
            ListedObject(r.key, r.entry) for r in overlay(staged(start), manager.iterate(NS, metarange, start))
        ),
        lambda common: ListedObject(Key(common), None),
        prefix,
        delimiter,
        after,
        amount,
    )


KEYS = st.sets(st.text(alphabet="ab/c", min_size=1, max_size=5), max_size=40)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    keys=KEYS,
    staged=st.dictionaries(st.text(alphabet="ab/c", min_size=1, max_size=5), st.booleans(), max_size=12),
    prefix=st.sampled_from(["", "a", "a/", "b/", "ab", "c/"]),
    delimiter=st.sampled_from(["", "/", "b"]),
    after=st.sampled_from(["", "a", "a/", "a/b", "b", "bb/", "c"]),
    amount=st.integers(min_value=1, max_value=9),
)
def test_pages_match_the_row_by_row_paginator(keys, staged, prefix, delimiter, after, amount):
    manager, metarange = _committed(sorted(keys))
    changes = [StagedEntry(Key(k), _entry(k, 7) if present else None) for k, present in staged.items()]
    expected = _old_page(manager, metarange, changes, prefix, delimiter, after, amount)
    got = paginate_objects(
        lambda start: manager.blocks(NS, metarange, start), _staged_view(changes), prefix, delimiter, after, amount
    )
    assert list(got.results) == list(expected.results)
    assert (got.has_more, got.next_offset) == (expected.has_more, expected.next_offset)


def test_paging_through_a_tree_of_many_ranges_with_staged_changes():
    keys = [f"d{i % 7}/f{i:04d}" for i in range(700)]
    manager, metarange = _committed(keys)
    assert len(manager.ranges(NS, metarange)) > 50
    changes = [StagedEntry(Key(k), None) for k in keys[::5]] + [
        StagedEntry(Key(f"d3/f{i:04d}x"), _entry("new", i)) for i in range(0, 700, 9)
    ]
    for delimiter, prefix in (("", ""), ("", "d3/"), ("/", ""), ("/", "d3/")):
        listed, after = [], ""
        while True:
            page = paginate_objects(
                lambda start: manager.blocks(NS, metarange, start), _staged_view(changes), prefix, delimiter, after, 37
            )
            old = _old_page(manager, metarange, changes, prefix, delimiter, after, 37)
            assert page.results == old.results and page.next_offset == old.next_offset
            listed += [o.key for o in page.results]
            if not page.has_more:
                break
            after = page.next_offset
        assert listed == sorted(set(listed)) and listed


def test_listed_rows_read_as_a_sequence_of_listed_objects():
    manager, metarange = _committed(["a", "b/1", "b/2", "cc"])
    page = paginate_objects(
        lambda start: manager.blocks(NS, metarange, start),
        _staged_view([StagedEntry(Key("ab"), _entry("ab", 1, {"k": "v"}))]),
        delimiter="/",
    )
    rows = page.results
    assert isinstance(rows, ListedRows) and len(rows) == 4
    assert rows[0] == ListedObject(Key("a"), _entry("a", metadata={"n": "a"}))
    assert rows[1] == ListedObject(Key("ab"), _entry("ab", 1, {"k": "v"}))
    assert rows[2] == ListedObject(Key("b/"), None) and rows[-2] == rows[2]
    assert rows[1:3] == [rows[1], rows[2]] and rows == list(rows) and rows != list(rows)[:3]
    with pytest.raises(IndexError):
        rows[4]
    # Every read builds a fresh metadata map: changing one reaches neither the page nor the cached range.
    rows[0].entry.user_metadata["n"] = "changed"
    assert rows[0].entry.user_metadata == {"n": "a"}
    assert manager.get(NS, metarange, Key("a")).user_metadata == {"n": "a"}


def test_a_page_of_committed_rows_holds_no_object_per_row(g, repo):
    for i in range(1000):
        g.objects.link_object("repo", "main", f"p/{i:04d}", Entry(f"s3://bucket/repo/data/{i}", 1, f"{i:032x}", 0))
    g.commits.commit("repo", "main", "me", "seed")
    gc.collect()

    def alive() -> int:
        return sum(1 for o in gc.get_objects() if isinstance(o, Entry | ListedObject))

    before = alive()
    page = g.objects.list_objects("repo", "main", amount=1000)
    assert len(page.results) == 1000
    # Row by row, the page held 1,000 ListedObjects and 1,000 Entries; as columns it holds a few lists.
    assert alive() - before < 10
    assert page.results[999].entry == Entry("s3://bucket/repo/data/999", 1, f"{999:032x}", 0)
