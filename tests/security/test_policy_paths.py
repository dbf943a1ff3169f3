"""A user allowed only ``public/*`` writes only keys that match ``public/*`` exactly as they are stored.

Object paths are opaque keys, in lakeFS as here: ``public/../secret/v`` and ``public//secret/v`` are keys of
their own under ``public/`` (lakeFS matches them against ``public/*`` and stores them as sent), never
``secret/v``. What must hold is that the resource the policy sees is the key that is written: no layer (the
query or path decoding of the API and the gateway, a copy's destination) may
resolve dot segments or fold slashes after the check. Each write path is tried, then the branch is listed.
"""

from __future__ import annotations

import base64
import json
from urllib.parse import quote

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

from .servers import Stack, stack

__all__ = ["stack"]

REPO = "paths"
TRICKS = ("public/../secret/v", "public//secret/v", "public/./secret/v", "public/..")


def _as(stack: Stack, keys: tuple[str, str], method: str, target: str, body: bytes = b"", ctype: str = "") -> int:
    headers = {"Authorization": "Basic " + base64.b64encode(f"{keys[0]}:{keys[1]}".encode()).decode()}
    if ctype:
        headers["Content-Type"] = ctype
    return stack.api_request(method, target, body, headers, auth=False).status


def _public_writer(stack: Stack) -> tuple[str, str]:
    def admin(method: str, target: str, body: object = None) -> int:
        raw = b"" if body is None else json.dumps(body).encode()
        return stack.api_request(method, target, raw, {"Content-Type": "application/json"}).status

    assert admin("POST", "/repositories", {"name": REPO, "storage_namespace": f"s3://security-tests/{REPO}"}) == 201
    policy = {
        "id": "public-only",
        "statement": [
            {"effect": "allow", "action": ["fs:*"], "resource": f"arn:lakefs:fs:::repository/{REPO}/object/public/*"},
            {"effect": "allow", "action": ["fs:ReadRepository", "fs:ListObjects", "fs:ReadObject"], "resource": "*"},
        ],
    }
    assert admin("POST", "/auth/policies", policy) == 201
    assert admin("POST", "/auth/users", {"id": "pub"}) == 201
    assert admin("PUT", "/auth/users/pub/policies/public-only") == 201
    created = stack.api_request("POST", "/auth/users/pub/credentials", b"", {"Content-Type": "application/json"})
    return created.json()["access_key_id"], created.json()["secret_access_key"]


def test_tricky_keys_under_public_are_stored_as_checked_and_never_reach_secret(stack: Stack) -> None:
    pub = _public_writer(stack)
    octets = "application/octet-stream"
    objects = f"/repositories/{REPO}/branches/main/objects"
    written: set[str] = set()
    for n, key in enumerate(TRICKS):
        assert _as(stack, pub, "POST", f"{objects}?path={quote(key, safe='')}", b"api", octets) == 201, key
        written.add(key)
        copy = json.dumps({"src_path": key}).encode()
        dest = f"{key}-copy{n}"
        assert (
            _as(stack, pub, "POST", f"{objects}/copy?dest_path={quote(dest, safe='')}", copy, "application/json") == 201
        )
        written.add(dest)
    # The gateway, as boto3 sends keys (literally) and percent-encoded on the wire.
    s3 = boto3.client(
        "s3",
        endpoint_url=stack.s3.url,
        region_name="us-east-1",
        aws_access_key_id=pub[0],
        aws_secret_access_key=pub[1],
        config=Config(s3={"addressing_style": "path"}),
    )
    for key in TRICKS:
        s3.put_object(Bucket=REPO, Key=f"main/{key}-gw", Body=b"gateway")
        written.add(f"{key}-gw")
    # Nothing outside public/ was written, by any spelling; and the direct write is refused.
    for key in ("secret/v", "secret/v-gw", "secret/v-copy0", "public/secret/v"):
        try:
            s3.head_object(Bucket=REPO, Key=f"main/{key}")
            raise AssertionError(f"{key} exists")
        except ClientError as error:
            assert error.response["Error"]["Code"] in ("404", "NoSuchKey"), key
    assert _as(stack, pub, "POST", f"{objects}?path=secret/v", b"x", octets) == 403
    listed = stack.api_request("GET", f"/repositories/{REPO}/refs/main/objects/ls?amount=1000").json()
    paths = {row["path"] for row in listed["results"]}
    assert paths == written
    assert all(path.startswith("public/") for path in paths)
