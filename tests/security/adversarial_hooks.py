"""The adversarial run's cases of hooks and imports (issue 29, items 6 to 10), against the running local stack:
action files that once blocked every request or reached what only the server can, a webhook server that drips,
a Lambda ARN of another account, and imports of another repository's namespace or the stack's own files.

The stack runs with ENVIRONMENT below (the adversarial module passes it to ``lakelet local``): imports may read
``s3://lakelet-local/advns/``, where the two repositories of these cases live, and one Lambda function is allowed.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

BUCKET = "lakelet-local"
ALLOWED_FUNCTION = "arn:aws:lambda:us-east-1:123456789012:function:adv-check"
ENVIRONMENT = {
    "LAKELET_IMPORT_ALLOWED_LOCATIONS": f"s3://{BUCKET}/advns/",
    "LAKELET_HOOK_FUNCTIONS": ALLOWED_FUNCTION,
}
PREFIX = "/api/v1"

Record = Callable[[str, int, bytes], None]
Flag = Callable[[str], None]


class Dripper:
    """A loopback server that answers a status line, then one header byte every 0.1 s until the client leaves."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.sent = 0
        self.stopped = False
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while not self.stopped:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            conn.recv(65536)
            try:
                conn.sendall(b"HTTP/1.1 200 OK\r\nX-Slow: ")
                while not self.stopped:
                    conn.sendall(b"x")
                    self.sent += 1
                    time.sleep(0.1)
            except OSError:
                pass
            finally:
                conn.close()

    def stop(self) -> None:
        self.stopped = True
        self.listener.close()


def action(hooks: list[dict[str, Any]], branches: list[str] | None = None) -> bytes:
    on = {"pre-commit": {"branches": branches} if branches else None}
    return json.dumps({"name": "adv", "on": on, "hooks": hooks}).encode()


def webhook(url: str, timeout: str = "5s", **props: Any) -> dict[str, Any]:
    return {"id": "adv_hook", "type": "webhook", "properties": {"url": url, "timeout": timeout, **props}}


