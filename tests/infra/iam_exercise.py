"""Drives every deployed function of the app through its everyday work on moto, in process, with the deployed
wiring (PynamoDB, boto3 S3/KMS/Step Functions/EMR Serverless/Lambda), and records each AWS call per function
(infra/iam_calls.py).

The world is named as a "dev" deployment names it (tables lakelet-dev-*, state machines lakelet-dev-<name>), so
that the recorded ARNs are those the packaged template's policies resolve to (``deployment()``). Functions:
api_handler (the Chalice test client), s3_gateway (a boto3 client whose requests become Function URL events),
every workflow task (moto's Step Functions interpreter invokes them), collect_garbage and drop_retired (the
schedules' events).
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import sys
import time
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

import boto3
from botocore.awsrequest import AWSResponse
from botocore.config import Config
from chalice.test import Client
from moto import mock_aws

import app as chalice_app
from chalicelib import settings as gc_settings
from chalicelib import wiring
from chalicelib.adapters.dynamodb.tables import TableNames, create_tables
from chalicelib.adapters.kms import create_local_key
from chalicelib.graveler.branches import branch_moves
from chalicelib.settings import Settings
from chalicelib.workflows.tasks import HANDLERS
from infra.iam_calls import ACCOUNT, Call, Recorder
from infra.iam_eval import Deployment
from lakelet.stack.app_environment import restore_environ
from lakelet.stack.stepfunctions_local import MOTO_CONFIG, create_state_machines, route_lambda_invokes
from tests.api.support import Api, body_of
from tests.s3proxy.conftest import _RawBody, to_gateway_request

REGION = "us-east-1"
STAGE = "dev"
PREFIX = f"lakelet-{STAGE}-"
BUCKET = "lakelet-dev-data-iam"
IMPORT_BUCKET = "iam-import-source"
IMPORT_LOCATION = f"{IMPORT_BUCKET}:landing/"
HOOK_FUNCTION = "iam-quality-check"
HOOK_ARN = f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:{HOOK_FUNCTION}"
GC_JOB_ROLE = f"arn:aws:iam::{ACCOUNT}:role/lakelet-dev-gc-job"
REPO = "iam"
# Small thresholds: the same requests take the inline path once and the workflow path once.
WORKFLOW_THRESHOLD = 5


def deployment(world: dict[str, str]) -> Deployment:
    """The names the template's policies resolve to in this world."""
    tables = {
        "RepositoriesTable": "repositories",
        "BranchesTable": "branches",
        "TagsTable": "tags",
        "CommitsTable": "commits",
        "StagingTable": "staging",
        "AuthTable": "auth",
        "PullsTable": "pulls",
    }
    arns = {logical: f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/{PREFIX}{name}" for logical, name in tables.items()}
    arns.update(
        {
            "DataBucket": f"arn:aws:s3:::{BUCKET}",
            "SecretsKey": world["key_arn"],
            "GCJobRole": GC_JOB_ROLE,
            "IcebergDataRole": f"arn:aws:iam::{ACCOUNT}:role/lakelet-dev-iceberg-data",
        }
    )
    refs = {logical: f"{PREFIX}{name}" for logical, name in tables.items()}
    refs.update({"DataBucket": BUCKET, "GCApplication": world["application_id"], "SecretsKey": world["key_arn"]})
    parameters = {
        "Stage": STAGE,
        "BucketName": BUCKET,
        "ArtifactBucket": "lakelet-artifacts",
        "ImportLocations": IMPORT_LOCATION,
        "HookFunctions": [HOOK_ARN],
    }
    return Deployment(parameters, refs, arns, REGION, ACCOUNT)


def _hook(event: dict[str, Any]) -> dict[str, Any]:
    return {"statusCode": 200, "body": "seen " + str(event.get("event_type"))}


def _create_hook_function() -> None:
    iam = boto3.client("iam", region_name=REGION)
    role = iam.create_role(RoleName="iam-hook-role", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
    code = io.BytesIO()
    with zipfile.ZipFile(code, "w") as z:
        z.writestr("index.py", "def handler(event, context): pass")
    boto3.client("lambda", region_name=REGION).create_function(
        FunctionName=HOOK_FUNCTION,
        Runtime="python3.12",
        Role=role,
        Handler="index.handler",
        Code={"ZipFile": code.getvalue()},
    )


@contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        restore_environ(os.environ, saved)


class Gateway:
    """A boto3 S3 client whose requests go to the s3_gateway function as Function URL events."""

    def __init__(self, recorder: Recorder, key: str, secret: str) -> None:
        self._handler = recorder.wrap("s3_gateway", chalice_app.s3_gateway)
        self.client = boto3.client(
            "s3",
            endpoint_url="http://gateway.test",
            region_name=REGION,
            aws_access_key_id=key,
            aws_secret_access_key=secret,
            config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}),
        )
        self.client.meta.events.register("before-send", self._send)

    def _send(self, request: Any, **_: Any) -> AWSResponse:
        converted = to_gateway_request(request)
        event = {
            "version": "2.0",
            "rawPath": converted.raw_path,
            "rawQueryString": converted.raw_query,
            "headers": dict(converted.headers),
            "requestContext": {"http": {"method": converted.method, "path": converted.path}},
            "body": base64.b64encode(converted.body).decode(),
            "isBase64Encoded": True,
        }
        answer = self._handler(event, None)
        body = base64.b64decode(answer["body"]) if answer.get("isBase64Encoded") else answer["body"].encode()
        body = b"" if converted.method == "HEAD" else body
        return AWSResponse(request.url, answer["statusCode"], dict(answer.get("headers") or {}), _RawBody(body))


