"""A bounded adversarial run against a real ``lakelet up`` (moto server, API devserver, S3 gateway), on
127.0.0.1 ports picked at random: every route of the app with bad inputs, the gateway's header and body
cases, and targeted cases of the routes that hand out bytes, URLs or sessions: the batch upload, presigned
listings under a read deny, the write-once presigned upload, login with a non-JSON body and a token after
logout; and the engine's consistency under concurrency (adversarial_consistency.py: concurrent commits answer
their own requests, reads during commits see acknowledged writes, a pre-commit hook judges exactly what is
committed). Prints what it tried and every 5xx, leak or inconsistency it saw; exits 1 if there was any.

    .venv/bin/python -m tests.security.adversarial [--quick]

Not collected by pytest (a manual check, minutes long); tests/security/test_*.py hold the fast guarantees.
"""

from __future__ import annotations

import argparse
import base64
import collections
import contextlib
import hashlib
import http.client
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from app import app  # noqa: E402
from tests.security.adversarial_consistency import check_consistency  # noqa: E402
from tests.security.adversarial_hooks import ENVIRONMENT, check_hooks_and_imports  # noqa: E402

KEY, SECRET = "AKIAADVERSARIAL00001", "adversarial/secret/key/0123456789abcdefgh"
PREFIX = "/api/v1"
REPO = "adv"
BODY_METHODS = {"POST", "PUT", "PATCH", "DELETE"}


def bodies() -> dict[str, bytes]:
    surrogates = (
        '{"name": "a\\ud800", "id": "\\udfff", "message": "\\ud800", "source": "main", "ref": "\\ud800",'
        ' "metadata": {"k\\ud800": "v\\udc00"}, "paths": ["\\ud800"], "storage_namespace": "s3://x/\\ud800"}'
    )
    return {
        "deep-list": b"[" * 100_000 + b"]" * 100_000,
        "deep-object": b'{"a":' * 50_000 + b"1" + b"}" * 50_000,
        "surrogates": surrogates.encode(),
        "control-chars": json.dumps(
            {
                "name": "a\r\nb\x00",
                "id": "\x1b[31m",
                "message": "x\r\nSet-Cookie: a=1",
                "source": "main",
                "ref": "main",
                "metadata": {"k\n": "v\r"},
            }
        ).encode(),
        "oversized": json.dumps(
            {
                "name": "b" * 2000,
                "id": "t" * 1500,
                "message": "m" * 1_000_000,
                "source": "main",
                "ref": "main",
                "metadata": {"k": "v" * 400_000},
            }
        ).encode(),
        "extreme-ints": json.dumps(
            {
                "message": "m",
                "date": 10**40,
                "amount": -(2**63) - 1,
                "parent_number": 2**64,
                "size_bytes": 2**70,
                "mtime": 10**20,
            }
        ).encode(),
        "float-date": b'{"message": "m", "date": 1e40}',
        "nan": b'{"message": "m", "date": NaN}',
        "not-json": b"\xff\xfe\x00garbage",
        "empty": b"",
        "wrong-types": json.dumps({"name": 1, "id": [], "message": {}, "metadata": [1], "paths": "x"}).encode(),
    }


PATH_VALUES = {
    "seeded": None,
    "long": "x" * 2000,
    "lookalike": "m\u0430in",
    "control": "a\r\nb",
    "surrogate-bytes": "%ED%A0%80",
    "dotdot": "..",
}
QUERY_VALUES = ["x" * 5000, "%ED%A0%80", "a%0D%0Ab", "99999999999999999999999", "-1", "%00"]


