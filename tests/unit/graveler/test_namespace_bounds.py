"""The namespace bounds: every key Lakelet writes under the longest namespace stays within S3's 1,024 bytes, and
names that print alike, the stack's own prefix and metadata directories are refused."""

from __future__ import annotations

import hashlib

import pytest

from chalicelib.gc import layout
from chalicelib.graveler import errors
from chalicelib.graveler.merge.steps import _slice_name, conflicts_address
from chalicelib.graveler.reads.collected import sweeps_prefix
from chalicelib.graveler.storage import namespaces
from chalicelib.graveler.validation import (
    INTERNAL_PREFIX,
    MAX_NAMESPACE_KEY_BYTES,
    S3_MAX_KEY_BYTES,
    normalize_storage_namespace,
)
from chalicelib.graveler.writes.addressing import metadata_address, new_data_address
from lakelet.stack import samples

BUCKET = "b" * 63  # the longest bucket name: it is not part of the key, but of the address
# Step Functions execution names hold 80 characters, "w-" + the request id (graveler/runs/workflow_runner.py).
LONGEST_REQUEST_ID = "r" * 78
LONGEST_RUN_ID = "R" * 128
METARANGE_ID = hashlib.sha256(b"x").hexdigest()
# Multi-byte characters count as bytes: a 768-byte prefix of 2-byte letters and one "/".
LONGEST = f"s3://{BUCKET}/" + "é" * ((MAX_NAMESPACE_KEY_BYTES - 2) // 2) + "/x"


def key_of(address: str) -> str:
    return address.removeprefix(f"s3://{BUCKET}/")


def every_key_lakelet_writes(namespace: str) -> list[str]:
    """The longest key of each kind Lakelet writes under a namespace (data, _lakefs/ ranges, the marker, merge
    workflow files, multipart records, GC files and sweep records)."""
    return [
        key_of(a)
        for a in [
            new_data_address(namespace, 0.0),
            metadata_address(namespace, METARANGE_ID),
            namespaces.marker_address(namespace),
            conflicts_address(namespace, LONGEST_REQUEST_ID),
            # A merge slice's conflicts, as MergeSteps.build_slice names them.
            metadata_address(namespace, f"workflows/merge/{LONGEST_REQUEST_ID}/{METARANGE_ID}-{_slice_name('k')}.json"),
            metadata_address(namespace, f"multipart/{'u' * 32}.json"),
            layout.rules_address(namespace),
            layout.commits_address(namespace, LONGEST_RUN_ID),
            layout.staged_location(namespace, LONGEST_RUN_ID) + layout.part_name(99_999),
            layout.prepare_manifest_address(namespace, LONGEST_RUN_ID),
            layout.mark_manifest_address(namespace, LONGEST_RUN_ID),
            layout.addresses_location(namespace, LONGEST_RUN_ID) + layout.part_name(99_999),
            layout.deleted_location(namespace, LONGEST_RUN_ID) + layout.part_name(99_999),
            layout.summary_address(namespace, LONGEST_RUN_ID),
            sweeps_prefix(namespace) + f"partition={'f' * 11}/run_id={LONGEST_RUN_ID}.json",
        ]
    ]


def test_every_key_under_the_longest_namespace_fits_in_s3() -> None:
    namespace = normalize_storage_namespace(LONGEST)
    prefix = key_of(namespace)
    assert len(prefix.encode()) == MAX_NAMESPACE_KEY_BYTES
    keys = every_key_lakelet_writes(namespace)
    assert all(k.startswith(prefix + "/") for k in keys)
    longest = max(len(k.encode()) for k in keys)
    assert longest <= S3_MAX_KEY_BYTES, longest


def test_one_byte_more_is_refused() -> None:
    with pytest.raises(errors.Invalid, match="too long"):
        normalize_storage_namespace(LONGEST + "x")
    with pytest.raises(errors.Invalid, match="too long"):
        normalize_storage_namespace(f"s3://{BUCKET}/" + "x" * 100_000)


@pytest.mark.parametrize(
    "namespace",
    [
        "s3://bucket/ x",
        "s3://bucket/x /y",
        "s3://bucket/x\t",
        "s3://bucket/x\u200b",
        "s3://bucket/\ufeffx",
        "s3://bucket/x\u00a0y",
        "s3://bucket/x\u202ey",
        "s3://bucket/x\u2028",
        "s3://bucket/x\ud800",
        "s3://bucket/x\ue000",
        "s3://bucket/x\n",
    ],
)
def test_names_that_print_alike_are_refused(namespace: str) -> None:
    with pytest.raises(errors.Invalid):
        normalize_storage_namespace(namespace)


def test_the_stacks_own_prefix_and_metadata_directories_are_refused() -> None:
    assert samples.MARKER_KEY.startswith(INTERNAL_PREFIX + "/")
    for namespace in (
        f"s3://bucket/{INTERNAL_PREFIX}",
        f"s3://bucket/{INTERNAL_PREFIX}/x",
        "s3://bucket//_lakelet/x",
        "s3://bucket/_lakefs",
        "s3://bucket/x/_lakefs/y",
    ):
        with pytest.raises(errors.Invalid):
            normalize_storage_namespace(namespace)


@pytest.mark.parametrize(
    "namespace",
    [
        # What clients send: lakefs-spec's fixtures, the lakefs client's integration tests, the quickstart.
        "s3://bucket/lakefs-spec-tests",
        "s3://bucket/3c9f0c7e-5a3b-11ef-9a3c-0242ac120002/test-create-repo-1",
        "s3://bucket/quickstart",
        "s3://my.bucket/team a/données/2024",
        "s3://bucket/_lakelet-x",
        "s3://bucket/x/_lakefsy",
    ],
)
def test_normal_namespaces_still_pass(namespace: str) -> None:
    assert normalize_storage_namespace(namespace) == namespace
