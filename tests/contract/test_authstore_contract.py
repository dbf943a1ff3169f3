"""AuthStore contract: the in-memory twin and DynamoAuthStore (on moto) behave the same: users, access keys,
groups and memberships, policies and attachments, server keys, revoked login tokens."""

from __future__ import annotations

import time

import boto3
import pytest

from chalicelib.adapters.dynamodb import DynamoAuthStore, TableNames
from chalicelib.auth import errors as auth_errors
from chalicelib.auth.conditions import Condition
from chalicelib.auth.errors import (
    GroupExists,
    GroupNotFound,
    PolicyExists,
    PolicyNotFound,
)
from chalicelib.auth.ports import AuthStore
from chalicelib.auth.records import (
    Credential,
    Effect,
    Group,
    Policy,
    Principal,
    PrincipalKind,
    Statement,
    User,
)
from chalicelib.graveler import errors

from .conftest import REGION


def make_credential(access_key_id: str, user_id: str, n: int = 0) -> Credential:
    return Credential(
        access_key_id=access_key_id,
        encrypted_secret=f"c2VhbGVk{n}-{access_key_id}",
        user_id=user_id,
        creation_date=1_700_000_000 + n,
    )


# users


def test_user_round_trip(auth_store: AuthStore) -> None:
    user = User(id="admin", creation_date=1_700_000_000)
    auth_store.create_user(user)
    assert auth_store.get_user("admin") == user


def test_create_existing_user_keeps_the_first(auth_store: AuthStore) -> None:
    auth_store.create_user(User(id="alice", creation_date=1))
    with pytest.raises(auth_errors.UserExists):
        auth_store.create_user(User(id="alice", creation_date=2))
    assert auth_store.get_user("alice") == User(id="alice", creation_date=1)


def test_get_missing_user(auth_store: AuthStore) -> None:
    with pytest.raises(auth_errors.UserNotFound):
        auth_store.get_user("nobody")


def test_list_users_sorted_and_paged(auth_store: AuthStore) -> None:
    ids = ["mallory", "alice", "bob", "Zed", "carol@example.com", "a#b", "élodie"]
    for n, user_id in enumerate(ids):
        auth_store.create_user(User(id=user_id, creation_date=n))
    # An access key must not show up as a user.
    auth_store.create_credential(make_credential("AKIAUSERLIST", "alice"))
    expected = sorted(ids)
    listed = auth_store.list_users()
    assert [u.id for u in listed] == expected
    assert all(u.creation_date == ids.index(u.id) for u in listed)
    assert [u.id for u in auth_store.list_users(limit=2)] == expected[:2]
    assert [u.id for u in auth_store.list_users(after="alice", limit=2)] == ["bob", "carol@example.com"]
    assert auth_store.list_users(after="élodie") == []
    seen: list[str] = []
    after = ""
    while page := auth_store.list_users(after=after, limit=3):
        seen.extend(u.id for u in page)
        after = page[-1].id
    assert seen == expected


def test_no_users(auth_store: AuthStore) -> None:
    assert auth_store.list_users() == []


# access keys


def test_credential_round_trip(auth_store: AuthStore) -> None:
    credential = make_credential("AKIAIOSFODNN7EXAMPLE", "admin", 3)
    auth_store.create_credential(credential)
    assert auth_store.get_credential("AKIAIOSFODNN7EXAMPLE") == credential


def test_create_existing_credential_keeps_the_first(auth_store: AuthStore) -> None:
    first = make_credential("AKIADUP", "alice", 1)
    auth_store.create_credential(first)
    with pytest.raises(errors.AlreadyExists):
        auth_store.create_credential(make_credential("AKIADUP", "alice", 2))
    with pytest.raises(errors.AlreadyExists):
        auth_store.create_credential(make_credential("AKIADUP", "bob", 3))
    assert auth_store.get_credential("AKIADUP") == first
    assert auth_store.list_credentials("alice") == [first]
    assert auth_store.list_credentials("bob") == []


