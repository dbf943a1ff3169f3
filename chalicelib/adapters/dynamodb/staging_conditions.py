"""The conditions of the staging table's conditional writes (StagingStore.set_if and set_if_all): the row a
write expects, as a DynamoDB ConditionExpression, and which cancellations of a transaction are a lost race."""

from __future__ import annotations

from pynamodb.exceptions import TransactWriteError
from pynamodb.expressions.condition import Condition

from chalicelib.graveler.records import Absent, Entry, StagedExpectation

from .models import StagedRow

__all__ = ["TRANSACTION_CANCELED", "lost_race", "row_condition"]

TRANSACTION_CANCELED = "TransactionCanceledException"
_LOST_RACE_REASONS = {"ConditionalCheckFailed", "TransactionConflict"}


def row_condition(model: type[StagedRow], expected: StagedExpectation) -> Condition:
    """The row as the caller expects it, the fields StagingStore.set_if compares: None is no row
    (``attribute_not_exists(key)``), ABSENT no row or a tombstone (``attribute_not_exists(key) OR tombstone =
    true``: what a create-only write expects), a tombstone any tombstone, an entry that entry's identity."""
    condition: Condition
    if isinstance(expected, Absent):
        condition = model.key.does_not_exist() | (model.tombstone == True)  # noqa: E712 (a condition, not a test)
    elif expected is None:
        condition = model.key.does_not_exist()
    elif expected.value is None:
        condition = model.key.exists() & (model.tombstone == True)  # noqa: E712
    else:
        condition = _same_entry(model, expected.value)
    return condition


def _same_entry(model: type[StagedRow], entry: Entry) -> Condition:
    condition: Condition = (
        model.key.exists()
        & (model.tombstone == False)  # noqa: E712 (a condition, not a test)
        & (model.physical_address == entry.physical_address)
        & (model.etag == entry.etag)
        & (model.size == entry.size)
        & (model.mtime == entry.mtime)
    )
    return condition


def lost_race(error: TransactWriteError) -> bool:
    """Whether DynamoDB cancelled the transaction because a row (or the branch a guarded write checks) was not as
    expected, or because another write of one of its items was under way (TransactionConflict: a seal's swap of
    the branch, a racing writer): both are a caller that lost to another writer. Any other reason (throttling, a
    validation error) is the store's to report."""
    if error.cause_response_code != TRANSACTION_CANCELED:
        return False
    codes = {reason.code for reason in error.cancellation_reasons if reason is not None} - {"None"}
    return bool(codes) and codes <= _LOST_RACE_REASONS