@contextmanager
def _a_container_per_function(recorder: Recorder, settings: Settings, base: wiring.Services) -> Iterator[None]:
    """Each function gets services of its own, as each deployed function has containers of its own: a cache one
    function filled must not hide a call another function makes (all of them run in this one process). Every
    module that bound wiring's get_services by name gets the per-function one meanwhile."""
    original = wiring.get_services
    containers: dict[str, wiring.Services] = {}

    def get_services() -> wiring.Services:
        function = recorder.current()
        if function is None:
            return base
        if function not in containers:
            containers[function] = wiring.aws_services(settings)
        return containers[function]

    bound = [m for m in list(sys.modules.values()) if getattr(m, "get_services", None) is original]
    for module in bound:
        module.get_services = get_services  # type: ignore[attr-defined]
    try:
        yield
    finally:
        for module in bound:
            module.get_services = original  # type: ignore[attr-defined]


def _ok(response: Any, *statuses: int) -> Any:
    assert response.status_code in (statuses or (200,)), (response.status_code, response.body)
    try:
        return body_of(response)
    except ValueError:
        return None


def _api_flows(api: Api, s3: Any, recorder: Recorder) -> None:
    """The API function's everyday operations, each at least once (the big ones inline and via a workflow)."""
    base = f"/repositories/{REPO}"
    _ok(api.post("/repositories", json_body={"name": REPO, "storage_namespace": f"s3://{BUCKET}/{REPO}"}), 201)
    actions = (
        "name: checks\non:\n  pre-commit:\n  post-commit:\n  post-merge:\nhooks:\n"
        f"  - id: quality\n    type: lambda\n    properties:\n      function_name: {HOOK_ARN}\n"
    )
    api.upload(REPO, "main", "_lakefs_actions/checks.yaml", actions.encode())
    api.commit(REPO, "main", "hooks")  # inline commit, with a pre- and a post-commit hook
    api.upload(REPO, "main", "a.txt", b"a")
    _ok(api.get(f"{base}/refs/main/objects/stat", query={"path": "a.txt"}))
    _ok(api.get(f"{base}/refs/main/objects", query={"path": "a.txt"}))
    _ok(api.get(f"{base}/refs/main/objects", query={"path": "a.txt", "presign": "true"}), 200, 302)
    _ok(api.get(f"{base}/refs/main/objects/ls", query={"prefix": ""}))
    # Presigned upload, the client's PUT, then the link.
    backing = _ok(api.get(f"{base}/branches/main/staging/backing", query={"path": "p.bin", "presign": "true"}))
    address = backing["physical_address"]
    bucket, _, key = address.removeprefix("s3://").partition("/")
    with recorder.as_function(None):  # the client's own PUT, with the presigned URL's permissions
        etag = s3.put_object(Bucket=bucket, Key=key, Body=b"presigned")["ETag"].strip('"')
    link = {"staging": backing, "checksum": etag, "size_bytes": 9}
    _ok(api.request("PUT", f"{base}/branches/main/staging/backing", query={"path": "p.bin"}, json_body=link))
    _ok(
        api.post(f"{base}/branches/main/objects/copy", query={"dest_path": "c.txt"}, json_body={"src_path": "a.txt"}),
        201,
    )
    for i in range(WORKFLOW_THRESHOLD + 2):
        api.upload(REPO, "main", f"wf/{i}", b"w")
    api.commit(REPO, "main", "via the workflow")
    _ok(api.post(f"{base}/branches", json_body={"name": "dev", "source": "main"}), 201)
    api.upload(REPO, "dev", "d.txt", b"d")
    api.commit(REPO, "dev", "on dev")
    _ok(api.post(f"{base}/refs/dev/merge/main", json_body={}))  # inline
    for i in range(WORKFLOW_THRESHOLD + 2):
        api.upload(REPO, "dev", f"dwf/{i}", b"w")
    api.commit(REPO, "dev", "more on dev")
    _ok(api.post(f"{base}/refs/dev/merge/main", json_body={}))  # via the workflow
    _ok(api.get(f"{base}/refs/main/diff/dev"))
    _ok(api.get(f"{base}/refs/main/commits"))
    _ok(api.post(f"{base}/branches/main/revert", json_body={"ref": "main", "parent_number": 1}), 204)
    _ok(api.post(f"{base}/tags", json_body={"id": "v1", "ref": "main"}), 201)
    _ok(api.delete(f"{base}/tags/v1"), 204)
    _ok(api.delete(f"{base}/branches/main/objects", query={"path": "a.txt"}), 204)
    _ok(api.post(f"{base}/branches/main/objects/delete", json_body={"paths": ["c.txt", "p.bin"]}))
    _ok(api.delete(f"{base}/branches/dev"), 204)
    api.commit(REPO, "main", "deletes")  # an import needs a branch with nothing staged
    # Imports: a small one runs inline, a bigger one in the import workflow.
    for name, count in (("small", 2), ("big", WORKFLOW_THRESHOLD + 2)):
        with recorder.as_function(None):  # the source's data, written by someone else
            for i in range(count):
                s3.put_object(Bucket=IMPORT_BUCKET, Key=f"landing/{name}/{i}", Body=b"i")
        started = _ok(
            api.post(
                f"{base}/branches/main/import",
                json_body={
                    "paths": [
                        {
                            "path": f"s3://{IMPORT_BUCKET}/landing/{name}/",
                            "destination": f"imported/{name}/",
                            "type": "common_prefix",
                        }
                    ],
                    "commit": {"message": f"import {name}"},
                },
            ),
            202,
        )
        for _ in range(200):  # the workflow runs in moto's threads
            status = _ok(api.get(f"{base}/branches/main/import", query={"id": started["id"]}))
            if status.get("completed") or status.get("error"):
                break
            time.sleep(0.05)
        assert status.get("completed") and not status.get("error"), status
    _ok(api.get(f"{base}/refs/main/objects", query={"path": "imported/small/0"}))
    _dump_and_restore_flows(api, s3, recorder)
    # Garbage collection: rules, and the API's own prepare.
    rules = {"default_retention_days": 7, "branches": []}
    _ok(api.request("PUT", f"{base}/settings/gc_rules", json_body=rules), 204)
    _ok(api.post(f"{base}/gc/prepare_commits", json_body={}), 201)
    # Auth: users, keys, a login.
    _ok(api.post("/auth/users", json_body={"id": "bob"}), 201)
    key = _ok(api.post("/auth/users/bob/credentials"), 201)
    _ok(api.get("/auth/users/bob/credentials"))
    _ok(
        api.post(
            "/auth/login",
            json_body={"access_key_id": key["access_key_id"], "secret_access_key": key["secret_access_key"]},
        )
    )
    _ok(api.delete(f"/auth/users/bob/credentials/{key['access_key_id']}"), 204)
    _ok(api.delete("/auth/users/bob"), 204)


