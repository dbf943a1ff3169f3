"""AWS Signature Version 4 verification, in the Authorization header or as presigned query parameters.

What this module decides is S3's policy: which parameters must be present, the ±15 minute clock skew, the 7-day
limit of presigned URLs, that ``host`` and every ``x-amz-*`` header are signed, and the canonical URI and query
(decoded, then encoded the one canonical way, so a client's own encoding choices do not matter). The arithmetic
itself (canonical request, string to sign, HMAC chain) is the :class:`Signer` port's: the deployed gateway binds
it to botocore's own signing code (chalicelib/adapters/sigv4.py), the code every boto3 client signs with.
Signatures are compared in constant time. Nothing here has side effects: a request that fails stops here.
"""

from __future__ import annotations

import calendar
import hashlib
import hmac
import re
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from email.utils import mktime_tz, parsedate_tz
from urllib.parse import quote, unquote

from chalicelib.auth import errors as auth_errors
from chalicelib.auth.ports import Signer

from .errors import S3Error
from .model import Request

ALGORITHM = "AWS4-HMAC-SHA256"
SERVICE = "s3"
TERMINATOR = "aws4_request"
MAX_SKEW_SECONDS = 15 * 60
MAX_PRESIGN_SECONDS = 7 * 24 * 3600
UNSIGNED_PAYLOAD = "UNSIGNED-PAYLOAD"
_AMZ_DATE = re.compile(r"\d{8}T\d{6}Z")
_SIGNATURE = re.compile(r"[0-9a-f]{64}")

# access key id -> (user id, secret); raises graveler CredentialNotFound for a key it does not know.
CredentialsLookup = Callable[[str], tuple[str, str]]


@dataclass(frozen=True, slots=True)
class Identity:
    """Who signed the request, and what chunk signatures (aws-chunked bodies) must chain from."""

    user_id: str
    access_key_id: str
    amz_date: str
    region: str
    signature: str  # the seed signature of a streaming upload
    secret: str  # kept only for the duration of the request, to verify chunk signatures
    presigned: bool

    @property
    def scope(self) -> str:
        return f"{self.amz_date[:8]}/{self.region}/{SERVICE}/{TERMINATOR}"

    def __repr__(self) -> str:  # never print the secret
        return f"Identity(user_id={self.user_id!r}, access_key_id={self.access_key_id!r})"


@dataclass(frozen=True, slots=True)
class _Parsed:
    access_key_id: str
    date: str  # yyyymmdd of the credential scope
    region: str
    service: str
    signed_headers: tuple[str, ...]
    signature: str
    amz_date: str


def canonical_uri(raw_path: str) -> str:
    """S3's canonical URI: the decoded path with every byte but unreserved characters and ``/`` encoded."""
    return quote(unquote(raw_path), safe="/~")


def _parse_amz_date(value: str) -> float:
    if not _AMZ_DATE.fullmatch(value):
        raise ValueError(value)
    return float(calendar.timegm(time.strptime(value, "%Y%m%dT%H%M%SZ")))


def _parse_credential(
    credential: str, error_code: str, services: Collection[str] | None = (SERVICE,)
) -> tuple[str, str, str, str]:
    parts = credential.split("/")
    if len(parts) < 5 or parts[-1] != TERMINATOR or not all(parts[-4:]):
        raise S3Error(error_code, f"malformed credential scope {credential!r}")
    access_key_id = "/".join(parts[:-4])
    date, region, service = parts[-4], parts[-3], parts[-2]
    if not access_key_id:
        raise S3Error(error_code, "the credential names no access key")
    if services is not None and service not in services:
        raise S3Error(error_code, f"the credential scope names service {service!r}, expected {SERVICE!r}")
    if not re.fullmatch(r"\d{8}", date):
        raise S3Error(error_code, f"the credential scope date {date!r} is not yyyymmdd")
    return access_key_id, date, region, service


def _header_date(request: Request) -> str:
    """x-amz-date, or else the Date header converted to the same form."""
    amz = request.header("x-amz-date")
    if amz:
        return amz
    date = request.header("date")
    parsed = parsedate_tz(date) if date else None
    if parsed is None:
        raise S3Error("AccessDenied", "AWS authentication requires a valid Date or x-amz-date header")
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(mktime_tz(parsed)))


