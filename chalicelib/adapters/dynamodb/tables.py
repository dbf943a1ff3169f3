"""The DynamoDB tables Lakelet uses: their names, and creating them where they do not exist yet.

Deployed stacks get their tables from infra/ (CloudFormation); the local stack and the tests call
``create_tables`` with the same key schemas (the PynamoDB models in models.py are the one definition).
"""

from __future__ import annotations

from dataclasses import dataclass

from .models import model_set
from .translate import storage_errors

__all__ = ["TableNames"]


@dataclass(frozen=True, slots=True)
class TableNames:
    """The physical name of each table."""

    repositories: str
    branches: str
    tags: str
    commits: str
    staging: str
    auth: str
    pulls: str

    @classmethod
    def from_prefix(cls, prefix: str) -> TableNames:
        """Names that share one prefix: ``from_prefix("lakelet-").branches == "lakelet-branches"``."""
        return cls(
            repositories=f"{prefix}repositories",
            branches=f"{prefix}branches",
            tags=f"{prefix}tags",
            commits=f"{prefix}commits",
            staging=f"{prefix}staging",
            auth=f"{prefix}auth",
            pulls=f"{prefix}pulls",
        )


def create_tables(names: TableNames, region: str, endpoint_url: str | None = None) -> None:
    """Creates every table that does not exist yet (on-demand billing) and waits until each is active.

    Idempotent: existing tables are left as they are. Raises StorageError when DynamoDB refuses.
    """
    models = model_set(names, region, endpoint_url)
    for model in models.all():
        with storage_errors():
            # create_table checks existence itself; wait=True polls DescribeTable until ACTIVE.
            model.create_table(wait=True, billing_mode="PAY_PER_REQUEST")
