"""The version GET /config reports is the lakeFS API version the served spec follows: the pinned lakefs-sdk's,
which openapi-generator built from that lakeFS release's swagger.yml. Clients gate features on it."""

from __future__ import annotations

import json

import lakefs_sdk
from chalice.test import Client

from chalicelib.api.config import LAKEFS_API_VERSION, LAKELET_VERSION

from .support import PREFIX, app, basic, check_response, seeded_services, spec


def test_the_reported_version_is_the_pinned_sdks_and_the_specs() -> None:
    assert LAKEFS_API_VERSION == lakefs_sdk.__version__ == spec()["info"]["version"]


def test_config_answers_both_versions_in_lakefs_shapes() -> None:
    from chalicelib import wiring

    wiring.set_services(seeded_services())
    try:
        with Client(app) as client:
            for path in ("/config", "/config/version"):
                response = client.http.get(PREFIX + path, headers={"authorization": basic()})
                assert response.status_code == 200
                check_response("GET", path, 200, response.body)
                body = json.loads(response.body)
                version = body.get("version_config", body)
                assert version["version"] == lakefs_sdk.__version__
                assert version["lakelet_version"] == LAKELET_VERSION != version["version"]
    finally:
        wiring.set_services(None)
