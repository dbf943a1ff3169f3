"""DynamoDB items taken from the wire (chalicelib/adapters/dynamodb/wire.py) and staged rows decoded and written
without PynamoDB (rows.py) give exactly what botocore's parser and PynamoDB's model gave and write (issue 43)."""

from __future__ import annotations

import json
from typing import Any

import botocore.session
import pytest
from botocore.parsers import create_parser

from chalicelib.adapters.dynamodb.models import StagedRow
from chalicelib.adapters.dynamodb.rows import KEY_ONLY, attributes, staged_item
from chalicelib.adapters.dynamodb.staging import _staged
from chalicelib.adapters.dynamodb.wire import lift_items
from chalicelib.graveler.records import Entry

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


ENTRIES: list[Entry | None] = [
    Entry("s3://b/data/x", 1234, "e1", 1700000000, "text/csv", {"owner": "me", "ü": '\u2028 "q"'}),
    Entry("s3://b/data/y", 0, "", 0, "application/octet-stream", {}),
    Entry("p", 2**63, "e", 1700000000.5, "c", {}),  # type: ignore[arg-type]  # a float, as PynamoDB writes one
    Entry("p", 1, None, 2, None, None),  # type: ignore[arg-type]  # None: left out, as the model leaves it out
    None,
]


@pytest.mark.parametrize("entry", ENTRIES)
def test_a_staged_rows_attributes_are_what_pynamodb_writes(entry: Entry | None) -> None:
    model = _row_model()
    if entry is None:
        row = model(staging_token="t", key="k", tombstone=True)
    else:
        fields = {name: getattr(entry, name) for name in ("physical_address", "size", "etag", "mtime", "content_type")}
        row = model(staging_token="t", key="k", tombstone=False, user_metadata=entry.user_metadata, **fields)
    args, kwargs = row._get_save_args()
    assert args == ("t",) and kwargs["range_key"] == "k"
    written = attributes(entry)
    assert written == kwargs["attributes"] and list(written) == list(kwargs["attributes"])
    assert staged_item({"staging_token": {"S": "t"}, "key": {"S": "k"}, **written}).value == (
        None if entry is None else _staged(StagedRow.from_raw_data({"key": {"S": "k"}, **written})).value
    )


def test_a_row_of_its_key_alone_is_what_pynamodb_writes() -> None:
    args, kwargs = _row_model()(staging_token="t#k0", key="0001k")._get_save_args()
    assert args == ("t#k0",) and kwargs["range_key"] == "0001k" and kwargs["attributes"] == KEY_ONLY


def _row_model() -> type[StagedRow]:
    class Row(StagedRow):
        class Meta:
            table_name = "staging"
            region = "us-east-1"

    return Row
