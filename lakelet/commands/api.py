"""The connection to the server: the official ``lakefs_sdk`` client for everything it covers, and plain HTTP
(urllib3, the SDK's own transport) for Lakelet's extensions (merge previews, per-path strategies, async commit)
and for parallel transfers.

Every call goes through ``call``/``raw``, which turn API errors and unreachable servers into one-line
``CLIError``s naming the operation.
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Callable, Iterator, Mapping
from functools import cached_property
from typing import Any, TypeVar

import urllib3

from lakelet.commands.errors import CLIError, from_status
from lakelet.commands.settings import Settings

T = TypeVar("T")


def _unreachable(settings: Settings, error: Exception) -> CLIError:
    reason = getattr(error, "reason", None) or error
    return CLIError(f"cannot reach the lakeFS server at {settings.endpoint} ({type(reason).__name__})",
                    "is it running? check server.endpoint_url with 'lakelet doctor'")


class Api:
    """One server connection, built lazily: commands that fail on their arguments never connect. The pools
    keep as many connections as the largest useful --parallelism, so that none is dropped and reopened."""

    def __init__(self, settings: Settings, pool_size: int = 64) -> None:
        self.settings = settings
        self.pool_size = pool_size

    @cached_property
    def client(self) -> Any:
        import lakefs_sdk  # imported on first use: `lakelet local` must start without it

        conf = lakefs_sdk.Configuration(host=self.settings.api_url, username=self.settings.access_key_id,
                                        password=self.settings.secret_access_key)
        conf.connection_pool_maxsize = self.pool_size
        conf.retries = 1  # type: ignore[assignment]  # the SDK declares it None-only
        return lakefs_sdk.ApiClient(conf)

    @cached_property
    def http(self) -> urllib3.PoolManager:
        """For raw API calls and for S3 presigned URLs; retries only on connection errors, never on answers."""
        return urllib3.PoolManager(maxsize=self.pool_size, retries=urllib3.Retry(total=2, redirect=0, status=0,
                                                                                  raise_on_status=False))

    @cached_property
    def auth_headers(self) -> dict[str, str]:
        return urllib3.make_headers(basic_auth=f"{self.settings.access_key_id}:{self.settings.secret_access_key}")

    def __getattr__(self, name: str) -> Any:
        """``api.branches`` -> lakefs_sdk.BranchesApi, ``api.refs`` -> RefsApi, ..."""
        classes = {"repositories": "RepositoriesApi", "branches": "BranchesApi", "tags": "TagsApi",
                   "commits": "CommitsApi", "refs": "RefsApi", "objects": "ObjectsApi", "auth": "AuthApi",
                   "config": "ConfigApi", "internal": "InternalApi", "staging": "StagingApi"}
        if name not in classes:
            raise AttributeError(name)
        import lakefs_sdk

        value = getattr(lakefs_sdk, classes[name])(self.client)
        setattr(self, name, value)
        return value

    def call(self, what: str, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        from lakefs_sdk.exceptions import ApiException

        try:
            return fn(*args, **kwargs)
        except ApiException as e:
            raise from_status(what, e.status or 0, e.body, e.reason or "") from None
        except urllib3.exceptions.HTTPError as e:
            raise _unreachable(self.settings, e) from None

    def url(self, path: str, query: Mapping[str, Any] | None = None) -> str:
        url = self.settings.api_url + path
        if query:
            pairs = {k: ("true" if v is True else "false" if v is False else v)
                     for k, v in query.items() if v is not None}
            url += "?" + urllib.parse.urlencode(pairs, doseq=True)
        return url

    def raw(self, what: str, method: str, path: str, query: Mapping[str, Any] | None = None,
            body: Any = None, ok: tuple[int, ...] = (200, 201, 204), headers: Mapping[str, str] | None = None,
            ) -> tuple[int, Any]:
        """A plain API call; answers outside ``ok`` raise. Returns (status, parsed JSON or None)."""
        all_headers = {**self.auth_headers, "Accept": "application/json", **(headers or {})}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            all_headers["Content-Type"] = "application/json"
        try:
            response = self.http.request(method, self.url(path, query), body=data, headers=all_headers,
                                         redirect=False)
        except urllib3.exceptions.HTTPError as e:
            raise _unreachable(self.settings, e) from None
        parsed = None
        if response.data:
            try:
                parsed = json.loads(response.data)
            except ValueError:
                parsed = None
        if response.status not in ok:
            raise from_status(what, response.status, response.data, response.reason or "")
        return response.status, parsed

    def pages(self, what: str, fn: Callable[..., Any], *args: Any, amount: int = 1000,
              limit: int | None = None, **kwargs: Any) -> Iterator[Any]:
        """Every result of a paginated SDK listing, following ``pagination.next_offset``."""
        after = kwargs.pop("after", "") or ""
        seen = 0
        while True:
            page = self.call(what, fn, *args, after=after, amount=amount, **kwargs)
            for item in page.results:
                yield item
                seen += 1
                if limit is not None and seen >= limit:
                    return
            if not page.pagination.has_more:
                return
            after = page.pagination.next_offset

    def raw_pages(self, what: str, path: str, query: Mapping[str, Any] | None = None) -> Iterator[dict[str, Any]]:
        """Every result of a paginated listing over plain HTTP: the transfer commands use this rather than the
        SDK, whose import alone costs seconds of start-up (pydantic models) on a small machine."""
        after = ""
        while True:
            _, page = self.raw(what, "GET", path, {**(query or {}), "after": after, "amount": 1000})
            yield from page.get("results") or []
            pagination = page.get("pagination") or {}
            if not pagination.get("has_more"):
                return
            after = pagination["next_offset"]


def q(value: str) -> str:
    """A path segment, percent-encoded."""
    return urllib.parse.quote(value, safe="")
