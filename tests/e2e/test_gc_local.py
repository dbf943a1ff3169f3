"""``lakelet gc run`` on the embedded stack: rules set and history back-dated through the official lakeFS client,
then the command (in this process, on the test session's Spark) collects exactly the unreferenced versions."""

from __future__ import annotations

import json
import re
import time

import boto3
import botocore.exceptions
import lakefs
import lakefs_sdk
import pytest
from lakefs.client import Client
from lakefs.exceptions import ServerException
from lakefs_sdk.models import GarbageCollectionRule, GarbageCollectionRules

from lakelet import cli
from tests.e2e.conftest import LocalProcess
from tests.gc.support import shared_spark

pytestmark = pytest.mark.e2e

DAY = 86_400
_MOTO_LINE = re.compile(r"AWS stand-in\s+moto at (?P<url>http://\S+)")
_GATEWAY_LINE = re.compile(r"S3 gateway\s+(?P<url>http://\S+)")


def moto_url(local: LocalProcess) -> str:
    found = _MOTO_LINE.search(local.banner)
    assert found, local.banner
    return found.group("url")


def data_addresses(local: LocalProcess, namespace: str) -> set[str]:
    bucket, _, prefix = namespace.removeprefix("s3://").partition("/")
    s3 = boto3.client(
        "s3",
        region_name="us-east-1",
        endpoint_url=moto_url(local),
        aws_access_key_id=local.aws_access_key_id,
        aws_secret_access_key=local.aws_secret_access_key,
    )
    found: set[str] = set()
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=f"{prefix}/data/"):
        found.update(f"s3://{bucket}/{item['Key']}" for item in page.get("Contents", []))
    return found


def gc_run(local: LocalProcess, repo: str, *extra: str) -> list[str]:
    return [
        "gc",
        "run",
        repo,
        "--endpoint",
        local.endpoint,
        "--access-key-id",
        local.access_key_id,
        "--secret-access-key",
        local.secret_access_key,
        "--s3-endpoint",
        moto_url(local),
        "--s3-access-key-id",
        local.aws_access_key_id,
        "--s3-secret-access-key",
        local.aws_secret_access_key,
        *extra,
    ]


