import bisect

from hypothesis import given, settings
from hypothesis import strategies as st

from chalicelib.graveler.reads.listing import overlay, paginate, prefix_end
from chalicelib.graveler.records import Entry, EntryRecord, ListedObject, StagedEntry


def _entry(tag: str) -> Entry:
    return Entry(f"s3://b/{tag}", 1, tag, 0)


def _view(keys):
    keys = sorted(keys)
    calls = []

    def view(start):
        calls.append(start)
        return (ListedObject(k, _entry(k)) for k in keys[bisect.bisect_left(keys, start) :])

    view.calls = calls
    return view


def _cp(key):
    return ListedObject(key, None)


def test_overlay_replaces_hides_and_adds():
    committed = iter([EntryRecord("a", _entry("a")), EntryRecord("b", _entry("b")), EntryRecord("d", _entry("d"))])
    staged = iter(
        [StagedEntry("b", _entry("b2")), StagedEntry("c", _entry("c")), StagedEntry("d", None), StagedEntry("e", None)]
    )
    got = [(r.key, r.entry.etag) for r in overlay(staged, committed)]
    assert got == [("a", "a"), ("b", "b2"), ("c", "c")]


def test_delimiter_folds_and_seeks_past_common_prefixes():
    keys = ["a.txt", "dir/x", "dir/y", "dir/z/1", "dir2/q", "e"]
    view = _view(keys)
    page = paginate(view, _cp, delimiter="/")
    assert [(o.key, o.entry is None) for o in page.results] == [
        ("a.txt", False),
        ("dir/", True),
        ("dir2/", True),
        ("e", False),
    ]
    assert "dir0" in view.calls  # restarted just past "dir/" instead of reading dir/y and dir/z/1


def test_prefix_delimiter_and_after():
    keys = ["dir/x", "dir/y", "dir/z/1", "dir/z/2", "other"]
    page = paginate(_view(keys), _cp, prefix="dir/", delimiter="/")
    assert [o.key for o in page.results] == ["dir/x", "dir/y", "dir/z/"]
    page = paginate(_view(keys), _cp, prefix="dir/", delimiter="/", after="dir/z/")
    assert page.results == [] and not page.has_more
    page = paginate(_view(keys), _cp, prefix="dir/", after="dir/y")
    assert [o.key for o in page.results] == ["dir/z/1", "dir/z/2"]


def test_prefix_end():
    assert prefix_end("dir/") == "dir0"
    assert all(not k.startswith("ab") for k in ["ac"]) and prefix_end("ab") == "ac"


@settings(max_examples=60, deadline=None)
@given(
    keys=st.sets(st.text(alphabet="ab/", min_size=1, max_size=5), max_size=40),
    prefix=st.sampled_from(["", "a", "a/", "b/"]),
    delimiter=st.sampled_from(["", "/"]),
    amount=st.integers(min_value=1, max_value=7),
)
def test_paging_through_everything_matches_a_model(keys, prefix, delimiter, amount):
    expected = []
    for key in sorted(keys):
        if not key.startswith(prefix):
            continue
        cut = key.find(delimiter, len(prefix)) if delimiter else -1
        item = key if cut < 0 else key[: cut + 1]
        if not expected or expected[-1] != item:
            expected.append(item)
    got, after = [], ""
    while True:
        page = paginate(_view(keys), _cp, prefix=prefix, delimiter=delimiter, after=after, amount=amount)
        got += [o.key for o in page.results]
        assert len(page.results) <= amount
        if not page.has_more:
            assert page.next_offset == ""
            break
        assert page.next_offset == page.results[-1].key
        after = page.next_offset
    assert got == expected
