"""``lakelet auth users|groups|policies ...`` as lakectl: create, list, delete, attach/detach, credentials."""

import json
from pathlib import Path
from typing import Annotated

import typer

from lakelet.commands.api import Api, q
from lakelet.commands.common import AfterOpt, AmountOpt, JsonOpt, PrefixOpt
from lakelet.commands.context import api, emit, emit_table, want_json
from lakelet.commands.errors import CLIError
from lakelet.commands.output import out, timestamp

app = typer.Typer(no_args_is_help=True)
users = typer.Typer(no_args_is_help=True, help="users")
groups = typer.Typer(no_args_is_help=True, help="groups")
policies = typer.Typer(no_args_is_help=True, help="policies")
user_credentials = typer.Typer(no_args_is_help=True, help="a user's access keys")
user_policies = typer.Typer(no_args_is_help=True, help="policies attached to a user")
user_groups = typer.Typer(no_args_is_help=True, help="a user's groups")
group_members = typer.Typer(no_args_is_help=True, help="a group's members")
group_policies = typer.Typer(no_args_is_help=True, help="policies attached to a group")
app.add_typer(users, name="users")
app.add_typer(groups, name="groups")
app.add_typer(policies, name="policies")
users.add_typer(user_credentials, name="credentials")
users.add_typer(user_policies, name="policies")
users.add_typer(user_groups, name="groups")
groups.add_typer(group_members, name="members")
groups.add_typer(group_policies, name="policies")

Id = Annotated[str, typer.Option("--id", help="the user, group or policy id")]
UserOpt = Annotated[str, typer.Option("--user", help="user id")]
PolicyOpt = Annotated[str, typer.Option("--policy", help="policy id")]
UserOrMe = Annotated[str | None, typer.Option("--id", help="user id (default: you)")]


def _id_and_date(item: object) -> tuple[str, str]:
    return item.id, timestamp(item.creation_date)  # type: ignore[attr-defined]


def _user_or_me(a: Api, id: str | None) -> str:
    return id or a.call("read the current user", a.auth.get_current_user).user.id


# --- users ----------------------------------------------------------------------------------------------------


@users.command("create")
def user_create(id: Id, json_out: JsonOpt = False) -> None:
    import lakefs_sdk

    a = api()
    user = a.call(f"create user {id}", a.auth.create_user, lakefs_sdk.UserCreation(id=id))
    emit(user, f"User: {user.id}", json_out)


@users.command("list")
def user_list(
    amount: AmountOpt = None, after: AfterOpt = "", prefix: PrefixOpt = "", json_out: JsonOpt = False
) -> None:
    a = api()
    listing = a.sdk_pages("list users", a.auth.list_users, after=after, limit=amount, prefix=prefix or None)
    emit_table(listing, json_out, ["USER ID", "CREATION DATE"], _id_and_date)


@users.command("delete")
def user_delete(id: Id) -> None:
    a = api()
    a.call(f"delete user {id}", a.auth.delete_user, id)
    out().line(f"User deleted: {id}")


@user_credentials.command("create")
def credentials_create(id: UserOrMe = None, json_out: JsonOpt = False) -> None:
    a = api()
    user = _user_or_me(a, id)
    creds = a.call(f"create credentials for {user}", a.auth.create_credentials, user)
    emit(creds, f"Access key ID: {creds.access_key_id}\nSecret access key: {creds.secret_access_key}", json_out)


@user_credentials.command("list")
def credentials_list(
    id: UserOrMe = None,
    amount: AmountOpt = None,
    after: AfterOpt = "",
    prefix: PrefixOpt = "",
    json_out: JsonOpt = False,
) -> None:
    a = api()
    user = _user_or_me(a, id)
    emit_table(
        a.sdk_pages(
            f"list credentials of {user}",
            a.auth.list_user_credentials,
            user,
            after=after,
            limit=amount,
            prefix=prefix or None,
        ),
        json_out,
        ["ACCESS KEY ID", "ISSUED DATE"],
        lambda c: (c.access_key_id, timestamp(c.creation_date)),
    )


@user_credentials.command("delete")
def credentials_delete(
    access_key_id: Annotated[str, typer.Option("--access-key-id", help="the key to delete")], id: UserOrMe = None
) -> None:
    a = api()
    user = _user_or_me(a, id)
    a.call(f"delete credentials {access_key_id}", a.auth.delete_credentials, user, access_key_id)
    out().line(f"Credentials deleted: {access_key_id}")


