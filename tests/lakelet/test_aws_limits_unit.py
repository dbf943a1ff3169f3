"""The pieces of ``--aws-limits`` that need no stack: the timeouts come from the template's source, and a body is
sized as API Gateway hands it to Lambda."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from lakelet.stack.aws_limits import API_FUNCTION, AwsLimits, function_timeouts
from lakelet.stack.limited_api import event_bytes, is_binary

PROJECT = Path(__file__).resolve().parents[2]


def test_timeouts_are_read_from_the_chalice_config_each_time(tmp_path: Path) -> None:
    config = json.loads((PROJECT / ".chalice" / "config.json").read_text())
    (tmp_path / ".chalice").mkdir()
    config["stages"]["dev"].setdefault("lambda_functions", {})["commit_plan"] = {"lambda_timeout": 120}
    (tmp_path / ".chalice" / "config.json").write_text(json.dumps(config))
    timeouts = function_timeouts(tmp_path)
    assert timeouts["commit_plan"] == 120.0
    assert timeouts[API_FUNCTION] == float(config["lambda_timeout"])
    assert timeouts["s3_gateway"] == float(config["stages"]["dev"]["lambda_functions"]["s3_gateway"]["lambda_timeout"])
    assert AwsLimits.deployed(tmp_path).timeout("commit_plan") == 120.0
    assert "workflow tasks cut at" in AwsLimits.deployed(tmp_path).summary()


def test_every_body_is_binary_when_the_app_lists_everything() -> None:
    assert is_binary("application/json", ["*/*"]) and is_binary("", ["*/*"])
    assert not is_binary("application/json", ["application/octet-stream"])
    assert is_binary("image/png; x=y", ["image/*"])


def test_the_event_counts_the_body_base64_encoded_and_the_headers_twice() -> None:
    body = b"\x00" * 3000
    event = {
        "requestContext": {"httpMethod": "POST", "resourcePath": "/x", "path": "/x"},
        "headers": {"content-type": "application/octet-stream", "x-long": "h" * 500},
        "multiValueQueryStringParameters": None,
        "body": body,
    }
    size = event_bytes(event, body, ["*/*"])
    assert size > len(base64.b64encode(body)) + 2 * 500
    assert size < len(base64.b64encode(body)) + 2 * 500 + 2_000
