"""Writing the sample dataset into a new repository: upload each object to the default branch, then commit."""

from __future__ import annotations

import contextlib

from chalicelib.graveler import errors
from chalicelib.graveler.engine import Engine
from chalicelib.graveler.records import Repository

from .dataset import SAMPLE_COMMIT_MESSAGE, sample_objects

# lakeFS answers the creation once the sample commit is made; where the commit runs as a workflow (above the
# commit threshold), wait for it within API Gateway's 29 s. A workflow still running after that finishes on its
# own (Step Functions), so the creation still answers 201 and the commit lands moments later.
SAMPLE_COMMIT_WAIT_SECONDS = 20.0


def populate(engine: Engine, repo: Repository, committer: str) -> None:
    """Stages every sample object on the repository's default branch and commits them as lakeFS does, with the
    message "Add sample data" by the user who created the repository."""
    for sample in sample_objects(repo.id):
        engine.objects.upload_object(repo.id, repo.default_branch_id, sample.path, sample.data, sample.content_type)
    with contextlib.suppress(errors.StillRunning):
        engine.commits.commit(
            repo.id, repo.default_branch_id, committer, SAMPLE_COMMIT_MESSAGE, wait_seconds=SAMPLE_COMMIT_WAIT_SECONDS
        )
