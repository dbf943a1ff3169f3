"""DynamoDB's limits that moto does not enforce, for ``lakelet up --aws-limits`` (numbers in aws_limits.py).

moto already refuses an item over 400 KB (its own bound sits a little above, at 405,000 bytes) and a transaction of
more than 100 actions. It does not refuse a transaction whose items add up to more than 4 MB, which DynamoDB
answers with a ValidationException before writing anything ("Amazon DynamoDB quotas": "The aggregate size of the
items in the transaction cannot exceed 4 MB"). While the limits are on, it does. The size counted is the
request's JSON of each action (attribute names and values, as DynamoDB sizes an item, plus a few bytes of
framing), so a transaction refused here is refused on AWS.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from lakelet.stack.aws_limits import DYNAMODB_TRANSACTION_BYTES

_lock = threading.Lock()
_original: Any = None


def transaction_bytes(transact_items: list[dict[str, Any]]) -> int:
    return sum(len(json.dumps(item, separators=(",", ":"), default=str).encode()) for item in transact_items)


def install() -> None:
    """Patch moto's DynamoDB backend (process-wide, once) until :func:`uninstall`."""
    global _original
    from moto.dynamodb.exceptions import MockValidationException
    from moto.dynamodb.models import DynamoDBBackend

    with _lock:
        if _original is not None:
            return
        _original = DynamoDBBackend.transact_write_items

        def transact_write_items(self: Any, transact_items: list[dict[str, Any]]) -> None:
            if transaction_bytes(transact_items) > DYNAMODB_TRANSACTION_BYTES:
                raise MockValidationException("Transaction request cannot be larger than 4 MB")
            _original(self, transact_items)

        DynamoDBBackend.transact_write_items = transact_write_items  # type: ignore[method-assign]


def uninstall() -> None:
    global _original
    from moto.dynamodb.models import DynamoDBBackend

    with _lock:
        if _original is not None:
            DynamoDBBackend.transact_write_items = _original  # type: ignore[method-assign]
            _original = None
