"""listRepositories?search=, the fields /config and /setup_lakefs carry beyond the basics, and the installation's
small operations (api/installation.py): comm prefs, statistics, auth capabilities, usage report, GC config."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime

import lakefs_sdk
import pytest

from chalicelib import wiring
from chalicelib.adapters.memory_usage import MemoryUsageStore
from chalicelib.s3proxy.gateway import S3Gateway
from chalicelib.settings import DAY_SECONDS, ENV_MIN_AGE_SECONDS
from chalicelib.usage import UsageMeter
from tests.s3proxy.conftest import signed

from .support import BUCKET, Api, assert_error, body_of, conforms


class CountingUsageStore(MemoryUsageStore):
    """The memory store, counting the calls that would each be a DynamoDB request."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: Counter[str] = Counter()

    def add(self, installation_id: str, year: int, month: int, count: int) -> None:
        self.calls["add"] += 1
        super().add(installation_id, year, month, count)


def test_list_repositories_search_keeps_ids_containing_it(api: Api) -> None:
    for name in ("sales-eu", "sales-us", "logs-eu", "eu-archive"):
        api.create_repo(name)
    listing = conforms(lakefs_sdk.RepositoryList, body_of(api.get("/repositories", query={"search": "eu"})))
    assert [r.id for r in listing.results] == ["eu-archive", "logs-eu", "sales-eu"]
    both = body_of(api.get("/repositories", query={"search": "eu", "prefix": "sales"}))
    assert [r["id"] for r in both["results"]] == ["sales-eu"]
    paged = body_of(api.get("/repositories", query={"search": "-", "amount": 2}))
    assert [r["id"] for r in paged["results"]] == ["eu-archive", "logs-eu"] and paged["pagination"]["has_more"]
    rest = body_of(api.get("/repositories", query={"search": "-", "after": paged["pagination"]["next_offset"]}))
    assert [r["id"] for r in rest["results"]] == ["sales-eu", "sales-us"]
    assert body_of(api.get("/repositories", query={"search": "EU"}))["results"] == []  # case-sensitive, as lakeFS


def test_config_carries_list_ui_and_capabilities(api: Api) -> None:
    config = body_of(api.get("/config"))
    conforms(lakefs_sdk.Config, config)
    assert config["storage_config_list"] == [] and config["ui_config"] == {} and config["capabilities_config"] == {}


def test_setup_state_carries_login_config_and_comm_prefs(anonymous: Api) -> None:
    state = body_of(anonymous.get("/setup_lakefs"))
    conforms(lakefs_sdk.SetupState, state)
    assert state["comm_prefs_missing"] is False
    login = state["login_config"]
    # swagger.yml's required LoginConfig fields, and the cookie the web UI session really uses.
    assert {"login_url", "login_cookie_names", "logout_url"} <= set(login)
    assert login["login_cookie_names"] == ["internal_auth_session"] and login["RBAC"] == "internal"


PREFS = {"email": "jane@example.com", "featureUpdates": True, "securityUpdates": False, "firstName": "Jane"}


def test_comm_prefs_are_accepted_without_credentials(anonymous: Api) -> None:
    response = anonymous.post("/setup_comm_prefs", json_body=PREFS)
    assert response.status_code == 200


@pytest.mark.parametrize(
    "change",
    [
        {"email": ""},
        {"email": "not-an-address"},
        {"email": "Jane <jane@example.com>"},
        {"featureUpdates": None},
        {"securityUpdates": "yes"},
        {"firstName": 3},
    ],
)
def test_comm_prefs_refuse_what_lakefs_refuses(anonymous: Api, change: dict[str, object]) -> None:
    body = {k: v for k, v in {**PREFS, **change}.items() if v is not None}
    assert_error(anonymous.post("/setup_comm_prefs", json_body=body), 400)


