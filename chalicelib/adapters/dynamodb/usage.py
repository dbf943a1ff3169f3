"""The UsageStore port on the auth table, beside the setup state (auth.py lists the table's other rows):

- installation id:  pk "installation",            sk "id"        (installation_id)
- monthly counter:  pk "usage#<installation id>", sk "<YYYYMM>"  (usage_count, a number)

A flush is one UpdateItem ``ADD usage_count :n`` per month: DynamoDB applies concurrent adds one after the other,
so containers flushing at once all count, and the first add creates the item. A query of the installation's
partition lists its months in order (sk sorts as YYYYMM).
"""

from __future__ import annotations

from chalicelib.graveler import errors
from chalicelib.usage.ports import UsageRecord

from .models import model_set
from .tables import TableNames
from .translate import storage_errors, translated

__all__ = ["DynamoUsageStore"]

_INSTALLATION_PK = "installation"
_INSTALLATION_SK = "id"
_USAGE_PK = "usage#"


class DynamoUsageStore:
    """The UsageStore port on the auth table."""

    def __init__(self, names: TableNames, region: str, endpoint_url: str | None = None) -> None:
        self._model = model_set(names, region, endpoint_url).auth

    def create_installation_id(self, installation_id: str) -> str:
        row = self._model(pk=_INSTALLATION_PK, sk=_INSTALLATION_SK, installation_id=installation_id)
        try:
            with storage_errors(on_condition_failed=lambda: errors.AlreadyExists("installation id")):
                row.save(condition=self._model.pk.does_not_exist())
        except errors.AlreadyExists:
            stored = self.get_installation_id()  # another container stored one first: that one is the id
            if stored is None:
                raise errors.StorageError("the installation id vanished while being created") from None
            return stored
        return installation_id

    def get_installation_id(self) -> str | None:
        with storage_errors():
            rows = list(self._model.query(_INSTALLATION_PK, self._model.sk == _INSTALLATION_SK, consistent_read=True))
        return str(rows[0].installation_id or "") or None if rows else None

    def add(self, installation_id: str, year: int, month: int, count: int) -> None:
        row = self._model(pk=_USAGE_PK + installation_id, sk=f"{year:04d}{month:02d}")
        with storage_errors():
            row.update(actions=[self._model.usage_count.add(count)])

    def records(self, installation_id: str) -> list[UsageRecord]:
        with storage_errors():
            rows = self._model.query(_USAGE_PK + installation_id, consistent_read=True)
        return [UsageRecord(int(row.sk[:4]), int(row.sk[4:]), int(row.usage_count or 0)) for row in translated(rows)]