def test_get_missing_credential(auth_store: AuthStore) -> None:
    with pytest.raises(auth_errors.CredentialNotFound):
        auth_store.get_credential("AKIANOPE")


def test_list_credentials_of_one_user_sorted(auth_store: AuthStore) -> None:
    alice = [make_credential(akid, "alice", n) for n, akid in enumerate(["AKIAC", "AKIAA", "AKIAB"])]
    bob = [make_credential("AKIAZ", "bob"), make_credential("AKIAD", "bob")]
    # "a" and "a#b" must not see each other's keys whatever the storage layout.
    prefixed = [make_credential("AKIAP", "a"), make_credential("AKIAQ", "a#b")]
    for credential in alice + bob + prefixed:
        auth_store.create_credential(credential)
    assert auth_store.list_credentials("alice") == sorted(alice, key=lambda c: c.access_key_id)
    assert auth_store.list_credentials("bob") == sorted(bob, key=lambda c: c.access_key_id)
    assert auth_store.list_credentials("a") == [prefixed[0]]
    assert auth_store.list_credentials("a#b") == [prefixed[1]]
    assert auth_store.list_credentials("nobody") == []


def test_delete_credential(auth_store: AuthStore) -> None:
    keep, drop = make_credential("AKIAKEEP", "alice"), make_credential("AKIADROP", "alice")
    auth_store.create_credential(keep)
    auth_store.create_credential(drop)
    auth_store.delete_credential("AKIADROP")
    with pytest.raises(auth_errors.CredentialNotFound):
        auth_store.get_credential("AKIADROP")
    assert auth_store.list_credentials("alice") == [keep]
    with pytest.raises(auth_errors.CredentialNotFound):
        auth_store.delete_credential("AKIADROP")
    # The key id is free again, for anyone.
    again = make_credential("AKIADROP", "bob", 9)
    auth_store.create_credential(again)
    assert auth_store.get_credential("AKIADROP") == again
    assert auth_store.list_credentials("bob") == [again]
    assert auth_store.list_credentials("alice") == [keep]


def test_delete_missing_credential(auth_store: AuthStore) -> None:
    with pytest.raises(auth_errors.CredentialNotFound):
        auth_store.delete_credential("AKIANOPE")


def test_delete_user(auth_store: AuthStore) -> None:
    auth_store.create_user(User(id="alice", creation_date=1))
    auth_store.create_user(User(id="bob", creation_date=2))
    auth_store.delete_user("alice")
    with pytest.raises(auth_errors.UserNotFound):
        auth_store.get_user("alice")
    with pytest.raises(auth_errors.UserNotFound):
        auth_store.delete_user("alice")
    assert [u.id for u in auth_store.list_users()] == ["bob"]


# groups and memberships


def test_groups_round_trip_sorted_and_paged(auth_store: AuthStore) -> None:
    ids = ["Viewers", "Admins", "data-eng", "Developers", "a#b"]
    for n, group_id in enumerate(ids):
        auth_store.create_group(Group(group_id, 100 + n, f"about {group_id}" if n % 2 else ""))
    assert auth_store.get_group("data-eng") == Group("data-eng", 102, "")
    assert auth_store.get_group("Admins") == Group("Admins", 101, "about Admins")
    with pytest.raises(GroupExists):
        auth_store.create_group(Group("Admins", 999))
    assert auth_store.get_group("Admins").creation_date == 101
    assert [g.id for g in auth_store.list_groups()] == sorted(ids)
    assert [g.id for g in auth_store.list_groups(after="Admins", limit=2)] == sorted(ids)[1:3]
    # Groups and users live side by side without showing up in each other's listings.
    auth_store.create_user(User("Admins", 1))
    assert [u.id for u in auth_store.list_users()] == ["Admins"]
    assert len(auth_store.list_groups()) == len(ids)


