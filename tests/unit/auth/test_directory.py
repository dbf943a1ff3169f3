"""Directory, Authorizer and the AuthService around them: built-in groups, deletes that leave no dangling
grants, cache invalidation, the server key and login tokens."""

from __future__ import annotations

import pytest

from chalicelib.adapters.memory import MemoryAuthStore, MemoryCipher
from chalicelib.auth import builtin
from chalicelib.auth import errors as auth_errors
from chalicelib.auth.errors import (
    DecryptionFailed,
    GroupNotFound,
    PermissionDenied,
    PolicyExists,
    PolicyNotFound,
)
from chalicelib.auth.policies import Permission, object_arn, repository_arn
from chalicelib.auth.records import Effect, Principal, PrincipalKind, Statement
from chalicelib.auth.service import AuthService
from chalicelib.graveler import errors

from .support import Clock

READ = Permission("fs:ReadObject", object_arn("repo", "k"))
WRITE = Permission("fs:WriteObject", object_arn("repo", "k"))


@pytest.fixture
def store() -> MemoryAuthStore:
    return MemoryAuthStore()


@pytest.fixture
def cipher() -> MemoryCipher:
    return MemoryCipher()


@pytest.fixture
def auth(store: MemoryAuthStore, cipher: MemoryCipher, clock: Clock) -> AuthService:
    service = AuthService(store, cipher, clock)
    service.setup("admin")
    return service


def user(auth: AuthService, user_id: str, *groups: str) -> None:
    auth.directory.create_user(user_id)
    for group in groups:
        auth.directory.add_member(group, user_id)


def test_setup_installs_the_builtin_groups_and_makes_an_admin(auth: AuthService, store: MemoryAuthStore) -> None:
    assert [g.id for g in auth.directory.list_groups().results] == ["Admins", "Developers", "SuperUsers", "Viewers"]
    assert {p.id for p in auth.directory.list_policies().results} == set(builtin.POLICY_STATEMENTS)
    assert store.list_user_groups("admin") == ["Admins"]
    assert [p.id for p in auth.directory.effective_policies("admin")] == [
        "AuthFullAccess",
        "FSFullAccess",
        "RepoManagementFullAccess",
    ]
    auth.authorize(auth.directory.get_user("admin"), [WRITE, Permission("auth:DeleteUser", "*")])


def test_install_is_idempotent_and_keeps_edits(auth: AuthService, store: MemoryAuthStore, clock: Clock) -> None:
    viewers = Principal(PrincipalKind.GROUP, "Viewers")
    auth.directory.detach(viewers, "AuthManageOwnCredentials")
    builtin.install(store, clock)
    assert store.list_attached_policies(viewers) == ["FSReadAll"]
    auth.directory.update_policy("FSReadAll", [Statement(Effect.ALLOW, ("fs:ReadObject",), "*")])
    builtin.install(store, clock)
    assert auth.directory.get_policy("FSReadAll").statements[0].actions == ("fs:ReadObject",)


def test_roles(auth: AuthService) -> None:
    for name, group in (("dev", "Developers"), ("viewer", "Viewers"), ("nobody", None)):
        user(auth, name, *([group] if group else []))
    dev, viewer, nobody = (auth.directory.get_user(n) for n in ("dev", "viewer", "nobody"))
    auth.authorize(dev, [READ, WRITE])
    auth.authorize(viewer, [READ])
    with pytest.raises(PermissionDenied, match="fs:WriteObject"):
        auth.authorize(viewer, [WRITE])
    with pytest.raises(PermissionDenied):
        auth.authorize(nobody, [READ])


def test_changes_apply_at_once_in_this_container(auth: AuthService) -> None:
    user(auth, "carol", "Viewers")
    carol = auth.directory.get_user("carol")
    with pytest.raises(PermissionDenied):
        auth.authorize(carol, [WRITE])  # now cached
    auth.directory.add_member("Developers", "carol")
    auth.authorize(carol, [WRITE])
    auth.directory.remove_member("Developers", "carol")
    with pytest.raises(PermissionDenied):
        auth.authorize(carol, [WRITE])
    auth.directory.create_policy(
        "repo-writer", [Statement(Effect.ALLOW, ("fs:WriteObject",), repository_arn("repo") + "/*")]
    )
    auth.directory.attach(Principal(PrincipalKind.USER, "carol"), "repo-writer")
    auth.authorize(carol, [WRITE])
    with pytest.raises(PermissionDenied):
        auth.authorize(carol, [Permission("fs:WriteObject", object_arn("other", "k"))])
    auth.directory.update_policy("repo-writer", [Statement(Effect.DENY, ("fs:*",), "*")])
    with pytest.raises(PermissionDenied):
        auth.authorize(carol, [READ])


def test_other_containers_see_changes_within_the_ttl(
    auth: AuthService, store: MemoryAuthStore, cipher: MemoryCipher, clock: Clock
) -> None:
    user(auth, "dave", "Viewers")
    elsewhere = AuthService(store, cipher, clock)
    dave = auth.directory.get_user("dave")
    with pytest.raises(PermissionDenied):
        elsewhere.authorize(dave, [WRITE])
    auth.directory.add_member("Developers", "dave")
    with pytest.raises(PermissionDenied):
        elsewhere.authorize(dave, [WRITE])  # still cached there
    clock.now += 21
    elsewhere.authorize(dave, [WRITE])