class Stack:
    def __init__(self, log_dir: Path, port_base: int | None = None) -> None:
        ports = random.sample(range(20000, 60000), 3) if port_base is None else [port_base + i for i in range(3)]
        self.api_port, self.s3_port, self.moto_port = ports
        log_dir.mkdir(parents=True, exist_ok=True)
        self.out = open(log_dir / "adversarial-local.out", "wb")  # noqa: SIM115
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "lakelet",
                "up",
                "--api-port",
                str(self.api_port),
                "--s3-port",
                str(self.s3_port),
                "--moto-port",
                str(self.moto_port),
                "--ephemeral",  # never the user's data directory
                "--access-key-id",
                KEY,
                "--secret-access-key",
                SECRET,
                # A stack of its own that leaves nothing behind: never the user's data directory.
                "--ephemeral",
            ],
            cwd=ROOT,
            # The hook and import cases need an import location and an allowed Lambda (adversarial_hooks.py).
            env={**os.environ, **ENVIRONMENT},
            stdout=self.out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 180
        while "Press Ctrl-C to stop." not in (log_dir / "adversarial-local.out").read_text(errors="replace"):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise SystemExit("lakelet up did not start; see " + str(log_dir / "adversarial-local.out"))
            time.sleep(0.2)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.out.close()


def auth_header() -> str:
    return "Basic " + base64.b64encode(f"{KEY}:{SECRET}".encode()).decode()


def send(
    port: int,
    method: str,
    target: str,
    body: bytes = b"",
    headers: dict[str, str] | None = None,
) -> tuple[int, bytes, list[tuple[str, str]]]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.putrequest(method, target, skip_accept_encoding=True)
        for name, value in {"Content-Length": str(len(body)), **(headers or {})}.items():
            conn.putheader(name, value)
        # Refused before the body was read (as it should be): its answer is still there to read.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            conn.endheaders(body)
        response = conn.getresponse()
        return response.status, response.read(), response.getheaders()
    finally:
        conn.close()


def seed(api_port: int) -> None:
    h = {"Authorization": auth_header(), "Content-Type": "application/json"}
    send(
        api_port,
        "POST",
        PREFIX + "/repositories",
        json.dumps({"name": REPO, "storage_namespace": "s3://lakelet-local/" + REPO}).encode(),
        h,
    )
    send(api_port, "GET", PREFIX + "/config", b"", h)
    send(api_port, "GET", PREFIX + "/config/storage", b"", h)
    send(api_port, "POST", PREFIX + f"/repositories/{REPO}/branches/main/objects?path=a.txt", b"hello", h)
    send(api_port, "POST", PREFIX + f"/repositories/{REPO}/branches/main/commits", b'{"message": "seed"}', h)
    send(api_port, "POST", PREFIX + f"/repositories/{REPO}/tags", b'{"id": "v1", "ref": "main"}', h)


SEEDED = {
    "repository": REPO,
    "branch": "main",
    "ref": "main",
    "destinationBranch": "main",
    "tag": "v1",
    "userId": "nobody",
    "groupId": "Viewers",
    "policyId": "FSReadAll",
    "accessKeyId": "AKIANOSUCHKEY",
    "commitId": "main",
    "leftRef": "main",
    "rightRef": "main",
    "sourceRef": "main",
}


def concrete(path: str, kind: str, method: str) -> str:
    def value(match: re.Match[str]) -> str:
        name = match.group(0)[1:-1]
        if kind == "seeded" or (name == "repository" and kind not in ("long", "lookalike")):
            seeded = SEEDED.get(name, "x")
            # DELETE never touches the seeded repository or the admin: the rest of the run needs them.
            return "gone-repo" if method == "DELETE" and name == "repository" else quote(seeded)
        raw = PATH_VALUES[kind]
        return raw if kind == "surrogate-bytes" else quote(str(raw), safe="")

    return re.sub(r"\{[^}]+\}", value, path)


Record = Callable[[str, int, bytes], None]
Flag = Callable[[str], None]


def send_json(
    port: int,
    method: str,
    target: str,
    body: object = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, Any]:
    """A JSON request to the API as the admin (unless ``headers`` carry their own Authorization)."""
    all_headers = {"Authorization": auth_header(), "Content-Type": "application/json", **(headers or {})}
    raw = b"" if body is None else json.dumps(body).encode()
    status, answer, _ = send(port, method, PREFIX + target, raw, all_headers)
    try:
        return status, json.loads(answer) if answer else None
    except ValueError:
        return status, answer


