"""chalicelib/observability/: redaction, JSON log lines with a correlation id, EMF metrics, the middleware."""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest
from aws_lambda_powertools.metrics import MetricUnit
from chalice import Chalice, Response
from chalice.app import CloudWatchEvent
from chalice.test import Client

from chalicelib import observability
from chalicelib.observability import REDACTED, Metric, redact, redact_text, telemetry

SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
KEY_ID = "AKIAIOSFOLKFSSAMPLES"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZG1pbiJ9.c2lnbmF0dXJlLXZhbHVlLWhlcmU"
BASIC = "Basic " + base64.b64encode(f"{KEY_ID}:{SECRET}".encode()).decode()
SIGNATURE = "fe5f80f77d5fa3beca038a248ff027d0445342fe2855ddc963176630326f1024"
COMMIT_ID = "a" * 20 + "0123456789abcdef" * 2 + "b" * 12


# ---------------------------------------------------------------------------------------------------------------
# redact


def test_values_under_secret_keys_are_replaced_whole() -> None:
    record = {
        "headers": {"Authorization": BASIC, "Cookie": "internal_auth_session=abc", "accept": "*/*"},
        "secret_access_key": "anything at all",
        "password": 12345,
        "x-amz-security-token": "FQoGZXIvYXdzE",
        "credentials": [{"access_key_id": KEY_ID, "secret_access_key": SECRET}],
    }
    clean = redact(record)
    assert clean["headers"] == {"Authorization": REDACTED, "Cookie": REDACTED, "accept": "*/*"}
    assert clean["secret_access_key"] == REDACTED
    assert clean["password"] == REDACTED
    assert clean["x-amz-security-token"] == REDACTED
    assert clean["credentials"] == REDACTED
    assert record["headers"]["Authorization"] == BASIC  # the input is left alone


def test_identifiers_that_look_like_secret_names_are_kept() -> None:
    record = {"staging_token": "st-123", "sealed_tokens": ["st-1", "st-2"], "access_key_id": KEY_ID, "n": 3}
    assert redact(record) == record


@pytest.mark.parametrize(
    ("text", "leaked"),
    [
        (f"authorization header was {BASIC}", SECRET),
        (f"Authorization: {BASIC}", base64.b64encode(f"{KEY_ID}:{SECRET}".encode()).decode()),
        (f"Bearer {JWT}", JWT),
        (f"token {JWT} expired", JWT),
        (
            (
                f"AWS4-HMAC-SHA256 Credential={KEY_ID}/20250101/us-east-1/s3/aws4_request, "
                f"SignedHeaders=host;x-amz-date, Signature={SIGNATURE}"
            ),
            SIGNATURE,
        ),
        (f"https://b.s3.amazonaws.com/k?X-Amz-Signature={SIGNATURE}&X-Amz-Expires=900", SIGNATURE),
        ("https://b/k?X-Amz-Security-Token=IQoJb3JpZ2luX2VjE&x=1", "IQoJb3JpZ2luX2VjE"),
        (f'{{"secret_access_key": "{SECRET}"}}', SECRET),
        ("password=hunter2hunter2", "hunter2hunter2"),
        (f"bad key pair {KEY_ID} {SECRET}", SECRET),
    ],
)
def test_secret_fragments_of_strings_are_masked(text: str, leaked: str) -> None:
    clean = redact_text(text)
    assert leaked not in clean
    assert REDACTED in clean


