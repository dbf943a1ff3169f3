"""LAKELET_IMPORT_ALLOWED_LOCATIONS: the stack's bucket:prefix/ entries and the local stack's s3:// locations read
into the same allowed locations; anything the stack could not grant is refused at start, naming the setting."""

from __future__ import annotations

import pytest

from chalicelib.settings import ENV_IMPORT_ALLOWED_LOCATIONS, IMPORT_LOCATIONS_MAX, Settings


def _allowed(value: str) -> tuple[str, ...]:
    return Settings.from_env({ENV_IMPORT_ALLOWED_LOCATIONS: value}).import_allowed_locations


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("", ()),
        ("raw:landing/", ("s3://raw/landing/",)),
        ("raw:", ("s3://raw/",)),
        ("raw:landing/,other:tables/2024/", ("s3://raw/landing/", "s3://other/tables/2024/")),
        ("my.bucket-1:a/b/", ("s3://my.bucket-1/a/b/",)),
        # The local stack's form, as documented: a missing "/" is added, so s3://raw/data never admits s3://raw/database.
        ("s3://raw/landing/", ("s3://raw/landing/",)),
        ("s3://raw/data", ("s3://raw/data/",)),
        ("s3://raw", ("s3://raw/",)),
        ("s3://a-src/x/ s3://b-src/", ("s3://a-src/x/", "s3://b-src/")),
        ("s3://raw/x/,other:y/", ("s3://raw/x/", "s3://other/y/")),
    ],
)
def test_both_forms_read_into_s3_locations(value: str, expected: tuple[str, ...]) -> None:
    assert _allowed(value) == expected


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("raw", "neither s3://bucket/prefix/ nor bucket:prefix/"),
        ("s3://", "names no bucket"),
        ("s3:///landing/", "names no bucket"),
        (":landing/", "names no bucket"),
        ("raw:*", "wildcard"),
        ("s3://raw/land*/", "wildcard"),
        ("raw:land?/", "wildcard"),
        ("s3://*/", "wildcard"),
        ("Raw:", "not an S3 bucket name"),
        ("s3://raw_data/", "not an S3 bucket name"),
        ("ab:", "not an S3 bucket name"),
        ("a" * 64 + ":", "not an S3 bucket name"),
        ("-raw:", "not an S3 bucket name"),
        ("raw-:", "not an S3 bucket name"),
        ("ra..w:", "not an S3 bucket name"),
        ("10.0.0.1:", "not an S3 bucket name"),
        ("xn--raw:", "not an S3 bucket name"),
        ("raw--ol-s3:", "not an S3 bucket name"),
        ("raw:landing", "the prefix must be"),
        ("raw:/landing/", "the prefix must be"),
        ("s3://raw//landing/", "the prefix must be"),
        ("raw:a/../b/", "the prefix must be"),
        ("s3://raw/./", "the prefix must be"),
        ("raw:a:b/", "the prefix must be"),
        ("s3://raw/${aws:username}/", "the prefix must be"),
        ("s3://raw/a\x01b/", "the prefix must be"),
    ],
)
def test_what_the_stack_could_not_grant_is_refused_naming_the_setting(value: str, why: str) -> None:
    with pytest.raises(ValueError, match=ENV_IMPORT_ALLOWED_LOCATIONS) as caught:
        _allowed(value)
    assert why in str(caught.value)


def test_no_more_locations_than_the_stack_grants() -> None:
    ten = [f"s3://b{i:02d}-src/p/" for i in range(IMPORT_LOCATIONS_MAX)]
    assert _allowed(",".join(ten)) == tuple(ten)
    with pytest.raises(ValueError, match=f"11 locations, at most {IMPORT_LOCATIONS_MAX}"):
        _allowed(",".join([*ten, "extra:"]))