def send_url(method: str, url: str, body: bytes = b"", headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    """A request to a presigned URL (moto's S3), as a client holding only the URL would send it."""
    parts = urlsplit(url)
    target = parts.path + (f"?{parts.query}" if parts.query else "")
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port or 80, timeout=60)
    try:
        conn.request(method, target, body=body, headers=headers or {})
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def upload_raw(port: int, method: str, target: str, data: bytes) -> tuple[int, bytes]:
    """An object upload (octet-stream body) to an API path, as the admin."""
    headers = {"Authorization": auth_header(), "Content-Type": "application/octet-stream"}
    status, answer, _ = send(port, method, PREFIX + target, data, headers)
    return status, answer


def user_with(port: int, name: str, *policies: dict[str, Any]) -> str:
    """The Authorization header of a new user with these policies attached (not through the built-in groups:
    the route loop above deletes the seeded group and policy)."""
    send_json(port, "POST", "/auth/users", {"id": name})
    for policy in policies:
        send_json(port, "POST", "/auth/policies", policy)
        send_json(port, "PUT", f"/auth/users/{name}/policies/{policy['id']}")
    _, pair = send_json(port, "POST", f"/auth/users/{name}/credentials")
    return "Basic " + base64.b64encode(f"{pair['access_key_id']}:{pair['secret_access_key']}".encode()).decode()


def batch_body(objects: list[dict[str, Any]], data: bytes) -> bytes:
    return json.dumps({"objects": objects}).encode() + b"\n" + data


def check_batch_upload(port: int, record: Record, flag: Flag) -> None:
    """POST .../objects/batch with broken manifests: each a 4xx that stages nothing."""
    target = PREFIX + f"/repositories/{REPO}/branches/main/objects/batch"
    md5 = hashlib.md5(b"abc", usedforsecurity=False).hexdigest()
    cases = {
        "sizes short": batch_body([{"path": "adv-batch/a", "size_bytes": 2}], b"abc"),
        "sizes long": batch_body([{"path": "adv-batch/a", "size_bytes": 9}], b"abc"),
        "negative size": batch_body([{"path": "adv-batch/a", "size_bytes": -3}], b"abc"),
        "huge size": batch_body([{"path": "adv-batch/a", "size_bytes": 2**70}], b"abc"),
        "wrong md5": batch_body([{"path": "adv-batch/a", "size_bytes": 3, "checksum": "0" * 32}], b"abc"),
        "one good one bad": batch_body(
            [
                {"path": "adv-batch/ok", "size_bytes": 3, "checksum": md5},
                {"path": "adv-batch/b", "size_bytes": 0, "checksum": "zz"},
            ],
            b"abc",
        ),
        "long path": batch_body([{"path": "adv-batch/" + "p" * 10_000, "size_bytes": 3}], b"abc"),
        "control chars": batch_body(
            [{"path": "adv-batch/a\r\nb", "size_bytes": 3, "user_metadata": {"k": "v\r\nSet-Cookie: a=1"}}], b"abc"
        ),
        "too many": batch_body([{"path": f"adv-batch/{i}", "size_bytes": 0} for i in range(20_000)], b""),
        "no newline": json.dumps({"objects": [{"path": "adv-batch/a", "size_bytes": 3}]}).encode() + b"abc",
        "deep manifest": b'{"objects": ' + b"[" * 50_000 + b"]" * 50_000 + b"}\n",
        "garbage": b"\xff\xfe\x00" * 1000,
        "objects not a list": b'{"objects": {"path": "adv-batch/a"}}\n',
    }
    for name, payload in cases.items():
        status, body, _ = send(
            port, "POST", target, payload, {"Authorization": auth_header(), "Content-Type": "application/octet-stream"}
        )
        record(f"POST objects/batch ({name})", status, body)
        if status < 400:
            flag(f"batch upload accepted a broken body ({name}): {status}")
    _, diff = send_json(port, "GET", f"/repositories/{REPO}/branches/main/diff?prefix=adv-batch/")
    staged = [item.get("path") for item in (diff or {}).get("results", [])] if isinstance(diff, dict) else []
    if staged:
        flag(f"refused batch uploads staged {staged[:5]}")


