"""DynamoDB items taken from the wire (chalicelib/adapters/dynamodb/wire.py) and staged rows decoded without
PynamoDB (rows.py) give exactly what botocore's parser and PynamoDB's model gave (issue 43)."""

from __future__ import annotations

import json
from typing import Any

import botocore.session
import pytest
from botocore.parsers import create_parser

from chalicelib.adapters.dynamodb.models import StagedRow
from chalicelib.adapters.dynamodb.rows import staged_item
from chalicelib.adapters.dynamodb.staging import _staged
from chalicelib.adapters.dynamodb.wire import lift_items

_MODEL = botocore.session.get_session().get_service_model("dynamodb")
ROWS: list[dict[str, Any]] = [
    {
        "staging_token": {"S": "t"},
        "key": {"S": "a/b.parquet"},
        "tombstone": {"BOOL": False},
        "physical_address": {"S": "s3://b/data/x"},
        "size": {"N": "1234"},
        "etag": {"S": "e1"},
        "mtime": {"N": "1700000000"},
        "content_type": {"S": "text/csv"},
        "user_metadata": {"S": '{"owner": "me", "n": 1}'},
    },
    {"staging_token": {"S": "t"}, "key": {"S": "gone"}, "tombstone": {"BOOL": True}},
    # An older row: no content type, no metadata, a number written as a float.
    {"staging_token": {"S": "t"}, "key": {"S": "ü/old"}, "physical_address": {"S": "p"}, "size": {"N": "7.0"}},
    {"staging_token": {"S": "t"}, "key": {"S": "null"}, "user_metadata": {"NULL": True}, "etag": {"NULL": True}},
]


def _parsed(operation: str, document: dict[str, Any], lift: bool) -> dict[str, Any]:
    """The answer botocore gives for a 200 with this body, with or without the before-parse hook."""
    operation_model = _MODEL.operation_model(operation)
    response = {"body": json.dumps(document).encode(), "headers": {"x-amzn-requestid": "r"}, "status_code": 200}
    customized: dict[str, Any] = {}
    if lift:
        lift_items(operation_model=operation_model, response_dict=response, customized_response_dict=customized)
    parsed = create_parser("json").parse(response, operation_model.output_shape)
    parsed.update(customized)
    return dict(parsed)


@pytest.mark.parametrize(
    ("operation", "document"),
    [
        ("Query", {"Items": ROWS, "Count": 4, "ScannedCount": 4, "LastEvaluatedKey": ROWS[0]}),
        ("Scan", {"Items": ROWS[:2], "Count": 2, "ScannedCount": 9}),
        ("GetItem", {"Item": ROWS[0]}),
        ("GetItem", {}),
        ("BatchGetItem", {"Responses": {"staging": ROWS}, "UnprocessedKeys": {}}),
        ("Query", {"Items": [{"k": {"M": {"B": {"S": "a map key named B"}}}}], "Count": 1}),
        ("Query", {"Items": [{"k": {"B": "AAEC"}, "s": {"BS": ["AQ=="]}}], "Count": 1}),
        ("PutItem", {"Attributes": ROWS[0]}),
        # Unicode escapes, floats in the consumed capacity, and a count past 64 bits (orjson refuses that one:
        # botocore's parser reads the whole answer, as before).
        ("Query", {"Items": [{"k": {"S": '\u00fc\ud83d\ude00 "q"'}}], "Count": 1, "ScannedCount": 1}),
        ("Query", {"Items": ROWS[:1], "Count": 1, "ConsumedCapacity": {"TableName": "t", "CapacityUnits": 0.5}}),
        ("Query", {"Items": ROWS[:1], "Count": 2**70}),
    ],
)
def test_the_answer_is_the_parsers(operation: str, document: dict[str, Any]) -> None:
    assert _parsed(operation, document, lift=True) == _parsed(operation, document, lift=False)


def test_items_skip_the_parser_unless_a_binary_value_may_be_in_them() -> None:
    operation_model = _MODEL.operation_model("Query")
    for items, lifted in (
        (ROWS, True),
        ([{"k": {"B": "AAEC"}}], False),
    ):
        response = {"body": json.dumps({"Items": items, "Count": 1}).encode(), "headers": {}, "status_code": 200}
        customized: dict[str, Any] = {}
        lift_items(operation_model=operation_model, response_dict=response, customized_response_dict=customized)
        assert ("Items" in customized) is lifted
        assert (b"Items" in response["body"]) is not lifted


def test_an_error_answer_is_left_to_the_parser() -> None:
    response = {"body": b'{"__type": "x#ValidationException"}', "headers": {}, "status_code": 400}
    customized: dict[str, Any] = {}
    lift_items(
        operation_model=_MODEL.operation_model("Query"), response_dict=response, customized_response_dict=customized
    )
    assert customized == {} and response["body"] == b'{"__type": "x#ValidationException"}'


@pytest.mark.parametrize("row", ROWS, ids=lambda row: row["key"]["S"])
def test_a_staged_row_decodes_as_pynamodb_read_it(row: dict[str, Any]) -> None:
    assert staged_item(row) == _staged(StagedRow.from_raw_data(row))
