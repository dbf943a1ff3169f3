"""Health, first-time setup, the current user and the configuration the clients read first."""

from __future__ import annotations

import lakefs_sdk
import pytest
from chalice.test import Client

from chalicelib import wiring
from chalicelib.settings import Settings

from .support import BUCKET, Api, assert_error, body_of, conforms


def test_healthcheck_is_204_without_credentials(anonymous: Api) -> None:
    response = anonymous.get("/healthcheck")
    assert response.status_code == 204 and response.body == b""


def test_setup_flow(anonymous: Api, client: Client) -> None:
    state = body_of(anonymous.get("/setup_lakefs"))
    assert conforms(lakefs_sdk.SetupState, state).state == "not_initialized"

    response = anonymous.post("/setup_lakefs", json_body={"username": "admin"})
    assert response.status_code == 200
    created = conforms(lakefs_sdk.CredentialsWithSecret, body_of(response))
    assert created.access_key_id.startswith("AKIAJ") and len(created.secret_access_key) == 40

    assert body_of(anonymous.get("/setup_lakefs"))["state"] == "initialized"
    me = Api(client, (created.access_key_id, created.secret_access_key)).get("/user")
    assert conforms(lakefs_sdk.CurrentUser, body_of(me)).user.id == "admin"
    # As lakeFS's store reads a user back: a friendly name and an email, empty when never set.
    assert set(body_of(me)["user"]) == {"id", "creation_date", "friendly_name", "email"}
    assert (body_of(me)["user"]["friendly_name"], body_of(me)["user"]["email"]) == ("", "")

    again = anonymous.post("/setup_lakefs", json_body={"username": "someone-else"})
    assert_error(again, 409)


def test_setup_with_a_given_key(anonymous: Api, client: Client) -> None:
    key = {"access_key_id": "AKIAIOSFODNN7EXAMPLE", "secret_access_key": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}
    response = anonymous.post("/setup_lakefs", json_body={"username": "jane", "key": key})
    assert response.status_code == 200
    created = conforms(lakefs_sdk.CredentialsWithSecret, body_of(response))
    assert (created.access_key_id, created.secret_access_key) == (key["access_key_id"], key["secret_access_key"])
    assert body_of(Api(client, tuple(key.values())).get("/user"))["user"]["id"] == "jane"  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"username": ""},
        {"username": 7},
        {"username": "admin", "key": "AKIA"},
        {"username": "admin", "key": {"access_key_id": "AKIAIOSFODNN7EXAMPLE"}},
        {"username": "admin", "key": {"access_key_id": "bad:id", "secret_access_key": "long-enough-secret"}},
        ["admin"],
    ],
)
def test_setup_refuses_bad_bodies(anonymous: Api, body: object) -> None:
    assert_error(anonymous.post("/setup_lakefs", json_body=body), 400)
    assert body_of(anonymous.get("/setup_lakefs"))["state"] == "not_initialized"


def test_setup_refuses_bad_json(anonymous: Api) -> None:
    assert_error(anonymous.post("/setup_lakefs", body=b"{not json", headers={"content-type": "application/json"}), 400)
    assert_error(anonymous.post("/setup_lakefs"), 400)


def test_config(api: Api) -> None:
    config = conforms(lakefs_sdk.Config, body_of(api.get("/config")))
    storage = config.storage_config
    assert storage.blockstore_type == "s3"
    assert storage.pre_sign_support is True and storage.pre_sign_support_ui is False
    assert storage.import_support is True
    assert storage.default_namespace_prefix == f"s3://{BUCKET}"
    assert config.version_config.version
    assert conforms(lakefs_sdk.StorageConfig, body_of(api.get("/config/storage"))) == storage
    assert conforms(lakefs_sdk.VersionConfig, body_of(api.get("/config/version"))) == config.version_config


def test_config_reports_presign_support_from_settings(client: Client) -> None:
    services = wiring.memory_services(Settings(bucket="other-bucket", pre_sign_support=False))
    wiring.set_services(services)
    try:
        credential, secret = services.auth.setup("admin")
        storage = body_of(Api(client, (credential.access_key_id, secret)).get("/config"))["storage_config"]
        assert storage["pre_sign_support"] is False
        assert storage["default_namespace_prefix"] == "s3://other-bucket"
    finally:
        wiring.set_services(None)


def test_the_official_client_reads_the_config(api: Api) -> None:
    # What lakefs.Client does first: Config through the SDK's own deserializer.
    from lakefs.client import ServerConfiguration

    class FakeSdk:
        class config_api:
            @staticmethod
            def get_config() -> lakefs_sdk.Config:
                return lakefs_sdk.Config.from_json(api.get("/config").body.decode())

    class FakeClient:
        sdk_client = FakeSdk

    server = ServerConfiguration(FakeClient())  # type: ignore[arg-type]
    assert server.storage_config.blockstore_type == "s3"
    assert server.version


def test_each_official_client_keeps_its_own_servers_storage(api: Api) -> None:
    # tests/conftest.py gives each lakefs ServerConfiguration its own dict: without it, reading a second server's
    # /config changed what the first Client answered (its repositories then went to the other server's bucket).
    from lakefs.client import ServerConfiguration

    def client_of(prefix: str) -> object:
        config = lakefs_sdk.Config.from_json(api.get("/config").body.decode())
        assert config.storage_config is not None
        config.storage_config.default_namespace_prefix = prefix

        class FakeSdk:
            class config_api:
                @staticmethod
                def get_config() -> lakefs_sdk.Config:
                    return config

        class FakeClient:
            sdk_client = FakeSdk

        return FakeClient()

    first = ServerConfiguration(client_of("s3://first-bucket"))  # type: ignore[arg-type]
    second = ServerConfiguration(client_of("s3://second-bucket"))  # type: ignore[arg-type]
    assert first.storage_config.default_namespace_prefix == "s3://first-bucket"
    assert second.storage_config.default_namespace_prefix == "s3://second-bucket"
