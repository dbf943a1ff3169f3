"""Webhooks reach only what the deployment allows, on the address that was checked, and end at their deadline.

Servers here listen on loopback: a deployment refuses that, the local setting (LOCAL_WEBHOOK_DESTINATIONS) allows
it. The dripping server counts the bytes it got out before the hook gave up: the deadline is shown by a count and
a generous bound (under 3x the timeout), not a tight timing assertion.
"""

from __future__ import annotations

import json
import shutil
import ssl
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import pytest

from chalicelib.adapters.hooks import WebhookHooks
from chalicelib.adapters.hooks.destinations import Destinations
from chalicelib.graveler.actions import HookSpec, InvalidActionFile, parse_action
from chalicelib.settings import LOCAL_WEBHOOK_DESTINATIONS, Settings
from tests.api.hook_server import HookServer, Raw, start_hook_server

PAYLOAD = json.dumps({"event_type": "pre-commit", "hook_id": "h"}).encode()
DEPLOYED = WebhookHooks()
LOCAL = WebhookHooks(Destinations(LOCAL_WEBHOOK_DESTINATIONS))


def webhook(url: str, **props: object) -> HookSpec:
    return HookSpec("h", "webhook", "", {"url": url, **props}, 60.0)


@pytest.fixture
def hook_server() -> Iterator[HookServer]:
    state, server = start_hook_server()
    yield state
    server.shutdown()
    server.server_close()


REFUSED = [
    "127.0.0.1",
    "127.8.9.10",
    "::1",
    "169.254.169.254",
    "169.254.170.2",
    "fd00:ec2::254",
    "fe80::1",
    "fe80::1%eth0",
    "10.0.0.1",
    "172.16.5.4",
    "192.168.1.1",
    "100.64.0.1",
    "0.0.0.0",
    "::",
    "::ffff:127.0.0.1",
    "::ffff:169.254.169.254",
    "2002:7f00:1::",
    "64:ff9b::a9fe:a9fe",
    "224.0.0.1",
    "255.255.255.255",
    "fc00::1",
]


@pytest.mark.parametrize("address", REFUSED)
def test_non_public_addresses_are_refused_unless_listed(address: str) -> None:
    assert Destinations().refusal(address, 80)
    assert not Destinations([address.split("%")[0]]).refusal(address, 80)


@pytest.mark.parametrize("address", ["8.8.8.8", "2001:4860:4860::8888", "::ffff:8.8.8.8", "64:ff9b::808:808"])
def test_public_addresses_are_allowed(address: str) -> None:
    assert Destinations().refusal(address, 443) == ""


def test_the_lambda_runtime_api_is_refused_even_with_loopback_listed() -> None:
    destinations = Destinations(LOCAL_WEBHOOK_DESTINATIONS, ["127.0.0.1:9001"])
    assert "Lambda runtime API" in destinations.refusal("127.0.0.1", 9001)
    assert "Lambda runtime API" in destinations.refusal("::ffff:127.0.0.1", 9001)
    assert destinations.refusal("127.0.0.1", 9002) == ""


def test_the_setting_refuses_what_is_not_a_network() -> None:
    assert Settings.from_env(
        {"LAKELET_WEBHOOK_ALLOWED_DESTINATIONS": "10.1.0.0/16, ::1"}
    ).webhook_allowed_destinations == (
        "10.1.0.0/16",
        "::1",
    )
    assert Settings.from_env({}).webhook_allowed_destinations == ()
    with pytest.raises(ValueError, match="LAKELET_WEBHOOK_ALLOWED_DESTINATIONS"):
        Settings.from_env({"LAKELET_WEBHOOK_ALLOWED_DESTINATIONS": "hooks.internal"})


def action(url: str, headers: dict[str, str] | None = None) -> bytes:
    props: dict[str, object] = {"url": url}
    if headers:
        props["headers"] = headers
    doc = {"name": "a", "on": {"pre-commit": None}, "hooks": [{"id": "h1", "type": "webhook", "properties": props}]}
    return json.dumps(doc).encode()


