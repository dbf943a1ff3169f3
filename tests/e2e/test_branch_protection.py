"""Branch protection on the embedded stack through the official clients: rules set with lakefs-sdk (ETag and
If-Match), direct writes and commits refused with the lakefs client in both presign modes and through the S3
gateway, merges into the protected branch going through."""

from __future__ import annotations

import boto3
import botocore.exceptions
import lakefs
import lakefs_sdk
import pytest
from lakefs.client import Client
from lakefs.exceptions import ServerException
from lakefs_sdk.models import BranchProtectionRule

from tests.e2e.conftest import LocalProcess
from tests.e2e.s3support import s3_endpoint

pytestmark = pytest.mark.e2e

WRITE = "cannot write to protected branch"


def test_a_protected_branch_takes_merges_only(
    local_stack: LocalProcess, client: Client, repo: lakefs.Repository
) -> None:
    main = repo.branch("main")
    main.object("a.txt").upload("v1")
    main.commit(message="first")
    feature = repo.branch("feature").create(source_reference="main")
    release = repo.branch("release-1").create(source_reference="main")
    feature.object("b.txt").upload("from feature")
    picked = feature.commit(message="feature work")

    api = client.sdk_client.repositories_api
    unset = api.get_branch_protection_rules_with_http_info(repo.id)
    assert unset.data == []
    api.set_branch_protection_rules(
        repo.id,
        [BranchProtectionRule(pattern="main"), BranchProtectionRule(pattern="release-*")],
        if_match=unset.headers["ETag"],
    )
    current = api.get_branch_protection_rules_with_http_info(repo.id)
    assert [r.pattern for r in current.data] == ["main", "release-*"]
    with pytest.raises(lakefs_sdk.ApiException) as stale:
        api.set_branch_protection_rules(repo.id, [], if_match=unset.headers["ETag"])
    assert stale.value.status == 412

    refusals = {
        "upload (presigned)": lambda: main.object("new.txt").upload("x", pre_sign=True),
        "upload (through the API)": lambda: main.object("new.txt").upload("x", pre_sign=False),
        "delete": lambda: main.object("a.txt").delete(),
        "commit": lambda: main.commit(message="direct", allow_empty=True),
        "revert": lambda: main.revert("main", parent_number=1),
        "cherry-pick": lambda: main.cherry_pick(picked),
        "reset": main.reset_changes,
        "write to a pattern's match": lambda: release.object("x").upload("x"),
        "delete a protected branch": release.delete,
    }
    for name, refused in refusals.items():
        # The lakefs client wraps most answers in its own exceptions; its presigned upload lets the sdk's through.
        with pytest.raises((ServerException, lakefs_sdk.ApiException)) as caught:
            refused()
        error = caught.value
        status = error.status_code if isinstance(error, ServerException) else error.status
        assert status == 403, name

    s3 = boto3.client(
        "s3",
        endpoint_url=s3_endpoint(local_stack),
        region_name="us-east-1",
        aws_access_key_id=local_stack.access_key_id,
        aws_secret_access_key=local_stack.secret_access_key,
    )
    with pytest.raises(botocore.exceptions.ClientError) as denied:
        s3.put_object(Bucket=repo.id, Key="main/through-s3.txt", Body=b"x")
    assert denied.value.response["Error"]["Code"] == "AccessDenied"
    assert denied.value.response["Error"]["Message"] == WRITE

    feature.merge_into(main, message="ship it")
    assert main.object("b.txt").reader(mode="r").read() == "from feature"
    messages = [c.message for c in main.log()]
    assert messages[0] == "ship it" and "direct" not in messages and len(messages) == 4
    assert [o.path for o in main.objects()] == ["a.txt", "b.txt"]
    assert list(main.uncommitted()) == []
