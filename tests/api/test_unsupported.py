"""The operations lakeFS OSS answers 501 answer 501 in lakeFS's error body (api/unsupported.py), not 404."""

from __future__ import annotations

import pytest

from .support import Api, assert_error

PUBLIC = [("POST", "/sts/login"), ("GET", "/oidc/callback"), ("POST", "/auth/external/principal/login")]
PROTECTED = [
    ("GET", "/auth/external/principals?principalId=arn:aws:iam::1:role/x"),
    ("POST", "/auth/users/admin/external/principals?principalId=arn:aws:iam::1:role/x"),
    ("DELETE", "/auth/users/admin/external/principals?principalId=arn:aws:iam::1:role/x"),
    ("GET", "/auth/users/admin/external/principals/ls"),
    ("GET", "/auth/groups/Admins/acl"),
    ("POST", "/auth/groups/Admins/acl"),
]


@pytest.mark.parametrize(("method", "path"), PUBLIC + PROTECTED)
def test_lakefs_oss_501s_answer_501_with_lakefs_body(api: Api, method: str, path: str) -> None:
    assert assert_error(api.request(method, path, json_body={}), 501) == "Not Implemented"


@pytest.mark.parametrize(("method", "path"), PUBLIC)
def test_the_login_ones_are_public_as_in_lakefs(anonymous: Api, method: str, path: str) -> None:
    assert assert_error(anonymous.request(method, path, json_body={"code": "c"}), 501) == "Not Implemented"


@pytest.mark.parametrize(("method", "path"), PROTECTED)
def test_the_others_authenticate_first(anonymous: Api, method: str, path: str) -> None:
    assert_error(anonymous.request(method, path, json_body={}), 401)
