"""GC after a zero-copy import (the real job, Spark local mode, moto's S3): imported entries point outside the
repository's namespace, and nothing of the source is ever deleted, even once no commit that GC keeps still
references it."""

from __future__ import annotations

import time
import uuid

from chalicelib.adapters.import_records import BlockImportRecords
from chalicelib.adapters.s3_source import S3SourceLister
from chalicelib.gc import prepare
from chalicelib.gc.rules import RulesStore
from chalicelib.graveler.engine import build_engine
from chalicelib.graveler.imports import COMPLETED, ImportLocation, ImportParts
from chalicelib.graveler.reads.retention import BranchRetention, RetentionRules
from chalicelib.graveler.records import BranchID

from .support import JobRun, addresses_under, installed, keys_under, moto_services, new_bucket, s3_client

DAY = 86_400


def test_gc_after_import_deletes_nothing_of_the_source() -> None:
    bucket = new_bucket()
    source = new_bucket()
    with installed(moto_services(bucket)) as services:
        g = services.engine
        name = f"imp-{uuid.uuid4().hex[:8]}"
        namespace = f"s3://{bucket}/{name}"
        g.repositories.create_repository(name, namespace)
        files = {f"tables/t/part-{i}.csv": f"row {i}".encode() for i in range(5)}
        for key, data in files.items():
            s3_client().put_object(Bucket=source, Key=key, Body=data)
        # A source in the repository's own bucket, beside its namespace, as well as one in another bucket.
        s3_client().put_object(Bucket=bucket, Key=f"{name}-landing/x.csv", Body=b"x")
        allowed = (f"s3://{source}/", f"s3://{bucket}/{name}-landing/")
        imports = ImportParts(
            S3SourceLister(s3_client()), BlockImportRecords(g.ports.blocks), allowed, "LAKELET_IMPORT_ALLOWED_LOCATIONS"
        )
        importer = build_engine(g.ports, imports).imports
        request = importer.start(
            name,
            "main",
            [
                ImportLocation("common_prefix", f"s3://{source}/tables/", "t/"),
                ImportLocation("object", f"s3://{bucket}/{name}-landing/x.csv", "x.csv"),
            ],
            "tester",
            "import",
            date=time.time() - 30 * DAY,
        )
        assert importer.run(request).state == COMPLETED
        # Every imported entry is then dropped from the head, so only old commits reference the sources.
        for path in [*(f"t/part-{i}.csv" for i in range(5)), "x.csv"]:
            g.objects.delete_object(name, "main", path)
        g.objects.upload_object(name, "main", "own.txt", b"own data")
        g.commits.commit(name, "main", "tester", "drop the imports", date=int(time.time() - 20 * DAY))
        g.objects.upload_object(name, "main", "own.txt", b"newer own data")
        g.commits.commit(name, "main", "tester", "newer", date=int(time.time() - 10 * DAY))
        RulesStore(g.repositories.namespace_files(namespace)).set(
            RetentionRules(0, (BranchRetention(BranchID("main"), 0),))
        )
        before_data = addresses_under(namespace)

        run_id = prepare.prepare(g, name, clock=lambda: time.time() + 1.1).run_id
        summary = JobRun(namespace).run(run_id)

        # The sources are all still there: GC only ever deletes under the namespace's data/.
        assert keys_under(source, "") == set(files)
        assert keys_under(bucket, f"{name}-landing/") == {f"{name}-landing/x.csv"}
        # And GC did run: the repository's own overwritten object went.
        assert summary["sweep"]["objects_deleted"] >= 1
        assert len(addresses_under(namespace)) < len(before_data)
