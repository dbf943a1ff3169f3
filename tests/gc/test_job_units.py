"""The GC job (emr/gc_job.py and its package emr/lakelet_gc/) without Spark: its contract with chalicelib (paths
and the range format), its safety rails, exact listing by slices, and DeleteObjects batches with partial
failures."""

from __future__ import annotations

import ast
import importlib
import io
import sys
import uuid
import zipfile
import zipimport
from pathlib import Path
from types import ModuleType
from typing import Any

import boto3
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from moto import mock_aws

from chalicelib.adapters.memory import MemoryBlockStore
from chalicelib.gc import layout
from chalicelib.graveler.committed import CommittedManager, RangeParams
from chalicelib.graveler.committed import format as range_format
from chalicelib.graveler.records import Entry, EntryRecord, Key, MetaRangeID

EMR = Path(__file__).resolve().parents[2] / "emr"
# The entry point and every module of its package: what EMR Serverless runs.
JOB_FILES = [EMR / "gc_job.py", *sorted((EMR / "lakelet_gc").glob("*.py"))]
NAMESPACES = ["s3://bucket/repos/one", "s3://bucket", "s3://bucket/deep/er/", "s3://b-2/x//y"]


@pytest.mark.parametrize("path", JOB_FILES, ids=lambda path: path.name)
def test_the_job_imports_no_chalicelib_and_parses_as_python_3_9(path: Path) -> None:
    tree = ast.parse(path.read_text(), feature_version=(3, 9))
    imported = {
        alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names
    }
    imported |= {
        node.module.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0
    }
    assert "chalicelib" not in imported
    assert imported <= {
        "__future__",
        "argparse",
        "csv",
        "io",
        "json",
        "os",
        "re",
        "sys",
        "time",
        "zipimport",
        "collections",
        "concurrent",
        "dataclasses",
        "typing",
        "boto3",
        "botocore",
        "pyarrow",
        "pyspark",
        "lakelet_gc",  # the entry point's own package
    }


def test_the_job_is_a_package_of_small_modules() -> None:
    assert len(JOB_FILES) > 5
    assert (EMR / "gc_job.py").read_text().count("\n") < 30  # the entry point only calls the package
    for path in JOB_FILES:
        assert path.read_text().count("\n") < 400, path


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_the_job_and_the_prepare_step_agree_on_every_path(gc_job: ModuleType, namespace: str) -> None:
    ns = gc_job.Namespace.parse(namespace)
    run = "20250101T000000Z-abcdef12"
    assert ns.address(gc_job.layout.prepare_manifest_key(ns, run)) == layout.prepare_manifest_address(namespace, run)
    assert ns.address(gc_job.layout.mark_manifest_key(ns, run)) == layout.mark_manifest_address(namespace, run)
    assert ns.address(gc_job.layout.commits_key(ns, run)) == layout.commits_address(namespace, run)
    assert ns.address(gc_job.layout.staged_prefix(ns, run)) == layout.staged_location(namespace, run)
    assert ns.address(gc_job.layout.addresses_prefix(ns, run)) == layout.addresses_location(namespace, run)
    assert ns.address(gc_job.layout.deleted_prefix(ns, run)) == layout.deleted_location(namespace, run)
    assert ns.address(gc_job.layout.summary_key(ns, run)) == layout.summary_address(namespace, run)
    assert gc_job.layout.part_name(7) == layout.part_name(7)
    assert gc_job.layout.FORMAT_VERSION == layout.FORMAT_VERSION
    # Ranges: where the committed storage puts them, and where the job reads them.
    assert ns.address(ns.metadata_key("abc")) == f"{namespace.rstrip('/')}/_lakefs/abc"
    assert gc_job.Namespace.parse(ns.uri) == ns


