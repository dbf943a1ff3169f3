"""restore_checks.History: parents present, no cycle, over histories deep enough that recursion would fail."""

from __future__ import annotations

import pytest

from chalicelib.graveler import errors
from chalicelib.graveler.dumps.restore_checks import History
from chalicelib.graveler.records import Commit, CommitID, MetaRangeID


def commit(n: int, *parents: int) -> Commit:
    return Commit(CommitID(f"c{n}"), "u", "m", 0.0, MetaRangeID(""), {}, tuple(CommitID(f"c{p}") for p in parents), 1)


def test_a_deep_history_with_merges_holds() -> None:
    history = History()
    history.add([commit(0), *(commit(n, n - 1) for n in range(1, 50_000)), commit(50_000, 49_999, 10)])
    history.check()
    assert "c50000" in history and "c50001" not in history


@pytest.mark.parametrize(
    ("commits", "said"),
    [
        ([commit(0), commit(1, 2)], "lacks"),
        ([commit(0, 3), *(commit(n, n - 1) for n in range(1, 4))], "cycle"),
        ([commit(0, 0)], "cycle"),
    ],
)
def test_missing_parents_and_cycles_are_refused(commits: list[Commit], said: str) -> None:
    history = History()
    history.add(commits)
    with pytest.raises(errors.Invalid, match=said):
        history.check()


def test_a_commit_twice_is_refused() -> None:
    with pytest.raises(errors.Invalid, match="twice"):
        History().add([commit(0), commit(0)])


def test_missing_committed_data_is_permanent_in_every_surface() -> None:
    from chalicelib.api.errors import headers_for, iceberg_status_for, status_for
    from chalicelib.s3proxy.errors import code_for

    missing = errors.DataMissing("metarange missing at s3://b/ns/_lakefs/x")
    assert (status_for(missing), iceberg_status_for(missing), code_for(missing)) == (500, 500, "InternalError")
    assert "Retry-After" not in headers_for(missing)
    assert "Retry-After" in headers_for(errors.StorageError("throttled"))  # what stays retryable