def _task(api: Api, repo: str, kind: str, task_id: str) -> dict[str, Any]:
    for _ in range(400):  # the workflow runs in moto's threads
        status = _ok(api.get(f"/repositories/{repo}/{kind}", query={"task_id": task_id}))
        if status["done"]:
            return status
        time.sleep(0.05)
    raise AssertionError(f"the {kind} task did not end")


def _dump_and_restore_flows(api: Api, s3: Any, recorder: Recorder) -> None:
    """A dump and a restore in their workflows (the repository has more commits than the threshold), and a
    restore that fails part-way (a tag naming a commit the dump lacks) and rolls back."""
    dumped = _task(api, REPO, "dump", _ok(api.post(f"/repositories/{REPO}/dump"), 202)["id"])
    assert dumped.get("refs") and not dumped.get("error"), dumped
    refs = dumped["refs"]
    for name in ("iam-copy", "iam-broken"):
        body = {"name": name, "storage_namespace": f"s3://{BUCKET}/{REPO}", "default_branch": "main"}
        _ok(api.post("/repositories", json_body=body, query={"bare": "true"}), 201)
    restored = _task(
        api, "iam-copy", "restore", _ok(api.post("/repositories/iam-copy/restore", json_body=refs), 202)["id"]
    )
    assert not restored.get("error"), restored
    with recorder.as_function(None):  # a damaged dump, written by someone else
        key = f"{REPO}/_lakefs/refs_dump/{refs['tags_meta_range_id']}.jsonl"
        header = s3.get_object(Bucket=BUCKET, Key=key)["Body"].read().split(b"\n")[0]
        data = (
            header.replace(b'"count": 0', b'"count": 1') + b"\n" + b'{"commit_id": "' + b"f" * 64 + b'", "id": "t"}\n'
        )
        broken_id = hashlib.sha256(data).hexdigest()
        s3.put_object(Bucket=BUCKET, Key=f"{REPO}/_lakefs/refs_dump/{broken_id}.jsonl", Body=data)
    broken = {**refs, "tags_meta_range_id": broken_id}
    failed = _task(
        api, "iam-broken", "restore", _ok(api.post("/repositories/iam-broken/restore", json_body=broken), 202)["id"]
    )
    assert "which its commits lack" in failed.get("error", ""), failed
    assert _ok(api.get("/repositories/iam-broken/branches"))["results"] == []
    for name in ("iam-copy", "iam-broken"):
        _ok(api.delete(f"/repositories/{name}"), 204)