def test_missing_and_deleted_groups(auth_store: AuthStore) -> None:
    with pytest.raises(GroupNotFound):
        auth_store.get_group("nope")
    with pytest.raises(GroupNotFound):
        auth_store.delete_group("nope")
    auth_store.create_group(Group("temp", 1))
    auth_store.delete_group("temp")
    with pytest.raises(GroupNotFound):
        auth_store.get_group("temp")
    assert auth_store.list_groups() == []


def test_memberships_are_sets_seen_from_both_sides(auth_store: AuthStore) -> None:
    auth_store.add_group_member("Developers", "bob")
    auth_store.add_group_member("Developers", "alice")
    auth_store.add_group_member("Developers", "alice")  # twice is once
    auth_store.add_group_member("Viewers", "alice")
    auth_store.add_group_member("Viewers#x", "alice#x")
    assert auth_store.list_group_members("Developers") == ["alice", "bob"]
    assert auth_store.list_user_groups("alice") == ["Developers", "Viewers"]
    assert auth_store.list_user_groups("alice#x") == ["Viewers#x"]
    assert auth_store.list_group_members("Viewers") == ["alice"]
    auth_store.remove_group_member("Developers", "alice")
    auth_store.remove_group_member("Developers", "alice")  # not a member any more: no error
    auth_store.remove_group_member("Nobody", "nobody")
    assert auth_store.list_group_members("Developers") == ["bob"]
    assert auth_store.list_user_groups("alice") == ["Viewers"]
    assert auth_store.list_user_groups("carol") == []


def test_memberships_do_not_mix_with_access_keys(auth_store: AuthStore) -> None:
    auth_store.create_credential(make_credential("AKIAMIX", "alice"))
    auth_store.add_group_member("Viewers", "alice")
    auth_store.attach_policy(Principal(PrincipalKind.USER, "alice"), "FSReadAll")
    assert [c.access_key_id for c in auth_store.list_credentials("alice")] == ["AKIAMIX"]
    assert auth_store.list_user_groups("alice") == ["Viewers"]
    assert auth_store.list_attached_policies(Principal(PrincipalKind.USER, "alice")) == ["FSReadAll"]


# policies and attachments


def make_policy(policy_id: str, n: int = 0, resource: str = "*") -> Policy:
    return Policy(
        policy_id,
        1_700_000_000 + n,
        (
            Statement(Effect.ALLOW, ("fs:Read*", "fs:List*"), resource),
            Statement(Effect.DENY, ("fs:DeleteRepository",), "arn:lakefs:fs:::repository/prod"),
        ),
    )


def test_policies_round_trip_update_and_delete(auth_store: AuthStore) -> None:
    policy = make_policy("FSReadAll")
    auth_store.create_policy(policy)
    assert auth_store.get_policy("FSReadAll") == policy
    with pytest.raises(PolicyExists):
        auth_store.create_policy(make_policy("FSReadAll", 5))
    changed = make_policy("FSReadAll", 7, "arn:lakefs:fs:::repository/sales/*")
    auth_store.update_policy(changed)
    assert auth_store.get_policy("FSReadAll") == changed
    with pytest.raises(PolicyNotFound):
        auth_store.update_policy(make_policy("Missing"))
    with pytest.raises(PolicyNotFound):
        auth_store.get_policy("Missing")
    auth_store.delete_policy("FSReadAll")
    with pytest.raises(PolicyNotFound):
        auth_store.delete_policy("FSReadAll")
    assert auth_store.list_policies() == []


def test_statement_conditions_round_trip(auth_store: AuthStore) -> None:
    conditions = (
        Condition("IpAddress", "SourceIp", ("10.0.0.0/8", "192.168.1.7")),
        Condition("NotIpAddress", "SourceIp", ("10.9.0.0/16",)),
    )
    policy = Policy("Office", 1_700_000_000, (Statement(Effect.ALLOW, ("fs:*",), "*", conditions),))
    auth_store.create_policy(policy)
    assert auth_store.get_policy("Office") == policy


