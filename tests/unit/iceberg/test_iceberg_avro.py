"""The catalog's Avro reader against a manifest and a manifest list written by pyiceberg's own writers (deflate and
uncompressed, format 1 and 2), as a table commit reads them to link the files a snapshot adds (files.py)."""

from __future__ import annotations

import pathlib

import pytest
from pyiceberg.io.pyarrow import PyArrowFileIO
from pyiceberg.manifest import (
    DataFile,
    DataFileContent,
    FileFormat,
    ManifestEntry,
    ManifestEntryStatus,
    write_manifest,
    write_manifest_list,
)
from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC
from pyiceberg.schema import Schema
from pyiceberg.typedef import Record
from pyiceberg.types import LongType, NestedField, StringType

from chalicelib.iceberg.avro import records
from chalicelib.iceberg.errors import BadRequest

SCHEMA = Schema(NestedField(1, "id", LongType(), required=False), NestedField(2, "s", StringType(), required=False))


def _data_file(path: str, size: int, rows: int) -> DataFile:
    return DataFile.from_args(
        content=DataFileContent.DATA,
        file_path=path,
        file_format=FileFormat.PARQUET,
        partition=Record(),
        record_count=rows,
        file_size_in_bytes=size,
        column_sizes={1: 10, 2: 20},
        value_counts={1: rows},
        null_value_counts={2: 1},
        lower_bounds={1: b"\x01\x00\x00\x00\x00\x00\x00\x00"},
        upper_bounds={1: b"\x09\x00\x00\x00\x00\x00\x00\x00"},
    )


@pytest.mark.parametrize("codec", ["deflate", "null"])
@pytest.mark.parametrize("version", [1, 2])
def test_reads_a_manifest_list_and_its_manifest(tmp_path: pathlib.Path, codec: str, version: int) -> None:
    io = PyArrowFileIO()
    manifest_path, list_path = str(tmp_path / "m.avro"), str(tmp_path / "snap.avro")
    files = [("s3://b/ns/data/a.parquet", 9_000_000, 3), ("s3://b/ns/data/b.parquet", 12, 1)]
    with write_manifest(version, UNPARTITIONED_PARTITION_SPEC, SCHEMA, io.new_output(manifest_path), 7, codec) as w:  # type: ignore[arg-type]
        for path, size, rows in files:
            w.add_entry(
                ManifestEntry.from_args(
                    status=ManifestEntryStatus.ADDED, snapshot_id=7, data_file=_data_file(path, size, rows)
                )
            )
        manifest = w.to_manifest_file()
    with write_manifest_list(version, io.new_output(list_path), 7, None, 1, codec) as lw:  # type: ignore[arg-type]
        lw.add_manifests([manifest])

    manifests = list(records(pathlib.Path(list_path).read_bytes(), "snap.avro"))
    assert [m["manifest_path"] for m in manifests] == [manifest_path]
    assert manifests[0]["added_snapshot_id"] == 7
    entries = list(records(pathlib.Path(manifest_path).read_bytes(), "m.avro"))
    assert [(e["status"], e["data_file"]["file_path"], e["data_file"]["file_size_in_bytes"]) for e in entries] == [
        (1, path, size) for path, size, _ in files
    ]
    assert entries[0]["data_file"]["record_count"] == 3


def test_refuses_what_is_not_a_container() -> None:
    with pytest.raises(BadRequest):
        list(records(b"PAR1....", "x"))
