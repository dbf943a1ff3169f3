"""What ``lakelet gc run`` checks in a second or two before it starts Spark, which takes much longer.

Each check raises :class:`PreflightError` with one line saying what is wrong and what to do: the stack does not
answer, the S3 endpoint is not the stack's moto server (the S3 gateway given by mistake, or another moto), there
is no Java 17 or later (what the README asks for; Spark 3.5 runs on it). A missing pyspark is no error here:
``lakelet gc run`` installs it next (lakelet/stack/spark_local.py).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

PROBE_TIMEOUT_SECONDS = 3.0
JAVA_TIMEOUT_SECONDS = 15.0
MIN_JAVA = 17
# The S3 gateway's Server header (lakelet/stack/s3server.py): how a gateway URL given as the moto URL is recognised.
GATEWAY_SERVER = "LakeletS3"
# `java -version` prints e.g. 'openjdk version "17.0.15" 2025-04-15' or 'java version "1.8.0_392"'.
_JAVA_VERSION = re.compile(r'version "(?P<version>[^"]+)"')


class PreflightError(Exception):
    """One line for the user: what is wrong, and what to do about it."""


def _open(request: urllib.request.Request) -> tuple[int, dict[str, str], bytes]:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: never through a proxy
    try:
        with opener.open(request, timeout=PROBE_TIMEOUT_SECONDS) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def check_api(endpoint: str, hint: str) -> None:
    """The lakeFS API answers its healthcheck at ``endpoint``; ``hint`` ends the message when it does not."""
    url = endpoint.rstrip("/") + "/api/v1/healthcheck"
    try:
        status, _, _ = _open(urllib.request.Request(url))
    except (urllib.error.URLError, OSError) as error:
        reason = getattr(error, "reason", error)
        raise PreflightError(f"no Lakelet stack answers at {endpoint} ({reason}); {hint}") from None
    if not 200 <= status < 300:
        raise PreflightError(f"{endpoint} is not a Lakelet stack: GET /api/v1/healthcheck answered {status}; {hint}")


def _signed(url: str, method: str, keys: tuple[str, str] | None) -> urllib.request.Request:
    """The stack's moto answers requests signed with the stack's key pair only (lakelet/stack/moto_guard.py)."""
    if keys is None:
        return urllib.request.Request(url, method=method)
    from lakelet.stack.moto_guard import signed_headers

    return urllib.request.Request(url, method=method, headers=signed_headers(method, url, b"", *keys, "us-east-1"))


def check_moto(s3_endpoint: str, keys: tuple[str, str] | None = None) -> None:
    """``s3_endpoint`` is a moto server (its /moto-api/config answers JSON), not the S3 gateway or anything else,
    and it takes ``keys`` (the stack's access key id and secret)."""
    url = s3_endpoint.rstrip("/") + "/moto-api/config"
    advice = "pass the 'AWS stand-in' URL that `lakelet up` prints, or no --s3-endpoint to use the running stack's"
    try:
        status, headers, body = _open(_signed(url, "GET", keys))
    except (urllib.error.URLError, OSError) as error:
        reason = getattr(error, "reason", error)
        raise PreflightError(f"nothing answers at the S3 endpoint {s3_endpoint} ({reason}); {advice}") from None
    if GATEWAY_SERVER in headers.get("Server", ""):
        raise PreflightError(
            f"{s3_endpoint} is the Lakelet S3 gateway, not the stack's moto server that GC reads "
            f"and deletes in; {advice}"
        )
    if status == 403 and b"<Error>" in body:
        raise PreflightError(
            f"the moto server at {s3_endpoint} refuses this key pair: pass the stack's own "
            "(--s3-access-key-id and --s3-secret-access-key: aws_access_key_id and aws_secret_access_key in its "
            "state.json), or --data-dir of the stack"
        )
    try:
        config = json.loads(body) if 200 <= status < 300 else None  # moto answers 201
    except ValueError:
        config = None
    if not isinstance(config, dict):
        raise PreflightError(f"{s3_endpoint} is not a moto server (GET /moto-api/config answered {status}); {advice}")


def check_bucket(s3_endpoint: str, namespace: str, keys: tuple[str, str] | None = None) -> None:
    """The repository's bucket is on that moto server: otherwise it is another stack's moto."""
    bucket = namespace.removeprefix("s3://").partition("/")[0]
    url = f"{s3_endpoint.rstrip('/')}/{bucket}"
    try:
        status, _, _ = _open(_signed(url, "HEAD", keys))
    except (urllib.error.URLError, OSError) as error:
        raise PreflightError(f"cannot reach {s3_endpoint}: {getattr(error, 'reason', error)}") from None
    if status == 404:
        raise PreflightError(
            f"the moto server at {s3_endpoint} has no bucket {bucket!r} (the repository's storage "
            "namespace): it belongs to another stack; pass this stack's 'AWS stand-in' URL"
        )


def find_java(environ: dict[str, str] | None = None) -> str | None:
    """The java Spark will run: $JAVA_HOME/bin/java when JAVA_HOME is set (as Spark's launcher does), else PATH's."""
    env = os.environ if environ is None else environ
    home = env.get("JAVA_HOME")
    if home:
        candidate = Path(home) / "bin" / "java"
        return str(candidate) if candidate.is_file() else None
    return shutil.which("java", path=env.get("PATH", os.defpath))


def java_major(version: str) -> int:
    """17 for "17.0.15", 8 for "1.8.0_392", 21 for "21"."""
    parts = re.findall(r"\d+", version)
    if not parts:
        raise ValueError(version)
    major = int(parts[0])
    return int(parts[1]) if major == 1 and len(parts) > 1 else major


def check_java(environ: dict[str, str] | None = None) -> str:
    """Java 17 or later is installed; returns its version."""
    install = "install Java 17 (e.g. `sudo apt install openjdk-17-jre-headless` or `brew install openjdk@17`)"
    java = find_java(environ)
    if java is None:
        where = "in JAVA_HOME" if (environ or os.environ).get("JAVA_HOME") else "on PATH"
        raise PreflightError(f"Spark needs Java {MIN_JAVA}, but there is no java {where}; {install}")
    try:
        done = subprocess.run(
            [java, "-version"], check=False, capture_output=True, text=True, timeout=JAVA_TIMEOUT_SECONDS, env=environ
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise PreflightError(
            f"Spark needs Java {MIN_JAVA}, but `{java} -version` failed ({error}); {install}"
        ) from None
    found = _JAVA_VERSION.search(done.stderr + done.stdout)
    if done.returncode != 0 or found is None:
        raise PreflightError(f"Spark needs Java {MIN_JAVA}, but `{java} -version` did not say which it is; {install}")
    version = found.group("version")
    if java_major(version) < MIN_JAVA:
        raise PreflightError(f"Spark needs Java {MIN_JAVA} or later, but {java} is Java {version}; {install}")
    return version
