"""Login tokens (JWT HS256) and signed staging addresses: what verifies, and everything that must not."""

from __future__ import annotations

import base64
import json

import pytest

from chalicelib.auth.addresses import MAX_AGE_SECONDS, AddressSigner, InvalidAddress
from chalicelib.auth.errors import InvalidToken
from chalicelib.auth.tokens import Claims, TokenSigner

from .support import Clock

KEY = b"k" * 32
ADDRESS = "s3://bucket/ns/data/gabc/cdef"


def _segment(data: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


def test_token_round_trip_and_expiry(clock: Clock) -> None:
    signer = TokenSigner(KEY, clock)
    token = signer.issue("alice", 3600, "AKIAKEY", "gen1")
    assert token.expires == 1_700_003_600 and token.user_id == "alice"
    claims = signer.verify(token.value)
    # A login starts a chain, named by the token's own id.
    expected = Claims("alice", "AKIAKEY", "gen1", claims.token_id, 1_700_003_600, claims.token_id, 1_700_000_000)
    assert claims == expected and len(claims.token_id) == 32
    renewed = signer.verify(signer.issue("alice", 3600, "AKIAKEY", "gen1", chain_id=claims.chain_id).value)
    assert renewed.chain_id == claims.token_id and renewed.token_id != claims.token_id
    header = json.loads(base64.urlsafe_b64decode(token.value.split(".")[0] + "=="))
    assert header == {"alg": "HS256", "typ": "JWT"}
    clock.now += 3599
    assert signer.verify(token.value).user_id == "alice"
    clock.now += 1
    with pytest.raises(InvalidToken):
        signer.verify(token.value)


def test_tokens_of_another_key_or_tampered_do_not_verify(clock: Clock) -> None:
    token = TokenSigner(KEY, clock).issue("alice", 3600, "AKIAKEY", "gen1").value
    with pytest.raises(InvalidToken):
        TokenSigner(b"x" * 32, clock).verify(token)
    header, claims, signature = token.split(".")
    forged_claims = json.loads(base64.urlsafe_b64decode(claims + "=="))
    forged_claims["sub"] = "admin"
    for bad in (
        f"{header}.{_segment(forged_claims)}.{signature}",
        f"{_segment({'alg': 'none', 'typ': 'JWT'})}.{claims}.",
        f"{header}.{claims}",
        f"{header}.{claims}.{signature}.x",
        "not a token",
        "",
        "a.b.c",
        "x" * 5000,
    ):
        with pytest.raises(InvalidToken):
            TokenSigner(KEY, clock).verify(bad)


def test_a_correctly_signed_token_still_needs_its_claims(clock: Clock) -> None:
    signer = TokenSigner(KEY, clock)

    def signed(header: dict[str, object], claims: dict[str, object]) -> str:
        signing_input = f"{_segment(header)}.{_segment(claims)}"
        return signing_input + "." + base64.urlsafe_b64encode(signer._sign(signing_input)).rstrip(b"=").decode()

    good = {
        "sub": "a",
        "iat": 1_700_000_000,
        "exp": 1_700_000_100,
        "iss": "lakelet",
        "aud": "lakelet-api",
        "akid": "AKIAKEY",
        "gen": "g",
        "jti": "t1",
    }
    # A token without a chain (issued before chains) is a chain of its own.
    assert signer.verify(signed({"alg": "HS256"}, good)) == Claims(
        "a", "AKIAKEY", "g", "t1", 1_700_000_100, "t1", 1_700_000_000
    )
    assert signer.verify(signed({"alg": "HS256"}, {**good, "sid": "s1"})).chain_id == "s1"
    for header, claims in (
        ({"alg": "HS512"}, good),
        ({"alg": "HS256"}, {**good, "aud": "someone-else"}),
        ({"alg": "HS256"}, {**good, "sub": ""}),
        ({"alg": "HS256"}, {k: v for k, v in good.items() if k != "jti"}),
        ({"alg": "HS256"}, {**good, "jti": 7}),
        ({"alg": "HS256"}, {k: v for k, v in good.items() if k != "exp"}),
        ({"alg": "HS256"}, {**good, "exp": "later"}),
        ({"alg": "HS256"}, {**good, "iat": 1_700_009_999}),
        ({"alg": "HS256"}, {k: v for k, v in good.items() if k != "akid"}),  # unbound: issued before binding
        ({"alg": "HS256"}, {k: v for k, v in good.items() if k != "gen"}),
        ({"alg": "HS256"}, {**good, "akid": ""}),
        ({"alg": "HS256"}, {**good, "sid": ""}),
        ({"alg": "HS256"}, {**good, "sid": 3}),
    ):
        with pytest.raises(InvalidToken):
            signer.verify(signed(header, claims))


def test_signed_address_is_an_address_and_verifies_for_its_target(clock: Clock) -> None:
    signer = AddressSigner(KEY, clock)
    signed = signer.sign("repo", "main", "a/b.csv", ADDRESS)
    assert signed.startswith(ADDRESS + ".") and "/" not in signed.removeprefix(ADDRESS)
    assert signer.verify("repo", "main", "a/b.csv", signed) == signed


@pytest.mark.parametrize(
    ("repo", "branch", "path"),
    [("other", "main", "a/b.csv"), ("repo", "dev", "a/b.csv"), ("repo", "main", "a/c.csv"), ("repo", "main", "")],
)
def test_foreign_addresses_are_refused(clock: Clock, repo: str, branch: str, path: str) -> None:
    signed = AddressSigner(KEY, clock).sign("repo", "main", "a/b.csv", ADDRESS)
    with pytest.raises(InvalidAddress):
        AddressSigner(KEY, clock).verify(repo, branch, path, signed)


def test_forged_addresses_are_refused(clock: Clock) -> None:
    signer = AddressSigner(KEY, clock)
    signed = signer.sign("repo", "main", "k", ADDRESS)
    base, issued, mac = signed.rsplit(".", 2)
    for forged in (
        ADDRESS,
        f"s3://bucket/ns/data/gabc/other.{issued}.{mac}",
        f"{base}.{int(issued) + 1}.{mac}",
        f"{base}.{issued}.{'0' * 32}",
        f"{base}.{issued}.{mac.upper()}",
        AddressSigner(b"z" * 32, clock).sign("repo", "main", "k", ADDRESS),
    ):
        with pytest.raises(InvalidAddress):
            signer.verify("repo", "main", "k", forged)


def test_stale_and_future_addresses_are_refused(clock: Clock) -> None:
    signer = AddressSigner(KEY, clock)
    signed = signer.sign("repo", "main", "k", ADDRESS)
    clock.now += MAX_AGE_SECONDS
    assert signer.verify("repo", "main", "k", signed) == signed
    clock.now += 1
    with pytest.raises(InvalidAddress, match="stale"):
        signer.verify("repo", "main", "k", signed)
    clock.now -= MAX_AGE_SECONDS + 3600
    with pytest.raises(InvalidAddress, match="future"):
        signer.verify("repo", "main", "k", signed)


def test_only_the_canonical_spelling_of_a_token_verifies(clock: Clock) -> None:
    """One token, one string: '=' padding, other unused trailing bits or characters outside base64url
    (which a lenient decoder skips) make another string of the same signature, and each is refused."""
    signer = TokenSigner(KEY, clock)
    token = signer.issue("alice", 3600, "AKIAKEY", "gen1").value
    header, claims, signature = token.split(".")
    assert signer.verify(token).user_id == "alice"
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    last = alphabet.index(signature[-1])
    same_bytes = [alphabet[last ^ bits] for bits in (1, 2, 3)]  # 32 bytes in 43 characters: 2 bits unused
    for variant in (
        f"{token}=",
        f"{token}==",
        f"{header}.{claims}.{signature[:10]}\n{signature[10:]}",
        f"{header}.{claims}.{signature[:10]}!{signature[10:]}",
        *(f"{header}.{claims}.{signature[:-1]}{c}" for c in same_bytes),
    ):
        with pytest.raises(InvalidToken):
            signer.verify(variant)


def test_an_upload_url_may_be_live_until_its_lifetime_and_the_skew_are_over() -> None:
    from chalicelib.auth.addresses import upload_url_may_be_live

    signer = AddressSigner(b"k" * 32, clock=lambda: 1_000_000.0)
    plain = signer.sign("r", "main", "p", "s3://b/ns/data/x/abc")
    once = signer.sign("r", "main", "p", "s3://b/ns/data/x/abd", write_once=True)
    assert upload_url_may_be_live(plain, 900, 1_000_000.0 + 900 + 299)
    assert not upload_url_may_be_live(plain, 900, 1_000_000.0 + 900 + 300)
    assert not upload_url_may_be_live(once, 900, 1_000_000.0)
    assert not upload_url_may_be_live("s3://b/ns/data/x/abc", 900, 1_000_000.0)
