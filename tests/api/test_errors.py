"""The status table, the 500 path, and proof that bad input is a lakeFS-shaped 400 and never reaches it."""

from __future__ import annotations

import json
import logging

import pytest

from chalicelib import wiring
from chalicelib.api.errors import STATUS, graveler_error_response, message_for, status_for
from chalicelib.auth import errors as auth_errors
from chalicelib.graveler import errors

from .support import Api, assert_error, seg

LAKEFS_STATUSES = {
    errors.NotFound: 404,
    errors.RepositoryNotFound: 404,
    errors.BranchNotFound: 404,
    errors.TagNotFound: 404,
    errors.CommitNotFound: 404,
    errors.RefNotFound: 404,
    errors.ObjectNotFound: 404,
    auth_errors.UserNotFound: 404,
    errors.Forbidden: 403,
    errors.ReadOnlyRepository: 403,
    errors.DirtyBranch: 400,
    errors.NoChanges: 400,
    errors.Invalid: 400,
    errors.InvalidRef: 400,
    errors.InvalidName: 400,
    errors.AlreadyExists: 409,
    errors.RepositoryExists: 409,
    errors.BranchExists: 409,
    errors.TagExists: 409,
    auth_errors.UserExists: 409,
    errors.Conflict: 409,
    errors.PreconditionFailed: 412,
    errors.TooManyTries: 429,
    errors.RangeNotSatisfiable: 416,
    errors.Gone: 410,
    errors.Unauthorized: 401,
}


@pytest.mark.parametrize(("cls", "status"), LAKEFS_STATUSES.items(), ids=[c.__name__ for c in LAKEFS_STATUSES])
def test_status_table(cls: type[errors.GravelerError], status: int) -> None:
    assert status_for(cls("x")) == status
    response = graveler_error_response(cls("something went wrong"))
    assert response.status_code == status
    # lakeFS's words first when lakeFS has them (pkg/graveler/errors.go), the detail after a colon.
    expected = f"{cls.lakefs_message}: something went wrong" if cls.lakefs_message else "something went wrong"
    assert json.loads(response.body) == {"message": expected}


def test_every_error_class_has_a_status() -> None:
    def subclasses(cls: type) -> list[type]:
        return [cls] + [s for sub in cls.__subclasses__() for s in subclasses(sub)]

    # WorkflowFailed (a workflow step failed on its own) and DataMissing (committed data lost: permanent, so never
    # 503) are the errors that are not the user's: named here, so any other class without a status still fails.
    assert status_for(errors.WorkflowFailed("x")) == status_for(errors.DataMissing("x")) == 500
    for cls in subclasses(errors.GravelerError):
        if (
            cls not in (errors.GravelerError, errors.WorkflowFailed, errors.DataMissing)
            and cls.__module__ == errors.__name__
        ):
            assert status_for(cls("x")) != 500, cls
    assert set(STATUS) <= set(subclasses(errors.GravelerError))


def test_messages() -> None:
    assert message_for(errors.BranchExists("dev")) == "branch already exists: dev"
    assert message_for(errors.NoChanges("no changes to commit on branch main")) == "no changes to commit on branch main"
    assert message_for(errors.DirtyBranch()) == "uncommitted changes (dirty branch)"
    assert message_for(errors.ObjectNotFound("a.txt")) == "object not found: a.txt"
    assert message_for(errors.NotFound()) == "not found"
    assert message_for(errors.Invalid("a full sentence")) == "a full sentence"
    throttled = errors.StorageError("table lakelet-refs throttled")
    assert message_for(throttled) == "storage temporarily unavailable, retry later"