def test_deleting_a_user_removes_its_keys_memberships_and_policies(auth: AuthService, store: MemoryAuthStore) -> None:
    user(auth, "erin", "Developers", "Viewers")
    auth.directory.attach(Principal(PrincipalKind.USER, "erin"), "FSFullAccess")
    credential, secret = auth.create_credentials("erin")
    assert auth.authenticate_basic(credential.access_key_id, secret).id == "erin"
    token = auth.login(credential.access_key_id, secret, 60).value
    assert auth.authenticate_token(token).id == "erin"
    auth.directory.delete_user("erin")
    with pytest.raises(errors.Unauthorized):
        auth.authenticate_basic(credential.access_key_id, secret)
    with pytest.raises(errors.Unauthorized):
        auth.authenticate_token(token)
    assert store.list_credentials("erin") == []
    assert store.list_group_members("Developers") == []
    assert store.list_policy_principals("FSFullAccess") == [
        Principal(PrincipalKind.GROUP, "Admins"),
        Principal(PrincipalKind.GROUP, "SuperUsers"),
    ]
    # A new user of the same name starts with nothing.
    auth.directory.create_user("erin")
    with pytest.raises(PermissionDenied):
        auth.authorize(auth.directory.get_user("erin"), [READ])


def test_deleting_groups_and_policies_detaches_them(auth: AuthService, store: MemoryAuthStore) -> None:
    user(auth, "frank", "Developers")
    auth.directory.delete_group("Developers")
    assert store.list_user_groups("frank") == []
    with pytest.raises(GroupNotFound):
        auth.directory.get_group("Developers")
    auth.directory.delete_policy("FSReadAll")
    assert store.list_attached_policies(Principal(PrincipalKind.GROUP, "Viewers")) == ["AuthManageOwnCredentials"]
    auth.directory.create_policy("FSReadAll", [Statement(Effect.ALLOW, ("fs:*",), "*")])
    assert store.list_policy_principals("FSReadAll") == []  # re-created: attached to nobody


def test_directory_errors(auth: AuthService) -> None:
    d = auth.directory
    with pytest.raises(auth_errors.UserExists):
        d.create_user("admin")
    for bad in ("", "has space", "a/b", "a:b", "x" * 300):
        with pytest.raises(errors.Invalid):
            d.create_user(bad)
    with pytest.raises(auth_errors.UserNotFound):
        d.add_member("Viewers", "ghost")
    with pytest.raises(GroupNotFound):
        d.add_member("Ghosts", "admin")
    with pytest.raises(auth_errors.UserNotFound):
        d.remove_member("Viewers", "admin")  # not a member
    with pytest.raises(PolicyNotFound):
        d.attach(Principal(PrincipalKind.USER, "admin"), "NoSuchPolicy")
    with pytest.raises(PolicyNotFound):
        d.detach(Principal(PrincipalKind.USER, "admin"), "FSReadAll")  # not attached
    with pytest.raises(PolicyExists):
        d.create_policy("FSReadAll", [Statement(Effect.ALLOW, ("fs:*",), "*")])
    with pytest.raises(errors.Invalid):
        d.create_policy("bad", [Statement(Effect.ALLOW, ("s3:GetObject",), "*")])
    with pytest.raises(errors.Invalid):
        d.create_policy("empty", [])


def test_listings_page_with_prefix_and_after(auth: AuthService) -> None:
    for name in ("ann", "anna", "bob", "annie", "zed"):
        auth.directory.create_user(name)
    first = auth.directory.list_users(prefix="ann", amount=2)
    assert [u.id for u in first.results] == ["ann", "anna"] and first.has_more and first.next_offset == "anna"
    rest = auth.directory.list_users(prefix="ann", after="anna", amount=2)
    assert [u.id for u in rest.results] == ["annie"] and not rest.has_more
    assert [u.id for u in auth.directory.list_users(after="bob").results] == ["zed"]


def test_the_server_key_is_made_once_and_shared(store: MemoryAuthStore, cipher: MemoryCipher, clock: Clock) -> None:
    one, two = AuthService(store, cipher, clock), AuthService(store, cipher, clock)
    one.setup("admin", "AKIASHARED", "shared-secret-1")
    token = one.login("AKIASHARED", "shared-secret-1", 60).value
    assert two.authenticate_token(token).id == "admin"
    signed = one.address_signer().sign("r", "b", "p", "s3://x/y")
    assert two.address_signer().verify("r", "b", "p", signed) == signed
    # Stored sealed: the raw key is not in the store.
    stored = store.get_server_key("master")
    assert len(stored) > 40
    # Another cipher (another KMS key) cannot read it.
    with pytest.raises(DecryptionFailed):
        AuthService(store, MemoryCipher(), clock).token_signer()
    # Login and purposes use different keys: a token is not an address signature and vice versa.
    assert one.token_signer()._key != one.address_signer()._key


def test_login_checks_the_key_pair(auth: AuthService) -> None:
    credential, secret = auth.create_credentials("admin")
    with pytest.raises(errors.Unauthorized):
        auth.login(credential.access_key_id, secret + "x", 60)
    with pytest.raises(errors.Unauthorized):
        auth.authenticate_token("garbage")
