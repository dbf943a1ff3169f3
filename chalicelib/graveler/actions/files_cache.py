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

import hashlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from ..records import Entry, EntryRecord, StagedEntry
from ..storage.caches import LRUCache
from .errors import InvalidActionFile
from .spec import ACTIONS_PREFIX, MAX_ACTION_FILE_BYTES, MAX_ACTION_FILES_BYTES, Action

__all__ = [
    "ActionFilesCache",
    "check_action_file_sizes",
    "direct_children",
    "seeking_children",
    "under_actions_prefix",
]

DEFAULT_MAX_TREES = 4096
DEFAULT_MAX_ENTRIES = 100_000
DEFAULT_MAX_BYTES = 8 * 1024 * 1024
# Subdirectories of _lakefs_actions/ an operation jumps over (lakeFS reads none of their files).
MAX_SUBDIRECTORIES = 100

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


def seeking_children[T](iterate: Callable[[str], Iterator[T]], key_of: Callable[[T], str]) -> Iterator[T]:
    """The items directly under _lakefs_actions/ in key order, from ``iterate(start)`` (items with keys >= start),
    jumping over each subdirectory with a new iterator from its end, as lakeFS lists with a delimiter and never reads
    inside one: a million objects under ``_lakefs_actions/data/`` cost one jump, not a million records on every
    operation. More than MAX_SUBDIRECTORIES jumps: InvalidActionFile (the guard cannot be read within bounds)."""
    start = ACTIONS_PREFIX
    jumps = 0
    while True:
        for item in iterate(start):
            key = key_of(item)
            if not key.startswith(ACTIONS_PREFIX):
                return
            rest = key[len(ACTIONS_PREFIX) :]
            cut = rest.find("/")
            if cut < 0:
                yield item
                continue
            jumps += 1
            if jumps > MAX_SUBDIRECTORIES:
                raise InvalidActionFile(
                    f"more than {MAX_SUBDIRECTORIES} directories under {ACTIONS_PREFIX}: every guarded operation "
                    "lists it, so it holds at most that many"
                )
            start = ACTIONS_PREFIX + rest[:cut] + "0"  # just past every key under the subdirectory ("0" follows "/")
            break
        else:
            return


def under_actions_prefix(staged: Iterable[StagedEntry]) -> Iterator[StagedEntry]:
    """Staged changes from the actions prefix on (in key order), up to the first key past it."""
    for change in staged:
        if not str(change.key).startswith(ACTIONS_PREFIX):
            return
        yield change


def check_action_file_sizes(files: Sequence[tuple[str, Entry]], limit: int) -> None:
    """InvalidActionFile for more than ``limit`` files, one larger than MAX_ACTION_FILE_BYTES or more than
    MAX_ACTION_FILES_BYTES in all, by the entries' sizes (before any is read)."""
    if len(files) > limit:
        raise InvalidActionFile(
            f"more than {limit} action files under {ACTIONS_PREFIX}: every guarded operation reads them all, so "
            f"a ref holds at most {limit}"
        )
    total = 0
    for path, entry in files:
        if entry.size > MAX_ACTION_FILE_BYTES:
            raise InvalidActionFile(f"action file {path}: larger than {MAX_ACTION_FILE_BYTES} bytes")
        total += entry.size
    if total > MAX_ACTION_FILES_BYTES:
        raise InvalidActionFile(
            f"the action files under {ACTIONS_PREFIX} hold {total} bytes, more than the {MAX_ACTION_FILES_BYTES} bytes "
            "an operation reads"
        )


@dataclass(frozen=True, slots=True)
class _Parsed:
    """A file's parse, or why it failed; weighed as the file's bytes."""

    action: Action | None
    error: str
    size: int


def _weight(parsed: _Parsed) -> int:
    return parsed.size


class ActionFilesCache:
    """Action files by metarange id, their contents by physical address (both immutable), and their parses by
    content (path and digest of the bytes: a file staged again with the same bytes is not parsed again, and a
    bad file is refused without parsing it again)."""

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
        self._parsed: LRUCache[tuple[str, bytes], _Parsed] = LRUCache(max_trees, max_bytes, _weight)

    def tree(self, namespace: str, metarange_id: str, load: Callable[[], Tree]) -> Tree:
        """The action files of the metarange (an empty tuple when it has none); ``load`` reads them on a miss."""
        return self._trees.get_or_load((namespace, metarange_id), load)

    def data(self, address: str, load: Callable[[], bytes]) -> bytes:
        """The contents of the action file stored at ``address``; ``load`` reads them on a miss."""
        return self._data.get_or_load(address, load)

    def action(self, path: str, data: bytes, parse: Callable[[], Action]) -> Action:
        """The action ``parse`` reads from ``data`` (the file at ``path``), or its InvalidActionFile, remembered."""

        def load() -> _Parsed:
            try:
                return _Parsed(parse(), "", len(data))
            except InvalidActionFile as e:
                return _Parsed(None, str(e), len(data))

        parsed = self._parsed.get_or_load((path, hashlib.sha256(data).digest()), load)
        if parsed.action is None:
            raise InvalidActionFile(parsed.error)
        return parsed.action

    def clear(self) -> None:
        """Forgets everything: what a new container starts with."""
        self._trees.clear()
        self._data.clear()
        self._parsed.clear()
