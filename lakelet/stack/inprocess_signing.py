"""The stack's own in-process AWS calls with the stack's key are not signed: nothing would check the signature.

An in-process call (lakelet/stack/inprocess_aws.py) that names the stack's key is let through by the key-pair
guard without verifying its signature (lakelet/stack/moto_guard.py: only this process's own clients can make such
a call), and the journal's replay goes to moto without the guard. Computing SigV4 for it (a canonical request, a
string to sign and four HMACs) was the largest part of botocore's own work per call: 8% of an API GET of a small
object, which makes three such calls.

While installed, ``SigV4Auth.add_auth`` (S3's subclasses included) gives such a request every header signing
gives it (X-Amz-Date, the session token, S3's X-Amz-Content-SHA256) and an Authorization header of the same form
with the same credential scope (moto reads the key and the region from it), whose signature is zeros. Any other
request, any other key, every presigned URL and headers signed for a request sent over moto's port are signed as
before.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from botocore.auth import SIGV4_TIMESTAMP, SigV4Auth, SigV4QueryAuth
from botocore.exceptions import NoCredentialsError
from botocore.utils import get_current_datetime

from lakelet.stack import inprocess_aws

__all__ = ["UNCHECKED_SIGNATURE", "install", "installed", "unchecked_authorization", "uninstall"]

#: The signature an in-process call of the stack's key carries (the guard does not check it).
UNCHECKED_SIGNATURE = "0" * 64

_lock = threading.Lock()
_original: list[Callable[[SigV4Auth, Any], Any]] = []
# The stack's access key id.
_key: list[str] = []


def install(access_key_id: str) -> None:
    with _lock:
        _key[:] = [access_key_id]
        if not _original:
            _original.append(SigV4Auth.add_auth)
            SigV4Auth.add_auth = _add_auth


def uninstall() -> None:
    with _lock:
        _key.clear()
        if _original:
            SigV4Auth.add_auth = _original.pop()


def installed() -> bool:
    return bool(_original)


def _unchecked(auth: SigV4Auth, request: Any) -> bool:
    """A request a botocore client of this process is about to send with the stack's key, to a URL that
    inprocess_aws answers in process: not a presigned URL (query auth), not headers signed by hand for a request
    sent over the socket (no client context; moto_guard.signed_headers)."""
    if not _key or auth.credentials is None or auth.credentials.access_key != _key[0]:
        return False
    if isinstance(auth, SigV4QueryAuth) or "client_region" not in request.context:
        return False
    return inprocess_aws.answers(str(request.url))


def _add_auth(auth: SigV4Auth, request: Any) -> Any:
    if not _unchecked(auth, request):
        return _original[0](auth, request)
    if auth.credentials is None:
        raise NoCredentialsError()
    request.context["timestamp"] = get_current_datetime().strftime(SIGV4_TIMESTAMP)
    auth._modify_request_before_signing(request)
    request.headers["Authorization"] = unchecked_authorization(auth.scope(request))
    return None


def unchecked_authorization(scope: str) -> str:
    """The Authorization header of an in-process call the guard does not check: SigV4's form, with the credential
    scope (``key/date/region/service/aws4_request``, from which moto reads the key and the region) and zeros."""
    return f"AWS4-HMAC-SHA256 Credential={scope}, SignedHeaders=host;x-amz-date, Signature={UNCHECKED_SIGNATURE}"
