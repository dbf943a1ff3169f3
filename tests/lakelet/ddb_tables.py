"""The DynamoDB tables the moto layer tests write: a string hash key ``h`` and a range key ``r``, or a string hash
key alone; and moto with the stack's patches installed, for the length of a test."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from moto import mock_aws

from lakelet.stack import moto_speedups


@contextmanager
def patched_moto() -> Iterator[None]:
    """moto in process with moto_speedups installed (taken away again unless it was installed before)."""
    was_installed = moto_speedups.installed()
    moto_speedups.install()
    try:
        with mock_aws():
            yield
    finally:
        if not was_installed:
            moto_speedups.uninstall()


def create_keyed_table(client: Any, name: str, range_type: str = "S") -> None:
    client.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "h", "KeyType": "HASH"}, {"AttributeName": "r", "KeyType": "RANGE"}],
        AttributeDefinitions=[
            {"AttributeName": "h", "AttributeType": "S"},
            {"AttributeName": "r", "AttributeType": range_type},
        ],
        BillingMode="PAY_PER_REQUEST",
    )


def create_hash_table(client: Any, name: str, key: str = "p") -> None:
    client.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": key, "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": key, "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
