"""The usage report's store: the installation id and the monthly request counters."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

__all__ = ["InstallationReport", "UsageRecord", "UsageStore"]


@dataclass(frozen=True, slots=True)
class UsageRecord:
    """The requests counted in one month (lakeFS's UsageReport)."""

    year: int
    month: int
    count: int


@dataclass(frozen=True, slots=True)
class InstallationReport:
    """The installation's id and its months, oldest first (lakeFS's InstallationUsageReport)."""

    installation_id: str
    reports: tuple[UsageRecord, ...]


class UsageStore(Protocol):
    """Where the installation id and the counters live (DynamoDB: the auth table, beside the setup state)."""

    def create_installation_id(self, installation_id: str) -> str:
        """Stores ``installation_id`` unless one is stored already; returns the stored one (of concurrent
        callers, all get the one that was stored first). Raises StorageError."""
        ...

    def get_installation_id(self) -> str | None:
        """The stored installation id, None before the first is stored. Raises StorageError."""
        ...

    def add(self, installation_id: str, year: int, month: int, count: int) -> None:
        """Adds ``count`` to the month's counter, atomically (concurrent adds all count), creating it at
        ``count``. Raises StorageError."""
        ...

    def records(self, installation_id: str) -> list[UsageRecord]:
        """The installation's months, oldest first; other installations' counters are not among them.
        Raises StorageError."""
        ...
