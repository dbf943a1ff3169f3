"""A smoke test of a Lakelet (or lakeFS) endpoint: the everyday flows, once each, with the official ``lakefs``
client, lakefs-sdk and boto3, bounded and self-cleaning. Prints a table of what worked with timings; exits 1 if
any step failed. Run it right after ``make deploy`` (docs/deploy.md); CI runs it against ``lakelet up --aws-limits``.

    make smoke ENDPOINT=https://.../dev ACCESS_KEY_ID=... SECRET_ACCESS_KEY=... [S3_ENDPOINT=https://...lambda-url...]
    python bench/smoke.py --endpoint URL --access-key-id ID --secret-access-key KEY [--s3-endpoint URL]
        [--workflow-objects N] [--presigned-mib 20] [--namespace s3://bucket/prefix]

Steps: the server's /config; a repository (``smoke-<random>``, under --namespace or the server's default namespace
prefix) and a branch; an upload through the API; a presigned upload of --presigned-mib MiB (presigned multipart
when /config offers it); a commit; a merge with a conflict (answered 409), then resolved with source-wins; an S3
gateway put and get (when --s3-endpoint is given); a workflow-sized commit (--workflow-objects staged objects,
committed with commits/async, which says whether it ran as a workflow: choose a count above the deployment's
LAKELET_COMMIT_WORKFLOW_THRESHOLD, 25,000 by default); a GC dry run (GC rules, then prepare_commits, which deletes
nothing). Whatever happens, the repository is deleted at the end (its objects stay in the bucket, as lakeFS
leaves them: GC or a lifecycle rule on the namespace removes them).
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import time
import traceback
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

MIB = 1024 * 1024
PART_MIB = 8  # S3's minimum part is 5 MiB
WAIT_SECONDS = 600


@dataclass
class Step:
    name: str
    ok: bool | None = None  # None: skipped
    seconds: float = 0.0
    note: str = ""


@dataclass
class Smoke:
    endpoint: str
    access_key_id: str
    secret_access_key: str
    s3_endpoint: str | None = None
    namespace: str | None = None
    workflow_objects: int = 60_000
    presigned_mib: int = 20
    workers: int = 16
    steps: list[Step] = field(default_factory=list)
    repo_name: str = field(default_factory=lambda: f"smoke-{uuid.uuid4().hex[:8]}")
    state: dict[str, Any] = field(default_factory=dict)

    # -- plumbing -------------------------------------------------------------------------------------------------

    def client(self) -> Any:
        from lakefs.client import Client

        return Client(host=self.api_base, username=self.access_key_id, password=self.secret_access_key)

    @property
    def api_base(self) -> str:
        """The API's base URL: a deployment's LakeFSEndpoint output (``.../<stage>/api/v1``) as given, a server
        root with ``/api/v1`` added (the lakeFS SDK adds it only to a host without a path)."""
        return self.endpoint if self.endpoint.endswith("/api/v1") else self.endpoint + "/api/v1"

    def step(self, name: str, run: Callable[[], str | None], *, needs: str | None = None) -> bool:
        """Run one step unless a step it needs failed; record whether it worked, its time and a note."""
        if needs is not None and not any(s.name == needs and s.ok for s in self.steps):
            self.steps.append(Step(name, None, 0.0, f"skipped: {needs} did not work"))
            return False
        started = time.perf_counter()
        try:
            note = run() or ""
            ok = True
        except Exception as error:  # noqa: BLE001 - a smoke test reports every failure and goes on
            ok, note = False, f"{type(error).__name__}: {str(error)[:300]}"
            if os.environ.get("SMOKE_TRACEBACK"):
                traceback.print_exc()
        self.steps.append(Step(name, ok, time.perf_counter() - started, note))
        return ok

    # -- the steps ------------------------------------------------------------------------------------------------

    def config(self) -> str:
        config = self.client().sdk_client.config_api.get_config().storage_config
        self.state["presign_multipart"] = bool(config.pre_sign_multipart_upload)
        self.state["prefix"] = config.default_namespace_prefix
        return f"pre_sign_multipart_upload={self.state['presign_multipart']}"

    def create_repository(self) -> str:
        import lakefs

        prefix = self.namespace or self.state.get("prefix")
        if not prefix:
            raise RuntimeError("the server names no default namespace prefix: pass --namespace s3://bucket/prefix")
        namespace = f"{prefix.rstrip('/')}/{self.repo_name}"
        self.state["repo"] = lakefs.Repository(self.repo_name, client=self.client()).create(storage_namespace=namespace)
        return namespace

    def create_branch(self) -> str:
        self.state["repo"].branch("smoke").create(source_reference="main")
        return "smoke from main"

    def upload(self) -> str:
        data = os.urandom(64 * 1024)
        obj = self.state["repo"].branch("smoke").object("small/one.bin")
        obj.upload(data=data, content_type="application/octet-stream", pre_sign=False)
        if obj.reader(mode="rb", pre_sign=False).read() != data:
            raise AssertionError("the object read back differs")
        return "64 KiB through the API, read back"

    def presigned_upload(self) -> str:
        size = self.presigned_mib * MIB
        data = os.urandom(size)
        path = "big/presigned.bin"
        if self.state.get("presign_multipart"):
            self._presigned_multipart(path, data)
            how = "presigned multipart"
        else:
            self.state["repo"].branch("smoke").object(path).upload(data=data, pre_sign=True)
            how = "presigned PUT"
        reader = self.state["repo"].branch("smoke").object(path).reader(mode="rb", pre_sign=True)
        if reader.read() != data:
            raise AssertionError("the object read back (presigned) differs")
        return f"{self.presigned_mib} MiB by {how}, read back presigned"

    def _presigned_multipart(self, path: str, data: bytes) -> None:
        import requests
        from lakefs_sdk import CompletePresignMultipartUpload, UploadPart

        api = self.client().sdk_client.experimental_api
        chunks = [data[i : i + PART_MIB * MIB] for i in range(0, len(data), PART_MIB * MIB)]
        started = api.create_presign_multipart_upload(self.repo_name, "smoke", path, parts=len(chunks))
        parts = []
        for number, (url, chunk) in enumerate(zip(started.presigned_urls or [], chunks, strict=True), 1):
            answer = requests.put(url, data=chunk, timeout=300)
            answer.raise_for_status()
            parts.append(UploadPart(part_number=number, etag=answer.headers["ETag"]))
        api.complete_presign_multipart_upload(
            self.repo_name,
            "smoke",
            started.upload_id,
            path,
            complete_presign_multipart_upload=CompletePresignMultipartUpload(
                physical_address=started.physical_address, parts=parts
            ),
        )

    def commit(self) -> str:
        ref = self.state["repo"].branch("smoke").commit("smoke: small and presigned objects")
        return ref.id[:12]

    def merge_conflict(self) -> str:
        from lakefs.exceptions import ConflictException

        repo = self.state["repo"]
        repo.branch("smoke").object("conflict.txt").upload(data=b"from smoke", pre_sign=False)
        repo.branch("smoke").commit("smoke side")
        repo.branch("main").object("conflict.txt").upload(data=b"from main", pre_sign=False)
        repo.branch("main").commit("main side")
        try:
            repo.branch("smoke").merge_into(repo.branch("main"))
        except ConflictException:
            pass
        else:
            raise AssertionError("the merge of a conflicting change did not answer 409")
        repo.branch("smoke").merge_into(repo.branch("main"), strategy="source-wins")
        if repo.branch("main").object("conflict.txt").reader(mode="rb").read() != b"from smoke":
            raise AssertionError("source-wins did not take the source's version")
        return "409, then merged with source-wins"

    def s3_gateway(self) -> str:
        import boto3
        from botocore.config import Config

        s3 = boto3.client(
            "s3",
            endpoint_url=self.s3_endpoint,
            aws_access_key_id=self.access_key_id,
            aws_secret_access_key=self.secret_access_key,
            region_name=os.environ.get("AWS_REGION", "us-east-1"),
            config=Config(retries={"max_attempts": 2}, s3={"addressing_style": "path"}),
        )
        data = os.urandom(256 * 1024)
        s3.upload_fileobj(io.BytesIO(data), self.repo_name, "smoke/gateway/put.bin")
        if s3.get_object(Bucket=self.repo_name, Key="smoke/gateway/put.bin")["Body"].read() != data:
            raise AssertionError("the S3 gateway's GET differs from its PUT")
        return "256 KiB put and read back"

    def workflow_commit(self) -> str:
        import requests

        repo = self.state["repo"]
        repo.branch("bulk").create(source_reference="main")
        count = self.workflow_objects
        session = requests.Session()
        session.auth = (self.access_key_id, self.secret_access_key)
        base = f"{self.api_base}/repositories/{self.repo_name}/branches/bulk"

        def put(i: int) -> None:
            answer = session.post(
                f"{base}/objects",
                params={"path": f"bulk/{i:08d}.txt"},
                data=b"%d" % i,
                headers={"Content-Type": "application/octet-stream"},
                timeout=60,
            )
            answer.raise_for_status()

        with ThreadPoolExecutor(self.workers) as pool:
            list(pool.map(put, range(count)))
        started = session.post(f"{base}/commits/async", json={"message": f"smoke: {count} objects"}, timeout=60)
        started.raise_for_status()
        task = started.json()["id"]
        deadline = time.monotonic() + WAIT_SECONDS
        while True:
            status = session.get(f"{base}/commits/status", params={"id": task}, timeout=60)
            status.raise_for_status()
            answer = status.json()
            if answer.get("completed"):
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"commit task {task} not done in {WAIT_SECONDS} s")
            time.sleep(1)
        if answer.get("error"):
            raise RuntimeError(f"commit task {task} failed: {answer['error']}")
        workflow = task.startswith("w-")
        return (
            f"{count} objects staged by {self.workers} workers, committed {'as a workflow' if workflow else 'inline'}"
        )

    def gc_dry_run(self) -> str:
        from lakefs_sdk import GarbageCollectionRule, GarbageCollectionRules

        sdk = self.client().sdk_client
        sdk.repositories_api.set_gc_rules(
            self.repo_name,
            GarbageCollectionRules(
                default_retention_days=7, branches=[GarbageCollectionRule(branch_id="main", retention_days=14)]
            ),
        )
        prepared = sdk.internal_api.prepare_garbage_collection_commits(self.repo_name)
        return f"rules set; prepare_commits run {prepared.run_id} (deletes nothing)"

    def cleanup(self) -> str:
        import lakefs

        lakefs.Repository(self.repo_name, client=self.client()).delete()
        return f"{self.repo_name} deleted"

    # -- the run --------------------------------------------------------------------------------------------------

    def run(self) -> int:
        try:
            self.step("config", self.config)
            if self.step("repository", self.create_repository, needs="config"):
                self.step("branch", self.create_branch, needs="repository")
                self.step("upload (API)", self.upload, needs="branch")
                self.step(f"presigned upload {self.presigned_mib} MiB", self.presigned_upload, needs="branch")
                self.step("commit", self.commit, needs="upload (API)")
                self.step("merge with a conflict", self.merge_conflict, needs="commit")
                if self.s3_endpoint:
                    self.step("S3 gateway put and get", self.s3_gateway, needs="branch")
                else:
                    self.steps.append(Step("S3 gateway put and get", None, 0.0, "skipped: no --s3-endpoint"))
                self.step("workflow-sized commit", self.workflow_commit, needs="repository")
                self.step("GC dry run", self.gc_dry_run, needs="repository")
        finally:
            if "repo" in self.state:
                self.step("cleanup", self.cleanup)
        print(self.table(), flush=True)
        return 0 if all(s.ok is not False for s in self.steps) else 1

    def table(self) -> str:
        width = max(len(s.name) for s in self.steps)
        lines = [f"Smoke test of {self.endpoint} (repository {self.repo_name})", ""]
        lines.append(f"{'step'.ljust(width)}  result   seconds  note")
        for s in self.steps:
            result = "ok" if s.ok else "FAILED" if s.ok is False else "skipped"
            lines.append(f"{s.name.ljust(width)}  {result.ljust(7)}  {s.seconds:7.2f}  {s.note}")
        failed = sum(1 for s in self.steps if s.ok is False)
        lines += ["", f"{failed} step(s) failed" if failed else "every step worked"]
        return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--endpoint",
        default=os.environ.get("LAKECTL_SERVER_ENDPOINT_URL"),
        help="the LakeFSEndpoint output (https://.../<stage>/api/v1) or a server root (http://127.0.0.1:8000)",
    )
    parser.add_argument("--access-key-id", default=os.environ.get("LAKECTL_CREDENTIALS_ACCESS_KEY_ID"))
    parser.add_argument("--secret-access-key", default=os.environ.get("LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY"))
    parser.add_argument("--s3-endpoint", help="the S3 gateway's endpoint (the stack's S3GatewayEndpoint output)")
    parser.add_argument("--namespace", help="where the repository goes (default: the server's namespace prefix)")
    parser.add_argument("--workflow-objects", type=int, default=60_000, help="objects of the workflow-sized commit")
    parser.add_argument("--presigned-mib", type=int, default=20, help="size of the presigned upload")
    parser.add_argument("--workers", type=int, default=16, help="parallel uploads for the workflow-sized commit")
    args = parser.parse_args(argv)
    if not (args.endpoint and args.access_key_id and args.secret_access_key):
        parser.error("--endpoint, --access-key-id and --secret-access-key are needed (or lakectl's variables)")
    smoke = Smoke(
        args.endpoint.rstrip("/"),
        args.access_key_id,
        args.secret_access_key,
        s3_endpoint=args.s3_endpoint or None,
        namespace=args.namespace or None,
        workflow_objects=args.workflow_objects,
        presigned_mib=args.presigned_mib,
        workers=args.workers,
    )
    return smoke.run()


if __name__ == "__main__":
    sys.exit(main())
