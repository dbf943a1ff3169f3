import pytest

from chalicelib.graveler import errors
from chalicelib.graveler.validation import (
    validate_branch_id,
    validate_path,
    validate_repository_id,
    validate_storage_namespace,
    validate_tag_id,
)


@pytest.mark.parametrize("name", ["abc", "my-repo", "a" * 63, "0repo"])
def test_valid_repository_names(name):
    validate_repository_id(name)


@pytest.mark.parametrize("name", ["ab", "Repo", "-repo", "a" * 64, "my_repo", "re po", ""])
def test_invalid_repository_names(name):
    with pytest.raises(errors.InvalidName):
        validate_repository_id(name)


@pytest.mark.parametrize("name", ["main", "feature-1", "_x", "a_b-c"])
def test_valid_branch_names(name):
    validate_branch_id(name)


@pytest.mark.parametrize("name", ["", "-x", "a/b", "a~1", "a b", "a@", "a.b"])
def test_invalid_branch_names(name):
    with pytest.raises(errors.InvalidName):
        validate_branch_id(name)


@pytest.mark.parametrize("name", ["v1", "v1.0", "release-2024", "v1@x"])
def test_valid_tag_names(name):
    validate_tag_id(name)


@pytest.mark.parametrize(
    "name", ["", "@", "a..b", "a/b", "a@{b", "a^", "a:b", "a?", "a*", "a[", "a\\b", "a b", "v1.", "v1.lock", "a~1"]
)
def test_invalid_tag_names(name):
    with pytest.raises(errors.InvalidName):
        validate_tag_id(name)


def test_paths():
    validate_path("a/b/c.txt")
    for bad in ["", "a\x00b", "x" * 1025]:
        with pytest.raises(errors.Invalid):
            validate_path(bad)


def test_storage_namespaces():
    validate_storage_namespace("s3://my.bucket/some/prefix")
    validate_storage_namespace("s3://bucket/prefix/")
    # A bucket's root, empty or dot segments, and query or fragment marks are refused (tests/security too).
    for bad in [
        "bucket/prefix",
        "gs://bucket",
        "s3://",
        "s3://B",
        "s3://bucket",
        "s3://bucket/",
        "s3://bucket//",
        "s3://bucket///x",
        "s3://bucket/x//y",
        "s3://bucket/x/../y",
        "s3://bucket/x?y",
    ]:
        with pytest.raises(errors.Invalid):
            validate_storage_namespace(bad)