def test_the_job_reads_ranges_and_metaranges_as_graveler_writes_them(gc_job: ModuleType) -> None:
    blocks = MemoryBlockStore()
    committed = CommittedManager(blocks, RangeParams(max_range_bytes=2_000, min_range_bytes=100, raggedness=7))
    namespace = "s3://bucket/repo"
    records = [
        EntryRecord(Key(f"k{i:04d}"), Entry(f"s3://bucket/repo/data/p/{i:032x}", i, f"e{i}", 1)) for i in range(200)
    ]
    metarange = committed.write_metarange(namespace, records)
    ns = gc_job.Namespace.parse(namespace)
    data = blocks.get(ns.address(ns.metadata_key(metarange)))
    range_ids = gc_job.inputs.read_lakelet_parquet(data, ["range_id"], b"metarange", "m").column(0).to_pylist()
    assert len(range_ids) > 1 and range_ids == [r.id for r in committed.ranges(namespace, MetaRangeID(metarange))]
    addresses: list[str] = []
    for rid in range_ids:
        table = gc_job.inputs.read_lakelet_parquet(
            blocks.get(ns.address(ns.metadata_key(rid))), ["physical_address"], b"range", rid
        )
        addresses += table.column(0).to_pylist()
    assert addresses == [r.entry.physical_address for r in records]
    assert gc_job.layout.KIND_KEY == range_format._KIND and gc_job.layout.VERSION_KEY == range_format._VERSION
    assert gc_job.layout.RANGE_FORMAT_VERSION == range_format.FORMAT_VERSION
    # A range is not a metarange, and an unknown version is refused rather than guessed at.
    with pytest.raises(gc_job.GCJobError):
        gc_job.inputs.read_lakelet_parquet(
            blocks.get(ns.address(ns.metadata_key(range_ids[0]))), ["range_id"], b"metarange", "x"
        )
    table = pa.table({"range_id": ["x"]}).replace_schema_metadata(
        {b"lakelet.kind": b"metarange", b"lakelet.format_version": b"2"}
    )
    sink = io.BytesIO()
    pq.write_table(table, sink)
    with pytest.raises(gc_job.GCJobError):
        gc_job.inputs.read_lakelet_parquet(sink.getvalue(), ["range_id"], b"metarange", "x")


def test_only_keys_under_the_namespaces_data_can_be_deleted(gc_job: ModuleType) -> None:
    ns = gc_job.Namespace.parse("s3://bucket/repo")
    assert ns.collectable_key("s3://bucket/repo/data/p/abc") == "repo/data/p/abc"
    assert ns.collectable_key("s3://bucket/repo/data/loose") == "repo/data/loose"
    refused = [
        "s3://other/repo/data/p/abc",  # another bucket
        "s3://bucket/repo/_lakefs/abc",  # metadata
        "s3://bucket/repo/_lakefs/retention/gc/rules.json",
        "s3://bucket/repo/data/",  # the directory itself
        "s3://bucket/repo2/data/p/abc",  # a sibling namespace sharing the prefix's first characters
        "s3://bucket/data/p/abc",  # the bucket's root, outside the namespace
        "s3://bucket/repo/elsewhere/x",  # in the namespace, but not data
        "s3://bucket/repo/data/nested/_lakefs/dummy",  # a repository nested inside data/
        "s3://bucket/repo/data/_lakefs/x",
        "s3a://bucket/repo/data/p/abc",  # not spelled as the listing spells it
    ]
    assert [ns.collectable_key(a) for a in refused] == [None] * len(refused)
    assert ns.nested_root("repo/data/nested/_lakefs/dummy") == "repo/data/nested/"
    assert ns.nested_root("repo/data/p/abc") is None
    assert ns.normalize("s3a://bucket/repo/data/x") == "s3://bucket/repo/data/x"
    assert ns.normalize("data/x") == "s3://bucket/repo/data/x"


WEIRD_KEYS = ["", "0", "1", "1a", "10", "9z", ":x", "A", "a", "f", "fff", "g", "~", "é", "zz", "1/x", "f/g"]


@pytest.mark.parametrize("count", [1, 2, 3, 16])
def test_slices_list_every_key_exactly_once(gc_job: ModuleType, count: int) -> None:
    prefix = "repo/data/0000ffff/"
    keys = [prefix + k for k in WEIRD_KEYS] + [prefix + uuid.uuid4().hex for _ in range(40)]
    keys += ["repo/data/0000fffe/x", "repo/data/0000ffff", "repo/data/0000fffg/1"]  # neighbours, not inside
    with mock_aws():
        s3 = boto3.client("s3", region_name="us-east-1")
        s3.create_bucket(Bucket="bucket")
        for key in keys:
            s3.put_object(Bucket="bucket", Key=key, Body=b"x")
        seen: list[str] = []
        for piece in gc_job.listing.list_slices(prefix, count):
            seen += [item["Key"] for item in gc_job.listing.list_slice(s3, "bucket", piece, page_size=3)]
    assert sorted(seen) == sorted(k for k in keys if k.startswith(prefix))
    assert len(seen) == len(set(seen))


def test_listing_finds_partitions_and_loose_objects(gc_job: ModuleType) -> None:
    ns = gc_job.Namespace.parse("s3://bucket/repo")
    with mock_aws():
        s3 = boto3.client("s3", region_name="us-east-1")
        s3.create_bucket(Bucket="bucket")
        for key in ["repo/data/p1/a", "repo/data/p2/b", "repo/data/loose", "repo/_lakefs/m", "other/data/p/x"]:
            s3.put_object(Bucket="bucket", Key=key, Body=b"x")
        prefixes, loose = gc_job.listing.data_partitions(s3, ns)
    assert prefixes == ["repo/data/p1/", "repo/data/p2/"]
    assert [item["Key"] for item in loose] == ["repo/data/loose"]


