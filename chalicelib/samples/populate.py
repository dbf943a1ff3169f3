"""Writing the sample dataset into a new repository: upload each object to the default branch, then commit."""

from __future__ import annotations

from chalicelib.graveler.records import Commit, Repository
from chalicelib.graveler.service import Graveler

from .dataset import SAMPLE_COMMIT_MESSAGE, sample_objects


def populate(graveler: Graveler, repo: Repository, committer: str) -> Commit:
    """Stages every sample object on the repository's default branch and commits them as lakeFS does, with the
    message "Add sample data" by the user who created the repository."""
    for sample in sample_objects(repo.id):
        graveler.upload_object(repo.id, repo.default_branch_id, sample.path, sample.data, sample.content_type)
    return graveler.commit(repo.id, repo.default_branch_id, committer, SAMPLE_COMMIT_MESSAGE)