@pytest.mark.parametrize(
    "text",
    [
        f"commit {COMMIT_ID} on main",
        "etag 9bb58f26192e4ba00f01e2e7b136bbd8",
        "sha1 da39a3ee5e6b4b0d3255bfef95601890afd80709",
        "s3://bucket/repos/data/gAbCdEf0123/ckz9x2",
        f"access key {KEY_ID} not found",
        "GET /api/v1/repositories/{repository}/refs/{ref}/objects 200",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact_text(text) == text


# ---------------------------------------------------------------------------------------------------------------
# The middleware on a small app of its own


def _lines(out: str) -> list[dict[str, Any]]:
    """Every non-empty stdout line, each of which must be one JSON object."""
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def _logs(out: str) -> list[dict[str, Any]]:
    return [line for line in _lines(out) if "level" in line]


def _emf(out: str) -> list[dict[str, Any]]:
    return [line for line in _lines(out) if "_aws" in line]


@pytest.fixture
def scratch() -> Chalice:
    app = Chalice(app_name="observability-test")
    app.register_middleware(observability.middleware(app), "all")
    module_log = logging.getLogger("chalicelib.scratch")

    @app.route("/api/v1/echo", methods=["POST"])
    def echo() -> Response:
        request = app.current_request
        assert request is not None
        module_log.warning("checking %s for %s", request.headers.get("authorization"), KEY_ID)
        return Response(body={"ok": True}, status_code=201)

    @app.route("/api/v1/boom")
    def boom() -> Response:
        try:
            raise RuntimeError(f"refused {SECRET}")
        except RuntimeError:
            module_log.exception("something failed")
        return Response(body={"message": "internal"}, status_code=500)

    @app.schedule("rate(1 day)", name="collect")
    def collect(event: CloudWatchEvent) -> dict[str, object]:
        return {
            "runs": [
                {"repository": "a", "job_run_id": "j1", "error": ""},
                {"repository": "b", "job_run_id": "j2", "error": ""},
                {"repository": "c", "job_run_id": "", "error": "job start failed"},
            ]
        }

    @app.lambda_function(name="gateway")
    def gateway(event: dict[str, Any], context: Any) -> dict[str, Any]:
        return {"statusCode": 403, "headers": {}, "body": ""}

    return app


@pytest.fixture
def scratch_client(scratch: Chalice) -> Iterator[Client]:
    with Client(scratch) as client:
        yield client


def test_a_request_ends_with_one_json_line_with_its_correlation_id_and_no_secret(
    scratch_client: Client, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    response = scratch_client.http.post(
        "/api/v1/echo", headers={"Authorization": BASIC, "Content-Type": "application/json"}, body=b"{}"
    )
    out = capsys.readouterr().out
    assert response.status_code == 201
    correlation_id = response.headers[observability.REQUEST_ID_HEADER]
    assert correlation_id
    (module_line,) = _logs(out)
    (access_line,) = _emf(out)  # the invocation's one line: its facts and its metrics
    assert module_line["level"] == "WARNING"
    assert module_line["correlation_id"] == access_line["correlation_id"] == correlation_id
    assert module_line["service"] == access_line["service"] == "lakelet"
    assert access_line["http"] == {"method": "POST", "route": "/api/v1/echo", "path": "/api/v1/echo", "status": 201}
    assert access_line[Metric.LATENCY][0] >= 0
    assert KEY_ID in module_line["message"]  # the message is there, the secret is not
    assert SECRET not in out and BASIC not in out and BASIC.split()[1] not in out


def test_each_request_gets_its_own_correlation_id(scratch_client: Client, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    first = scratch_client.http.post("/api/v1/echo", headers={"Content-Type": "application/json"}, body=b"{}")
    second = scratch_client.http.post("/api/v1/echo", headers={"Content-Type": "application/json"}, body=b"{}")
    ids = {line.get("correlation_id") for line in _lines(capsys.readouterr().out)}
    assert first.headers["X-Request-Id"] != second.headers["X-Request-Id"]
    assert ids == {first.headers["X-Request-Id"], second.headers["X-Request-Id"]}
    # Nothing stays bound once the request is over.
    assert "correlation_id" not in telemetry.logger.thread_safe_get_current_keys()


def test_exceptions_are_logged_as_json_without_the_secrets_in_them(
    scratch_client: Client, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    scratch_client.http.get("/api/v1/boom")
    out = capsys.readouterr().out
    error = next(line for line in _logs(out) if line["level"] == "ERROR")
    assert error["exception_name"] == "RuntimeError"
    assert "refused" in error["exception"]
    assert SECRET not in out


def test_scheduled_gc_runs_are_counted_as_emf(scratch_client: Client, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    scratch_client.lambda_.invoke(
        "collect",
        scratch_client.events.generate_cw_event(
            source="aws.events", detail_type="Scheduled Event", detail={}, resources=[]
        ),
    )
    out = capsys.readouterr().out
    (blob,) = _emf(out)
    directive = blob["_aws"]["CloudWatchMetrics"][0]
    assert directive["Namespace"] == "Lakelet"
    assert sorted(directive["Dimensions"][0]) == ["service", "stage"]
    assert blob[Metric.GC_RUNS_STARTED] == [2.0]
    assert blob[Metric.GC_RUNS_FAILED] == [1.0]
    assert blob["stage"]  # the stage's own value: test_metrics_carry_the_stage_of_the_deployment
    assert blob["invocation"]["event"] == "CloudWatchEvent"
    assert blob["correlation_id"]


def test_function_url_requests_log_method_path_and_status_but_not_the_query(
    scratch_client: Client, capsys: pytest.CaptureFixture[str]
) -> None:
    event = {
        "rawPath": "/repo/main/a.csv",
        "rawQueryString": f"X-Amz-Signature={SIGNATURE}",
        "requestContext": {"requestId": "req-123", "http": {"method": "GET"}},
        "headers": {"authorization": BASIC},
    }
    capsys.readouterr()
    scratch_client.lambda_.invoke("gateway", event)
    out = capsys.readouterr().out
    (line,) = _lines(out)
    assert line["correlation_id"] == "req-123"
    assert line["invocation"] == {
        "event": "LambdaFunctionEvent",
        "method": "GET",
        "path": "/repo/main/a.csv",
        "status": 403,
    }
    # Only the latency: a gateway request counts nothing else from outside.
    assert [m["Name"] for m in line["_aws"]["CloudWatchMetrics"][0]["Metrics"]] == [Metric.LATENCY]
    assert SIGNATURE not in out and SECRET not in out


def test_a_root_handler_does_not_print_package_records_a_second_time() -> None:
    seen: list[logging.LogRecord] = []

    class Recorder(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record)

    recorder = Recorder()
    logging.root.addHandler(recorder)  # as the Lambda runtime does before importing the app
    try:
        telemetry._share_handler()
        logging.getLogger("chalicelib.anything").warning("once, as JSON")
        logging.getLogger("somebody.else").warning("through the root")
    finally:
        logging.root.removeHandler(recorder)
    assert [record.getMessage() for record in seen] == ["through the root"]


def test_metrics_carry_the_stage_of_the_deployment(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("LAKELET_STAGE", "prod")
    capsys.readouterr()
    telemetry.count(Metric.COMMITS)
    telemetry.count(Metric.BYTES_WRITTEN, 42, MetricUnit.Bytes)
    telemetry.flush_metrics()
    (blob,) = _emf(capsys.readouterr().out)
    assert blob["stage"] == "prod" and blob["service"] == "lakelet"
    assert blob[Metric.COMMITS] == [1.0] and blob[Metric.BYTES_WRITTEN] == [42.0]
    telemetry.flush_metrics()  # nothing left: no second blob
    assert _emf(capsys.readouterr().out) == []


def test_disabled_metrics_are_dropped_at_each_invocation_not_kept(
    scratch_client: Client, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The local stack disables the EMF line: the values must not pile up in memory (nor print every 100)."""
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "true")
    capsys.readouterr()
    for _ in range(150):
        response = scratch_client.http.post(
            "/api/v1/echo", headers={"Authorization": BASIC, "Content-Type": "application/json"}, body=b"{}"
        )
        assert response.status_code == 201
        assert len(telemetry.metrics.metric_set) == 0
        assert telemetry.metrics.metadata_set == {}  # nothing gathered for a line nobody prints
    assert _emf(capsys.readouterr().out) == []
