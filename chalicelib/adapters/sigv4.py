"""The S3 gateway's Signer port on botocore's own SigV4 code: the same functions every boto3 client signs with.

botocore's signer works on an outgoing request; verification feeds it the incoming request's parts instead. Two
adjustments make it compute what the client computed: the signed headers are exactly the ones the client named
(botocore would pick its own set, leaving out e.g. user-agent), and the payload hash is the one the client
declared (x-amz-content-sha256, or UNSIGNED-PAYLOAD for presigned URLs). The path is given already canonical,
and S3's signer does not normalize it further.
"""

from __future__ import annotations

from collections.abc import Sequence

from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest, HTTPHeaders
from botocore.credentials import Credentials

__all__ = ["BotocoreSigner"]


class _ExactHeaders(S3SigV4Auth):  # type: ignore[misc]  # botocore ships no type hints
    """S3SigV4Auth that signs exactly the headers it is given."""

    def __init__(self, secret: str, region: str, service: str, headers: Sequence[tuple[str, str]] = ()) -> None:
        super().__init__(Credentials("", secret), service, region)
        self._signed = headers

    def headers_to_sign(self, request: AWSRequest) -> HTTPHeaders:
        chosen = HTTPHeaders()
        for name, value in self._signed:
            chosen[name] = value
        return chosen


def _request(amz_date: str, path: str = "/", query: Sequence[tuple[str, str]] = (), method: str = "GET") -> AWSRequest:
    # The host only makes the URL parse; the signed host header comes from the incoming request.
    request = AWSRequest(method=method, url="https://gateway.invalid" + path, params=list(query))
    request.context["timestamp"] = amz_date
    return request


class BotocoreSigner:
    """Implements chalicelib.auth.ports.Signer with botocore.auth.S3SigV4Auth."""

    def canonical_request(
        self,
        method: str,
        canonical_uri: str,
        query: Sequence[tuple[str, str]],
        headers: Sequence[tuple[str, str]],
        payload_hash: str,
    ) -> str:
        signer = _ExactHeaders("", "", "s3", headers)
        request = _request("", canonical_uri, query, method)
        request.headers["X-Amz-Content-SHA256"] = payload_hash  # botocore takes the declared hash from here
        return str(signer.canonical_request(request))

    def string_to_sign(self, canonical_request: str, amz_date: str, region: str, service: str) -> str:
        signer = _ExactHeaders("", region, service)
        return str(signer.string_to_sign(_request(amz_date), canonical_request))

    def signature(self, secret: str, amz_date: str, region: str, service: str, string_to_sign: str) -> str:
        signer = _ExactHeaders(secret, region, service)
        return str(signer.signature(string_to_sign, _request(amz_date)))