def test_list_and_batch_get_policies(auth_store: AuthStore) -> None:
    ids = [f"policy-{n:03d}" for n in range(120)]  # more than one DynamoDB batch
    for n, policy_id in enumerate(reversed(ids)):
        auth_store.create_policy(make_policy(policy_id, n))
    assert [p.id for p in auth_store.list_policies()] == ids
    assert [p.id for p in auth_store.list_policies(after="policy-010", limit=3)] == ids[11:14]
    wanted = ids[::-1] + ["missing", ids[0]]
    assert [p.id for p in auth_store.get_policies(wanted)] == ids
    assert auth_store.get_policies([]) == []


def test_attachments_from_both_sides(auth_store: AuthStore) -> None:
    alice, devs = Principal(PrincipalKind.USER, "alice"), Principal(PrincipalKind.GROUP, "alice")
    auth_store.attach_policy(devs, "FSReadWriteAll")
    auth_store.attach_policy(devs, "AuthManageOwnCredentials")
    auth_store.attach_policy(alice, "FSReadWriteAll")
    auth_store.attach_policy(alice, "FSReadWriteAll")
    # A user and a group of the same name are different principals.
    assert auth_store.list_attached_policies(devs) == ["AuthManageOwnCredentials", "FSReadWriteAll"]
    assert auth_store.list_attached_policies(alice) == ["FSReadWriteAll"]
    assert auth_store.list_policy_principals("FSReadWriteAll") == [devs, alice]
    auth_store.detach_policy(devs, "FSReadWriteAll")
    auth_store.detach_policy(devs, "FSReadWriteAll")
    assert auth_store.list_attached_policies(devs) == ["AuthManageOwnCredentials"]
    assert auth_store.list_policy_principals("FSReadWriteAll") == [alice]
    assert auth_store.list_policy_principals("nothing") == []


def test_server_keys_are_put_if_absent(auth_store: AuthStore) -> None:
    with pytest.raises(errors.NotFound):
        auth_store.get_server_key("signing")
    auth_store.create_server_key("signing", "c2VhbGVkLWtleQ==")
    with pytest.raises(errors.AlreadyExists):
        auth_store.create_server_key("signing", "b3RoZXI=")
    assert auth_store.get_server_key("signing") == "c2VhbGVkLWtleQ=="


# revoked login tokens


def test_a_revoked_token_is_seen_by_every_store_on_the_same_data(
    auth_store: AuthStore, table_names: TableNames | None
) -> None:
    # Another container's store: a second adapter on the same tables (the twin has only itself).
    elsewhere = auth_store if table_names is None else DynamoAuthStore(table_names, REGION)
    assert not auth_store.is_token_revoked("jti-1")
    auth_store.revoke_token("jti-1", expires=int(time.time()) + 3600)
    auth_store.revoke_token("jti-1", expires=int(time.time()) + 3600)  # a second logout changes nothing
    assert elsewhere.is_token_revoked("jti-1")
    assert not elsewhere.is_token_revoked("jti-2")
    assert not elsewhere.is_token_revoked("jti-")


def test_a_revocation_lives_until_its_token_expires(auth_store: AuthStore, table_names: TableNames | None) -> None:
    expires = int(time.time()) + 600
    auth_store.revoke_token("jti-ttl", expires)
    assert auth_store.is_token_revoked("jti-ttl")
    if table_names is None:
        return
    # On DynamoDB the row carries the token's expiry in the attribute the table's TTL deletes it by.
    client = boto3.client("dynamodb", region_name=REGION)
    ttl = client.describe_time_to_live(TableName=table_names.auth)["TimeToLiveDescription"]
    assert ttl == {"TimeToLiveStatus": "ENABLED", "AttributeName": "expires_at"}
    item = client.get_item(TableName=table_names.auth, Key={"pk": {"S": "revoked#jti-ttl"}, "sk": {"S": "token"}})
    assert item["Item"]["expires_at"] == {"N": str(expires)}
