"""Which requests a transfer makes, counted at the HTTP client: against Lakelet, small files go up in batches
(POST .../objects/batch) and big ones through presigned URLs, and a download reads every file from its presigned
URL with no API request of its own; against a server without those (lakeFS without presign, an older Lakelet)
every file goes through the API. Each way, the tree comes back byte for byte."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import urllib3

from lakelet.commands import download, transfer, upload
from tests.cli.conftest import Result, make_tree, read_tree
from tests.e2e.conftest import LocalProcess

pytestmark = pytest.mark.e2e
Cli = Callable[..., Result]
BIG = upload.DIRECT_MAX_BYTES + 1


@pytest.fixture
def requests_made(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, str]]]:
    """(method, URL without the query) of every request the CLI's HTTP clients send, in this process."""
    made: list[tuple[str, str]] = []
    original = urllib3.PoolManager.request

    def spy(self: urllib3.PoolManager, method: str, url: str, *args: object, **kwargs: object) -> object:
        made.append((method, url.split("?")[0]))
        return original(self, method, url, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(urllib3.PoolManager, "request", spy)
    yield made


def _tree(root: Path) -> dict[str, bytes]:
    files = make_tree(root, 60, width=4)
    (root / "big.bin").write_bytes(os.urandom(BIG))
    files["big.bin"] = (root / "big.bin").read_bytes()
    return files


def test_lakelet_batches_small_uploads_and_reads_presigned_urls(
    cli: Cli, repo: str, cli_stack: LocalProcess, tmp_path: Path, requests_made: list[tuple[str, str]]
) -> None:
    files = _tree(tmp_path / "src")
    cli("fs", "upload", "-r", "-p", "5", "--source", str(tmp_path / "src"), f"lakefs://{repo}/main/t/")
    api = cli_stack.endpoint
    batches = [u for m, u in requests_made if m == "POST" and u.endswith("/objects/batch")]
    # 60 small files, 5 workers with 4 batches each: batches of 3.
    assert len(batches) == 20
    assert not [u for m, u in requests_made if m == "POST" and u.endswith("/objects")]  # no single uploads
    # The big file: a write-once address, a PUT to S3 (not the API), the link, which staged the upload itself
    # (no copy: its physical address is the signed write-once one).
    assert len([u for m, u in requests_made if m == "PUT" and not u.startswith(api)]) == 1
    assert len([u for m, u in requests_made if m == "PUT" and u.endswith("/staging/backing")]) == 1
    stat = json.loads(cli("fs", "stat", f"lakefs://{repo}/main/t/big.bin", "--json").stdout)
    assert ".once." in stat["physical_address"]

    requests_made.clear()
    cli("fs", "download", "-r", f"lakefs://{repo}/main/t/", str(tmp_path / "back"))
    assert read_tree(tmp_path / "back") == files
    to_api = [u for m, u in requests_made if u.startswith(api)]
    assert all(u.endswith(("/config", "/objects/ls")) for u in to_api), to_api
    assert len([u for u in requests_made if not u[1].startswith(api)]) == len(files)  # each file from S3

    # Forced through the API: one GET per file there, and the same bytes.
    requests_made.clear()
    cli("fs", "download", "-r", "--no-pre-sign", f"lakefs://{repo}/main/t/", str(tmp_path / "api"))
    assert read_tree(tmp_path / "api") == files
    assert len([u for m, u in requests_made if m == "GET" and u.endswith("/objects")]) == len(files)
    assert not [u for m, u in requests_made if not u.startswith(api)]


def test_a_server_without_batches_or_presign_gets_one_request_per_file(
    cli: Cli,
    repo: str,
    cli_stack: LocalProcess,
    tmp_path: Path,
    requests_made: list[tuple[str, str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for direction in (upload, download):
        monkeypatch.setattr(direction, "server_offers", lambda api: transfer.Server(False, frozenset()))
    files = _tree(tmp_path / "src")
    cli("fs", "upload", "-r", "--source", str(tmp_path / "src"), f"lakefs://{repo}/main/t/")
    assert len([u for m, u in requests_made if m == "POST" and u.endswith("/objects")]) == len(files)
    assert not [u for m, u in requests_made if u.endswith("/objects/batch")]
    assert not [u for m, u in requests_made if not u.startswith(cli_stack.endpoint)]
    requests_made.clear()
    cli("fs", "download", "-r", f"lakefs://{repo}/main/t/", str(tmp_path / "back"))
    assert read_tree(tmp_path / "back") == files
    assert len([u for m, u in requests_made if m == "GET" and u.endswith("/objects")]) == len(files)


def test_an_expired_or_failing_presigned_url_falls_back_to_the_api(
    cli: Cli, repo: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = make_tree(tmp_path / "src", 5)
    cli("fs", "upload", "-r", "--source", str(tmp_path / "src"), f"lakefs://{repo}/main/t/")
    listed = transfer.list_remote

    def broken_urls(*args: object, **kwargs: object) -> Iterator[transfer.Remote]:
        for remote in listed(*args, **kwargs):  # type: ignore[arg-type]
            assert remote.url is not None
            yield transfer.Remote(remote.path, remote.size, remote.checksum, remote.url + "-tampered")

    monkeypatch.setattr(download, "list_remote", broken_urls)
    cli("fs", "download", "-r", f"lakefs://{repo}/main/t/", str(tmp_path / "back"))
    assert read_tree(tmp_path / "back") == files