@user_groups.command("list")
def user_group_list(
    id: Id, amount: AmountOpt = None, after: AfterOpt = "", prefix: PrefixOpt = "", json_out: JsonOpt = False
) -> None:
    a = api()
    emit_table(
        a.sdk_pages(
            f"list groups of user {id}", a.auth.list_user_groups, id, after=after, limit=amount, prefix=prefix or None
        ),
        json_out,
        ["GROUP ID", "CREATION DATE"],
        _id_and_date,
    )


# --- groups ---------------------------------------------------------------------------------------------------


@groups.command("create")
def group_create(id: Id, json_out: JsonOpt = False) -> None:
    import lakefs_sdk

    a = api()
    group = a.call(f"create group {id}", a.auth.create_group, lakefs_sdk.GroupCreation(id=id))
    emit(group, f"Group: {group.id}", json_out)


@groups.command("list")
def group_list(
    amount: AmountOpt = None, after: AfterOpt = "", prefix: PrefixOpt = "", json_out: JsonOpt = False
) -> None:
    a = api()
    listing = a.sdk_pages("list groups", a.auth.list_groups, after=after, limit=amount, prefix=prefix or None)
    emit_table(listing, json_out, ["GROUP ID", "CREATION DATE"], _id_and_date)


@groups.command("delete")
def group_delete(id: Id) -> None:
    a = api()
    a.call(f"delete group {id}", a.auth.delete_group, id)
    out().line(f"Group deleted: {id}")


@group_members.command("add")
def member_add(id: Id, user: UserOpt) -> None:
    a = api()
    a.call(f"add {user} to group {id}", a.auth.add_group_membership, id, user)
    out().line(f"Added {user} to group {id}")


@group_members.command("remove")
def member_remove(id: Id, user: UserOpt) -> None:
    a = api()
    a.call(f"remove {user} from group {id}", a.auth.delete_group_membership, id, user)
    out().line(f"Removed {user} from group {id}")


@group_members.command("list")
def member_list(
    id: Id, amount: AmountOpt = None, after: AfterOpt = "", prefix: PrefixOpt = "", json_out: JsonOpt = False
) -> None:
    a = api()
    listing = a.sdk_pages(
        f"list members of {id}", a.auth.list_group_members, id, after=after, limit=amount, prefix=prefix or None
    )
    emit_table(listing, json_out, ["USER ID"], lambda u: (u.id,))


def _policy_commands(sub: typer.Typer, kind: str) -> None:
    """``attach|detach|list`` of the policies of a user or a group: the same commands, on the SDK calls named
    after ``kind``."""

    @sub.command("attach")
    def attach(id: Id, policy: PolicyOpt) -> None:
        a = api()
        a.call(f"attach policy {policy} to {kind} {id}", getattr(a.auth, f"attach_policy_to_{kind}"), id, policy)
        out().line(f"Policy attached: {policy} -> {kind} {id}")

    @sub.command("detach")
    def detach(id: Id, policy: PolicyOpt) -> None:
        a = api()
        a.call(f"detach policy {policy} from {kind} {id}", getattr(a.auth, f"detach_policy_from_{kind}"), id, policy)
        out().line(f"Policy detached: {policy} from {kind} {id}")

    @sub.command("list")
    def list_(
        id: Id,
        amount: AmountOpt = None,
        after: AfterOpt = "",
        prefix: PrefixOpt = "",
        effective: Annotated[
            bool,
            typer.Option(
                "--effective", help="users only: also the policies of the user's groups", hidden=kind != "user"
            ),
        ] = False,
        json_out: JsonOpt = False,
    ) -> None:
        a = api()
        extra = {"effective": True} if effective else {}
        if effective and kind != "user":
            raise typer.BadParameter("only a user has effective policies", param_hint="--effective")
        emit_table(
            a.sdk_pages(
                f"list policies of {kind} {id}",
                getattr(a.auth, f"list_{kind}_policies"),
                id,
                after=after,
                limit=amount,
                prefix=prefix or None,
                **extra,
            ),
            json_out,
            ["POLICY ID", "CREATION DATE"],
            _id_and_date,
        )


_policy_commands(user_policies, "user")
_policy_commands(group_policies, "group")


# --- policies -------------------------------------------------------------------------------------------------


@policies.command("create")
def policy_create(
    id: Id,
    statement_document: Annotated[
        str, typer.Option("--statement-document", help='JSON file with {"statement": [...]}')
    ],
    json_out: JsonOpt = False,
) -> None:
    import lakefs_sdk

    try:
        doc = json.loads(Path(statement_document).read_text())
        policy = lakefs_sdk.Policy.from_dict({"id": id, "statement": doc["statement"]})
    except OSError as e:
        raise CLIError(f"cannot read {statement_document}: {e.strerror}", "give a JSON statement file") from None
    except (ValueError, KeyError, TypeError) as e:
        raise CLIError(
            f"{statement_document} is not a policy document ({type(e).__name__}: {e})",
            'write {"statement": [{"effect": "allow", "action": ["fs:*"], "resource": "*"}]}',
        ) from None
    a = api()
    created = a.call(f"create policy {id}", a.auth.create_policy, policy)
    emit(created, f"Policy: {created.id}", json_out)