def test_unexpected_exceptions_are_a_generic_500_and_logged(
    api: Api, repo: str, services: wiring.Services, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    def explode(*_: object, **__: object) -> None:
        raise KeyError("internal detail 42")

    monkeypatch.setattr(services.engine.repositories, "get_repository", explode)
    with caplog.at_level(logging.ERROR):
        response = api.get("/repositories/repo1")
    assert assert_error(response, 500) == "internal server error"
    assert "internal detail 42" not in response.body.decode()
    assert "internal detail 42" in caplog.text and "Traceback" in caplog.text


def test_storage_errors_are_503_without_details_and_logged(
    api: Api, repo: str, services: wiring.Services, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    def throttled(*_: object, **__: object) -> None:
        raise errors.StorageError("table lakelet-refs throttled")

    monkeypatch.setattr(services.engine.branches, "list_branches", throttled)
    with caplog.at_level(logging.ERROR):
        response = api.get("/repositories/repo1/branches")
    assert "lakelet-refs" not in assert_error(response, 503)
    assert "lakelet-refs" in caplog.text


BAD_REQUESTS = [
    # bad JSON bodies
    ("POST", "/repositories", {"body": b"{"}),
    ("POST", "/repositories", {"body": b"[1, 2]"}),
    ("POST", "/repositories", {"body": b"\x00\x01"}),
    ("POST", "/repositories/repo1/branches", {"body": b"not json"}),
    ("POST", "/repositories/repo1/tags", {"body": b""}),
    ("POST", "/repositories/repo1/branches/main/commits", {"body": b'"message"'}),
    ("POST", "/repositories/repo1/branches/main/objects/delete", {"body": b"{]"}),
    ("POST", "/setup_lakefs", {"body": b"nul"}),
    # missing fields and wrong types
    ("POST", "/repositories", {"json_body": {"name": "repo2"}}),
    ("POST", "/repositories/repo1/branches", {"json_body": {"name": "x", "source": 3}}),
    ("POST", "/repositories/repo1/tags", {"json_body": {"id": None, "ref": "main"}}),
    ("POST", "/repositories/repo1/branches/main/commits", {"json_body": {"message": "m", "metadata": {"a": None}}}),
    ("POST", "/repositories/repo1/branches/main/objects/delete", {"json_body": {"paths": None}}),
    # bad ints and booleans
    ("GET", "/repositories", {"query": {"amount": "ten"}}),
    ("GET", "/repositories", {"query": {"amount": "1e3"}}),
    ("GET", "/repositories/repo1/branches", {"query": {"amount": "-2"}}),
    ("GET", "/repositories/repo1/branches", {"query": {"amount": "1001"}}),
    ("GET", "/repositories/repo1/tags", {"query": {"amount": "٣"}}),
    ("GET", "/repositories/repo1/refs/main/commits", {"query": {"amount": "0x10"}}),
    ("GET", "/repositories/repo1/refs/main/objects/ls", {"query": {"amount": "99999999999999999999"}}),
    ("GET", "/repositories/repo1/refs/main/objects/ls", {"query": {"user_metadata": "perhaps"}}),
    ("GET", "/repositories/repo1/refs/main/objects", {"query": {"path": "a", "presign": "2"}}),
    # invalid names
    ("GET", "/repositories/Repo1", {}),
    ("DELETE", "/repositories/r", {}),
    ("GET", "/repositories/repo1/branches/" + seg("a b"), {}),
    ("GET", "/repositories/repo1/tags/" + seg("a..b"), {}),
    ("POST", "/repositories/repo1/branches/" + seg("no/slash") + "/commits", {"json_body": {"message": "m"}}),
    # bad ref expressions
    ("GET", "/repositories/repo1/commits/" + seg("main~x"), {}),
    ("GET", "/repositories/repo1/commits/" + seg("main@@"), {}),
    ("GET", "/repositories/repo1/refs/" + seg("main^^x") + "/commits", {}),
    ("GET", "/repositories/repo1/refs/" + seg("main$1") + "/objects/ls", {}),
    ("GET", "/repositories/repo1/refs/" + seg("main branch") + "/objects/stat", {"query": {"path": "a"}}),
    ("POST", "/repositories/repo1/tags", {"json_body": {"id": "v1", "ref": "@"}}),
    # bad headers
    ("GET", "/repositories/repo1/refs/main/objects", {"query": {"path": "a"}, "headers": {"range": "bytes=x-y"}}),
    ("POST", "/repositories/repo1/branches/main/objects", {"query": {"path": "a"}, "headers": {"if-none-match": "x"}}),
]


@pytest.mark.parametrize(("method", "path", "kwargs"), BAD_REQUESTS, ids=[f"{m} {p} {k}" for m, p, k in BAD_REQUESTS])
def test_bad_input_is_400_in_the_lakefs_shape(
    api: Api, repo: str, caplog: pytest.LogCaptureFixture, method: str, path: str, kwargs: dict[str, object]
) -> None:
    api.upload("repo1", "main", "a", b"abc")
    if "body" in kwargs:
        kwargs = {**kwargs, "headers": {"content-type": "application/json"}}
    with caplog.at_level(logging.ERROR):
        response = api.request(method, path, **kwargs)  # type: ignore[arg-type]
    assert_error(response, 400)
    assert caplog.text == ""  # nothing reached the unexpected-error path


def test_errors_chalice_answers_itself_have_the_lakefs_shape(api: Api, repo: str) -> None:
    assert "PUT" in assert_error(api.request("PUT", "/repositories/repo1"), 405)
    assert_error(api.request("PATCH", "/repositories"), 405)