def test_lakelet_gc_run_collects_exactly_the_unreferenced_versions(
    local_stack: LocalProcess,
    client: Client,
    repo: lakefs.Repository,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The command reuses the active session instead of starting its own, so it does not set the keys its driver and
    # workers sign with: the stack's moto trusts only the stack's own pair (the GC tests' moto takes any), and
    # Python workers keep the environment the session started with.
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", local_stack.aws_access_key_id)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", local_stack.aws_secret_access_key)
    shared_spark()
    main = repo.branch("main")
    now = time.time()
    addresses: dict[str, str] = {}

    def put(ref: lakefs.Branch, path: str, label: str) -> None:
        ref.object(path).upload(label.encode())
        addresses[label] = ref.object(path).stat().physical_address

    put(main, "a.txt", "A1")
    put(main, "b.txt", "B1")
    main.commit(message="v1", date=int(now - 10 * DAY))
    put(main, "a.txt", "A2")
    main.commit(message="v2", date=int(now - 9 * DAY))
    put(main, "a.txt", "A3")
    head = main.commit(message="v3", date=int(now - 8 * DAY))
    put(main, "staged.txt", "S1")  # never committed: staged data is kept
    rules_api = client.sdk_client.repositories_api
    rules = GarbageCollectionRules(
        default_retention_days=1, branches=[GarbageCollectionRule(branch_id="main", retention_days=1)]
    )
    rules_api.set_gc_rules(repo.id, rules)
    assert rules_api.get_gc_rules(repo.id) == rules
    namespace = repo.properties.storage_namespace
    assert {addresses[k] for k in ("A1", "A2", "A3", "B1", "S1")} == data_addresses(local_stack, namespace)
    time.sleep(1.05)  # S3 keeps whole seconds: everything above is strictly older than the prepare

    # A dry run first: it reports what a sweep would reclaim and deletes nothing.
    assert cli.main(gc_run(local_stack, repo.id, "--min-age-seconds", "0", "--mark-only")) == 0
    dry = capsys.readouterr().out
    assert "marked                2 (4 B)" in dry and "dry run: a sweep would reclaim 4 B" in dry
    run_id = re.search(r"--sweep-run ([^\s`]+)", dry).group(1)  # type: ignore[union-attr]
    assert len(data_addresses(local_stack, namespace)) == 5

    assert cli.main(gc_run(local_stack, repo.id, "--sweep-run", run_id, "--json")) == 0
    summary = json.loads(capsys.readouterr().out)

    assert summary["sweep"]["objects_deleted"] == 2 and summary["sweep"]["objects_failed"] == 0
    assert data_addresses(local_stack, namespace) == {addresses[k] for k in ("A3", "B1", "S1")}
    first = f"{head.get_commit().id}~2"
    # The data is gone, the entry is not: every read mode says 410 Gone, presigned or not (no URL to missing data
    # is handed out), through the default client and the sdk, and stat answers 410 with the object's stats.
    collected = repo.ref(first).object("a.txt")
    for pre_sign in (True, False, None):  # None: the client's default, presign on as /config says
        with pytest.raises(ServerException) as gone:
            collected.reader(mode="r", pre_sign=pre_sign).read()
        assert gone.value.status_code == 410, pre_sign
    objects_api = client.sdk_client.objects_api
    for presign in (True, False):
        with pytest.raises(lakefs_sdk.ApiException) as gone_sdk:
            objects_api.get_object(repo.id, first, "a.txt", presign=presign)
        assert gone_sdk.value.status == 410
        with pytest.raises(lakefs_sdk.ApiException) as stat_gone:
            objects_api.stat_object(repo.id, first, "a.txt", presign=presign)
        assert stat_gone.value.status == 410
        assert lakefs_sdk.ObjectStats.from_json(stat_gone.value.body).physical_address == addresses["A1"]
    with pytest.raises(lakefs_sdk.ApiException) as head_gone:
        objects_api.head_object(repo.id, first, "a.txt")
    assert head_gone.value.status == 410
    assert [o.path for o in repo.ref(first).objects()] == ["a.txt", "b.txt"]
    assert repo.ref(first).object("b.txt").reader(mode="r", pre_sign=True).read() == "B1"
    assert repo.ref(first).object("b.txt").reader(mode="r", pre_sign=False).read() == "B1"
    gateway = _GATEWAY_LINE.search(local_stack.banner)
    assert gateway, local_stack.banner
    s3 = boto3.client(
        "s3",
        endpoint_url=gateway.group("url"),
        region_name="us-east-1",
        aws_access_key_id=local_stack.access_key_id,
        aws_secret_access_key=local_stack.secret_access_key,
    )
    with pytest.raises(botocore.exceptions.ClientError) as no_version:
        s3.get_object(Bucket=repo.id, Key=f"{first}/a.txt")
    assert no_version.value.response["Error"]["Code"] == "NoSuchVersion"
    with pytest.raises(botocore.exceptions.ClientError) as head_no_version:
        s3.head_object(Bucket=repo.id, Key=f"{first}/a.txt")
    assert head_no_version.value.response["ResponseMetadata"]["HTTPStatusCode"] == 404
    assert s3.head_object(Bucket=repo.id, Key=f"{first}/b.txt")["ContentLength"] == 2
    assert main.object("a.txt").reader(mode="r").read() == "A3"

    # Nothing new the second time.
    assert cli.main(gc_run(local_stack, repo.id, "--min-age-seconds", "0", "--json")) == 0
    assert json.loads(capsys.readouterr().out)["sweep"]["objects_deleted"] == 0


def test_lakelet_gc_run_explains_what_it_needs(
    local_stack: LocalProcess, repo: lakefs.Repository, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(gc_run(local_stack, repo.id)) == 1
    assert "no garbage collection rules" in capsys.readouterr().err
    assert cli.main(["gc", "run", repo.id, "--endpoint", local_stack.endpoint, "--s3-endpoint", ""]) == 1
    assert "pass --s3-endpoint, the 'AWS stand-in' URL" in capsys.readouterr().err
