"""lakefs-sdk calls against the embedded stack: login and Bearer tokens, users, groups and policies with
permissions per role, presigned upload and link, copy, HEAD, If-None-Match, commits by id, metadata."""

from __future__ import annotations

import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import lakefs_sdk
import pytest
import urllib3
from lakefs_sdk import ApiException

from .conftest import LocalProcess

pytestmark = pytest.mark.e2e


def sdk(
    local: LocalProcess, username: str | None = None, password: str | None = None, token: str | None = None
) -> lakefs_sdk.ApiClient:
    configuration = lakefs_sdk.Configuration(
        host=local.api_url, username=username, password=password, access_token=token
    )
    return lakefs_sdk.ApiClient(configuration)


@pytest.fixture
def admin(local_stack: LocalProcess) -> lakefs_sdk.ApiClient:
    return sdk(local_stack, local_stack.access_key_id, local_stack.secret_access_key)


@pytest.fixture
def repo_id(admin: lakefs_sdk.ApiClient) -> str:
    name = f"sdk-{uuid.uuid4().hex[:10]}"
    storage = lakefs_sdk.ConfigApi(admin).get_config().storage_config
    creation = lakefs_sdk.RepositoryCreation(name=name, storage_namespace=f"{storage.default_namespace_prefix}/{name}")
    lakefs_sdk.RepositoriesApi(admin).create_repository(creation)
    return name


_UPLOADS = Path(tempfile.mkdtemp(prefix="lakelet-sdk-"))


@pytest.fixture(scope="module", autouse=True)
def _uploads() -> Iterator[None]:
    yield
    shutil.rmtree(_UPLOADS, ignore_errors=True)


def content(data: bytes) -> str:
    """The plain SDK uploads a file by name (the multipart field "content")."""
    path = _UPLOADS / uuid.uuid4().hex
    path.write_bytes(data)
    return str(path)


def status_of(call: Callable[[], object]) -> int:
    """The HTTP status of a failed call; 200 for any success."""
    try:
        call()
    except ApiException as e:
        return int(e.status)
    return 200


def test_the_local_admin_is_an_admin_and_can_log_in(local_stack: LocalProcess, admin: lakefs_sdk.ApiClient) -> None:
    me = lakefs_sdk.AuthApi(admin).get_current_user().user.id
    groups = lakefs_sdk.AuthApi(admin).list_user_groups(me).results
    assert [g.id for g in groups] == ["Admins"]
    login = lakefs_sdk.LoginInformation(
        access_key_id=local_stack.access_key_id, secret_access_key=local_stack.secret_access_key
    )
    token = lakefs_sdk.AuthApi(sdk(local_stack)).login(login_information=login)
    with_token = sdk(local_stack, token=token.token)
    assert lakefs_sdk.AuthApi(with_token).get_current_user().user.id == me
    assert lakefs_sdk.RepositoriesApi(with_token).list_repositories().pagination is not None
    assert status_of(lambda: lakefs_sdk.AuthApi(sdk(local_stack, token=token.token + "x")).get_current_user()) == 401
    assert status_of(lambda: lakefs_sdk.RepositoriesApi(sdk(local_stack)).list_repositories()) == 401
    wrong = lakefs_sdk.LoginInformation(access_key_id=local_stack.access_key_id, secret_access_key="wrong-secret")
    assert status_of(lambda: lakefs_sdk.AuthApi(sdk(local_stack)).login(login_information=wrong)) == 401


@pytest.mark.parametrize(("group", "can_write"), [("Developers", True), ("Viewers", False), (None, False)])
def test_roles_through_the_sdk(
    local_stack: LocalProcess, admin: lakefs_sdk.ApiClient, repo_id: str, group: str | None, can_write: bool
) -> None:
    auth = lakefs_sdk.AuthApi(admin)
    user_id = f"user-{uuid.uuid4().hex[:8]}"
    auth.create_user(lakefs_sdk.UserCreation(id=user_id))
    if group:
        auth.add_group_membership(group, user_id)
    key = auth.create_credentials(user_id)
    as_user = sdk(local_stack, key.access_key_id, key.secret_access_key)
    objects = lakefs_sdk.ObjectsApi(as_user)
    lakefs_sdk.ObjectsApi(admin).upload_object(repo_id, "main", "seed.txt", content=content(b"seed"))

    read = status_of(lambda: objects.get_object(repo_id, "main", "seed.txt"))
    write = status_of(lambda: objects.upload_object(repo_id, "main", "mine.txt", content=content(b"x")))
    assert read == (200 if group else 403)
    assert write == (200 if can_write else 403)
    listed = [o.path for o in lakefs_sdk.ObjectsApi(admin).list_objects(repo_id, "main").results]
    assert ("mine.txt" in listed) is can_write
    assert status_of(lambda: lakefs_sdk.AuthApi(as_user).list_users()) == 403
    auth.delete_user(user_id)
    assert status_of(lambda: objects.get_object(repo_id, "main", "seed.txt")) == 401


