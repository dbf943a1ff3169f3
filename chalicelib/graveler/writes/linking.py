"""Linking a presigned upload, and why the bytes of a commit never change afterwards.

A presigned PUT URL can be used again and again until it expires (15 minutes by default); S3 has no single-use
URL, and the official clients cannot be asked to send a condition header the URL would then require. So the
address a client uploads to is never the address an entry points at. Linking:

1. copies the upload inside the store (S3 CopyObject: no byte passes through Lambda) to a fresh address under
   ``data/`` for which no URL was ever issued, naming the version of the upload it looked at, so the copy's size
   and ETag come with the copy (no HEAD of it) and an upload rewritten meanwhile fails the link (409);
2. checks the copy -- not the upload, which the client may still be rewriting -- against the client's claim:
   the size must be equal, and where the store's ETag is an MD5 (a single PUT or copy without KMS) the checksum
   must match it; a mismatch deletes the copy and refuses the link (400);
3. stages the copy's address and deletes the upload.

A later PUT to the URL writes the upload address again, which no entry references: garbage collection deletes it
like any unreferenced object under ``data/`` once it is older than the minimum age, so GC needs no change.
The cost is one server-side copy per presigned upload. A single PUT is at most 5 GiB, which one CopyObject
copies; an upload the client completed as a multipart upload may be up to 5 TiB, and S3 refuses a CopyObject over
5 GiB, so the store copies such an upload in parts (UploadPartCopy, 256 MiB each, 16 at a time: the S3 adapter's
plan_copy), still inside S3 and within the API Lambda's 30 s for several GiB
(tests/unit/graveler/test_copy_sizes.py links a 6 GB upload against a client that refuses a larger CopyObject).

A client that can send a condition header (the lakelet CLI) asks for a write-once address instead
(``write_once=true``): its URL is signed for ``If-None-Match: *``, so S3 takes a PUT through it only while the
address is empty and refuses one without the header. Once uploaded, those bytes cannot change, so the link checks
the upload itself against the claim and stages it where it is: no copy, no delete (and no copy time limit for
files of several GiB).
"""

from __future__ import annotations

import re

from ..errors import ClaimMismatch
from ..ports import PutResult
from ..records import Entry

__all__ = [
    "check_claim",
]

# A single-part S3 ETag (without SSE-KMS) is the hex MD5 of the bytes; anything else (``<md5>-<parts>`` for a
# multipart upload, opaque values under KMS) says nothing checkable about the content.
_MD5_ETAG = re.compile(r"[0-9a-f]{32}")


def check_claim(stored: PutResult, claim: Entry) -> None:
    """Raises ClaimMismatch when ``stored`` (what the store holds) contradicts the claim's size or checksum."""
    if stored.size != claim.size:
        raise ClaimMismatch(f"size_bytes is {claim.size} but the uploaded object holds {stored.size} bytes")
    etag = stored.etag.lower()
    if _MD5_ETAG.fullmatch(etag) and claim.etag.lower() != etag:
        raise ClaimMismatch(f"checksum {claim.etag!r} does not match the uploaded object's MD5 {etag}")
