"""The DynamoDB tables the moto layer tests write: a string hash key ``h`` and a range key ``r``, or a string hash
key alone."""

from __future__ import annotations

from typing import Any


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