def _gateway_flows(gateway: Gateway) -> None:
    s3 = gateway.client
    s3.put_object(Bucket=REPO, Key="main/gw/a.txt", Body=b"gateway")
    assert s3.get_object(Bucket=REPO, Key="main/gw/a.txt")["Body"].read() == b"gateway"
    s3.head_object(Bucket=REPO, Key="main/gw/a.txt")
    s3.list_objects_v2(Bucket=REPO, Prefix="main/gw/")
    s3.copy_object(Bucket=REPO, Key="main/gw/b.txt", CopySource={"Bucket": REPO, "Key": "main/gw/a.txt"})
    upload = s3.create_multipart_upload(Bucket=REPO, Key="main/gw/big.bin")["UploadId"]
    part = s3.upload_part(Bucket=REPO, Key="main/gw/big.bin", UploadId=upload, PartNumber=1, Body=b"p" * 1024)
    s3.list_parts(Bucket=REPO, Key="main/gw/big.bin", UploadId=upload)
    s3.complete_multipart_upload(
        Bucket=REPO,
        Key="main/gw/big.bin",
        UploadId=upload,
        MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": part["ETag"]}]},
    )
    aborted = s3.create_multipart_upload(Bucket=REPO, Key="main/gw/gone.bin")["UploadId"]
    s3.abort_multipart_upload(Bucket=REPO, Key="main/gw/gone.bin", UploadId=aborted)
    s3.delete_object(Bucket=REPO, Key="main/gw/b.txt")
    s3.delete_objects(Bucket=REPO, Delete={"Objects": [{"Key": "main/gw/a.txt"}]})


