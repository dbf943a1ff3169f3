"""Several conditional uploads to one branch as one atomic write (conditional_uploads.py): every object staged or
none, by one StagingStore.set_if_all, with the single upload's checks."""

from __future__ import annotations

import dataclasses
import hashlib
import threading
from typing import Any

import pytest

from chalicelib.graveler import errors
from chalicelib.graveler.branches import branch_moves
from chalicelib.graveler.records import BranchID, Key, RepositoryID
from chalicelib.graveler.usecases.conditional_uploads import ConditionalObject
from chalicelib.graveler.writes.preconditions import MAX_ATOMIC_CHANGES

from .support import put_files


def md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def read(g: Any, path: str, ref: str = "main") -> bytes | None:
    try:
        return bytes(g.objects.read_object("repo", g.objects.stat_object("repo", ref, path)))
    except errors.ObjectNotFound:
        return None


def with_parts(g: Any, **parts: Any) -> Any:
    """The engine over ``g``'s stores with some replaced (wrapped to race or count)."""
    from chalicelib.graveler.engine import build_engine

    return build_engine(dataclasses.replace(g.ports, **parts))


class Recording:
    """A StagingStore that records its writes, and may run something just before a given one."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.writes: list[tuple[str, list[str]]] = []
        self.before_set_if_all: Any = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def set(self, token: Any, staged: Any) -> Any:
        self.writes.append(("set", [staged.key]))
        return self._inner.set(token, staged)

    def set_if(self, token: Any, staged: Any, expected: Any, current_of: Any = None) -> bool:
        self.writes.append(("set_if", [staged.key]))
        return bool(self._inner.set_if(token, staged, expected, current_of))

    def set_many(self, token: Any, entries: Any) -> None:
        entries = list(entries)
        self.writes.append(("set_many", [e.key for e in entries]))
        self._inner.set_many(token, entries)

    def set_if_all(self, token: Any, changes: Any, current_of: Any = None) -> bool:
        if self.before_set_if_all is not None:
            hook, self.before_set_if_all = self.before_set_if_all, None
            hook()
        self.writes.append(("set_if_all", [staged.key for staged, _ in changes]))
        return bool(self._inner.set_if_all(token, changes, current_of))


def test_all_conditions_hold_one_write_stages_every_object(g: Any, repo: Any) -> None:
    put_files(g, "main", a=b"a1", b=b"b1")
    g.commits.commit("repo", "main", "u", "v1")
    put_files(g, "main", c=b"c1")
    staging = Recording(g.ports.staging)
    e = with_parts(g, staging=staging)
    entries = e.staged.uploads.upload_objects_if(
        "repo",
        "main",
        [
            ConditionalObject("a", b"a2", if_match=md5(b"a1")),  # committed
            ConditionalObject("c", b"c2", if_match=f'"{md5(b"c1")}"'),  # staged
            ConditionalObject("d", b"d1", if_absent=True),
            ConditionalObject("b", b"b2", content_type="application/json", user_metadata={"k": "v"}),
        ],
    )
    assert staging.writes == [("set_if_all", ["a", "c", "d", "b"])]
    assert [read(g, p) for p in "acdb"] == [b"a2", b"c2", b"d1", b"b2"]
    assert [g.objects.stat_object("repo", "main", p) for p in "acdb"] == entries
    assert entries[3].content_type == "application/json" and entries[3].user_metadata == {"k": "v"}


@pytest.mark.parametrize(
    "failing",
    [
        ConditionalObject("b", b"x", if_match=md5(b"other")),
        ConditionalObject("b", b"x", if_absent=True),
        ConditionalObject("missing", b"x", if_match="*"),
    ],
)
def test_one_failed_condition_stages_nothing(g: Any, repo: Any, failing: ConditionalObject) -> None:
    put_files(g, "main", a=b"a1", b=b"b1")
    staging = Recording(g.ports.staging)
    e = with_parts(g, staging=staging)
    with pytest.raises(errors.PreconditionFailed):
        e.staged.uploads.upload_objects_if(
            "repo", "main", [ConditionalObject("a", b"a2", if_match=md5(b"a1")), failing]
        )
    assert staging.writes == []
    assert (read(g, "a"), read(g, "b"), read(g, "missing")) == (b"a1", b"b1", None)


def test_a_write_between_the_check_and_the_atomic_write_refuses_all(g: Any, repo: Any) -> None:
    put_files(g, "main", a=b"a1", b=b"b1")
    staging = Recording(g.ports.staging)
    e = with_parts(g, staging=staging)
    # Another writer replaces b after the checks passed, before the one write: the write's condition on b fails.
    staging.before_set_if_all = lambda: put_files(g, "main", b=b"rival")
    deleted: list[str] = []
    blocks = g.ports.blocks

    class Blocks:
        def __getattr__(self, name: str) -> Any:
            return getattr(blocks, name)

        def delete(self, address: str) -> None:
            deleted.append(address)
            blocks.delete(address)

    e = with_parts(e, blocks=Blocks())
    with pytest.raises(errors.PreconditionFailed):
        e.staged.uploads.upload_objects_if(
            "repo",
            "main",
            [
                ConditionalObject("a", b"a2", if_match=md5(b"a1")),
                ConditionalObject("b", b"b2", if_match=md5(b"b1")),
                ConditionalObject("n", b"n", if_absent=True),
            ],
        )
    assert (read(g, "a"), read(g, "b"), read(g, "n")) == (b"a1", b"rival", None)
    assert len(deleted) == 3  # the refused objects' bytes are deleted again


def test_a_seal_between_the_check_and_the_write_checks_again_and_writes_to_the_new_token(g: Any, repo: Any) -> None:
    put_files(g, "main", a=b"a1", b=b"b1")
    staging = Recording(g.ports.staging)
    old = g.ports.refs.get_branch(RepositoryID("repo"), BranchID("main")).staging_token
    staging.before_set_if_all = lambda: branch_moves.seal(
        g.ports.refs, g.ports.staging, RepositoryID("repo"), BranchID("main")
    )
    e = with_parts(g, staging=staging)
    entries = e.staged.uploads.upload_objects_if(
        "repo",
        "main",
        [ConditionalObject("a", b"a2", if_match=md5(b"a1")), ConditionalObject("c", b"c", if_absent=True)],
    )
    # The write against the sealed token is refused by the store (it names the branch's token) and changes
    # nothing there; the preconditions are checked again and the objects written to the new token, as one write.
    assert [w[0] for w in staging.writes] == ["set_if_all", "set_if_all"]
    assert [g.ports.staging.get(old, Key(p)) for p in "c"] == [None]
    branch = g.ports.refs.get_branch(RepositoryID("repo"), BranchID("main"))
    assert [g.ports.staging.get(branch.staging_token, Key(p)).value for p in "ac"] == entries
    made = g.commits.commit("repo", "main", "u", "both")
    assert (read(g, "a", made.id), read(g, "b", made.id), read(g, "c", made.id)) == (b"a2", b"b1", b"c")


def test_the_single_uploads_refusals(g: Any, repo: Any) -> None:
    one = [ConditionalObject("a", b"1", if_absent=True)]
    with pytest.raises(errors.BranchNotFound):
        g.staged.uploads.upload_objects_if("repo", "nope", one)
    g.repositories.create_repository("rorepo", "s3://bucket/ro", read_only=True)
    with pytest.raises(errors.ReadOnlyRepository):
        g.staged.uploads.upload_objects_if("rorepo", "main", one)
    for bad in (
        [],
        [ConditionalObject("a", b"1"), ConditionalObject("a", b"2")],
        [ConditionalObject("a", b"1", if_match="*", if_absent=True)],
        [ConditionalObject("", b"1")],
        [ConditionalObject(f"k{n}", b"1", if_absent=True) for n in range(MAX_ATOMIC_CHANGES + 1)],
    ):
        with pytest.raises(errors.Invalid):
            g.staged.uploads.upload_objects_if("repo", "main", bad)
    assert list(g.objects.list_objects("repo", "main").results) == []
    assert (
        len(
            g.staged.uploads.upload_objects_if(
                "repo", "main", [ConditionalObject(f"k{n}", b"1") for n in range(MAX_ATOMIC_CHANGES)]
            )
        )
        == 100
    )


def test_a_protected_branch_refuses(g: Any, repo: Any) -> None:
    if g.ports.protection is None:
        pytest.skip("this engine has no branch protection store")
    g.ports.protection.set_rules(g.repositories.get_repository("repo"), ["main"])
    with pytest.raises(errors.WriteToProtectedBranch):
        g.staged.uploads.upload_objects_if("repo", "main", [ConditionalObject("a", b"1", if_absent=True)])
    assert read(g, "a") is None


def test_two_atomic_uploads_that_read_the_same_objects_one_wins(g: Any, repo: Any) -> None:
    """Both check their conditions before either writes (their puts wait for each other): the one atomic write
    lets one through whole, the other is refused whole."""
    put_files(g, "main", a=b"a1", b=b"b1")
    inner = g.ports.blocks
    barrier = threading.Barrier(2, timeout=10)

    class Barrier:
        def __getattr__(self, name: str) -> Any:
            return getattr(inner, name)

        def put(self, address: str, data: bytes) -> Any:
            barrier.wait()
            return inner.put(address, data)

    e = with_parts(g, blocks=Barrier())
    results: list[object] = [None, None]

    def upload(n: int) -> None:
        objects = [ConditionalObject(p, f"{p}{n}".encode(), if_match=md5(f"{p}1".encode())) for p in ("a", "b")]
        try:
            results[n] = e.staged.uploads.upload_objects_if("repo", "main", objects)
        except errors.GravelerError as error:
            results[n] = error

    threads = [threading.Thread(target=upload, args=(n,)) for n in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    lost = [r for r in results if isinstance(r, errors.GravelerError)]
    assert len(lost) == 1 and isinstance(lost[0], errors.PreconditionFailed), results
    winner = 1 - results.index(lost[0])
    assert (read(g, "a"), read(g, "b")) == (f"a{winner}".encode(), f"b{winner}".encode())