class FakeS3:
    """Just enough of an S3 client for one sweep task: objects in a dict, and keys DeleteObjects refuses."""

    def __init__(self, refuse: set[str] = frozenset()) -> None:  # type: ignore[assignment]
        self.objects: dict[str, bytes] = {}
        self.refuse = refuse
        self.delete_calls: list[list[str]] = []

    def get_object(self, Bucket: str, Key: str) -> dict[str, Any]:
        return {"Body": io.BytesIO(self.objects[Key])}

    def put_object(self, Bucket: str, Key: str, Body: bytes) -> None:
        self.objects[Key] = Body

    def delete_objects(self, Bucket: str, Delete: dict[str, Any]) -> dict[str, Any]:
        keys = [o["Key"] for o in Delete["Objects"]]
        assert len(keys) <= 1000 and Delete["Quiet"] is True
        self.delete_calls.append(keys)
        errors = [{"Key": k, "Code": "AccessDenied", "Message": "denied"} for k in keys if k in self.refuse]
        for key in keys:
            if key not in self.refuse:
                self.objects.pop(key, None)
        return {"Errors": errors} if errors else {}


def test_a_sweep_deletes_in_batches_of_1000_and_reports_partial_failures(gc_job: ModuleType) -> None:
    ns = gc_job.Namespace.parse("s3://bucket/repo")
    addresses = [f"s3://bucket/repo/data/p/{i:05d}" for i in range(2_345)]
    addresses.insert(10, "s3://bucket/repo/_lakefs/sneaky")  # a tampered mark must not reach _lakefs/
    refused = {"repo/data/p/00003", "repo/data/p/01500"}
    s3 = FakeS3(refuse=refused)
    for address in addresses:
        s3.objects[ns.key_of(address)] = b"12345"
    s3.objects["marked"] = gc_job.storage.objects_part(addresses, [5] * len(addresses), [1] * len(addresses))

    result = gc_job.sweep.sweep_part(s3, ns, "run-1", 4, "marked")

    assert [len(keys) for keys in s3.delete_calls] == [999, 1000, 346]
    assert all(not key.startswith("repo/_lakefs/") for keys in s3.delete_calls for key in keys)
    assert result["deleted"] == 2_343 and result["bytes"] == 5 * 2_343 and result["failed"] == 3
    assert {(f["address"], f["code"]) for f in result["failures"]} == {
        ("s3://bucket/repo/_lakefs/sneaky", "Refused"),
        ("s3://bucket/repo/data/p/00003", "AccessDenied"),
        ("s3://bucket/repo/data/p/01500", "AccessDenied"),
    }
    assert "repo/_lakefs/sneaky" in s3.objects and refused <= set(s3.objects)
    report_key = ns.key_of(result["location"])
    assert report_key == "repo/_lakefs/retention/gc/deleted/run_id=run-1/part-00004.parquet"
    deleted, _, _ = gc_job.storage.read_objects_part(s3.objects[report_key])
    assert len(deleted) == 2_343 and set(deleted).isdisjoint({"s3://bucket/repo/data/p/00003"})
    assert gc_job.exit_status({"sweep": {"objects_failed": 3}}) == gc_job.EXIT_PARTIAL_FAILURE
    assert gc_job.exit_status({"sweep": {"objects_failed": 0}}) == 0


