"""Signed staging addresses: the physical address GET .../staging/backing hands out carries its own proof.

The signed form is ``<address>.<issued>.<mac>``, or ``<address>.<issued>.once.<mac>`` for a write-once address
(below): a valid object key, so a client that writes to the physical
address itself (not through the presigned URL) writes exactly there. ``mac`` is HMAC-SHA256, truncated to
128 bits, over the repository, branch, object path, the address and the issue time (each length-prefixed),
under a key only the server has. Linking it (PUT .../staging/backing) verifies all of them, so an address
made up by the client, one issued for another repository, branch or path, or one older than MAX_AGE (24 h,
the minimum age before GC may sweep an unreferenced object) is refused. Nothing is stored per address.

A write-once address is one whose presigned PUT URL was signed with ``If-None-Match: *`` (api/physical_addresses.py): S3
then takes a PUT through that URL only while nothing is stored there, so once uploaded its bytes never change
and linking needs no copy (graveler/writes/linking.py). The mark is covered by the MAC, so an address issued without
it cannot be passed off as write-once.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import time
from collections.abc import Callable

from chalicelib.graveler import errors

__all__ = ["is_write_once", "upload_url_may_be_live"]

MAX_AGE_SECONDS = 24 * 3600
# An address is never issued in the future; a little skew between Lambda containers is tolerated.
_CLOCK_SKEW_SECONDS = 300
_MAC_HEX = 32
_ONCE = ".once"
_SIGNED = re.compile(
    rf"(?P<address>.+)\.(?P<issued>[0-9]{{1,12}})(?P<once>{re.escape(_ONCE)})?\.(?P<mac>[0-9a-f]{{{_MAC_HEX}}})",
    re.DOTALL,
)
_DOMAIN = b"lakelet:staging-address:v1"


class InvalidAddress(errors.Invalid):
    """A physical address that this server did not issue for this repository, branch and path, or too old."""


class AddressSigner:
    """Signs and verifies staging addresses with one key."""

    def __init__(self, key: bytes, clock: Callable[[], float] = time.time) -> None:
        self._key = key
        self._clock = clock

    def sign(self, repository: str, branch: str, path: str, address: str, write_once: bool = False) -> str:
        issued = int(self._clock())
        mac = self._mac(repository, branch, path, address, issued, write_once)
        return f"{address}.{issued}{_ONCE if write_once else ''}.{mac}"

    def verify(self, repository: str, branch: str, path: str, signed: str) -> str:
        """Returns ``signed`` when it is valid for these; raises InvalidAddress otherwise."""
        match = _SIGNED.fullmatch(signed)
        if match is None:
            raise InvalidAddress("the physical address was not issued by this server")
        issued = int(match["issued"])
        expected = self._mac(repository, branch, path, match["address"], issued, match["once"] is not None)
        if not hmac.compare_digest(expected, match["mac"]):
            raise InvalidAddress("the physical address was not issued for this repository, branch and path")
        age = self._clock() - issued
        if age > MAX_AGE_SECONDS:
            raise InvalidAddress("the physical address is stale: link within 24 hours of getting it")
        if age < -_CLOCK_SKEW_SECONDS:
            raise InvalidAddress("the physical address is issued in the future")
        return signed

    def _mac(self, repository: str, branch: str, path: str, address: str, issued: int, write_once: bool) -> str:
        # A write-once address has one field more, so no MAC of one is the MAC of the other kind.
        fields = (repository, branch, path, address, str(issued), *(("write-once",) if write_once else ()))
        parts = (_DOMAIN, *(field.encode("utf-8", "surrogatepass") for field in fields))
        message = b"".join(len(part).to_bytes(8, "big") + part for part in parts)
        return hmac.new(self._key, message, hashlib.sha256).hexdigest()[:_MAC_HEX]


def is_write_once(signed: str) -> bool:
    """Whether a verified address (AddressSigner.verify) was issued write-once."""
    match = _SIGNED.fullmatch(signed)
    return match is not None and match["once"] is not None


def upload_url_may_be_live(address: str, url_seconds: int, now: float) -> bool:
    """Whether a presigned PUT URL may still rewrite the object at ``address``: an issued address (the signed form
    is the object's key) that is not write-once, issued less than ``url_seconds`` (the URLs' lifetime) ago, with
    the containers' clock skew. Staging such an address by itself would skip the link's copy and let the URL change
    bytes a commit reads; once every URL for it has expired, its bytes are as fixed as any other object's."""
    match = _SIGNED.fullmatch(address)
    if match is None or match["once"] is not None:
        return False
    return int(match["issued"]) + url_seconds + _CLOCK_SKEW_SECONDS > now
