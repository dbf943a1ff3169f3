"""Observability of the real app (chalicelib/observability/ wired in app.py): one JSON line per request (the
EMF blob) with its correlation id, route and status and no secret, and metrics for what the requests did."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest
from chalice.test import Client

from chalicelib.observability import REQUEST_ID_HEADER, ROUTE_METRICS, Metric
from tests.api.support import Api, app, basic


def _lines(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def _metrics(out: str) -> Counter[str]:
    totals: Counter[str] = Counter()
    for line in _lines(out):
        for directive in line.get("_aws", {}).get("CloudWatchMetrics", []):
            for metric in directive["Metrics"]:
                totals[metric["Name"]] += sum(line[metric["Name"]])
    return totals


def test_every_counted_route_is_a_route_of_the_app() -> None:
    for method, path in ROUTE_METRICS:
        assert method in app.routes.get(path, {}), (method, path)


def test_request_logs_are_json_with_the_correlation_id_and_no_secret(
    client: Client, credentials: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    key, secret = credentials
    capsys.readouterr()
    ok = Api(client, (key, secret)).get("/repositories")
    refused = Api(client, (key, secret + "x")).get("/repositories")
    Api(client, None).post(
        "/setup_lakefs",
        json_body={"username": "x", "key": {"access_key_id": "AKIAX", "secret_access_key": "setup-secret-value"}},
    )
    out = capsys.readouterr().out
    lines = _lines(out)  # every stdout line is one JSON object
    requests = [line for line in lines if "http" in line]
    assert [line["http"]["status"] for line in requests] == [200, 401, 409]
    assert [line["http"]["route"] for line in requests] == [
        "/api/v1/repositories",
        "/api/v1/repositories",
        "/api/v1/setup_lakefs",
    ]
    assert requests[0]["correlation_id"] == ok.headers[REQUEST_ID_HEADER]
    assert requests[1]["correlation_id"] == refused.headers[REQUEST_ID_HEADER]
    assert requests[0]["correlation_id"] != requests[1]["correlation_id"]
    assert all(line["service"] == "lakelet" and line[Metric.LATENCY] for line in requests)
    for value in (secret, secret + "x", "setup-secret-value", basic(key, secret).split()[1]):
        assert value not in out


def test_what_requests_did_is_counted_as_emf(api: Api, repo: str, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    api.upload(repo, "main", "a.csv", b"12345")
    api.upload(repo, "main", "b.csv", b"1234567")
    api.commit(repo, "main", "two files")
    assert (
        api.post(f"/repositories/{repo}/branches", json_body={"name": "feature", "source": "main"}).status_code == 201
    )
    api.upload(repo, "feature", "a.csv", b"feature")
    api.commit(repo, "feature", "on feature")
    api.upload(repo, "main", "a.csv", b"main!")
    api.commit(repo, "main", "on main")
    conflict = api.post(f"/repositories/{repo}/refs/feature/merge/main", json_body={})
    assert conflict.status_code == 409
    deleted = api.delete(f"/repositories/{repo}/branches/main/objects", query={"path": "b.csv"})
    assert deleted.status_code == 204
    api.commit(repo, "main", "removed b")
    assert api.post(f"/repositories/{repo}/branches", json_body={"name": "clean", "source": "main"}).status_code == 201
    api.upload(repo, "clean", "c.csv", b"c")
    api.commit(repo, "clean", "on clean")
    merged = api.post(f"/repositories/{repo}/refs/clean/merge/main", json_body={})
    assert merged.status_code == 200, merged.body
    metrics = _metrics(capsys.readouterr().out)
    assert metrics[Metric.OBJECTS_WRITTEN] == 5
    assert metrics[Metric.BYTES_WRITTEN] == 5 + 7 + 7 + 5 + 1
    assert metrics[Metric.COMMITS] == 5  # the merge commit counts as a merge
    assert metrics[Metric.CONFLICTS] == 1
    assert metrics[Metric.MERGES] == 1
    assert metrics[Metric.OBJECTS_DELETED] == 1
