"""A bounded adversarial run against a real ``lakelet local`` (moto server, API devserver, S3 gateway), on
127.0.0.1 ports picked at random: every route of the app with bad inputs, plus the gateway's header and body
cases. Prints what it tried and every 5xx it saw; exits 1 if there was any.

    .venv/bin/python -m tests.security.adversarial [--quick]

Not collected by pytest (a manual check, minutes long); tests/security/test_*.py hold the fast guarantees.
"""

from __future__ import annotations

import argparse
import base64
import collections
import http.client
import json
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from app import app  # noqa: E402

KEY, SECRET = "AKIAADVERSARIAL00001", "adversarial/secret/key/0123456789abcdefgh"
PREFIX = "/api/v1"
REPO = "adv"
BODY_METHODS = {"POST", "PUT", "PATCH", "DELETE"}


def bodies() -> dict[str, bytes]:
    surrogates = '{"name": "a\\ud800", "id": "\\udfff", "message": "\\ud800", "source": "main", "ref": "\\ud800",' \
                 ' "metadata": {"k\\ud800": "v\\udc00"}, "paths": ["\\ud800"], "storage_namespace": "s3://x/\\ud800"}'
    return {
        "deep-list": b"[" * 100_000 + b"]" * 100_000,
        "deep-object": b'{"a":' * 50_000 + b"1" + b"}" * 50_000,
        "surrogates": surrogates.encode(),
        "control-chars": json.dumps({"name": "a\r\nb\x00", "id": "\x1b[31m", "message": "x\r\nSet-Cookie: a=1",
                                     "source": "main", "ref": "main", "metadata": {"k\n": "v\r"}}).encode(),
        "oversized": json.dumps({"name": "b" * 2000, "id": "t" * 1500, "message": "m" * 1_000_000,
                                 "source": "main", "ref": "main", "metadata": {"k": "v" * 400_000}}).encode(),
        "extreme-ints": json.dumps({"message": "m", "date": 10**40, "amount": -(2**63) - 1, "parent_number": 2**64,
                                    "size_bytes": 2**70, "mtime": 10**20}).encode(),
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
    def __init__(self, log_dir: Path) -> None:
        ports = random.sample(range(20000, 60000), 3)
        self.api_port, self.s3_port, moto_port = ports
        log_dir.mkdir(parents=True, exist_ok=True)
        self.out = open(log_dir / "adversarial-local.out", "wb")  # noqa: SIM115
        self.process = subprocess.Popen(
            [sys.executable, "-m", "lakelet", "local", "--api-port", str(self.api_port), "--s3-port",
             str(self.s3_port), "--moto-port", str(moto_port), "--access-key-id", KEY, "--secret-access-key", SECRET],
            cwd=ROOT, stdout=self.out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 180
        while "Press Ctrl-C to stop." not in (log_dir / "adversarial-local.out").read_text(errors="replace"):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise SystemExit("lakelet local did not start; see " + str(log_dir / "adversarial-local.out"))
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


def send(port: int, method: str, target: str, body: bytes = b"", headers: dict[str, str] | None = None,
         ) -> tuple[int, bytes, list[tuple[str, str]]]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.putrequest(method, target, skip_accept_encoding=True)
        for name, value in {"Content-Length": str(len(body)), **(headers or {})}.items():
            conn.putheader(name, value)
        conn.endheaders(body)
        response = conn.getresponse()
        return response.status, response.read(), response.getheaders()
    finally:
        conn.close()


def seed(api_port: int) -> None:
    h = {"Authorization": auth_header(), "Content-Type": "application/json"}
    send(api_port, "POST", PREFIX + "/repositories", json.dumps(
        {"name": REPO, "storage_namespace": "s3://lakelet-local/" + REPO}).encode(), h)
    send(api_port, "GET", PREFIX + "/config", b"", h)
    status, body, _ = send(api_port, "GET", PREFIX + "/config/storage", b"", h)
    send(api_port, "POST", PREFIX + f"/repositories/{REPO}/branches/main/objects?path=a.txt", b"hello", h)
    send(api_port, "POST", PREFIX + f"/repositories/{REPO}/branches/main/commits", b'{"message": "seed"}', h)
    send(api_port, "POST", PREFIX + f"/repositories/{REPO}/tags", b'{"id": "v1", "ref": "main"}', h)


SEEDED = {"repository": REPO, "branch": "main", "ref": "main", "destinationBranch": "main", "tag": "v1",
          "userId": "nobody", "groupId": "Viewers", "policyId": "FSReadAll", "accessKeyId": "AKIANOSUCHKEY",
          "commitId": "main", "leftRef": "main", "rightRef": "main", "sourceRef": "main"}


def concrete(path: str, kind: str, method: str) -> str:
    def value(match: re.Match[str]) -> str:
        name = match.group(0)[1:-1]
        if kind == "seeded" or name == "repository" and kind not in ("long", "lookalike"):
            seeded = SEEDED.get(name, "x")
            # DELETE never touches the seeded repository or the admin: the rest of the run needs them.
            return "gone-repo" if method == "DELETE" and name == "repository" else quote(seeded)
        raw = PATH_VALUES[kind]
        return raw if kind == "surrogate-bytes" else quote(str(raw), safe="")

    return re.sub(r"\{[^}]+\}", value, path)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer inputs per route")
    args = parser.parse_args()
    stack = Stack(ROOT / "build" / "adversarial")
    counts: collections.Counter[str] = collections.Counter()
    five_xx: list[str] = []
    tried: set[str] = set()
    started = time.monotonic()

    def record(label: str, status: int, body: bytes) -> None:
        counts[f"{status // 100}xx"] += 1
        if status >= 500:
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
                for query in ([""] if args.quick else ["", *("?path=" + q + "&amount=" + q for q in QUERY_VALUES)]):
                    status, body, _ = send(stack.api_port, method, target + query, b"", h)
                    record(f"{method} {target[:120]}{query[:40]} path={kind}", status, body)
            if method in BODY_METHODS:
                for name, payload in all_bodies.items():
                    status, body, _ = send(stack.api_port, method, concrete(path, "seeded", method), payload, h)
                    record(f"{method} {path} body={name}", status, body)
        # Unauthenticated: deep JSON at login; bodies without credentials; unknown routes with credentials.
        for payload in (all_bodies["deep-list"], all_bodies["surrogates"]):
            status, body, _ = send(stack.api_port, "POST", PREFIX + "/auth/login", payload)
            record("POST /auth/login (no auth)", status, body)
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
    print(f"routes tried: {len(tried)} ({len(app.routes)} paths); requests: {total}; "
          f"bodies: {len(all_bodies)} kinds; path kinds: {len(PATH_VALUES)}; in {time.monotonic() - started:.0f} s")
    print("statuses:", dict(sorted(counts.items())))
    print(f"5xx or leaks: {len(five_xx)}")
    for line in five_xx[:50]:
        print("  ", line)
    return 1 if five_xx else 0


if __name__ == "__main__":
    raise SystemExit(main())
