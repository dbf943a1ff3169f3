"""A listing never hands out what the caller may not read: ``objects/ls?presign=true`` needs only
fs:ListObjects, so each object's presigned GET is given only where fs:ReadObject is allowed on its path (as
lakeFS decides it per entry); elsewhere the object is listed as without presign, with no URL and no expiry."""

from __future__ import annotations

from typing import Any

import lakefs_sdk
from chalice.test import Client

from .support import Api, assert_error, body_of, conforms

LS = "/repositories/repo1/refs/main/objects/ls"
DENY_SECRET_READS = {
    "id": "NoSecretReads",
    "statement": [
        {"effect": "deny", "action": ["fs:ReadObject"], "resource": "arn:lakefs:fs:::repository/repo1/object/secret/*"}
    ],
}


def _viewer_without_secrets(api: Api, client: Client) -> Api:
    """A Viewer (fs:Read* and fs:List* on everything) with an explicit deny of fs:ReadObject on secret/*."""
    assert api.post("/auth/users", json_body={"id": "carol"}).status_code == 201
    assert api.request("PUT", "/auth/groups/Viewers/members/carol").status_code == 201
    assert api.post("/auth/policies", json_body=DENY_SECRET_READS).status_code == 201
    assert api.request("PUT", "/auth/users/carol/policies/NoSecretReads").status_code == 201
    pair = body_of(api.post("/auth/users/carol/credentials"))
    return Api(client, (pair["access_key_id"], pair["secret_access_key"]))


def _listed(who: Api, **query: str) -> dict[str, dict[str, Any]]:
    listing = conforms(lakefs_sdk.ObjectStatsList, body_of(who.get(LS, query={"presign": "true", **query})))
    return {o.path: o.to_dict() for o in listing.results}


def test_a_presigned_listing_signs_only_the_objects_the_caller_may_read(api: Api, client: Client, repo: str) -> None:
    for path in ("public/a.csv", "secret/payroll.csv", "secret/sub/bonus.csv"):
        api.upload("repo1", "main", path, path.encode())
    plain = {o["path"]: o for o in body_of(api.get(LS))["results"]}
    carol = _viewer_without_secrets(api, client)

    listed = _listed(carol)
    assert sorted(listed) == sorted(plain)  # listing is allowed: every path is still there
    assert listed["public/a.csv"]["physical_address"].startswith("https://")
    assert listed["public/a.csv"]["physical_address_expiry"]
    for secret in ("secret/payroll.csv", "secret/sub/bonus.csv"):
        # The stored address, as without presign: nothing that reads the bytes, and no expiry.
        assert listed[secret]["physical_address"] == plain[secret]["physical_address"]
        assert not listed[secret]["physical_address"].startswith("https://")
        assert listed[secret].get("physical_address_expiry") is None
        assert_error(carol.get("/repositories/repo1/refs/main/objects", query={"path": secret, "presign": "true"}), 403)
    # The same decision under a delimiter and a prefix; the admin, allowed everything, gets every URL.
    folded = _listed(carol, delimiter="/", prefix="secret/")
    assert folded["secret/payroll.csv"].get("physical_address_expiry") is None
    assert folded["secret/sub/"]["path_type"] == "common_prefix"
    assert all(o["physical_address"].startswith("https://") for o in _listed(api).values())
