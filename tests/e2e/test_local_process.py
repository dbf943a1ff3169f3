"""``lakelet up`` as a user runs it: prints how to connect, answers, authenticates, stops cleanly."""

from __future__ import annotations

import base64
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import lakefs
import pytest
from lakefs.client import Client

from lakelet.stack.local import LOCAL_BUCKET

pytestmark = pytest.mark.e2e

Launcher = Callable[..., Any]  # the `launch` fixture of conftest.py

PROJECT_DIR = Path(__file__).resolve().parents[2]
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _get(url: str, auth: tuple[str, str] | None = None) -> int:
    request = urllib.request.Request(url)
    if auth is not None:
        token = base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
        request.add_header("Authorization", f"Basic {token}")
    try:
        with _NO_PROXY.open(request, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return error.code


def _port_is_free(port: int) -> bool:
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "Ctrl-C"])
def test_prints_connection_info_serves_and_stops_cleanly(sig: int, launch: Launcher) -> None:
    local = launch(
        "--s3-port",
        "18001",
        env={"LAKELET_ACCESS_KEY_ID": "AKIALAKELETE2ETEST", "LAKELET_SECRET_ACCESS_KEY": "e2e/Secret+Key"},
    )
    try:
        banner = local.banner
        assert local.access_key_id == "AKIALAKELETE2ETEST"
        assert local.secret_access_key == "e2e/Secret+Key"
        for expected in (
            f"{local.endpoint}/api/v1",
            "export LAKECTL_SERVER_ENDPOINT_URL=" + local.endpoint,
            "export LAKECTL_CREDENTIALS_ACCESS_KEY_ID=AKIALAKELETE2ETEST",
            "S3 gateway          http://127.0.0.1:18001",
            f"s3://{LOCAL_BUCKET}/",
            "Client(host=",
        ):
            assert expected in banner

        assert _get(local.api_url + "/healthcheck") in (200, 204)
        assert _get(local.api_url + "/repositories") == 401
        assert _get(local.api_url + "/repositories", ("AKIALAKELETE2ETEST", "wrong")) == 401
        assert _get(local.api_url + "/repositories", ("AKIALAKELETE2ETEST", "e2e/Secret+Key")) == 200
        # The S3 gateway answers on its port, and refuses an unsigned request.
        assert _get("http://127.0.0.1:18001/") == 403
        api_port = int(local.endpoint.rsplit(":", 1)[1])
    finally:
        code = local.stop(sig)
    assert code == 0, local.stderr_tail()
    assert "Stopping..." in local.stdout()
    assert _port_is_free(api_port)
    assert _port_is_free(18001)


def test_client_reads_the_printed_environment(local_stack: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # The banner promises that Client() picks up these variables, as lakectl does.
    monkeypatch.setenv("LAKECTL_CONFIG_FILE", str(Path(local_stack.stdout_path).with_suffix(".absent.yaml")))
    monkeypatch.setenv("LAKECTL_SERVER_ENDPOINT_URL", local_stack.endpoint)
    monkeypatch.setenv("LAKECTL_CREDENTIALS_ACCESS_KEY_ID", local_stack.access_key_id)
    monkeypatch.setenv("LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY", local_stack.secret_access_key)
    client = Client()
    assert client.storage_config.default_namespace_prefix
    assert isinstance(list(lakefs.repositories(client=client)), list)


def test_a_port_in_use_is_a_clear_error(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "lakelet", "up", "--api-port", str(port), "--ephemeral"],
            cwd=PROJECT_DIR,
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    assert result.returncode == 1
    assert "cannot start" in result.stderr
    assert "Traceback" not in result.stderr