def test_scoped_policy(local_stack: LocalProcess, admin: lakefs_sdk.ApiClient, repo_id: str) -> None:
    auth = lakefs_sdk.AuthApi(admin)
    suffix = uuid.uuid4().hex[:8]
    statement = [
        lakefs_sdk.Statement(effect="allow", action=["fs:*"], resource=f"arn:lakefs:fs:::repository/{repo_id}/*"),
        lakefs_sdk.Statement(
            effect="allow", action=["fs:ReadRepository"], resource=f"arn:lakefs:fs:::repository/{repo_id}"
        ),
    ]
    auth.create_policy(lakefs_sdk.Policy(id=f"only-{suffix}", statement=statement))
    auth.create_user(lakefs_sdk.UserCreation(id=f"scoped-{suffix}"))
    auth.attach_policy_to_user(f"scoped-{suffix}", f"only-{suffix}")
    key = auth.create_credentials(f"scoped-{suffix}")
    objects = lakefs_sdk.ObjectsApi(sdk(local_stack, key.access_key_id, key.secret_access_key))
    assert objects.upload_object(repo_id, "main", "in-scope.txt", content=content(b"ok")).size_bytes == 2
    other = f"sdk-other-{suffix}"
    storage = lakefs_sdk.ConfigApi(admin).get_config().storage_config
    lakefs_sdk.RepositoriesApi(admin).create_repository(
        lakefs_sdk.RepositoryCreation(name=other, storage_namespace=f"{storage.default_namespace_prefix}/{other}")
    )
    assert status_of(lambda: objects.upload_object(other, "main", "out.txt", content=content(b"no"))) == 403


def test_presigned_upload_link_and_forgery(admin: lakefs_sdk.ApiClient, repo_id: str) -> None:
    staging = lakefs_sdk.StagingApi(admin)
    location = staging.get_physical_address(repo_id, "main", "big/file.bin", presign=True)
    assert location.presigned_url and location.presigned_url_expiry
    put = urllib3.PoolManager().request("PUT", location.presigned_url, body=b"0123456789")
    assert put.status == 200
    metadata = lakefs_sdk.StagingMetadata(
        staging=location, checksum=put.headers["ETag"].strip('"'), size_bytes=10, content_type="application/x-bin"
    )
    stats = staging.link_physical_address(repo_id, "main", "big/file.bin", metadata)
    # Linked from a copy at an address no presigned URL writes, so the committed bytes can never change.
    assert stats.size_bytes == 10 and stats.physical_address != location.physical_address
    data = lakefs_sdk.ObjectsApi(admin).get_object(repo_id, "main", "big/file.bin")
    assert bytes(data) == b"0123456789"
    # The same location linked to another path, or a made-up one: 400.
    assert status_of(lambda: staging.link_physical_address(repo_id, "main", "other.bin", metadata)) == 400
    forged = lakefs_sdk.StagingLocation(physical_address=location.physical_address.rsplit(".", 2)[0])
    forged_metadata = lakefs_sdk.StagingMetadata(staging=forged, checksum="x", size_bytes=10)
    assert status_of(lambda: staging.link_physical_address(repo_id, "main", "big/file.bin", forged_metadata)) == 400
    assert (
        status_of(lambda: staging.link_physical_address(repo_id, "main", "big/file.bin", metadata, if_none_match="*"))
        == 412
    )


def test_copy_head_commit_and_metadata(admin: lakefs_sdk.ApiClient, repo_id: str, local_stack: LocalProcess) -> None:
    objects = lakefs_sdk.ObjectsApi(admin)
    source = objects.upload_object(repo_id, "main", "src.txt", content=content(b"source"))
    copied = objects.copy_object(
        repo_id, "main", "dst.txt", lakefs_sdk.ObjectCopyCreation(src_path="src.txt", src_ref="main")
    )
    assert copied.physical_address == source.physical_address
    objects.head_object(repo_id, "main", "dst.txt")
    assert status_of(lambda: objects.head_object(repo_id, "main", "missing.txt")) == 404
    response = urllib3.PoolManager().request(
        "GET",
        f"{local_stack.api_url}/repositories/{repo_id}/refs/main/objects?path=src.txt",
        headers={
            **urllib3.make_headers(basic_auth=f"{local_stack.access_key_id}:{local_stack.secret_access_key}"),
            "If-None-Match": f'"{source.checksum}"',
        },
        redirect=False,
    )
    assert response.status == 304
    commit = lakefs_sdk.CommitsApi(admin).commit(repo_id, "main", lakefs_sdk.CommitCreation(message="copy"))
    fetched = lakefs_sdk.CommitsApi(admin).get_commit(repo_id, commit.id)
    assert fetched.message == "copy" and fetched.id == commit.id

    lakefs_sdk.InternalApi(admin).set_repository_metadata(
        repo_id, lakefs_sdk.RepositoryMetadataSet(metadata={"team": "data"})
    )
    assert lakefs_sdk.RepositoriesApi(admin).get_repository_metadata(repo_id) == {"team": "data"}
    lakefs_sdk.InternalApi(admin).delete_repository_metadata(repo_id, lakefs_sdk.RepositoryMetadataKeys(keys=["team"]))
    assert lakefs_sdk.RepositoriesApi(admin).get_repository_metadata(repo_id) == {}