def record() -> tuple[list[Call], list[str], Deployment]:
    """Runs every flow; (the recorded calls, the operations no IAM mapping knows, the deployment's names)."""
    recorder = Recorder()
    fake = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": REGION}
    with _environment(fake), mock_aws(config=MOTO_CONFIG):
        s3 = boto3.client("s3", region_name=REGION)
        s3.create_bucket(Bucket=BUCKET)
        s3.create_bucket(Bucket=IMPORT_BUCKET)
        key_id = create_local_key(boto3.client("kms", region_name=REGION))
        key_arn = boto3.client("kms", region_name=REGION).describe_key(KeyId=key_id)["KeyMetadata"]["Arn"]
        recorder.kms_key = key_arn
        create_tables(TableNames.from_prefix(PREFIX), REGION)
        machines = create_state_machines(boto3.client("stepfunctions", region_name=REGION), REGION, prefix=PREFIX)
        emr = boto3.client("emr-serverless", region_name=REGION)
        application = emr.create_application(name="lakelet-gc", releaseLabel="emr-7.12.0", type="SPARK")
        _create_hook_function()
        settings = Settings(
            region=REGION,
            table_prefix=PREFIX,
            bucket=BUCKET,
            kms_key_id=key_arn,
            commit_workflow_threshold=WORKFLOW_THRESHOLD,
            commit_state_machine_arn=machines["commit"],
            merge_workflow_threshold=WORKFLOW_THRESHOLD,
            merge_state_machine_arn=machines["merge"],
            import_state_machine_arn=machines["import"],
            import_inline_threshold=WORKFLOW_THRESHOLD,
            import_allowed_locations=(f"s3://{IMPORT_BUCKET}/landing/",),
            dump_state_machine_arn=machines["dump"],
            restore_state_machine_arn=machines["restore"],
            dump_inline_threshold=WORKFLOW_THRESHOLD,
            restore_inline_threshold=WORKFLOW_THRESHOLD,
            hook_functions=(HOOK_ARN,),
            stage=STAGE,
        )
        services = wiring.aws_services(settings)
        wiring.set_services(services)
        handlers = {name: recorder.wrap(name, step) for name, step in HANDLERS.items()}
        handlers[HOOK_FUNCTION] = _hook
        gc_env = {
            gc_settings.ENV_APPLICATION_ID: application["applicationId"],
            gc_settings.ENV_EXECUTION_ROLE_ARN: GC_JOB_ROLE,
            gc_settings.ENV_ENTRY_POINT: "s3://lakelet-artifacts/lakelet/dev/emr/gc_job.py",
            gc_settings.ENV_PY_FILES: "s3://lakelet-artifacts/lakelet/dev/emr/lakelet_gc.zip",
            gc_settings.ENV_LOG_URI: "s3://lakelet-artifacts/lakelet/dev/emr/logs/",
        }
        try:
            credential, secret = services.auth.setup("admin")
            with (
                recorder.installed(),
                _a_container_per_function(recorder, settings, services),
                route_lambda_invokes(handlers),
                Client(chalice_app.app) as client,
            ):
                api = Api(client, (credential.access_key_id, secret))
                with recorder.as_function("api_handler"):
                    _api_flows(api, s3, recorder)
                _gateway_flows(Gateway(recorder, credential.access_key_id, secret))
                with _environment(gc_env), recorder.as_function("collect_garbage"):
                    event = client.events.generate_cw_event(
                        source="aws.events", detail_type="Scheduled Event", detail={}, resources=["arn:aws:events:gc"]
                    )
                    answer = client.lambda_.invoke("collect_garbage", event).payload
                assert [run.get("job_run_id") for run in answer["runs"]] and not any(
                    run.get("error") for run in answer["runs"]
                ), answer
                # The sweep of retired staging tokens, once the commits' tokens are past their grace.
                real = time.time
                with (
                    mock.patch.object(
                        branch_moves.time, "time", lambda: real() + branch_moves.RETIRED_GRACE_SECONDS + 1
                    ),
                    recorder.as_function("drop_retired"),
                ):
                    event = client.events.generate_cw_event(
                        source="aws.events", detail_type="Scheduled Event", detail={}, resources=["arn:aws:events:drop"]
                    )
                    swept = client.lambda_.invoke("drop_retired", event).payload
                assert swept["retired"] == 0, swept  # every due token dropped and struck
                with recorder.as_function("api_handler"):
                    # A pull request, removed with its repository.
                    _ok(api.post(f"/repositories/{REPO}/branches", json_body={"name": "pr", "source": "main"}), 201)
                    pull = {"title": "t", "source_branch": "pr", "destination_branch": "main"}
                    _ok(api.post(f"/repositories/{REPO}/pulls", json_body=pull), 201)
                    _ok(api.delete(f"/repositories/{REPO}"), 204)
        finally:
            wiring.set_services(None)
        world = {"key_arn": key_arn, "application_id": application["applicationId"]}
    return recorder.calls, recorder.unmapped, deployment(world)


