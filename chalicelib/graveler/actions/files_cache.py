"""The action files of a commit, remembered per container.

Every guarded operation (commit, merge, branch and tag creation and deletion, revert, cherry-pick) looks for
action files on a ref twice, before and after it moves anything, and most repositories have none. What a
commit holds under ``_lakefs_actions/`` is fixed by its metarange id (content-addressed, never rewritten), and
the bytes at a physical address never change either (linking.py), so both are kept here keyed by those ids
alone: an answer, "none" included, can never go stale. A branch's staged action files are not cached: they are
read from staging on every event, so an action file staged on a branch is honoured by the very next operation.

Memory is bounded twice: at most ``max_trees`` metaranges (holding ``max_entries`` entries in all) and at most
``max_bytes`` of file contents (an action file is at most 64 KiB, spec.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from ..caches import LRUCache
from ..records import Entry, EntryRecord, StagedEntry
from .spec import ACTIONS_PREFIX

__all__ = ["ActionFilesCache", "direct_children", "under_actions_prefix"]

DEFAULT_MAX_TREES = 4096
DEFAULT_MAX_ENTRIES = 100_000
DEFAULT_MAX_BYTES = 8 * 1024 * 1024

# The action files of one metarange: (path, entry) of the direct children of _lakefs_actions/, in path order.
Tree = tuple[tuple[str, Entry], ...]


def direct_children(records: Iterable[EntryRecord]) -> Iterator[tuple[str, Entry]]:
    """The records directly under _lakefs_actions/ (lakeFS reads no subdirectory), from records in key order;
    stops at the first key past the prefix."""
    for record in records:
        key = str(record.key)
        if not key.startswith(ACTIONS_PREFIX):
            return
        if "/" not in key[len(ACTIONS_PREFIX) :]:
            yield key, record.entry


def under_actions_prefix(staged: Iterable[StagedEntry]) -> Iterator[StagedEntry]:
    """Staged changes from the actions prefix on (in key order), up to the first key past it."""
    for change in staged:
        if not str(change.key).startswith(ACTIONS_PREFIX):
            return
        yield change


class ActionFilesCache:
    """Action files by metarange id, and their contents by physical address; both immutable."""

    def __init__(
        self,
        max_trees: int = DEFAULT_MAX_TREES,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        max_bytes: int = DEFAULT_MAX_BYTES,
    ) -> None:
        # Weighed by their length: entries for a tree, bytes for a file's contents.
        self._trees: LRUCache[tuple[str, str], Tree] = LRUCache(max_trees, max_entries, len)
        # Capacity in files is generous: the byte bound is the one that matters.
        self._data: LRUCache[str, bytes] = LRUCache(max_trees, max_bytes, len)

    def tree(self, namespace: str, metarange_id: str, load: Callable[[], Tree]) -> Tree:
        """The action files of the metarange (an empty tuple when it has none); ``load`` reads them on a miss."""
        return self._trees.get_or_load((namespace, metarange_id), load)

    def data(self, address: str, load: Callable[[], bytes]) -> bytes:
        """The contents of the action file stored at ``address``; ``load`` reads them on a miss."""
        return self._data.get_or_load(address, load)

    def clear(self) -> None:
        """Forgets everything: what a new container starts with."""
        self._trees.clear()
        self._data.clear()