def test_stats_events_are_accepted(api: Api, anonymous: Api) -> None:
    events = {"events": [{"class": "ui-event", "name": "open", "count": 2}]}
    assert api.post("/statistics", json_body=events).status_code == 204
    assert api.post("/statistics", json_body={"events": []}).status_code == 204
    assert_error(anonymous.post("/statistics", json_body=events), 401)


@pytest.mark.parametrize(
    "event",
    [
        {"class": "", "name": "n", "count": 1},
        {"class": "c", "name": "", "count": 1},
        {"class": "c", "name": "n", "count": -1},
    ],
)
def test_stats_events_refuse_what_lakefs_refuses(api: Api, event: dict[str, object]) -> None:
    assert_error(api.post("/statistics", json_body={"events": [event]}), 400)
    assert_error(api.post("/statistics", json_body={}), 400)


def test_auth_capabilities_say_no_mail(anonymous: Api) -> None:
    # AuthCapabilities (swagger.yml; lakefs-sdk leaves this internal operation out): two optional booleans.
    assert body_of(anonymous.get("/auth/capabilities")) == {"invite_user": False, "forgot_password": False}


def test_usage_report_counts_requests_without_a_store_call_each(
    api: Api, anonymous: Api, services: wiring.Services
) -> None:
    store = CountingUsageStore()
    services.usage = UsageMeter(store, flush_seconds=3600)
    api.create_repo("repo1")
    for _ in range(8):
        assert api.get("/repositories/repo1").status_code == 200
    assert_error(anonymous.get("/usage-report/summary"), 401)  # not signed in: neither answered nor counted
    assert anonymous.get("/healthcheck").status_code == 204  # public: not counted
    # Nine requests counted, and not one call to the store yet: they wait in this container for the interval.
    assert store.calls == Counter() and services.usage.pending() == 9

    report = conforms(lakefs_sdk.InstallationUsageReport, body_of(api.get("/usage-report/summary")))
    now = datetime.now(UTC)
    # The report's own call counts too, as in lakeFS (its LogAction comes before the flush).
    assert [(r.year, r.month, r.count) for r in report.reports] == [(now.year, now.month, 10)]
    assert report.installation_id == store.get_installation_id() and len(report.installation_id) == 36
    assert store.calls["add"] == 1

    text = api.get("/usage-report/summary", headers={"accept": "text/plain"})
    assert text.status_code == 200 and text.headers["Content-Type"].startswith("text/plain")
    assert text.body.decode() == (
        f"Usage for installation ID: {report.installation_id}\n{now.year}-{now.month:02d}: {11:12d}\n"
    )


def test_setup_keeps_the_installation_id(anonymous: Api, services: wiring.Services) -> None:
    store = CountingUsageStore()
    services.usage = UsageMeter(store)
    assert store.get_installation_id() is None
    assert anonymous.post("/setup_lakefs", json_body={"username": "founder"}).status_code == 200
    assert store.get_installation_id() is not None


def test_s3_gateway_requests_are_counted(services: wiring.Services, credentials: tuple[str, str]) -> None:
    services.usage = UsageMeter(CountingUsageStore(), flush_seconds=3600)
    services.engine.repositories.create_repository("repo1", f"s3://{BUCKET}/repo1")
    gateway = S3Gateway.from_services(services)
    key, secret = credentials
    assert gateway.handle(signed("PUT", "/repo1/main/a.txt", body=b"hello", key=key, secret=secret)).status == 200
    assert gateway.handle(signed("GET", "/repo1/main/a.txt", key=key, secret=secret)).status == 200
    refused = signed("GET", "/repo1/main/a.txt", key=key, secret="wrong-secret")
    assert gateway.handle(refused).status == 403  # refused: not counted
    assert services.usage.pending() == 2


def test_gc_config_grace_period_is_the_gc_min_age(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    config = conforms(lakefs_sdk.GarbageCollectionConfig, body_of(api.get("/config/garbage-collection")))
    assert config.grace_period == DAY_SECONDS
    monkeypatch.setenv(ENV_MIN_AGE_SECONDS, "3600")
    assert body_of(api.get("/config/garbage-collection"))["grace_period"] == 3600