def check_presigned_listing(port: int, record: Record, flag: Flag) -> None:
    """A user allowed to list but denied fs:ReadObject on secret/* gets no URL that reads secret/*, on any page
    of a presigned listing; what it may read still comes signed, and its URL works."""
    for path in ("secret/payroll.csv", "secret/deeper/bonus.csv", "public/a.csv"):
        send(
            port,
            "POST",
            PREFIX + f"/repositories/{REPO}/branches/main/objects?path={quote(path)}",
            path.encode(),
            {"Authorization": auth_header(), "Content-Type": "text/csv"},
        )
    deny = {
        "id": "AdvNoSecretReads",
        "statement": [
            {
                "effect": "deny",
                "action": ["fs:ReadObject"],
                "resource": f"arn:lakefs:fs:::repository/{REPO}/object/secret/*",
            }
        ],
    }
    read_all = {
        "id": "AdvReadAll",
        "statement": [{"effect": "allow", "action": ["fs:Read*", "fs:List*"], "resource": "*"}],
    }
    reader = {"Authorization": user_with(port, "adv-reader", read_all, deny)}
    public_signed = False
    for query in (
        "",
        "&delimiter=/",
        "&prefix=secret/",
        "&prefix=secret/&delimiter=/",
        "&amount=1",
        "&amount=1&after=public/a.csv",
        "&prefix=secret&user_metadata=false",
    ):
        after = ""
        for _ in range(20):  # every page
            target = f"/repositories/{REPO}/refs/main/objects/ls?presign=true{query}{after}"
            status, page = send_json(port, "GET", target, headers=reader)
            record(f"GET objects/ls?presign=true{query} (read deny)", status, json.dumps(page).encode())
            if status != 200 or not isinstance(page, dict):
                flag(f"presigned listing{query} as a reader: {status}")
                break
            for item in page["results"]:
                signed = (
                    str(item.get("physical_address", "")).startswith(("http://", "https://"))
                    or item.get("physical_address_expiry") is not None
                )
                if item["path"].startswith("secret/") and signed:
                    flag(f"presigned URL handed out for {item['path']} despite a read deny ({query or 'no options'})")
                    if send_url("GET", item["physical_address"])[0] == 200:
                        flag(f"... and the URL read {item['path']}")
                if item["path"] == "public/a.csv" and signed:
                    public_signed = send_url("GET", item["physical_address"]) == (200, b"public/a.csv")
            if not page["pagination"]["has_more"]:
                break
            after = "&after=" + quote(page["pagination"]["next_offset"])
    if not public_signed:
        flag("a presigned listing gave the reader no working URL for public/a.csv, which it may read")