def _parse_header(request: Request, services: Collection[str] | None) -> _Parsed:
    value = request.header("authorization")
    if value.startswith("AWS "):
        raise S3Error("InvalidRequest", "Signature Version 2 is not supported: sign requests with SigV4")
    algorithm, _, rest = value.partition(" ")
    if algorithm != ALGORITHM:
        raise S3Error("AuthorizationHeaderMalformed", f"unsupported authorization algorithm {algorithm!r}")
    fields: dict[str, str] = {}
    for item in rest.split(","):
        name, sep, field_value = item.strip().partition("=")
        if sep:
            fields[name.strip()] = field_value.strip()
    missing = [name for name in ("Credential", "SignedHeaders", "Signature") if not fields.get(name)]
    if missing:
        raise S3Error("AuthorizationHeaderMalformed", f"the authorization header lacks {', '.join(missing)}")
    access_key_id, date, region, service = _parse_credential(
        fields["Credential"], "AuthorizationHeaderMalformed", services
    )
    amz_date = _header_date(request)
    if not _AMZ_DATE.fullmatch(amz_date):
        raise S3Error("AccessDenied", f"x-amz-date {amz_date!r} is not yyyymmddThhmmssZ")
    if amz_date[:8] != date:
        raise S3Error("AuthorizationHeaderMalformed", "the credential scope date does not match x-amz-date")
    signed = tuple(fields["SignedHeaders"].split(";"))
    return _Parsed(access_key_id, date, region, service, signed, fields["Signature"].lower(), amz_date)


def _parse_query(request: Request, services: Collection[str] | None) -> tuple[_Parsed, int]:
    names = ("X-Amz-Credential", "X-Amz-Date", "X-Amz-Expires", "X-Amz-SignedHeaders", "X-Amz-Signature")
    missing = [name for name in names if not request.param(name)]
    if missing:
        raise S3Error("AuthorizationQueryParametersError", f"the presigned URL lacks {', '.join(missing)}")
    if request.param("X-Amz-Algorithm") != ALGORITHM:
        raise S3Error("AuthorizationQueryParametersError", f"X-Amz-Algorithm must be {ALGORITHM}")
    access_key_id, date, region, service = _parse_credential(
        request.param("X-Amz-Credential"), "AuthorizationQueryParametersError", services
    )
    amz_date = request.param("X-Amz-Date")
    if not _AMZ_DATE.fullmatch(amz_date) or amz_date[:8] != date:
        raise S3Error("AuthorizationQueryParametersError", "X-Amz-Date is malformed or does not match the scope")
    expires_text = request.param("X-Amz-Expires")
    if not expires_text.isdigit():
        raise S3Error("AuthorizationQueryParametersError", "X-Amz-Expires must be a number of seconds")
    expires = int(expires_text)
    if expires > MAX_PRESIGN_SECONDS:
        raise S3Error(
            "AuthorizationQueryParametersError",
            f"X-Amz-Expires must be less than a week (in seconds) that is {MAX_PRESIGN_SECONDS}",
        )
    signed = tuple(request.param("X-Amz-SignedHeaders").split(";"))
    parsed = _Parsed(access_key_id, date, region, service, signed, request.param("X-Amz-Signature").lower(), amz_date)
    return parsed, expires


# Headers a presigned URL's user may add unsigned: they only make the request stricter (integrity checks).
_UNSIGNED_OK_WHEN_PRESIGNED = ("x-amz-checksum-", "x-amz-sdk-checksum-algorithm", "x-amz-content-sha256")


def _check_signed_headers(request: Request, signed: Sequence[str], presigned: bool) -> None:
    if list(signed) != sorted(set(signed)) or any(name != name.lower() or not name for name in signed):
        raise S3Error("AuthorizationHeaderMalformed", "SignedHeaders must be lower-case, sorted and unique")
    if "host" not in signed:
        raise S3Error("AccessDenied", "the host header must be signed")
    absent = [name for name in signed if name not in request.headers]
    if absent:
        raise S3Error("AccessDenied", f"signed headers absent from the request: {', '.join(absent)}")
    # An unsigned x-amz-* header could be added or changed on the way (a copy source, metadata) without breaking
    # the signature: refused, as S3 does. Whoever holds a presigned URL may add integrity checks only.
    unsigned = sorted(
        name
        for name in request.headers
        if name.startswith("x-amz-")
        and name not in signed
        and not (presigned and name.startswith(_UNSIGNED_OK_WHEN_PRESIGNED))
    )
    if unsigned:
        raise S3Error(
            "AccessDenied", f"there were headers present in the request which were not signed: {', '.join(unsigned)}"
        )


