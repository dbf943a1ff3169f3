"""A write refused with TooManyTries (the branch kept moving while it was written) is not applied: it is not
visible afterwards, and no later commit publishes it.

Seen before: an upload answered 429 "too many tries" was visible afterwards. The write had landed in tokens that
commits sealed before its re-check; the next commit of those tokens published it.
"""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.graveler import errors
from chalicelib.graveler.branches import branch_moves
from chalicelib.graveler.records import BranchID, RepositoryID
from chalicelib.graveler.writes.batch_upload import NewObject

from .support import put_files, rebuilt


class SealingOnRead:
    """A RefStore whose every branch read first seals the branch, as a branch that never stops moving does: each
    write's re-check finds its token sealed."""

    def __init__(self, inner: Any, staging: Any) -> None:
        self._inner = inner
        self._staging = staging
        self.sealing = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def get_branch(self, repo_id: RepositoryID, branch_id: BranchID) -> Any:
        if self.sealing:
            branch_moves.seal(self._inner, self._staging, repo_id, branch_id)
        return self._inner.get_branch(repo_id, branch_id)


@pytest.fixture
def moving(g: Any, repo: Any) -> SealingOnRead:
    return SealingOnRead(g.ports.refs, g.ports.staging)


def _invisible(g: Any, path: str) -> None:
    with pytest.raises(errors.ObjectNotFound):
        g.objects.stat_object("repo", "main", path)
    assert path not in {str(d.key) for d in g.history.diff_uncommitted("repo", "main").results}


@pytest.mark.parametrize("batched", [False, True], ids=["upload", "batch upload"])
def test_a_write_refused_after_the_retry_limit_is_not_applied(g: Any, moving: SealingOnRead, batched: bool) -> None:
    g = rebuilt(g, refs=moving)
    put_files(g, "main", kept=b"1")
    moving.sealing = True
    with pytest.raises(errors.TooManyTries):
        if batched:
            g.objects.upload_objects("repo", "main", [NewObject("refused", b"x"), NewObject("refused2", b"y")])
        else:
            g.objects.upload_object("repo", "main", "refused", b"x")
    moving.sealing = False
    _invisible(g, "refused")
    _invisible(g, "refused2")
    made = g.commits.commit("repo", "main", "u", "after the refusal")
    assert [str(o.key) for o in g.objects.list_objects("repo", made.id).results] == ["kept"]


def test_a_refused_delete_is_not_applied(g: Any, moving: SealingOnRead) -> None:
    g = rebuilt(g, refs=moving)
    put_files(g, "main", gone=b"1")
    g.commits.commit("repo", "main", "u", "first")
    moving.sealing = True
    with pytest.raises(errors.TooManyTries):
        g.objects.delete_object("repo", "main", "gone")
    moving.sealing = False
    assert g.objects.stat_object("repo", "main", "gone").size == 1
    assert g.history.diff_uncommitted("repo", "main").results == []


def test_a_refused_overwrite_leaves_the_earlier_value(g: Any, moving: SealingOnRead) -> None:
    g = rebuilt(g, refs=moving)
    put_files(g, "main", k=b"old")
    moving.sealing = True
    with pytest.raises(errors.TooManyTries):
        g.objects.upload_object("repo", "main", "k", b"new!")
    moving.sealing = False
    assert g.objects.stat_object("repo", "main", "k").size == 3
