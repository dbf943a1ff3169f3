"""pyiceberg's RestCatalog against the app in process: its HTTP requests go to chalice.test.Client (a requests
adapter for one made-up host), and its data files to a local directory (a FileIO that maps ``s3://`` paths there),
so the catalog's own behaviour is tested with the real client and no server. Tests with data through the S3
gateway run against the embedded stack (tests/iceberg)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import requests
from chalice.test import Client
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.io import InputFile, OutputFile
from pyiceberg.io.pyarrow import PyArrowFile, PyArrowFileIO
from requests.adapters import BaseAdapter
from requests.structures import CaseInsensitiveDict

HOST = "http://lakelet.test"
URI = HOST + "/iceberg/api"
_ROOT_ENV = "LAKELET_TEST_ICEBERG_ROOT"


class ChaliceAdapter(BaseAdapter):
    """Sends a prepared request to the Chalice test client."""

    def __init__(self, client: Client) -> None:
        super().__init__()
        self.client = client

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:  # type: ignore[override]
        url = urlsplit(request.url or "")
        body = request.body or b""
        response = self.client.http.request(
            request.method or "GET",
            url.path + ("?" + url.query if url.query else ""),
            headers=dict(request.headers),
            body=body.encode() if isinstance(body, str) else body,
        )
        out = requests.Response()
        out.status_code = response.status_code
        out._content = response.body
        out.headers = CaseInsensitiveDict(response.headers)
        out.url = request.url or ""
        out.request = request
        return out

    def close(self) -> None:
        pass


class LocalFileIO(PyArrowFileIO):
    """Data and manifest files of ``s3://<repo>/<ref>/<path>`` in a local directory (a test's tmp_path)."""

    def _local(self, location: str) -> str:
        root = os.environ[_ROOT_ENV]
        return str(Path(root) / location.split("://", 1)[-1])

    def new_input(self, location: str) -> InputFile:
        return self._keeping_address(super().new_input(self._local(location)), location)

    def new_output(self, location: str) -> OutputFile:
        Path(self._local(location)).parent.mkdir(parents=True, exist_ok=True)
        return self._keeping_address(super().new_output(self._local(location)), location)

    @staticmethod
    def _keeping_address(file: PyArrowFile, location: str) -> PyArrowFile:
        """The local file under the address it was asked for: manifests name ``s3://`` paths, as deployed."""
        return PyArrowFile(location, file._path, file._filesystem)

    def delete(self, location: str | InputFile | OutputFile) -> None:
        super().delete(self._local(location if isinstance(location, str) else location.location))


@pytest.fixture
def bridge(client: Client, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    adapter = ChaliceAdapter(client)
    original = requests.Session.get_adapter

    def get_adapter(self: requests.Session, url: str) -> BaseAdapter:
        return adapter if url.startswith(HOST) else original(self, url)

    monkeypatch.setattr(requests.Session, "get_adapter", get_adapter)
    monkeypatch.setenv(_ROOT_ENV, str(tmp_path / "files"))
    yield


def rest_catalog(credentials: tuple[str, str], **extra: str) -> RestCatalog:
    return RestCatalog(
        "lakelet",
        uri=URI,
        credential=f"{credentials[0]}:{credentials[1]}",
        **{"py-io-impl": "tests.api.iceberg_support.LocalFileIO", "oauth2-server-uri": URI + "/v1/oauth/tokens"},
        **extra,
    )


def iceberg_request(
    client: Client,
    method: str,
    path: str,
    credentials: tuple[str, str] | None,
    body: Any = None,
    headers: Mapping[str, str] | None = None,
) -> Any:
    """A raw request to /iceberg/api/v1 with HTTP Basic credentials."""
    from .support import basic

    all_headers = {"content-type": "application/json"}
    if credentials is not None:
        all_headers["authorization"] = basic(*credentials)
    all_headers.update(headers or {})
    data = b"" if body is None else json.dumps(body).encode()
    return client.http.request(method, "/iceberg/api/v1" + path, headers=all_headers, body=data)


def iceberg_error(response: Any, status: int, kind: str) -> str:
    """The response is the spec's IcebergErrorResponse with this status and type; its message."""
    assert response.status_code == status, (response.status_code, response.body)
    payload = json.loads(response.body)
    assert set(payload) == {"error"}, payload
    error = payload["error"]
    assert error["code"] == status and error["type"] == kind, error
    assert isinstance(error["message"], str) and error["message"]
    return str(error["message"])
