"""What a refs restore checks of the history inside a dump before writing anything (refs_restore.RefsRestorer.check):
every commit's parents are commits of the dump (the target is bare, so the dump is the whole history), no commit
reaches itself through its parents, every branch and tag name is one creation accepts, and every commit's
metarange is in the repository's storage namespace. A dump failing any of these is refused with Invalid (400):
restored, it would answer every read of its history with an error for a state that is permanent."""

from __future__ import annotations

from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor

from .. import errors
from ..ports import BlockStore
from ..records import EMPTY_METARANGE, Commit
from ..validation import validate_branch_id, validate_tag_id
from ..writes.addressing import metadata_address

__all__ = ["History", "check_ref_name"]

# HEAD requests for the metaranges at once.
_EXISTS_WORKERS = 8
# How many missing metaranges a refusal names.
_NAMED = 5


class History:
    """The commits of a dump as check reads them, a chunk at a time: each commit's parents, and the distinct
    metaranges. Holds an id and its parents per commit (a large dump: some 200 bytes a commit)."""

    def __init__(self) -> None:
        self._parents: dict[str, tuple[str, ...]] = {}
        self._metaranges: set[str] = set()

    def add(self, commits: Iterable[Commit]) -> None:
        for commit in commits:
            if commit.id in self._parents:
                raise errors.Invalid(f"the refs dump holds commit {commit.id} twice")
            self._parents[commit.id] = tuple(commit.parents)
            if commit.meta_range_id != EMPTY_METARANGE:
                self._metaranges.add(commit.meta_range_id)

    def __contains__(self, commit_id: object) -> bool:
        return commit_id in self._parents

    def check(self) -> None:
        """Raises Invalid for a parent the dump lacks, or a cycle of parents."""
        for commit_id, parents in self._parents.items():
            for parent in parents:
                if parent not in self._parents:
                    raise errors.Invalid(f"commit {commit_id} of the refs dump names parent {parent}, which it lacks")
        # Depth-first, without recursion (histories are deep): grey while on the path, black once done.
        state: dict[str, int] = {}
        for root in self._parents:
            if root in state:
                continue
            stack: list[tuple[str, int]] = [(root, 0)]
            state[root] = 1
            while stack:
                node, index = stack[-1]
                parents = self._parents[node]
                if index == len(parents):
                    state[node] = 2
                    stack.pop()
                    continue
                stack[-1] = (node, index + 1)
                parent = parents[index]
                seen = state.get(parent)
                if seen == 1:
                    raise errors.Invalid(f"commit {parent} of the refs dump is its own ancestor (a cycle of parents)")
                if seen is None:
                    state[parent] = 1
                    stack.append((parent, 0))

    def check_metaranges(self, blocks: BlockStore, namespace: str) -> None:
        """Raises Invalid naming (some of) the metaranges the namespace lacks."""
        wanted = sorted(self._metaranges)

        def present(mid: str) -> bool:
            return blocks.exists(metadata_address(namespace, mid))

        with ThreadPoolExecutor(_EXISTS_WORKERS) as pool:
            missing = [mid for mid, there in zip(wanted, pool.map(present, wanted), strict=True) if not there]
        if missing:
            named = ", ".join(missing[:_NAMED]) + (
                f" and {len(missing) - _NAMED} more" if len(missing) > _NAMED else ""
            )
            raise errors.Invalid(
                f"{len(missing)} metaranges the dump's commits name are not in the storage namespace {namespace}: "
                f"{named} (restore the namespace's _lakefs/ objects first)"
            )


def check_ref_name(kind: str, ref_id: str) -> None:
    """Raises InvalidName (400) for a branch or tag name creation would refuse."""
    if kind == "branches":
        validate_branch_id(ref_id)
    else:
        validate_tag_id(ref_id)
