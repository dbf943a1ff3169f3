"""The in-memory twin of graveler's PullRequestStore: the reference behaviour its contract suite
(tests/contract/test_pull_request_store_contract.py) holds the DynamoDB adapter to."""

from __future__ import annotations

import bisect
import threading

from chalicelib.graveler import errors
from chalicelib.graveler.records import PullRequest, Repository

__all__ = ["MemoryPullRequestStore"]


def _scope(repo: Repository) -> tuple[str, str]:
    # Per generation: a repository created again under the same id starts with no pull requests.
    return (repo.id, repo.generation)


class MemoryPullRequestStore:
    """PullRequestStore in a dict per repository generation."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pulls: dict[tuple[str, str], dict[str, PullRequest]] = {}

    def get(self, repo: Repository, pr_id: str) -> PullRequest:
        with self._lock:
            pr = self._pulls.get(_scope(repo), {}).get(pr_id)
        if pr is None:
            raise errors.PullRequestNotFound(pr_id)
        return pr

    def create(self, repo: Repository, pr: PullRequest) -> None:
        with self._lock:
            pulls = self._pulls.setdefault(_scope(repo), {})
            if pr.id in pulls:
                raise errors.PullRequestExists(pr.id)
            pulls[pr.id] = pr

    def list(self, repo: Repository, after: str = "", limit: int = 1000) -> list[PullRequest]:
        with self._lock:
            pulls = self._pulls.get(_scope(repo), {})
            ids = sorted(pulls)
            start = bisect.bisect_right(ids, after)
            return [pulls[i] for i in ids[start : start + limit]]

    def update(self, repo: Repository, pr: PullRequest, expected: PullRequest) -> None:
        with self._lock:
            pulls = self._pulls.get(_scope(repo), {})
            current = pulls.get(pr.id)
            if current is None:
                raise errors.PullRequestNotFound(pr.id)
            if current != expected:
                raise errors.PreconditionFailed(f"pull request {pr.id} changed meanwhile")
            pulls[pr.id] = pr

    def delete_all(self, repo: Repository) -> int:
        with self._lock:
            return len(self._pulls.pop(_scope(repo), {}))
