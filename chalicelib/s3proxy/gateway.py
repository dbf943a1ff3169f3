"""The S3 gateway: ``handle(request) -> response``. Authenticate, verify the body, route, run, answer.

Everything before the operation runs (signature, clock skew, expiry, payload hash, chunk signatures, checksums,
routing) can refuse the request, and does so before anything is read or written. Every error leaves as S3
XML through errors.py; an unexpected exception is logged with the request id and answers InternalError.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from chalicelib.auth.conditions import with_request_fields
from chalicelib.auth.policies import Permission
from chalicelib.auth.ports import Signer
from chalicelib.graveler import errors
from chalicelib.graveler.engine import Engine
from chalicelib.usage import UsageMeter

from .context import Authorizer, Context, allow_all
from .errors import S3Error, error_response, from_graveler
from .model import Request, Response
from .payload import request_body
from .router import route, split_path
from .sigv4 import CredentialsLookup, Identity, authenticate

if TYPE_CHECKING:
    from chalicelib.wiring import Services

log = logging.getLogger(__name__)


class S3Gateway:
    """Serves S3 requests over the engine.

    ``credentials`` maps an access key id to (user id, secret) and raises CredentialNotFound for unknown keys;
    ``signer`` does the SigV4 arithmetic (botocore's, see chalicelib/adapters/sigv4.py); ``authorize`` may
    refuse an action with graveler's Forbidden. ``max_response_bytes`` bounds a response body (a Lambda's
    payload limit); None means no bound.
    """

    def __init__(
        self,
        engine: Engine,
        credentials: CredentialsLookup,
        signer: Signer,
        *,
        authorize: Authorizer = allow_all,
        clock: Callable[[], float] = time.time,
        max_response_bytes: int | None = None,
        usage: UsageMeter | None = None,
    ) -> None:
        self._engine = engine
        self._credentials = credentials
        self._signer = signer
        self._authorize = authorize
        self._clock = clock
        self._max_response_bytes = max_response_bytes
        self._usage = usage
        # Per thread: the request refuse_before_body has just verified (what the signature covers) and who signed it.
        self._verified = threading.local()

    @classmethod
    def from_services(cls, services: Services, max_response_bytes: int | None = None) -> S3Gateway:
        """The gateway over the app's services, as the deployed and local ones run: SigV4 verified with their
        signer against the users' own secret keys, and every operation checked against their policies like the
        API's. The gateway assembles itself here, so the services' assembly (wiring.py) needs no gateway."""
        auth = services.auth

        def credentials(access_key_id: str) -> tuple[str, str]:
            user, secret = auth.secret_for_signing(access_key_id)
            return user.id, secret

        def authorize(user_id: str, action: str, resource: str) -> None:
            auth.authorizer.check(user_id, [Permission(action, resource)])

        return cls(
            services.engine,
            credentials,
            services.signing(),
            authorize=authorize,
            max_response_bytes=max_response_bytes,
            usage=services.usage,
        )

    def handle(self, request: Request) -> Response:
        request_id = uuid.uuid4().hex[:16].upper()
        try:
            with with_request_fields(request.source_ip):
                response = self._handle(request)
        except S3Error as e:
            response = error_response(e, request.path, request_id)
        except errors.GravelerError as e:
            converted = from_graveler(e)
            if converted.status >= 500:
                log.error("S3 %s %s failed (request %s): %r", request.method, request.path, request_id, e)
            response = error_response(converted, request.path, request_id)
        except Exception:
            log.exception("S3 %s %s failed (request %s)", request.method, request.path, request_id)
            response = error_response(S3Error("InternalError"), request.path, request_id)
        response.headers.setdefault("x-amz-request-id", request_id)
        if request.method == "HEAD" and response.body:
            # A HEAD answer has no body; an error's status says it all (S3 sends none either).
            response = replace(response, body=b"")
        if self._usage is not None:
            self._usage.flush_if_due()  # at most once an interval: no request pays a write of its own
        return response

    def refuse_before_body(self, request: Request) -> Response | None:
        """The error answer for a request whose signature does not verify, judged on its line and headers
        alone (``request.body`` is not looked at), or None when it verifies. A server calls this before it
        reads a body, so nobody unauthenticated can make it take in a large one."""
        self._verified.last = None
        try:
            identity = authenticate(request, self._credentials, self._signer, self._clock())
        except S3Error as e:
            return error_response(e, request.path, uuid.uuid4().hex[:16].upper())
        except errors.GravelerError as e:
            return error_response(from_graveler(e), request.path, uuid.uuid4().hex[:16].upper())
        self._verified.last = (_signed_parts(request), self._clock(), identity)
        return None

    def _identity(self, request: Request) -> Identity:
        """Who signed the request: taken from refuse_before_body when this thread has just verified the same line
        and headers there (the body, the only part it did not see, is checked against the signed payload hash by
        request_body), within a second; verified here otherwise."""
        last = getattr(self._verified, "last", None)
        self._verified.last = None
        now = self._clock()
        if last is not None and 0 <= now - last[1] <= _REUSE_SECONDS and last[0] == _signed_parts(request):
            identity: Identity = last[2]
            return identity
        return authenticate(request, self._credentials, self._signer, now)

    def _handle(self, request: Request) -> Response:
        identity = self._identity(request)
        body = request_body(request, identity, self._signer)
        operation = route(request)
        if self._usage is not None:
            # lakeFS's usage report counts the gateway's requests that reach an operation, once signed.
            self._usage.count()
        bucket, key = split_path(request)
        context = Context(
            engine=self._engine,
            request=request,
            identity=identity,
            body=body,
            bucket=bucket,
            key=key,
            authorize_fn=self._authorize,
            clock=self._clock,
            max_response_bytes=self._max_response_bytes,
        )
        return operation(context)


# How long after refuse_before_body verified a request its handling may take the signer from it (the server reads
# the body in between: a small one within milliseconds; a longer wait verifies again).
_REUSE_SECONDS = 1.0


def _signed_parts(request: Request) -> tuple[object, ...]:
    return (request.method, request.raw_path, request.raw_query, tuple(request.headers.items()), request.source_ip)
