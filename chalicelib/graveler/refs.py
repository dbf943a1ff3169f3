"""Ref expressions (``main~2^2``, ``v1``, ``main@``, ``abc123``) and their resolution to a commit.

Resolution order of the base name: full commit ID, branch, tag, unique commit-ID prefix. Then the modifiers:
``~N`` walks the first parent N times, ``^N`` takes the Nth parent (``^0`` is the commit itself); ``@`` (the
branch's committed state) and ``$`` (explicitly its staging view) stand alone after a branch name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import errors
from .ports import RefStore
from .records import Branch, BranchID, Commit, CommitID, RefKind, RepositoryID, ResolvedRef, TagID
from .validation import validate_ref

_FULL_COMMIT_ID = re.compile(r"[0-9a-f]{64}")
_HEX = re.compile(r"[0-9a-f]+")
# Shorter prefixes match too much to be useful and cost a query each; git uses 4 as its minimum too.
_MIN_PREFIX = 4
_MODIFIER = re.compile(r"([~^])(\d*)")


@dataclass(frozen=True, slots=True)
class RefExpression:
    base: str
    # ("~" | "^", n) in order of application
    moves: tuple[tuple[str, int], ...] = ()
    # "@" (committed only), "$" (staging view) or "" (default)
    view: str = ""


def parse_ref(expr: str) -> RefExpression:
    """Splits an expression into its base name and modifiers. Raises InvalidRef."""
    try:
        validate_ref(expr)
    except errors.InvalidName as e:
        raise errors.InvalidRef(str(e)) from e
    cut = next((i for i, c in enumerate(expr) if c in "~^@$"), len(expr))
    base, rest = expr[:cut], expr[cut:]
    if not base:
        raise errors.InvalidRef(f"ref {expr!r} has no base name")
    if rest in ("@", "$"):
        return RefExpression(base, (), rest)
    moves: list[tuple[str, int]] = []
    pos = 0
    while pos < len(rest):
        match = _MODIFIER.match(rest, pos)
        if not match:
            raise errors.InvalidRef(f"ref {expr!r}: unexpected {rest[pos:]!r} (@ and $ stand alone after a branch)")
        digits = match.group(2)
        if len(digits) > 9:
            raise errors.InvalidRef(f"ref {expr!r}: modifier number too large")
        moves.append((match.group(1), int(digits) if digits else 1))
        pos = match.end()
    return RefExpression(base, tuple(moves), "")


def _commit_by_prefix(refs: RefStore, repo_id: RepositoryID, prefix: str) -> CommitID | None:
    if len(prefix) < _MIN_PREFIX or not _HEX.fullmatch(prefix):
        return None
    found = refs.list_commit_ids(repo_id, prefix, 2)
    if len(found) > 1:
        raise errors.RefNotFound(f"ref {prefix!r} is an ambiguous commit ID prefix")
    return found[0] if found else None


def resolve_ref(
    refs: RefStore, repo_id: RepositoryID, expr: str, branches: dict[BranchID, Branch] | None = None
) -> ResolvedRef:
    """Resolves an expression to a commit (and, for a branch, its staging view). Raises InvalidRef, RefNotFound.

    ``branches``: the branches this request read already, by id, reused instead of read again (and the ones read
    here are added): refs resolved in one request over one read of a branch (``main~1..main``) name one state of
    it, as one read of them all would."""
    parsed = parse_ref(expr)
    resolved = _resolve_base(refs, repo_id, parsed.base, branches)
    if parsed.view:
        if resolved.kind is not RefKind.BRANCH:
            raise errors.InvalidRef(f"ref {expr!r}: {parsed.view} applies only to a branch")
        return ResolvedRef(RefKind.BRANCH, resolved.commit_id, resolved.branch, include_staging=parsed.view == "$")
    if not parsed.moves:
        return resolved
    commit_id = resolved.commit_id
    for op, n in parsed.moves:
        commit_id = _move(refs, repo_id, commit_id, op, n, expr)
    return ResolvedRef(RefKind.COMMIT, commit_id)


def _resolve_base(
    refs: RefStore, repo_id: RepositoryID, base: str, branches: dict[BranchID, Branch] | None
) -> ResolvedRef:
    if _FULL_COMMIT_ID.fullmatch(base):
        try:
            return ResolvedRef(RefKind.COMMIT, refs.get_commit(repo_id, CommitID(base)).id)
        except errors.CommitNotFound:
            pass
    try:
        known = branches.get(BranchID(base)) if branches is not None else None
        branch = known if known is not None else refs.get_branch(repo_id, BranchID(base))
        if branches is not None:
            branches[branch.id] = branch
        return ResolvedRef(RefKind.BRANCH, branch.commit_id, branch, include_staging=True)
    except errors.BranchNotFound:
        pass
    try:
        return ResolvedRef(RefKind.TAG, refs.get_tag(repo_id, TagID(base)).commit_id)
    except errors.TagNotFound:
        pass
    commit_id = _commit_by_prefix(refs, repo_id, base)
    if commit_id is None:
        raise errors.RefNotFound(f"ref {base!r} not found")
    return ResolvedRef(RefKind.COMMIT, commit_id)


def _move(refs: RefStore, repo_id: RepositoryID, commit_id: CommitID, op: str, n: int, expr: str) -> CommitID:
    if op == "^":
        if n == 0:
            return commit_id
        commit: Commit = refs.get_commit(repo_id, commit_id)
        if n > len(commit.parents):
            raise errors.InvalidRef(f"ref {expr!r}: commit {commit_id[:12]} has {len(commit.parents)} parent(s)")
        return commit.parents[n - 1]
    for _ in range(n):
        commit = refs.get_commit(repo_id, commit_id)
        if not commit.parents:
            raise errors.RefNotFound(f"ref {expr!r} walks past the first commit")
        commit_id = commit.parents[0]
    return commit_id
