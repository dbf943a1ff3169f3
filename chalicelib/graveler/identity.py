"""Content identity: commit IDs and entry identity, byte-compatible with lakeFS's encoders."""

from __future__ import annotations

import functools
import hashlib
import math
from collections.abc import Iterable, Mapping

from .records import Commit, CommitID, Entry, MetaRangeID


def _i64(value: int) -> bytes:
    return b"\x02\x08" + value.to_bytes(8, "big", signed=True)


def _s(text: str) -> bytes:
    raw = text.encode()
    return b"\x01" + _i64(len(raw)) + raw


def _b(raw: bytes) -> bytes:
    return b"\x00" + _i64(len(raw)) + raw


def _ss(items: Iterable[str]) -> bytes:
    listed = list(items)
    return b"\x03" + _i64(len(listed)) + b"".join(_s(item) for item in listed)


def _m(mapping: Mapping[str, str]) -> bytes:
    body = b"".join(_s(k) + _s(mapping[k]) for k in sorted(mapping))
    return b"\x04" + _i64(len(mapping)) + body


def _e(identity: bytes) -> bytes:
    return b"\x05" + _b(identity)


def commit_id(
    committer: str,
    message: str,
    meta_range_id: MetaRangeID,
    creation_date: float,
    metadata: Mapping[str, str],
    parents: Iterable[CommitID],
) -> CommitID:
    """The lakeFS commit ID: sha256 over the hashed fields (version and generation are not hashed). The date
    counts in whole seconds, rounded down as Go's Time.Unix() does, so the sub-second part never changes an ID."""
    parents_identity = hashlib.sha256(_ss(parents)).digest()
    payload = (
        _s("commit:v1")
        + _s(committer)
        + _s(message)
        + _s(meta_range_id)
        + _i64(math.floor(creation_date))
        + _m(metadata)
        + _e(parents_identity)
    )
    return CommitID(hashlib.sha256(payload).hexdigest())


_I64_HEAD = _i64(0)[:2]
_STRING_HEAD = _s("")[:3]
_NO_METADATA = _m({})


@functools.lru_cache(maxsize=256)
def _content_type(content_type: str) -> bytes:
    return _s(content_type)


def entry_identity(entry: Entry) -> bytes:
    """Identity of an entry: size, etag, user metadata and content type. Address and mtime are not part of it,
    so the same content re-uploaded elsewhere compares as unchanged."""
    # The fields' encodings joined in one step (a commit hashes every new entry: 1.3 us instead of 3.8 for an
    # entry without metadata); the content type's encoding is remembered, since few distinct ones occur.
    etag = entry.etag.encode()
    metadata = entry.user_metadata
    content_type = entry.content_type
    return hashlib.sha256(
        b"".join(
            (
                _I64_HEAD,
                entry.size.to_bytes(8, "big", signed=True),
                _STRING_HEAD,
                len(etag).to_bytes(8, "big", signed=True),
                etag,
                _m(metadata) if metadata else _NO_METADATA,
                _content_type(content_type) if content_type else b"",
            )
        )
    ).digest()


def new_commit(
    committer: str,
    message: str,
    meta_range_id: MetaRangeID,
    creation_date: float,
    metadata: Mapping[str, str],
    parents: tuple[CommitID, ...],
    generation: int,
) -> Commit:
    """A commit record with its lakeFS ID computed from its fields."""
    cid = commit_id(committer, message, meta_range_id, creation_date, metadata, parents)
    return Commit(cid, committer, message, creation_date, meta_range_id, dict(metadata), parents, generation)