@pytest.mark.parametrize(
    ("url", "headers", "reason"),
    [
        ("http://user:pass@example.com/h", None, "credentials"),
        ("http://token@example.com/h", None, "credentials"),
        ("http://0x7f000001/h", None, "spelled as a number"),
        ("http://2130706433/h", None, "spelled as a number"),
        ("http://0177.0.0.1/h", None, "spelled as a number"),
        ("http://127.1/h", None, "spelled as a number"),
        ("http://example.com/h", {"Host": "metadata.internal"}, "may not be set"),
        ("http://example.com/h", {"host": "x"}, "may not be set"),
        ("http://example.com/h", {"Transfer-Encoding": "chunked"}, "may not be set"),
        ("http://example.com/h", {"Connection": "close"}, "may not be set"),
        ("http://example.com/h", {"Content-Length": "0"}, "may not be set"),
        ("http://example.com/h", {"Proxy-Authorization": "Basic x"}, "may not be set"),
        ("http://example.com/h", {"X-A": "v\r\nX-Injected: 1"}, "control character"),
        ("http://example.com/h", {"X A": "v"}, "not an HTTP token"),
        ("http://exa mple.com/h", None, "without spaces"),
    ],
)
def test_validation_refuses_what_changes_where_a_request_goes(url: str, headers: dict | None, reason: str) -> None:
    with pytest.raises(InvalidActionFile, match=reason):
        parse_action(action(url, headers), json.loads, "_lakefs_actions/a.yaml")


def test_validation_keeps_ordinary_webhooks() -> None:
    for url in ("https://hooks.example.com/check?x=1", "http://127.0.0.1:8080/h", "http://[::1]:9000/h"):
        assert parse_action(action(url, {"Authorization": "Bearer t", "X-Trace": "1"}), json.loads).name == "a"


def test_a_deployment_sends_nothing_to_loopback(hook_server: HookServer) -> None:
    for url in (hook_server.on("/x", 200), hook_server.url.replace("127.0.0.1", "localhost") + "/x"):
        outcome = DEPLOYED.invoke(webhook(url), PAYLOAD, 5)
        assert not outcome.ok and "destination refused" in outcome.error and "loopback" in outcome.error
    assert hook_server.received == []


class Resolver:
    """Answers a list of addresses per name, and counts its calls."""

    def __init__(self, answers: dict[str, list[str]]) -> None:
        self.answers = answers
        self.calls = 0

    def __call__(self, host: str, port: int) -> list[str]:
        self.calls += 1
        return self.answers[host]


def test_a_name_resolving_anywhere_refused_is_refused(hook_server: HookServer) -> None:
    port = hook_server.url.rsplit(":", 1)[1]
    resolver = Resolver({"hooks.example.com": ["93.184.215.14", "127.0.0.1"]})
    outcome = WebhookHooks(resolver=resolver).invoke(webhook(f"http://hooks.example.com:{port}/x"), PAYLOAD, 5)
    assert not outcome.ok and "hooks.example.com resolves to 127.0.0.1" in outcome.error
    assert hook_server.received == []


def test_the_request_goes_to_the_checked_address_resolved_once(hook_server: HookServer) -> None:
    """No second lookup between the check and the connect (DNS rebinding): the name is resolved once, the
    connection is made to that address, and the Host header still names the URL's host."""
    port = hook_server.url.rsplit(":", 1)[1]
    resolver = Resolver({"rebind.example": ["127.0.0.1"]})
    hooks = WebhookHooks(Destinations(LOCAL_WEBHOOK_DESTINATIONS), resolver=resolver)
    outcome = hooks.invoke(webhook(f"http://rebind.example:{port}/pinned"), PAYLOAD, 5)
    assert outcome.ok, outcome
    assert resolver.calls == 1
    assert [r.path for r in hook_server.received] == ["/pinned"]
    assert hook_server.received[0].headers["Host"] == f"rebind.example:{port}"


def test_a_dripping_server_is_cut_at_the_deadline() -> None:
    """Before: each read had the whole timeout, so a byte every 1.5 s held a 2 s hook for 75 s (until the answer
    ended). Now the deadline is for the whole exchange: headers dripped a byte every 0.1 s stop at 1 s."""
    server = Raw(b"HTTP/1.1 200 OK\r\nX-Slow: ", drip=True).start()
    try:
        started = time.monotonic()
        outcome = LOCAL.invoke(webhook(f"http://127.0.0.1:{server.port}/drip"), PAYLOAD, 1.0)
        elapsed = time.monotonic() - started
    finally:
        server.stop()
    assert not outcome.ok and "timed out after 1s" in outcome.error
    assert server.sent < 30  # about 10 at one byte per 0.1 s; the old code read for as long as it dripped
    assert elapsed < 3.0


