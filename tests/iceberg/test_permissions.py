"""The report's attack against ``lakelet up``, with pyiceberg and data through the S3 gateway (issue 40, item 2): a
user with an explicit deny on ``secret*`` cannot reach ``secret/`` through a table (create with a location there,
set-location, register, purge), and ``secret/keep1.txt`` (committed) and ``secret/staged.txt`` (staged) survive."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable

import lakefs
import pyarrow as pa
import pytest
import requests
from lakefs.client import Client
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.exceptions import ForbiddenError, NoSuchTableError

from tests.e2e.conftest import LocalProcess

pytestmark = pytest.mark.e2e


def _mallory(stack: LocalProcess, repo: str) -> tuple[str, str]:
    """A user allowed everything but ``secret*`` of the repository."""
    admin = (stack.access_key_id, stack.secret_access_key)
    api = stack.endpoint + "/api/v1"
    name = f"mallory-{uuid.uuid4().hex[:8]}"
    policy = {
        "id": name,
        "statement": [
            {"effect": "allow", "action": ["fs:*"], "resource": "*"},
            {"effect": "deny", "action": ["fs:*"], "resource": f"arn:lakefs:fs:::repository/{repo}/object/secret*"},
        ],
    }
    assert requests.post(f"{api}/auth/policies", json=policy, auth=admin, timeout=30).status_code == 201
    assert requests.post(f"{api}/auth/users", json={"id": name}, auth=admin, timeout=30).status_code == 201
    assert requests.put(f"{api}/auth/users/{name}/policies/{name}", auth=admin, timeout=30).status_code == 201
    key = requests.post(f"{api}/auth/users/{name}/credentials", auth=admin, timeout=30).json()
    return key["access_key_id"], key["secret_access_key"]


def test_a_user_denied_secret_cannot_reach_it_through_tables(
    stack: LocalProcess, repo: lakefs.Repository, make_catalog: Callable[..., RestCatalog]
) -> None:
    r, main = repo.id, repo.branch("main")
    main.object("secret/keep1.txt").upload(b"committed secret")
    main.commit(message="a secret")
    main.object("secret/staged.txt").upload(b"staged secret")
    admin = make_catalog()
    admin.create_namespace((r, "main", "sales"))
    admin.create_table(
        (r, "main", "sales", "hidden"), pa.schema([pa.field("id", pa.int64())]), location=f"s3://{r}/main/secret"
    )

    key, secret = _mallory(stack, r)
    mallory = make_catalog(**{"credential": f"{key}:{secret}", "s3.access-key-id": key, "s3.secret-access-key": secret})
    rows = pa.table({"id": pa.array([1, 2], pa.int64())})
    table = mallory.create_table((r, "main", "sales", "t"), rows.schema)
    table.append(rows)
    with pytest.raises(ForbiddenError):
        mallory.create_table((r, "main", "sales", "u"), rows.schema, location=f"s3://{r}/main/secret")
    # pyiceberg has no update_location: the commit its Java sibling sends, by hand.
    namespace = "\x1f".join([r, "main", "sales"])
    moved = requests.post(
        f"{stack.endpoint}/iceberg/api/v1/namespaces/{requests.utils.quote(namespace, safe='')}/tables/t",
        json={"requirements": [], "updates": [{"action": "set-location", "location": f"s3://{r}/main/secret"}]},
        auth=(key, secret),
        timeout=30,
    )
    # Refused either way: a table whose files are in the store (the stack vends credentials) keeps its root for
    # everyone (400), a table written through the gateway needs fs:WriteObject at the new location (403).
    refusals = {400: "BadRequestException", 403: "ForbiddenException"}
    assert refusals.get(moved.status_code) == moved.json()["error"]["type"], moved.text
    assert mallory.load_table((r, "main", "sales", "t")).metadata.location == table.metadata.location
    forged = {**table.metadata.model_dump(mode="json", by_alias=True), "location": f"s3://{r}/main/secret"}
    as_mallory = lakefs.Repository(r, client=Client(host=stack.endpoint, username=key, password=secret))
    as_mallory.branch("main").object("iceberg/evil/00000-x.metadata.json").upload(json.dumps(forged).encode())
    with pytest.raises(ForbiddenError):
        mallory.register_table((r, "main", "sales", "v"), f"s3://{r}/main/iceberg/evil/00000-x.metadata.json")
    with pytest.raises(ForbiddenError):
        mallory.purge_table((r, "main", "sales", "hidden"))
    assert admin.load_table((r, "main", "sales", "hidden")).metadata.location == f"s3://{r}/main/secret"

    # The table's files as objects of the branch: under its path in the repository (its location is a physical
    # root in the store, linked there at each commit).
    location = "iceberg/sales/t-"
    assert [o.path for o in main.objects(prefix=location)]
    mallory.purge_table((r, "main", "sales", "t"))
    with pytest.raises(NoSuchTableError):
        mallory.load_table((r, "main", "sales", "t"))
    assert [o.path for o in main.objects(prefix=location)] == []
    secrets = sorted(o.path for o in main.objects(prefix="secret/") if "/metadata/" not in o.path)
    assert secrets == ["secret/keep1.txt", "secret/staged.txt"]
    assert main.object("secret/keep1.txt").reader(mode="rb").read() == b"committed secret"
    assert main.object("secret/staged.txt").reader(mode="rb").read() == b"staged secret"
