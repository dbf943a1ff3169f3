"""Merge options and results: strategies, per-path strategies, the conflict error and the preview records.

A merge strategy (lakeFS's) resolves every conflict to one side: ``dest-wins`` or ``source-wins``; none makes
any conflict fail the merge. Per-path strategies come first: an ordered list of (path glob, strategy), where the
strategy may also be ``fail``; the first glob that matches a conflicting key decides it, and keys no glob
matches fall back to the merge strategy.

Globs match the whole path: ``*`` and ``?`` stay within one path segment, ``**`` crosses segments, ``[...]`` is
a character class (``[!...]`` negated); anything else matches itself.
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from .. import errors
from ..committed.compare import MergeChange
from ..committed.mergetable import Action, Decision
from ..records import EMPTY_METARANGE, Commit, Page

__all__ = ["STRATEGY_METADATA_KEY", "MergePreview", "MergeSummary", "Strategy", "conflict_policy"]

STRATEGY_METADATA_KEY = ".lakefs.merge.strategy"
PATH_STRATEGIES_METADATA_KEY = ".lakelet.merge.path_strategies"
DEFAULT_STRATEGY_NAME = "default"
MAX_PATH_STRATEGIES = 100


class Strategy(enum.StrEnum):
    DEST_WINS = "dest-wins"
    SOURCE_WINS = "source-wins"
    FAIL = "fail"  # per-path only: leave the conflict


_WINNER = {Strategy.DEST_WINS: Decision.TAKE_DEST, Strategy.SOURCE_WINS: Decision.TAKE_SOURCE, Strategy.FAIL: None}


def parse_strategy(value: str | None) -> Strategy | None:
    """The merge strategy of a request: empty for none, else dest-wins or source-wins. Raises Invalid."""
    if not value:
        return None
    if value in (Strategy.DEST_WINS, Strategy.SOURCE_WINS):
        return Strategy(value)
    raise errors.Invalid(f"invalid merge strategy {value!r}: use dest-wins or source-wins")


def glob_pattern(glob: str) -> re.Pattern[str]:
    """The regular expression of a path glob (see the module docstring). Raises Invalid."""
    if not glob:
        raise errors.Invalid("a path strategy needs a non-empty path glob")
    out: list[str] = []
    i = 0
    while i < len(glob):
        c = glob[i]
        if glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            start = i + 1
            negated = glob.startswith("!", start)
            start += negated
            # A "]" right after the opening bracket is a member of the class, as in fnmatch.
            end = glob.find("]", start + 1 if glob.startswith("]", start) else start)
            if end < 0:
                raise errors.Invalid(f"path glob {glob!r}: unclosed [")
            members = glob[start:end].replace("\\", "\\\\").replace("^", "\\^").replace("[", "\\[")
            out.append("[" + ("^" if negated else "") + members + "]")
            i = end + 1
        else:
            out.append(re.escape(c))
            i += 1
    try:
        return re.compile("".join(out), re.DOTALL)
    except re.error as e:
        raise errors.Invalid(f"path glob {glob!r}: {e}") from e


@dataclass(frozen=True, slots=True)
class PathStrategy:
    """One per-path rule: conflicting keys matching ``path`` (a glob) are settled by ``strategy``."""

    path: str
    strategy: Strategy
    pattern: re.Pattern[str] = field(compare=False, repr=False)

    @classmethod
    def of(cls, path: str, strategy: str) -> PathStrategy:
        try:
            parsed = Strategy(strategy)
        except ValueError:
            raise errors.Invalid(
                f"invalid strategy {strategy!r} for path {path!r}: use source-wins, dest-wins or fail"
            ) from None
        return cls(path, parsed, glob_pattern(path))


@dataclass(frozen=True, slots=True)
class ConflictPolicy:
    """How conflicts are settled: per-path rules first, then the merge strategy (None: conflicts fail)."""

    strategy: Strategy | None = None
    paths: tuple[PathStrategy, ...] = ()

    def __post_init__(self) -> None:
        if len(self.paths) > MAX_PATH_STRATEGIES:
            raise errors.Invalid(f"at most {MAX_PATH_STRATEGIES} path strategies")

    def resolve(self, key: str, source: Action, destination: Action) -> Decision | None:
        for rule in self.paths:
            if rule.pattern.fullmatch(key):
                return _WINNER[rule.strategy]
        return None if self.strategy is None else _WINNER[self.strategy]

    def metadata(self) -> dict[str, str]:
        """What the merge commit records of the policy."""
        recorded = {STRATEGY_METADATA_KEY: self.strategy.value if self.strategy else DEFAULT_STRATEGY_NAME}
        if self.paths:
            rules = [{"path": rule.path, "strategy": rule.strategy.value} for rule in self.paths]
            recorded[PATH_STRATEGIES_METADATA_KEY] = json.dumps(rules, separators=(",", ":"))
        return recorded


# lakeFS writes an empty tree as a metarange like any other, content-addressed: every empty tree a commit wrote
# has this one id there, while a repository's first commit has none (""). Lakelet stores no empty metarange
# (its id is "" wherever it occurs), so the merge decision tells the two apart by the commit's parents.
_WRITTEN_EMPTY_TREE = "<the empty tree a commit wrote>"


def tree_id(commit: Commit) -> str:
    """The id lakeFS would give the commit's tree, for comparing trees as lakeFS compares them."""
    if commit.meta_range_id == EMPTY_METARANGE and commit.parents:
        return _WRITTEN_EMPTY_TREE
    return commit.meta_range_id


def source_holds_changes(base: Commit, source: Commit) -> bool:
    """lakeFS's "no changes" rule for a merge (pkg/graveler/committed/manager.go, Merge): the source holds none
    exactly when its tree is the merge base's, by metarange id. So a source that is an ancestor of the
    destination, or the destination itself, is "no changes" (git's "already up to date"), while a source whose
    tree differs by id merges even when its entries look alike: re-uploads of the same bytes (new addresses), or
    an empty tree committed on a branch made from the repository's first commit."""
    return tree_id(source) != tree_id(base)


def conflict_policy(strategy: str | None, paths: Sequence[tuple[str, str]] = ()) -> ConflictPolicy:
    """Parses a request's strategy and per-path strategies ((glob, strategy) pairs). Raises Invalid."""
    return ConflictPolicy(parse_strategy(strategy), tuple(PathStrategy.of(p, s) for p, s in paths))


@dataclass(frozen=True, slots=True)
class MergeSummary:
    """Counts over the whole merge: changes it makes in the destination, and conflicting keys."""

    added: int = 0
    removed: int = 0
    changed: int = 0
    conflicts: int = 0
    unresolved: int = 0


@dataclass(frozen=True, slots=True)
class MergePreview:
    """A dry run: the commits involved, the counts, and one page of the changes and conflicts, in key order."""

    source: Commit
    destination: Commit
    base: Commit
    summary: MergeSummary
    page: Page[MergeChange]
