"""PullRequestStore on DynamoDB: table ``pulls`` (models.PullRequestRow), one item per pull request under the hash
key "<repository id>#<generation>", the pull request as one JSON attribute.

Creation is a put conditioned on the key being absent; an update is a put conditioned on the stored JSON being the
expected one (the compare-and-swap of the port). A listing is a strongly consistent query in id order.
"""

from __future__ import annotations

import json

from pynamodb.expressions.condition import Condition

from chalicelib.graveler import errors
from chalicelib.graveler.records import PullRequest, Repository

from .models import model_set
from .tables import TableNames
from .translate import storage_errors

__all__ = ["DynamoPullRequestStore"]


def _scope(repo: Repository) -> str:
    return f"{repo.id}#{repo.generation}"


def _encode(pr: PullRequest) -> str:
    return json.dumps(pr.to_json(), sort_keys=True)


class DynamoPullRequestStore:
    """The PullRequestStore port on the pulls table."""

    def __init__(self, names: TableNames, region: str, endpoint_url: str | None = None) -> None:
        self._model = model_set(names, region, endpoint_url).pulls

    def get(self, repo: Repository, pr_id: str) -> PullRequest:
        with storage_errors(on_missing=lambda: errors.PullRequestNotFound(pr_id)):
            row = self._model.get(_scope(repo), pr_id, consistent_read=True)
        return PullRequest.from_json(json.loads(row.record))

    def create(self, repo: Repository, pr: PullRequest) -> None:
        row = self._model(_scope(repo), pr.id, record=_encode(pr))
        with storage_errors(on_condition_failed=lambda: errors.PullRequestExists(pr.id)):
            row.save(condition=self._model.pull_request_id.does_not_exist())

    def list(self, repo: Repository, after: str = "", limit: int = 1000) -> list[PullRequest]:
        with storage_errors():
            # A key condition cannot compare with "" (DynamoDB refuses empty key values): no condition then.
            rows = self._model.query(
                _scope(repo),
                (self._model.pull_request_id > after) if after else None,
                consistent_read=True,
                limit=limit,
            )
            return [PullRequest.from_json(json.loads(row.record)) for row in rows]

    def update(self, repo: Repository, pr: PullRequest, expected: PullRequest) -> None:
        row = self._model(_scope(repo), pr.id, record=_encode(pr))
        condition: Condition = self._model.record == _encode(expected)
        with storage_errors(on_condition_failed=lambda: self._why_not(repo, pr.id)):
            row.save(condition=condition)

    def delete_all(self, repo: Repository) -> int:
        # Keys only, a page at a time, deleted in batches of 25 (BatchWriteItem's limit, which PynamoDB's batch
        # writer keeps to and retries the unprocessed items of).
        count = 0
        with storage_errors():
            rows = self._model.query(_scope(repo), attributes_to_get=[self._model.pull_request_id.attr_name])
            with self._model.batch_write() as batch:
                for row in rows:
                    batch.delete(self._model(_scope(repo), row.pull_request_id))
                    count += 1
        return count

    def _why_not(self, repo: Repository, pr_id: str) -> errors.GravelerError:
        try:
            self.get(repo, pr_id)
        except errors.PullRequestNotFound as e:
            return e
        return errors.PreconditionFailed(f"pull request {pr_id} changed meanwhile")