def is_signed(request: Request) -> bool:
    return (
        bool(request.header("authorization"))
        or request.has_param("X-Amz-Signature")
        or request.has_param("X-Amz-Credential")
    )


def authenticate(
    request: Request,
    lookup: CredentialsLookup,
    signer: Signer,
    now: float,
    services: Collection[str] | None = (SERVICE,),
) -> Identity:
    """Verifies the request's SigV4 signature and returns who made it. Raises S3Error (403 or 400) otherwise.

    ``services``: the service names the credential scope may carry (None: any). The local stack's guard in front
    of its AWS stand-in takes DynamoDB, KMS and the rest too; those sign the hash of the body they send, not a
    declared one, and their canonical URI is the path percent-encoded once more (only S3's is not)."""
    presigned = not request.header("authorization")
    if presigned and request.has_param("AWSAccessKeyId") and request.has_param("Signature"):
        raise S3Error(
            "InvalidRequest",
            "Signature Version 2 is not supported: presign URLs with SigV4 (boto3: Config(signature_version='s3v4'))",
        )
    if presigned and not is_signed(request):
        raise S3Error("AccessDenied", "anonymous requests are not accepted: sign requests with SigV4")
    if presigned:
        parsed, expires = _parse_query(request, services)
        issued = _parse_amz_date(parsed.amz_date)
        if now < issued - MAX_SKEW_SECONDS:
            raise S3Error("AccessDenied", "request is not yet valid")
        if now > issued + expires:
            raise S3Error("RequestExpired", details={"Expires": _iso(issued + expires), "ServerTime": _iso(now)})
        payload_hash = request.param("X-Amz-Content-Sha256") or (
            UNSIGNED_PAYLOAD if parsed.service == SERVICE else hashlib.sha256(request.body).hexdigest()
        )
        query = [(k, v) for k, v in request.query if k != "X-Amz-Signature"]
    else:
        parsed = _parse_header(request, services)
        issued = _parse_amz_date(parsed.amz_date)
        if abs(now - issued) > MAX_SKEW_SECONDS:
            raise S3Error(
                "RequestTimeTooSkewed",
                details={
                    "RequestTime": parsed.amz_date,
                    "ServerTime": _iso(now),
                    "MaxAllowedSkewMilliseconds": str(MAX_SKEW_SECONDS * 1000),
                },
            )
        payload_hash = request.header("x-amz-content-sha256")
        if not payload_hash and parsed.service != SERVICE:
            payload_hash = hashlib.sha256(request.body).hexdigest()
        if not payload_hash:
            raise S3Error("InvalidRequest", "Missing required header for this request: x-amz-content-sha256")
        query = list(request.query)
    if not _SIGNATURE.fullmatch(parsed.signature):
        raise S3Error("SignatureDoesNotMatch", "the signature is not 64 hex digits")
    _check_signed_headers(request, parsed.signed_headers, presigned)
    try:
        user_id, secret = lookup(parsed.access_key_id)
    except auth_errors.CredentialNotFound:
        raise S3Error("InvalidAccessKeyId", details={"AWSAccessKeyId": parsed.access_key_id}) from None
    headers = [(name, request.headers[name]) for name in parsed.signed_headers]
    uri = canonical_uri(request.raw_path) if parsed.service == SERVICE else quote(request.raw_path, safe="/~")
    canonical = signer.canonical_request(request.method, uri, query, headers, payload_hash)
    to_sign = signer.string_to_sign(canonical, parsed.amz_date, parsed.region, parsed.service)
    expected = signer.signature(secret, parsed.amz_date, parsed.region, parsed.service, to_sign)
    if not hmac.compare_digest(expected.encode(), parsed.signature.encode()):
        raise S3Error(
            "SignatureDoesNotMatch",
            details={"AWSAccessKeyId": parsed.access_key_id, "StringToSign": to_sign, "CanonicalRequest": canonical},
        )
    return Identity(user_id, parsed.access_key_id, parsed.amz_date, parsed.region, parsed.signature, secret, presigned)


def _iso(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))