@policies.command("list")
def policy_list(
    amount: AmountOpt = None, after: AfterOpt = "", prefix: PrefixOpt = "", json_out: JsonOpt = False
) -> None:
    a = api()
    emit_table(
        a.sdk_pages("list policies", a.auth.list_policies, after=after, limit=amount, prefix=prefix or None),
        json_out,
        ["POLICY ID", "CREATION DATE"],
        _id_and_date,
    )


@policies.command("show")
def policy_show(id: Id, json_out: JsonOpt = False) -> None:
    a = api()
    policy = a.call(f"show policy {id}", a.auth.get_policy, id)
    if want_json(json_out):
        out().json(policy)
        return
    out().line(f"ID: {policy.id}")
    out().table(
        ["EFFECT", "ACTIONS", "RESOURCE"], [(s.effect, ", ".join(s.action), s.resource) for s in policy.statement]
    )


@policies.command("delete")
def policy_delete(id: Id) -> None:
    a = api()
    a.call(f"delete policy {id}", a.auth.delete_policy, id)
    out().line(f"Policy deleted: {id}")


# --- ACLs and external principals (lakeFS's ACL server and AWS IAM login; Lakelet's server lacks both, so these
# print what it answers, as lakectl does) ---------------------------------------------------------------------

group_acl = typer.Typer(no_args_is_help=True, help="a group's ACL (servers with lakeFS's ACL authorization)")
user_aws_iam = typer.Typer(no_args_is_help=True, help="AWS IAM roles attached to a user (external principals)")
groups.add_typer(group_acl, name="acl")
users.add_typer(user_aws_iam, name="aws-iam")
PrincipalOpt = Annotated[str, typer.Option("--principal-id", help="external principal ID (e.g. an AWS IAM role ARN)")]


@group_acl.command("get")
def acl_get(id: Id, json_out: JsonOpt = False) -> None:
    """Get the ACL of a group."""
    acl = api().get(f"get the ACL of group {id}", f"/auth/groups/{q(id)}/acl") or {}
    emit(acl, f"Group: {id}\nPermission: {acl.get('permission', '')}", json_out)


@group_acl.command("set")
def acl_set(
    id: Id,
    permission: Annotated[str, typer.Option("--permission", help="typically Read, Write, Super or Admin")],
) -> None:
    """Set the ACL of a group: the permission applies to all repositories."""
    api().raw(f"set the ACL of group {id}", "POST", f"/auth/groups/{q(id)}/acl", body={"permission": permission})


def _principals(user: str) -> str:
    return f"/auth/users/{q(user)}/external/principals"


@user_aws_iam.command("attach")
def iam_attach(principal_id: PrincipalOpt, id: UserOrMe = None) -> None:
    """Attach an IAM role to a user."""
    a = api()
    user = _user_or_me(a, id)
    a.raw(f"attach {principal_id} to {user}", "POST", _principals(user), {"principalId": principal_id}, {})
    out().line("IAM role attached successfully")


@user_aws_iam.command("detach")
def iam_detach(principal_id: PrincipalOpt, id: UserOrMe = None) -> None:
    """Detach an IAM role from a user."""
    a = api()
    user = _user_or_me(a, id)
    a.raw(f"detach {principal_id} from {user}", "DELETE", _principals(user), {"principalId": principal_id})
    out().line("IAM role detached successfully")


@user_aws_iam.command("list")
def iam_list(
    id: UserOrMe = None,
    amount: AmountOpt = None,
    after: AfterOpt = "",
    prefix: PrefixOpt = "",
    json_out: JsonOpt = False,
) -> None:
    """List the IAM roles attached to a user."""
    a = api()
    user = _user_or_me(a, id)
    listing = a.pages(
        f"list IAM roles of {user}", _principals(user) + "/ls", {"prefix": prefix or None}, after=after, limit=amount
    )
    emit_table(listing, json_out, ["Principal ID", "User ID"], lambda p: (p.get("id"), p.get("user_id")))


@user_aws_iam.command("lookup")
def iam_lookup(principal_id: PrincipalOpt, json_out: JsonOpt = False) -> None:
    """Look up which user an IAM role is attached to."""
    found = api().get(f"look up {principal_id}", "/auth/external/principals", {"principalId": principal_id}) or {}
    emit(found, f"Principal ID: {found.get('id', '')}\nUser ID: {found.get('user_id', '')}", json_out)