def check_write_once(port: int, record: Record, flag: Flag) -> None:
    """GET .../staging/backing?presign=true&write_once=true: the URL creates the object once; links with a
    wrong claim, another path, another branch or a forged address are 4xx and stage nothing."""
    backing = f"/repositories/{REPO}/branches/main/staging/backing"
    status, location = send_json(port, "GET", f"{backing}?path=adv-once/a.bin&presign=true&write_once=true")
    record("GET staging/backing write_once", status, json.dumps(location).encode())
    if status != 200 or not isinstance(location, dict) or not location.get("presigned_url"):
        flag(f"no write-once location: {status} {location!r:.160}")
        return
    url = location["presigned_url"]
    first = send_url("PUT", url, b"first", {"If-None-Match": "*"})
    second = send_url("PUT", url, b"evil!", {"If-None-Match": "*"})
    # Not tried here: the same URL without the header. S3 refuses it (the header is signed into the URL), but
    # moto checks no signature, so locally it would overwrite (tests/api/test_staging_and_copy.py checks that the
    # header is signed into the URL).
    if first[0] != 200:
        flag(f"the write-once URL refused its first upload: {first[0]} {first[1][:160]!r}")
    if second[0] < 400:
        flag(f"the write-once URL wrote twice: {second[0]}")
    md5 = hashlib.md5(b"first", usedforsecurity=False).hexdigest()
    staging = {"physical_address": location["physical_address"]}
    forged = {"physical_address": location["physical_address"].replace(".once.", ".")}
    for name, path, body, headers in (
        ("wrong size", "adv-once/a.bin", {"staging": staging, "checksum": md5, "size_bytes": 6}, {}),
        ("wrong checksum", "adv-once/a.bin", {"staging": staging, "checksum": "0" * 32, "size_bytes": 5}, {}),
        ("another path", "adv-once/b.bin", {"staging": staging, "checksum": md5, "size_bytes": 5}, {}),
        ("forged address", "adv-once/a.bin", {"staging": forged, "checksum": md5, "size_bytes": 5}, {}),
        ("no staging", "adv-once/a.bin", {"checksum": md5, "size_bytes": 5}, {}),
        ("if-match", "adv-once/a.bin", {"staging": staging, "checksum": md5, "size_bytes": 5}, {"If-Match": "x"}),
    ):
        status, answer = send_json(port, "PUT", f"{backing}?path={quote(path)}", body, headers)
        record(f"PUT staging/backing ({name})", status, json.dumps(answer).encode())
        if status < 400:
            flag(f"a write-once link with {name} was accepted: {status}")
    status, answer = send_json(port, "GET", f"{backing}?path=adv-once/c.bin&presign=false&write_once=true")
    record("GET staging/backing write_once without presign", status, json.dumps(answer).encode())
    if status != 400:
        flag(f"write_once without presign answered {status}")
    status, linked = send_json(
        port, "PUT", f"{backing}?path=adv-once/a.bin", {"staging": staging, "checksum": md5, "size_bytes": 5}
    )
    record("PUT staging/backing (the right claim)", status, json.dumps(linked).encode())
    read = send(
        port,
        "GET",
        PREFIX + f"/repositories/{REPO}/refs/main/objects?path=adv-once/a.bin",
        b"",
        {"Authorization": auth_header()},
    )
    if status != 200 or read[1] != b"first":
        flag(f"the write-once upload did not link and read back: {status}, {read[0]} {read[1][:40]!r}")


def check_login_and_logout(port: int, record: Record, flag: Flag) -> None:
    """Login refuses every body a page on another site can post without a preflight; a token stops working
    at once after logout, as a Bearer header and as the session cookie."""
    credentials = json.dumps({"access_key_id": KEY, "secret_access_key": SECRET}).encode()
    for content_type in (
        "text/plain",
        "text/plain;charset=UTF-8",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        None,
    ):
        headers: dict[str, str] = {} if content_type is None else {"Content-Type": content_type}
        status, body, answer_headers = send(port, "POST", PREFIX + "/auth/login", credentials, headers)
        record(f"POST /auth/login ({content_type})", status, body)
        if status < 400 or any(name.lower() == "set-cookie" for name, _ in answer_headers):
            flag(f"login accepted a {content_type} body: {status}")
    status, body, _ = send(port, "POST", PREFIX + "/auth/login", credentials, {"Content-Type": "application/json"})
    record("POST /auth/login (JSON)", status, body)
    if status != 200:
        flag(f"login with JSON failed: {status} {body[:160]!r}")
        return
    token = json.loads(body)["token"]
    bearer, cookie = {"Authorization": f"Bearer {token}"}, {"Cookie": f"internal_auth_session={token}"}
    before = send(port, "GET", PREFIX + "/user", b"", bearer)[0]
    refused = send(port, "POST", PREFIX + "/auth/logout", b"", cookie)  # no CSRF header: must not log out
    record("POST /auth/logout (cookie, no CSRF header)", refused[0], refused[1])
    still = send(port, "GET", PREFIX + "/user", b"", bearer)[0]
    out = send(port, "POST", PREFIX + "/auth/logout", b"", {**cookie, "X-Lakelet-CSRF": "1"})
    record("POST /auth/logout", out[0], out[1])
    after = [send(port, "GET", PREFIX + "/user", b"", headers)[0] for headers in (bearer, cookie)]
    if before != 200 or still != 200:
        flag(f"the token did not work before logout: {before}, {still}")
    if after != [401, 401]:
        flag(f"a token still works after logout (Bearer, cookie): {after}")


