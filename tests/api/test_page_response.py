"""Listing pages leave encoded by orjson (chalicelib/api/endpoint.py ``page_response``): the same JSON value as
Chalice's own encoding of the dict, and Chalice's encoding for what orjson refuses."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chalicelib.api.endpoint import json_response, page_response

PAGES: list[dict[str, Any]] = [
    {"pagination": {"has_more": False, "next_offset": "", "results": 0, "max_per_page": 100}, "results": []},
    {"results": [{"id": "c1", "message": 'ünïcode 😀 "quoted" \\ back', "metadata": {"k": "v"}, "n": 1.5}]},
    {"results": [{"path": "lone \udc80 surrogate"}]},  # orjson refuses it: json escapes it
    {"results": [{"size_bytes": 2**70}]},  # past 64 bits: json writes it
]


def _wire(response: Any) -> Any:
    body = response.to_dict()["body"]
    return json.loads(body) if isinstance(body, str | bytes) else body


@pytest.mark.parametrize("page", PAGES)
def test_a_page_reads_back_as_chalice_would_have_written_it(page: dict[str, Any]) -> None:
    ours = page_response(page)
    assert ours.status_code == 200 and ours.headers["Content-Type"] == "application/json"
    assert _wire(ours) == _wire(json_response(page))


def test_orjson_encodes_the_common_page() -> None:
    assert isinstance(page_response(PAGES[1]).body, bytes)
    assert isinstance(page_response(PAGES[3]).body, dict)  # handed to Chalice's encoder
