"""The answers without a body that lakectl tripped on (issue 40: update-metadata's 204, the 201s of a group member
and of policy attachments), taken over real HTTP by the official lakefs-sdk client: it still accepts them, the
change is made, and none is typed JSON."""

from __future__ import annotations

import http.client
from collections.abc import Iterator

import lakefs_sdk
import pytest

from chalicelib import wiring
from lakelet.stack.devserver import ApiServer

from .support import Api, app, basic


@pytest.fixture
def server(services: wiring.Services) -> Iterator[ApiServer]:
    served = ApiServer(app, port=0)
    served.start()
    yield served
    served.stop()


@pytest.fixture
def sdk(server: ApiServer, credentials: tuple[str, str]) -> lakefs_sdk.ApiClient:
    key, secret = credentials
    return lakefs_sdk.ApiClient(lakefs_sdk.Configuration(host=server.url + "/api/v1", username=key, password=secret))


def test_the_sdk_takes_the_empty_answers(api: Api, repo: str, sdk: lakefs_sdk.ApiClient) -> None:
    api.upload(repo, "main", "a.txt", b"a")
    objects = lakefs_sdk.ObjectsApi(sdk)
    metadata = lakefs_sdk.UpdateObjectUserMetadata(set={"owner": "data-team"})
    answer = objects.update_object_user_metadata_with_http_info(repo, "main", "a.txt", metadata)
    assert answer.status_code == 204
    assert objects.stat_object(repo, "main", "a.txt").metadata == {"owner": "data-team"}

    auth = lakefs_sdk.AuthApi(sdk)
    auth.create_user(lakefs_sdk.UserCreation(id="bob"))
    auth.create_group(lakefs_sdk.GroupCreation(id="team"))
    statement = lakefs_sdk.Statement(effect="allow", action=["fs:ReadObject"], resource="*")
    auth.create_policy(lakefs_sdk.Policy(id="readers", statement=[statement]))
    assert auth.add_group_membership_with_http_info("team", "bob").status_code == 201
    assert auth.attach_policy_to_user_with_http_info("bob", "readers").status_code == 201
    assert auth.attach_policy_to_group_with_http_info("team", "readers").status_code == 201
    assert [u.id for u in auth.list_group_members("team").results] == ["bob"]
    assert [p.id for p in auth.list_user_policies("bob").results] == ["readers"]
    assert [p.id for p in auth.list_group_policies("team").results] == ["readers"]


def test_no_empty_answer_is_typed_json_on_the_wire(
    server: ApiServer, credentials: tuple[str, str], api: Api, repo: str
) -> None:
    """What lakectl's generated client trips on: it parses any answer typed JSON, and an empty one fails."""
    api.post("/auth/users", json_body={"id": "bob"})
    api.post("/auth/groups", json_body={"id": "team"})
    connection = http.client.HTTPConnection(server.url.removeprefix("http://"), timeout=30)
    try:
        connection.request(
            "PUT", "/api/v1/auth/groups/team/members/bob", headers={"Authorization": basic(*credentials)}
        )
        response = connection.getresponse()
        assert (response.status, response.read(), response.getheader("content-type")) == (201, b"", None)
    finally:
        connection.close()