def test_options_are_checked(gc_job: ModuleType) -> None:
    options = gc_job.parse_options(
        [
            "--storage-namespace",
            "s3://b/p",
            "--run-id",
            "r1",
            "--mode",
            "mark",
            "--min-age-seconds",
            "60",
            "--commit-partitions",
            "3",
            "--address-partitions",
            "5",
            "--list-slices",
            "4",
            "--single-task-objects",
            "500",
        ]
    )
    assert (
        options.mode,
        options.min_age_seconds,
        options.commit_partitions,
        options.address_partitions,
        options.list_slices,
        options.single_task_objects,
    ) == ("mark", 60, 3, 5, 4, 500)
    assert gc_job.parse_options(["--storage-namespace", "s3://b", "--run-id", "r"]).min_age_seconds == 86_400
    for bad in [
        {"run_id": "../x"},
        {"mode": "sweep-all"},
        {"min_age_seconds": -1},
        {"address_partitions": 0},
        {"list_slices": 17},
        {"single_task_objects": 0},
    ]:
        with pytest.raises(gc_job.GCJobError):
            gc_job.JobOptions(**{"storage_namespace": "s3://b", "run_id": "r", **bad})
    with pytest.raises(gc_job.GCJobError):
        gc_job.Namespace.parse("gs://bucket/x")


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_addresses_are_normalized_in_bulk_as_one_by_one(gc_job: ModuleType, namespace: str) -> None:
    ns = gc_job.Namespace.parse(namespace)
    bucket = ns.bucket
    addresses = [
        f"s3://{bucket}/{ns.prefix}data/p/abc",
        f"s3a://{bucket}/{ns.prefix}data/p/def",
        f"s3n://{bucket}/{ns.prefix}data/p/ghi",
        "data/p/relative",
        "/data/p/leading-slash",
        "//data/p/two-slashes",
        "s3://other-bucket/elsewhere/x",
        "https://example.com/s3a://not-a-scheme",
        "s3ax://odd/scheme",
        f"s3://{bucket}/{ns.prefix}data/p/é-ünïcode",
    ]
    column = pa.chunked_array([addresses[:4], [None], addresses[4:]], pa.string())
    assert gc_job.inputs.normalize_addresses(ns, column).to_pylist() == [ns.normalize(a) for a in addresses]
    # Relative addresses are the rare case: a column without any takes the other path, with the same result.
    absolute = [a for a in addresses if "://" in a]
    assert gc_job.inputs.normalize_addresses(ns, pa.array(absolute)).to_pylist() == [ns.normalize(a) for a in absolute]


def test_a_listing_page_becomes_the_rows_the_old_per_object_path_made(gc_job: ModuleType) -> None:
    import datetime

    ns = gc_job.Namespace.parse("s3://bucket/repo")
    when = datetime.datetime(2025, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)
    keys = ["repo/data/p/abc", "repo/data/loose", "repo/data/nested/_lakefs/dummy", "repo/data/nested/data/0/x"]
    items = [{"Key": key, "Size": i * 10, "LastModified": when} for i, key in enumerate(keys)]
    batch = gc_job.listing.listed_batch(ns, items)
    assert batch.schema.names == gc_job.listing.LISTED_COLUMNS
    rows = list(zip(*(batch.column(i).to_pylist() for i in range(4)), strict=True))
    assert rows == [gc_job.listing.listed_row(ns, i) for i in items]
    assert batch.column(3).to_pylist()[2] == "s3://bucket/repo/data/nested/"
    plain = gc_job.listing.listed_batch(ns, items[:2])
    assert plain.column(3).null_count == 2


@pytest.mark.skipif(not (3, 10) <= sys.version_info[:2] <= (3, 12), reason="only 3.10-3.12 re-read zips eagerly")
def test_a_zip_on_the_path_is_read_again_only_when_it_changed(
    gc_job: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = tmp_path / "lib.zip"
    package = f"gc_zip_{uuid.uuid4().hex[:8]}"
    with zipfile.ZipFile(archive, "w") as out:
        out.writestr(f"{package}/__init__.py", "")
        out.writestr(f"{package}/first.py", "VALUE = 1\n")
    monkeypatch.syspath_prepend(str(archive))
    # Restored after the test: the patch below is what a Spark worker process gets from its first task.
    monkeypatch.setattr(zipimport.zipimporter, "invalidate_caches", zipimport.zipimporter.invalidate_caches)
    assert importlib.import_module(f"{package}.first").VALUE == 1
    importlib.invalidate_caches()
    read_before = zipimport._zip_directory_cache[str(archive)]  # type: ignore[attr-defined]
    importlib.invalidate_caches()
    assert zipimport._zip_directory_cache[str(archive)] is not read_before  # what Python 3.12 does: read again

    gc_job.storage.skip_unchanged_zip_rereads()
    gc_job.storage.skip_unchanged_zip_rereads()  # once per process, however many tasks ask
    importlib.invalidate_caches()  # the first call after the change reads as before
    read_once = zipimport._zip_directory_cache[str(archive)]  # type: ignore[attr-defined]
    importlib.invalidate_caches()
    importlib.invalidate_caches()
    assert zipimport._zip_directory_cache[str(archive)] is read_once  # unchanged: not read again

    with zipfile.ZipFile(archive, "a") as out:
        out.writestr(f"{package}/second.py", "VALUE = 2\n")
    importlib.invalidate_caches()
    assert importlib.import_module(f"{package}.second").VALUE == 2  # changed: read again, the new module found
    for name in [m for m in sys.modules if m.startswith(package)]:
        monkeypatch.delitem(sys.modules, name)