def check_stack_hardening(stack: Stack, record: Record, flag: Flag) -> None:
    """Issue 29's cases on the running stack: moto trusts neither the admin key nor an unsigned body, a login
    token with padding is refused, two spellings of a namespace are one, and a burst of connections is queued."""
    import threading

    # moto's guard: the admin's key pair is not moto's; an unsigned 256 MiB body is refused from its headers.
    status, body, _ = send(
        stack.moto_port,
        "POST",
        "/",
        b"{}",
        {
            "Content-Length": str(256 * 1024 * 1024),  # declared, never sent: the guard must answer from headers
            "X-Amz-Target": "DynamoDB_20120810.ListTables",
            "Content-Type": "application/x-amz-json-1.0",
        },
    )
    record("moto POST / unsigned 256 MiB", status, body)
    if status != 403:
        flag(f"moto's guard took an unsigned body: {status}")
    import boto3
    from botocore.exceptions import ClientError

    s3 = boto3.client(
        "s3",
        endpoint_url=f"http://127.0.0.1:{stack.moto_port}",
        region_name="us-east-1",
        aws_access_key_id=KEY,
        aws_secret_access_key=SECRET,
    )
    try:
        s3.list_buckets()
        flag("moto served the admin's lakeFS key pair")
    except ClientError as error:
        record("moto ListBuckets with the admin key", error.response["ResponseMetadata"]["HTTPStatusCode"], b"")
    # A login token in another spelling (padding) is refused.
    credentials = json.dumps({"access_key_id": KEY, "secret_access_key": SECRET}).encode()
    status, body, _ = send(
        stack.api_port, "POST", PREFIX + "/auth/login", credentials, {"Content-Type": "application/json"}
    )
    if status == 200:
        token = json.loads(body)["token"]
        for spelling in (token + "=", token + "=="):
            got, answer_body, _ = send(
                stack.api_port, "GET", PREFIX + "/user", b"", {"Authorization": f"Bearer {spelling}"}
            )
            record("GET /user (padded token)", got, answer_body)
            if got != 401:
                flag(f"a padded login token was accepted: {got}")
    # One namespace, two spellings: the second is refused as already in use.
    h = {"Authorization": auth_header(), "Content-Type": "application/json"}
    for name, namespace in (("spell-a", "s3://lakelet-local/spelled"), ("spell-b", "s3://lakelet-local/sp%65lled")):
        payload = json.dumps({"name": name, "storage_namespace": namespace}).encode()
        status, body, _ = send(stack.api_port, "POST", PREFIX + "/repositories", payload, h)
        record(f"POST /repositories {namespace}", status, body)
        if name == "spell-b" and status != 400:
            flag(f"an escaped spelling of a namespace in use was accepted: {status}")
    # A burst of connections: 40 threads, 10 requests each, none reset.
    resets: list[str] = []

    def burst() -> None:
        for _ in range(10):
            try:
                send(stack.api_port, "GET", PREFIX + "/healthcheck")
            except (TimeoutError, ConnectionError, OSError) as error:
                resets.append(type(error).__name__)

    threads = [threading.Thread(target=burst) for _ in range(40)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    record("GET /healthcheck x 400 (40 threads)", 200 if not resets else 599, b"")
    if resets:
        flag(f"{len(resets)} of 400 burst requests failed: {sorted(set(resets))}")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer inputs per route")
    parser.add_argument("--port-base", type=int, help="API, S3 and moto ports from here on (default: random)")
    args = parser.parse_args()
    stack = Stack(ROOT / "build" / "adversarial", args.port_base)
    counts: collections.Counter[str] = collections.Counter()
    five_xx: list[str] = []
    tried: set[str] = set()
    started = time.monotonic()

    def record(label: str, status: int, body: bytes) -> None:
        counts[f"{status // 100}xx"] += 1
        # 501 is lakeFS's own answer for an operation a server does not offer (api/ answers it on purpose, with
        # lakeFS's message), not a failure of the server.
        if status >= 500 and not (status == 501 and b"Not Implemented" in body):
            five_xx.append(f"{status} {label}: {body[:160]!r}")

    try:
        seed(stack.api_port)
        h = {"Authorization": auth_header(), "Content-Type": "application/json"}
        routes = sorted((m, p) for p, methods in app.routes.items() for m in methods)
        all_bodies = bodies()
        if args.quick:
            all_bodies = {k: all_bodies[k] for k in ("deep-list", "surrogates", "oversized", "extreme-ints")}
        for method, path in routes:
            tried.add(f"{method} {path}")
            for kind in PATH_VALUES:
                target = concrete(path, kind, method)
                for query in [""] if args.quick else ["", *("?path=" + q + "&amount=" + q for q in QUERY_VALUES)]:
                    status, body, _ = send(stack.api_port, method, target + query, b"", h)
                    record(f"{method} {target[:120]}{query[:40]} path={kind}", status, body)
            if method in BODY_METHODS:
                for name, payload in all_bodies.items():
                    status, body, _ = send(stack.api_port, method, concrete(path, "seeded", method), payload, h)
                    record(f"{method} {path} body={name}", status, body)
        # Unauthenticated: deep JSON at login; bodies without credentials; unknown routes with credentials.
        for payload in (all_bodies["deep-list"], all_bodies["surrogates"]):
            status, body, _ = send(
                stack.api_port, "POST", PREFIX + "/auth/login", payload, {"Content-Type": "application/json"}
            )
            record("POST /auth/login (no auth)", status, body)
        # Routes that hand out bytes, URLs or sessions, case by case.
        for check in (check_batch_upload, check_presigned_listing, check_write_once, check_login_and_logout):
            check(stack.api_port, record, five_xx.append)
        check_consistency(send_json, stack.api_port, upload_raw, five_xx.append, args.quick)
        check_stack_hardening(stack, record, five_xx.append)
        check_hooks_and_imports(stack.api_port, h, record, five_xx.append)
        for method in ("GET", "PUT", "POST", "DELETE"):
            for target in ("/nope", PREFIX + "/nope", PREFIX + f"/repositories/{REPO}/settings/branch_protection_x"):
                status, body, _ = send(stack.api_port, method, target, b"{}", h)
                record(f"{method} {target} (unknown)", status, body)
                if SECRET.encode() in body or base64.b64encode(f"{KEY}:{SECRET}".encode()) in body:
                    five_xx.append(f"credentials echoed by {method} {target}")
        # The gateway: bad keys and bodies, all unsigned or badly signed (SigV4 cases are in test_response_headers).
        for method, target, payload in (
            ("GET", f"/{REPO}/main/" + "k" * 3000, b""),
            ("PUT", f"/{REPO}/main/a", b"x" * 2_000_000),
            ("POST", f"/{REPO}?delete", b"<Delete>" * 10_000),
            ("GET", f"/{REPO}/main/a.txt?response-content-type=a%0D%0ASet-Cookie:x", b""),
            ("GET", "/%ED%A0%80/main/a", b""),
        ):
            status, body, headers = send(stack.s3_port, method, target, payload)
            record(f"S3 {method} {target[:60]}", status, body)
            if any(name.lower() == "set-cookie" for name, _ in headers):
                five_xx.append(f"header injected by S3 {method} {target[:60]}")
    finally:
        stack.stop()
    total = sum(counts.values())
    print(
        f"routes tried: {len(tried)} ({len(app.routes)} paths); requests: {total}; "
        f"bodies: {len(all_bodies)} kinds; path kinds: {len(PATH_VALUES)}; in {time.monotonic() - started:.0f} s"
    )
    print("statuses:", dict(sorted(counts.items())))
    print(f"5xx or leaks: {len(five_xx)}")
    for line in five_xx[:50]:
        print("  ", line)
    return 1 if five_xx else 0


if __name__ == "__main__":
    raise SystemExit(main())
