"""Upload with If-Match: a conditional overwrite whose check and write are one conditional staging write, so two
uploads that read the same object never both succeed."""

from __future__ import annotations

import hashlib
import threading
from typing import Any

import pytest

from chalicelib.graveler import errors
from chalicelib.graveler.branches import branch_moves
from chalicelib.graveler.records import BranchID, Key, RepositoryID
from chalicelib.graveler.writes.preconditions import etag_matches

from .support import put_files, rebuilt


def md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


class BarrierBlocks:
    """A BlockStore whose puts wait for each other: both uploads have checked their If-Match before either
    stages, the window a check-then-write would lose."""

    def __init__(self, inner: Any, parties: int) -> None:
        self._inner = inner
        self.barrier = threading.Barrier(parties, timeout=10)
        self.deleted: list[str] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def put(self, address: str, data: bytes) -> Any:
        self.barrier.wait()
        return self._inner.put(address, data)

    def delete(self, address: str) -> None:
        self.deleted.append(address)
        self._inner.delete(address)


def race(g: Any, path: str, if_match: str) -> list[object]:
    """Two uploads of ``path`` with the same If-Match, in two threads at once: each one's entry or error."""
    results: list[object] = [None, None]

    def upload(n: int) -> None:
        try:
            results[n] = g.objects.upload_object("repo", "main", path, f"writer {n}".encode(), if_match=if_match)
        except errors.GravelerError as e:
            results[n] = e

    threads = [threading.Thread(target=upload, args=(n,)) for n in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    return results


@pytest.mark.parametrize("where", ["staged", "committed", "sealed"])
def test_two_uploads_with_the_same_if_match_one_wins(g: Any, repo: Any, where: str) -> None:
    put_files(g, "main", k=b"v1")
    if where == "committed":
        g.commits.commit("repo", "main", "u", "v1")
    elif where == "sealed":
        branch_moves.seal(g.ports.refs, g.ports.staging, RepositoryID("repo"), BranchID("main"))
    blocks = BarrierBlocks(g.ports.blocks, 2)
    g = rebuilt(g, blocks=blocks)
    results = race(g, "k", f'"{md5(b"v1")}"')
    won = [r for r in results if not isinstance(r, errors.GravelerError)]
    lost = [r for r in results if isinstance(r, errors.GravelerError)]
    assert len(won) == 1 and len(lost) == 1, results
    assert isinstance(lost[0], errors.PreconditionFailed)
    entry = g.objects.stat_object("repo", "main", "k")
    assert entry == won[0]
    assert g.objects.read_object("repo", entry) in (b"writer 0", b"writer 1")
    # The loser's bytes were written before its write was refused: they are deleted again.
    assert len(blocks.deleted) == 1 and blocks.deleted[0] != entry.physical_address


def test_if_match_replaces_only_the_named_version(g: Any, repo: Any) -> None:
    put_files(g, "main", k=b"v1")
    with pytest.raises(errors.PreconditionFailed):
        g.objects.upload_object("repo", "main", "k", b"v2", if_match=f'"{md5(b"other")}"')
    with pytest.raises(errors.PreconditionFailed):
        g.objects.upload_object("repo", "main", "missing", b"v2", if_match="*")
    assert g.objects.read_object("repo", g.objects.stat_object("repo", "main", "k")) == b"v1"
    g.objects.upload_object("repo", "main", "k", b"v2", if_match=md5(b"v1"))  # unquoted, as the SDK's checksum
    g.objects.upload_object("repo", "main", "k", b"v3", if_match=f'W/"x", "{md5(b"v2")}"')
    g.objects.upload_object("repo", "main", "k", b"v4", if_match="*")
    assert g.objects.read_object("repo", g.objects.stat_object("repo", "main", "k")) == b"v4"
    # A deleted object (a tombstone over the committed one) is missing: If-Match fails.
    g.commits.commit("repo", "main", "u", "v4")
    g.objects.delete_object("repo", "main", "k")
    with pytest.raises(errors.PreconditionFailed):
        g.objects.upload_object("repo", "main", "k", b"v5", if_match="*")
    with pytest.raises(errors.Invalid):
        g.objects.upload_object("repo", "main", "k", b"v5", if_match="*", if_absent=True)


def test_a_seal_between_the_write_and_its_recheck_keeps_the_upload(g: Any, repo: Any) -> None:
    """The branch's re-check finds the token sealed: the change is written again to the new token."""
    put_files(g, "main", k=b"v1")
    inner = g.ports.refs
    reads = {"n": 0}

    class SealOnce:
        def __getattr__(self, name: str) -> Any:
            return getattr(inner, name)

        def get_branch(self, repo_id: RepositoryID, branch_id: BranchID) -> Any:
            reads["n"] += 1
            if reads["n"] == 2:  # the first read is the upload's own; the second its re-check after the write
                branch_moves.seal(inner, g.ports.staging, repo_id, branch_id)
            return inner.get_branch(repo_id, branch_id)

    entry = rebuilt(g, refs=SealOnce()).objects.upload_object("repo", "main", "k", b"v2", if_match=md5(b"v1"))
    branch = inner.get_branch(RepositoryID("repo"), BranchID("main"))
    assert g.ports.staging.get(branch.staging_token, Key("k")).value == entry
    assert g.objects.stat_object("repo", "main", "k") == entry
    made = g.commits.commit("repo", "main", "u", "v2")
    assert g.objects.stat_object("repo", made.id, "k") == entry


def test_etag_matches() -> None:
    assert etag_matches("*", "abc") and etag_matches('"abc"', "abc") and etag_matches("abc", "abc")
    assert etag_matches('W/"abc"', "abc") and etag_matches('"x", "abc"', "abc")
    assert not etag_matches('"abd"', "abc") and not etag_matches("", "abc") and not etag_matches('"', "abc")


@pytest.mark.parametrize("before", ["nothing", "deleted"])
def test_two_exclusive_creates_one_wins(g: Any, repo: Any, before: str) -> None:
    """If-None-Match: * (if_absent): both uploads find the path empty before either stages; the conditional
    staging write lets one through (also over a tombstone: a deleted object's row in the token)."""
    if before == "deleted":
        put_files(g, "main", k=b"old")
        g.commits.commit("repo", "main", "u", "old")
        g.objects.delete_object("repo", "main", "k")
    blocks = BarrierBlocks(g.ports.blocks, 2)
    g = rebuilt(g, blocks=blocks)
    results: list[object] = [None, None]

    def upload(n: int) -> None:
        try:
            results[n] = g.objects.upload_object("repo", "main", "k", f"writer {n}".encode(), if_absent=True)
        except errors.GravelerError as e:
            results[n] = e

    threads = [threading.Thread(target=upload, args=(n,)) for n in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    won = [r for r in results if not isinstance(r, errors.GravelerError)]
    lost = [r for r in results if isinstance(r, errors.GravelerError)]
    assert len(won) == 1 and len(lost) == 1 and isinstance(lost[0], errors.PreconditionFailed), results
    assert g.objects.stat_object("repo", "main", "k") == won[0]
    assert len(blocks.deleted) == 1
    with pytest.raises(errors.PreconditionFailed):
        g.objects.upload_object("repo", "main", "k", b"third", if_absent=True)


@pytest.mark.parametrize("where", ["staged", "committed"])
def test_delete_if_match_hides_only_the_object_it_names(g: Any, repo: Any, where: str) -> None:
    put_files(g, "main", k=b"v1")
    if where == "committed":
        g.commits.commit("repo", "main", "u", "v1")
    with pytest.raises(errors.PreconditionFailed):
        g.staged.deletes.delete_object_if("repo", "main", "k", md5(b"other"))
    with pytest.raises(errors.PreconditionFailed):
        g.staged.deletes.delete_object_if("repo", "main", "missing", "*")
    assert g.objects.read_object("repo", g.objects.stat_object("repo", "main", "k")) == b"v1"
    g.staged.deletes.delete_object_if("repo", "main", "k", md5(b"v1"))
    with pytest.raises(errors.ObjectNotFound):
        g.objects.stat_object("repo", "main", "k")
    with pytest.raises(errors.PreconditionFailed):
        g.staged.deletes.delete_object_if("repo", "main", "k", md5(b"v1"))


def test_a_delete_and_an_upload_with_the_same_if_match_one_wins(g: Any, repo: Any) -> None:
    put_files(g, "main", k=b"v1")
    g = rebuilt(g, blocks=BarrierBlocks(g.ports.blocks, 2))
    results: list[object] = [None, None]

    def upload() -> None:
        try:
            results[0] = g.objects.upload_object("repo", "main", "k", b"v2", if_match=md5(b"v1"))
        except errors.GravelerError as e:
            results[0] = e

    def delete() -> None:
        g.ports.blocks.barrier.wait()  # after the upload read the object, before it stages
        try:
            results[1] = g.staged.deletes.delete_object_if("repo", "main", "k", md5(b"v1"))
        except errors.GravelerError as e:
            results[1] = e

    threads = [threading.Thread(target=upload), threading.Thread(target=delete)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    lost = [r for r in results if isinstance(r, errors.PreconditionFailed)]
    assert len(lost) == 1, results
    if isinstance(results[0], errors.PreconditionFailed):
        with pytest.raises(errors.ObjectNotFound):
            g.objects.stat_object("repo", "main", "k")
    else:
        assert g.objects.read_object("repo", g.objects.stat_object("repo", "main", "k")) == b"v2"