def checked(template: dict[str, Any] | None = None) -> tuple[list[Any], list[Any], list[Call], list[str]]:
    """Records the calls and checks them against ``template`` (default: infra/build.py's merge template with
    chalice's policy file, the roles ``make package`` writes); (rows, denials, calls, unmapped operations)."""
    from pathlib import Path

    from infra import build, iam_report

    calls, unmapped, names = record()
    app = build.read_app(build.PROJECT_DIR, STAGE)
    roles = {f.name: f.role_logical_id for f in app.functions}
    extra = None
    if template is None:
        template = build.build(app, Path(build.PROJECT_DIR) / "stepfunctions")
        extra = iam_report.chalice_policy()
    statements = iam_report.function_statements(template, roles, names, extra)
    rows, denials = iam_report.verdicts(calls, statements, roles)
    return rows, denials, calls, unmapped


def main(argv: list[str] | None = None) -> int:
    import argparse

    from infra import build, iam_report

    parser = argparse.ArgumentParser(prog="python -m tests.infra.iam_exercise", description=__doc__.splitlines()[0])
    parser.add_argument("--write-doc", action="store_true", help="rewrite the table in docs/deploy.md")
    args = parser.parse_args(argv)
    rows, denials, _calls, unmapped = checked()
    for problem in [*map(str, denials), *(f"no IAM mapping: {u}" for u in unmapped)]:
        print(f"iam: {problem}", file=sys.stderr)
    if args.write_doc:
        iam_report.write_doc(build.PROJECT_DIR / "docs" / "deploy.md", rows)
    else:
        print(iam_report.markdown(rows))
    return 1 if denials or unmapped else 0


if __name__ == "__main__":
    sys.exit(main())
