"""The commits file of a refs dump, written in bounded chunks: each dump step lists the commits after the last one
written, up to DUMP_CHUNK_BYTES of records, into a scratch file of its own; the last step joins the scratch files
into the content-addressed commits file and removes them. No step holds more than a chunk (or, joining, a part
and a chunk) of records, however many commits the repository has, and the loop's state is a cursor: the last
commit id written and how many chunks and records there are.

Joining reads every chunk twice, once for the SHA-256 that names the file and once to upload it (as one PUT when
it is small, else as a multipart upload of PART_BYTES parts); its time grows with the file's size, at S3's
read rate (a million commits are about 400 MB), not with DynamoDB's.

Scratch files are ``_lakefs/refs_dump/scratch/<scratch id>/<n>.jsonl`` (the only files under ``_lakefs/`` that a
retried step writes again, with the commits it finds then) and ``result.json``, the joined dump's ids, written
before the chunks are removed so that a retried join answers the same dump.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from .. import errors
from ..ports import BlockStore, RefStore
from ..records import Commit, Repository, RepositoryID

__all__ = ["DUMP_CHUNK_BYTES", "PART_BYTES", "ChunkCursor", "CommitsFile", "commit_json", "header_line"]

# One step's records: about 20,000 commits, a few DynamoDB pages, well within a step's time and memory.
DUMP_CHUNK_BYTES = 8 * 1024 * 1024
# The joined file's multipart parts (S3 wants 5 MiB at least for every part but the last).
PART_BYTES = 8 * 1024 * 1024
FORMAT = 1
_SCRATCH = "_lakefs/refs_dump/scratch"


def header_line(kind: str, count: int) -> bytes:
    return json.dumps({"lakelet_refs_dump": FORMAT, "kind": kind, "count": count}, sort_keys=True).encode() + b"\n"


def commit_json(c: Commit) -> dict[str, Any]:
    return {
        "id": c.id,
        "committer": c.committer,
        "message": c.message,
        "creation_date": c.creation_date,
        "meta_range_id": c.meta_range_id,
        "metadata": c.metadata,
        "parents": list(c.parents),
        "generation": c.generation,
    }


@dataclass(frozen=True, slots=True)
class ChunkCursor:
    """Where the commits file stands: the chunks written, the records in them, the last commit id written, and
    whether the listing has ended."""

    scratch: str
    after: str = ""
    chunks: int = 0
    count: int = 0
    done: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "scratch": self.scratch,
            "after": self.after,
            "chunks": self.chunks,
            "count": self.count,
            "done": self.done,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ChunkCursor:
        return cls(
            str(data["scratch"]), str(data["after"]), int(data["chunks"]), int(data["count"]), bool(data["done"])
        )


class CommitsFile:
    """Writes a repository's commits file a chunk at a time, then joins the chunks."""

    def __init__(self, refs: RefStore, blocks: BlockStore, repo: Repository) -> None:
        self._refs = refs
        self._blocks = blocks
        self._repo = repo

    def _scratch(self, cursor: ChunkCursor, name: str) -> str:
        return f"{self._repo.storage_namespace.rstrip('/')}/{_SCRATCH}/{cursor.scratch}/{name}"

    def _chunk(self, cursor: ChunkCursor, n: int) -> str:
        return self._scratch(cursor, f"{n:06d}.jsonl")

    def write_chunk(self, cursor: ChunkCursor) -> ChunkCursor:
        """Writes the next chunk: the commits after ``cursor.after``, in id order, up to DUMP_CHUNK_BYTES (and the
        record that passes it). Returns the cursor after it, ``done`` once the listing has ended."""
        lines: list[bytes] = []
        size = 0
        last = cursor.after
        ended = True
        for commit in self._refs.iterate_commits(RepositoryID(self._repo.id), after=cursor.after):
            line = json.dumps(commit_json(commit), sort_keys=True).encode() + b"\n"
            lines.append(line)
            size += len(line)
            last = commit.id
            if size >= DUMP_CHUNK_BYTES:
                ended = False
                break
        if not lines:
            return ChunkCursor(cursor.scratch, cursor.after, cursor.chunks, cursor.count, True)
        self._blocks.put(self._chunk(cursor, cursor.chunks), b"".join(lines))
        return ChunkCursor(cursor.scratch, last, cursor.chunks + 1, cursor.count + len(lines), ended)

    def _chunks(self, cursor: ChunkCursor) -> Iterator[bytes]:
        for n in range(cursor.chunks):
            yield self._blocks.get(self._chunk(cursor, n))

    def join(self, cursor: ChunkCursor, address_of: Callable[[str], str]) -> str:
        """Joins the chunks behind the header into the commits file, at ``address_of(id)``; returns its id (the
        SHA-256 of its bytes). A file of that id already there is the same file: it is not written again."""
        header = header_line("commits", cursor.count)
        digest = hashlib.sha256(header)
        total = len(header)
        for data in self._chunks(cursor):
            digest.update(data)
            total += len(data)
        file_id = digest.hexdigest()
        address = address_of(file_id)
        if self._blocks.exists(address):
            return file_id
        if total <= PART_BYTES:
            self._blocks.put(address, header + b"".join(self._chunks(cursor)))
            return file_id
        self._upload(address, header, cursor)
        return file_id

    def _upload(self, address: str, header: bytes, cursor: ChunkCursor) -> None:
        upload_id = self._blocks.create_multipart_upload(address)
        try:
            parts: list[tuple[int, str]] = []
            buffer = bytearray(header)
            for data in self._chunks(cursor):
                buffer += data
                while len(buffer) >= PART_BYTES:
                    number = len(parts) + 1
                    parts.append(
                        (number, self._blocks.upload_part(address, upload_id, number, bytes(buffer[:PART_BYTES])).etag)
                    )
                    del buffer[:PART_BYTES]
            if buffer:
                number = len(parts) + 1
                parts.append((number, self._blocks.upload_part(address, upload_id, number, bytes(buffer)).etag))
            self._blocks.complete_multipart_upload(address, upload_id, parts)
        except BaseException:
            self._blocks.abort_multipart_upload(address, upload_id)
            raise

    def saved_result(self, cursor: ChunkCursor) -> dict[str, str] | None:
        """The result a join recorded before removing its chunks (a retried join answers it), if any."""
        try:
            data = json.loads(self._blocks.get(self._scratch(cursor, "result.json")))
        except errors.ObjectNotFound:
            return None
        return data if isinstance(data, dict) else None

    def save_result(self, cursor: ChunkCursor, result: dict[str, str]) -> None:
        self._blocks.put(self._scratch(cursor, "result.json"), json.dumps(result).encode())

    def forget_result(self, cursor: ChunkCursor) -> None:
        self._blocks.delete(self._scratch(cursor, "result.json"))

    def discard(self, cursor: ChunkCursor) -> None:
        """Removes the chunks (idempotent; a chunk that a crashed step wrote past the cursor is removed too)."""
        for n in range(cursor.chunks + 1):
            self._blocks.delete(self._chunk(cursor, n))
