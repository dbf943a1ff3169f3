"""Translation of PynamoDB and botocore errors into graveler errors: no driver error leaves this package."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from json import JSONDecodeError

from botocore.exceptions import BotoCoreError, ClientError
from pynamodb.exceptions import AttributeDeserializationError, DoesNotExist, PynamoDBException

from chalicelib.graveler import errors

CONDITIONAL_CHECK_FAILED = "ConditionalCheckFailedException"
# DynamoDB refusing the request itself (an item over 400 KB, a key over 2048/1024 bytes): retrying the same
# request can never succeed, so it is the caller's 400, not a 503 that tells clients to retry forever.
VALIDATION = "ValidationException"
TOO_LARGE = "a name or value is larger than the store accepts (items up to 400 KB, keys up to 1 KB)"


def _code(error: Exception) -> str | None:
    if isinstance(error, PynamoDBException):
        return error.cause_response_code
    if isinstance(error, ClientError):
        return str(error.response.get("Error", {}).get("Code"))
    return None


def is_conditional_failure(error: PynamoDBException) -> bool:
    """Whether DynamoDB refused a write because its condition expression did not hold."""
    return error.cause_response_code == CONDITIONAL_CHECK_FAILED


@contextmanager
def storage_errors(
    *,
    on_condition_failed: Callable[[], errors.GravelerError] | None = None,
    on_missing: Callable[[], errors.GravelerError] | None = None,
) -> Iterator[None]:
    """Runs the block, turning driver errors into graveler errors.

    A failed condition becomes ``on_condition_failed()``, a missing item (PynamoDB DoesNotExist) becomes
    ``on_missing()``, and anything else (an item that does not parse too) becomes StorageError. Graveler errors
    pass through untouched.
    """
    try:
        yield
    except DoesNotExist as e:
        if on_missing is None:
            raise errors.StorageError(f"DynamoDB: item not found: {e}") from e
        raise on_missing() from e
    except PynamoDBException as e:
        if on_condition_failed is not None and is_conditional_failure(e):
            raise on_condition_failed() from e
        if _code(e) == VALIDATION:
            raise errors.Invalid(TOO_LARGE) from e
        raise errors.StorageError(f"DynamoDB: {e.cause_response_code or type(e).__name__}: {e}") from e
    except (BotoCoreError, ClientError) as e:
        if _code(e) == VALIDATION:
            raise errors.Invalid(TOO_LARGE) from e
        raise errors.StorageError(f"DynamoDB: {e}") from e
    except (AttributeDeserializationError, JSONDecodeError) as e:
        # An item damaged outside this code (an attribute of the wrong type, a JSON attribute that does not
        # parse): the store's fault, answered as one (503) rather than escaping as an unhandled error (500).
        raise errors.StorageError(f"DynamoDB: an item does not parse: {e}") from e


def translated[T](items: Iterable[T]) -> Iterator[T]:
    """Iterates ``items`` lazily (a PynamoDB query or scan pages on demand), translating errors as it goes."""
    iterator = iter(items)
    while True:
        with storage_errors():
            try:
                item = next(iterator)
            except StopIteration:
                return
        yield item