def test_a_dripping_body_is_cut_at_the_deadline_too() -> None:
    server = Raw(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n", drip=True).start()
    try:
        outcome = LOCAL.invoke(webhook(f"http://127.0.0.1:{server.port}/drip"), PAYLOAD, 1.0)
    finally:
        server.stop()
    assert not outcome.ok and "timed out" in outcome.error
    assert server.sent < 30


def test_redirects_are_not_followed() -> None:
    server = Raw(b"HTTP/1.1 307 Temporary Redirect\r\nLocation: http://169.254.169.254/\r\nContent-Length: 0\r\n\r\n")
    server.start()
    try:
        outcome = LOCAL.invoke(webhook(f"http://127.0.0.1:{server.port}/r"), PAYLOAD, 5)
    finally:
        server.stop()
    assert not outcome.ok and "status code: 307" in outcome.error
    assert server.requests == 1


def test_a_run_ends_at_its_deadline_with_dripping_hooks() -> None:
    """Two hooks of 5 s each under a run limit of 1.5 s: the first is cut when the run's time is spent, the second
    is not sent; the server got out about 15 bytes in all."""
    from chalicelib.adapters.memory import MemoryBlockStore
    from chalicelib.graveler.actions import EventType, HookAborted, HookEvent, HookRunner, RunStore

    server = Raw(b"HTTP/1.1 200 OK\r\nX-Slow: ", drip=True).start()
    url = f"http://127.0.0.1:{server.port}/drip"
    hooks = [{"id": f"h{i}", "type": "webhook", "properties": {"url": url, "timeout": "5s"}} for i in (1, 2)]
    doc = json.dumps({"name": "slow", "on": {"pre-commit": None}, "hooks": hooks}).encode()
    runner = HookRunner(
        {"webhook": LOCAL},
        RunStore(MemoryBlockStore()),
        lambda repo, ref: [("_lakefs_actions/slow.yaml", doc)],
        json.loads,
        lambda repo: "s3://b/r",
        max_run_seconds=1.5,
    )
    try:
        started = time.monotonic()
        with pytest.raises(HookAborted, match="timed out after"):
            runner.run(HookEvent(EventType.PRE_COMMIT, "r", "main", branch_id="main"))
        elapsed = time.monotonic() - started
    finally:
        server.stop()
    assert server.sent < 45
    assert server.requests == 1  # the action's first hook failed: its second was not run
    assert elapsed < 4.5


@pytest.fixture
def tls_server(tmp_path: Any) -> Iterator[tuple[int, ssl.SSLContext]]:
    """An HTTPS hook server on loopback with a certificate for hooks.test, and a client context trusting it."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("openssl is needed to make the test certificate")
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert)]
        + ["-days", "1", "-subj", "/CN=hooks.test", "-addext", "subjectAltName=DNS:hooks.test"],
        check=True,
        capture_output=True,
    )
    state, server = start_hook_server()
    server_side = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_side.load_cert_chain(cert, key)
    server.socket = server_side.wrap_socket(server.socket, server_side=True)
    client_side = ssl.create_default_context(cafile=str(cert))
    yield int(state.url.rsplit(":", 1)[1]), client_side
    server.shutdown()
    server.server_close()


def test_tls_is_verified_against_the_name_while_connecting_to_the_checked_address(
    tls_server: tuple[int, ssl.SSLContext],
) -> None:
    port, trust = tls_server
    resolver = Resolver({"hooks.test": ["127.0.0.1"], "other.test": ["127.0.0.1"]})
    hooks = WebhookHooks(Destinations(LOCAL_WEBHOOK_DESTINATIONS), resolver=resolver, tls=trust)
    assert hooks.invoke(webhook(f"https://hooks.test:{port}/ok"), PAYLOAD, 5).ok
    wrong = hooks.invoke(webhook(f"https://other.test:{port}/ok"), PAYLOAD, 5)  # the certificate names hooks.test
    assert not wrong.ok and "SSL" in wrong.error
