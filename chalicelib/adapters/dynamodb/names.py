"""The physical names of the DynamoDB tables, one prefix for all: what models.py builds its models from and
tables.py creates."""

from __future__ import annotations

from dataclasses import dataclass

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