class Cases:
    def __init__(self, port: int, headers: dict[str, str], record: Record, flag: Flag) -> None:
        self.port, self.headers, self.record, self.flag = port, headers, record, flag

    def call(self, method: str, target: str, body: object = None, timeout: float = 60) -> tuple[int, Any]:
        raw = b"" if body is None else body if isinstance(body, bytes) else json.dumps(body).encode()
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            conn.request(method, PREFIX + target, body=raw, headers=self.headers)
            answer = conn.getresponse()
            status, data = answer.status, answer.read()
        finally:
            conn.close()
        self.record(f"{method} {target[:80]}", status, data)
        try:
            return status, json.loads(data) if data else None
        except ValueError:
            return status, data

    def put_actions(self, repo: str, branch: str, files: dict[str, bytes]) -> None:
        for name, data in files.items():
            path = quote(f"_lakefs_actions/{name}", safe="")
            self.call("POST", f"/repositories/{repo}/branches/{branch}/objects?path={path}", data)

    def clear_actions(self, repo: str, branch: str) -> None:
        status, listed = self.call("GET", f"/repositories/{repo}/refs/{branch}/objects/ls?prefix=_lakefs_actions/")
        paths = [o["path"] for o in listed["results"]] if status == 200 and isinstance(listed, dict) else []
        if paths:
            self.call("POST", f"/repositories/{repo}/branches/{branch}/objects/delete", {"paths": paths})

    def commit(self, repo: str, branch: str, timeout: float = 60) -> tuple[int, str]:
        status, body = self.call(
            "POST", f"/repositories/{repo}/branches/{branch}/commits", {"message": "adv"}, timeout=timeout
        )
        return status, body.get("message", "") if isinstance(body, dict) else str(body)

    def run(self) -> None:
        repo, other = "adv-hooks-a", "adv-hooks-b"
        for name in (repo, other):
            self.call("POST", "/repositories", {"name": name, "storage_namespace": f"s3://{BUCKET}/advns/{name}"})
        self.glob(repo)
        self.destinations(repo)
        self.validation(repo)
        self.deadline(repo)
        self.bounds(repo)
        self.lambda_arns(repo)
        self.imports(repo, other)

    def glob(self, repo: str) -> None:
        """Item 6: the backtracking glob against a 64-character branch took hours and blocked every request."""
        branch = "a" * 64
        self.call("POST", f"/repositories/{repo}/branches", {"name": branch, "source": "main"})
        self.put_actions(repo, branch, {"glob.yaml": action([webhook("http://127.0.0.1:9/x")], ["*a" * 10 + "*b"])})
        try:
            status, message = self.commit(repo, branch, timeout=20)
        except TimeoutError:
            self.flag("a commit under the pathological branch glob did not answer within 20 s")
            return
        if status != 201:
            self.flag(f"a commit under a glob that does not match answered {status}: {message[:160]}")

    def destinations(self, repo: str) -> None:
        """Item 7: the local stack allows loopback, never the metadata service or private ranges."""
        for url in (
            "http://169.254.169.254/latest/meta-data/",
            "http://[fd00:ec2::254]/",
            "http://[::ffff:169.254.169.254]/",
            "http://10.0.0.1/",
            "http://192.168.0.1/",
        ):
            self.put_actions(repo, "main", {"dest.yaml": action([webhook(url)])})
            status, message = self.commit(repo, "main")
            if status != 412 or "destination refused" not in message:
                self.flag(f"a webhook to {url} was not refused: {status} {message[:160]}")
        self.clear_actions(repo, "main")

    def validation(self, repo: str) -> None:
        """Item 7: what changes where a request goes is refused when the file is read."""
        for hook in (
            webhook("http://example.com/h", headers={"Host": "169.254.169.254"}),
            webhook("http://example.com/h", headers={"Transfer-Encoding": "chunked"}),
            webhook("http://example.com/h", headers={"X-A": "v\r\nX-B: injected"}),
            webhook("http://user:pass@example.com/h"),
            webhook("http://0x7f000001:9001/2018-06-01/runtime/invocation/next"),
            webhook("http://2130706433/"),
        ):
            self.put_actions(repo, "main", {"bad.yaml": action([hook])})
            status, _ = self.commit(repo, "main")
            if status != 400:
                self.flag(f"an action file with {hook['properties']} was not refused at validation: {status}")
        self.clear_actions(repo, "main")

    def deadline(self, repo: str) -> None:
        """Item 8: a dripping server holds a commit no longer than the hook's timeout (1 s here)."""
        dripper = Dripper()
        try:
            hook = webhook(f"http://127.0.0.1:{dripper.port}/drip", timeout="1s")
            self.put_actions(repo, "main", {"drip.yaml": action([hook])})
            started = time.monotonic()
            status, message = self.commit(repo, "main")
            elapsed = time.monotonic() - started
        finally:
            dripper.stop()
        if status != 412 or "timed out" not in message or dripper.sent >= 30 or elapsed >= 3.0:
            self.flag(f"a dripping hook with timeout 1s: {status}, {dripper.sent} bytes, {elapsed:.1f} s")
        self.clear_actions(repo, "main")

    def bounds(self, repo: str) -> None:
        """Item 6: too many files, too many bytes, deep nesting: refused with the reason, at once."""
        many = {f"{i:03d}.yaml": action([webhook("http://127.0.0.1:9/x")], ["nomatch"]) for i in range(51)}
        filler = b"# " + b"x" * 43_000 + b"\n"
        big = {f"big{i}.yaml": filler + action([webhook("http://127.0.0.1:9/x")], ["nomatch"]) for i in range(10)}
        for label, files, reason in (
            ("51 action files", many, "more than 50 action files"),
            ("ten 43 KB action files", big, "more than the"),
            ("40 KB of nesting", {"deep.yaml": b"[" * 20_000 + b"]" * 20_000}, "nested deeper"),
        ):
            self.put_actions(repo, "main", files)
            started = time.monotonic()
            status, message = self.commit(repo, "main")
            if status != 400 or reason not in message or time.monotonic() - started > 5:
                self.flag(f"{label}: {status} {message[:160]}")
            self.call(
                "POST",
                f"/repositories/{repo}/branches/main/objects/delete",
                {"paths": [f"_lakefs_actions/{name}" for name in files]},
            )

    def lambda_arns(self, repo: str) -> None:
        """Item 9: the allowed function's name in another account (or region, or alias) is not that function."""
        for name in (
            ALLOWED_FUNCTION.replace("123456789012", "999999999999"),
            ALLOWED_FUNCTION.replace("us-east-1", "eu-west-1"),
            ALLOWED_FUNCTION + ":live",
        ):
            hook = {"id": "adv_lambda", "type": "lambda", "properties": {"function_name": name}}
            self.put_actions(repo, "main", {"lambda.yaml": action([hook])})
            status, message = self.commit(repo, "main")
            if status != 412 or "is not allowed" not in message:
                self.flag(f"a lambda hook naming {name} was not refused as not allowed: {status} {message[:160]}")
        self.clear_actions(repo, "main")

    def imports(self, repo: str, other: str) -> None:
        """Item 10: the allowed location holds both repositories; neither may import the other's namespace."""
        path = quote("secret/s.txt", safe="")
        self.call("POST", f"/repositories/{other}/branches/main/objects?path={path}", b"B's secret")
        self.call("POST", f"/repositories/{other}/branches/main/commits", {"message": "secret"})
        ns = f"s3://{BUCKET}/advns/{other}"
        for source in (ns + "/", ns + "/data/", ns, f"s3://{BUCKET}/advns/", f"s3://{BUCKET}/_lakelet/"):
            body = {
                "paths": [{"type": "common_prefix", "path": source, "destination": "x/"}],
                "commit": {"message": "m"},
            }
            status, answer = self.call("POST", f"/repositories/{repo}/branches/main/import", body)
            if status != 403:
                self.flag(f"an import of {source} into {repo} answered {status}: {str(answer)[:160]}")
        for source in (ns.replace("advns/", "advns//") + "/", ns + "%2Fdata/"):
            body = {
                "paths": [{"type": "common_prefix", "path": source, "destination": "x/"}],
                "commit": {"message": "m"},
            }
            status, _ = self.call("POST", f"/repositories/{repo}/branches/main/import", body)
            if status != 400:
                self.flag(f"an import of {source} answered {status}, not 400")


def check_hooks_and_imports(port: int, headers: dict[str, str], record: Record, flag: Flag) -> None:
    """Every case above; ``headers``: the admin's Authorization and Content-Type."""
    Cases(port, headers, record, flag).run()
