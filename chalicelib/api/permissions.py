"""What each route needs to be allowed: the one table from routes to lakeFS permissions (action, resource ARN).

Keys are (method, path) with the path's parameters blanked (``/repositories/{}/branches/{}``), so the table
does not depend on how a blueprint names them; a rule gets the parameter values in path order. A rule returns
the permissions the request needs; AUTHENTICATED means any signed-in user may call the route (GET /user),
and BY_VIEW means the view checks each item itself (bulk delete reports denied paths one by one).
A protected route missing from the table needs ``fs:*`` on everything (only Admins and SuperUsers have it),
so a new route is never open by accident. Actions and ARNs follow lakeFS (pkg/permissions).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

from chalicelib.auth.policies import (
    ALL,
    Permission,
    branch_arn,
    group_arn,
    namespace_arn,
    object_arn,
    policy_arn,
    repository_arn,
    tag_arn,
    user_arn,
)
from chalicelib.graveler.errors import Invalid
from chalicelib.graveler.validation import normalize_storage_namespace

from . import batch_body
from .params import JsonBody, Query

_PARAMETER = re.compile(r"\{[^}]+\}")
UNMAPPED = (Permission("fs:*", ALL),)


@dataclass(frozen=True)
class RequestFacts:
    """What a rule may look at: the path parameters (decoded, in path order), the query and the body."""

    args: Sequence[str]
    query_params: Mapping[str, str] | None
    raw_body: bytes | str | None

    @property
    def query(self) -> Query:
        return Query(self.query_params)

    @cached_property
    def body(self) -> JsonBody:
        return JsonBody.parse(self.raw_body or b"")

    def repo(self) -> str:
        return self.args[0]


Rule = Callable[[RequestFacts], Sequence[Permission]]


def AUTHENTICATED(_: RequestFacts) -> Sequence[Permission]:
    return ()


def BY_VIEW(_: RequestFacts) -> Sequence[Permission]:
    return ()


def normalize(path: str) -> str:
    return _PARAMETER.sub("{}", path)


def parameter_names(path: str) -> list[str]:
    return [m.group(0)[1:-1] for m in _PARAMETER.finditer(path)]


def _on_all(action: str) -> Rule:
    return lambda f: [Permission(action, ALL)]


def _on_repo(action: str) -> Rule:
    return lambda f: [Permission(action, repository_arn(f.repo()))]


_DUMP = ("fs:ListTags", "fs:ListBranches", "fs:ListCommits")
_RESTORE = ("fs:CreateTag", "fs:CreateBranch", "fs:CreateCommit")


def _on_repo_all(actions: Sequence[str]) -> Rule:
    return lambda f: [Permission(action, repository_arn(f.repo())) for action in actions]


def _on_branch(action: str, position: int = 1) -> Rule:
    return lambda f: [Permission(action, branch_arn(f.repo(), f.args[position]))]


def _on_object(action: str) -> Rule:
    return lambda f: [Permission(action, object_arn(f.repo(), f.query.required_string("path")))]


def _on_tag(action: str) -> Rule:
    return lambda f: [Permission(action, tag_arn(f.repo(), f.args[1]))]


def _on_user(action: str) -> Rule:
    return lambda f: [Permission(action, user_arn(f.args[0]))]


def _on_group(action: str) -> Rule:
    return lambda f: [Permission(action, group_arn(f.args[0]))]


def _on_policy(action: str) -> Rule:
    return lambda f: [Permission(action, policy_arn(f.args[0]))]


def _create_repository(f: RequestFacts) -> Sequence[Permission]:
    return [
        Permission("fs:CreateRepository", repository_arn(f.body.required_string("name"))),
        Permission(
            "fs:AttachStorageNamespace",
            namespace_arn(_namespace_as_stored(f.body.required_string("storage_namespace"))),
        ),
    ]


def _namespace_as_stored(namespace: str) -> str:
    """The spelling the repository will have: a policy on ``s3://b/secret*`` must also cover ``s3://b//secret``,
    which names the same namespace. A malformed one is checked as sent; creation refuses it anyway."""
    try:
        return normalize_storage_namespace(namespace)
    except Invalid:
        return namespace


def _upload_batch(f: RequestFacts) -> Sequence[Permission]:
    """Every path of a batch upload's manifest must be writable: the batch is refused whole (403), as one
    denied path means a batch that cannot be staged as asked."""
    return [Permission("fs:WriteObject", object_arn(f.repo(), path)) for path in batch_body.paths(f.raw_body)]


def _stage_object(f: RequestFacts) -> Sequence[Permission]:
    """lakeFS's stageObject writes the path; Lakelet also asks what an import of that address asks
    (fs:ImportFromStorage on it), since it is a one-object import (graveler/usecases/staged_objects.py)."""
    address = f.body.raw("physical_address")
    needed = [Permission("fs:WriteObject", object_arn(f.repo(), f.query.required_string("path")))]
    if isinstance(address, str):
        needed.append(Permission("fs:ImportFromStorage", namespace_arn(address)))
    return needed


def _upload_part_copy(f: RequestFacts) -> Sequence[Permission]:
    """As lakeFS: writing the destination path and reading the source object (any repository)."""
    source = f.body.nested("copy_source")
    needed = [Permission("fs:WriteObject", object_arn(f.repo(), f.query.required_string("path")))]
    if source is not None:
        repository, path = source.string("repository"), source.string("path")
        if repository and path:
            needed.append(Permission("fs:ReadObject", object_arn(repository, path)))
    return needed


def _copy_object(f: RequestFacts) -> Sequence[Permission]:
    return [
        Permission("fs:ReadObject", object_arn(f.repo(), f.body.required_string("src_path"))),
        Permission("fs:WriteObject", object_arn(f.repo(), f.query.required_string("dest_path"))),
    ]


def _import_start(f: RequestFacts) -> Sequence[Permission]:
    """lakeFS's importStart: reading each source location (fs:ImportFromStorage, on it as a storage namespace)
    and committing to the branch. A malformed body is left to the route, which answers 400."""
    paths = f.body.raw("paths")
    sources = (
        [p["path"] for p in paths if isinstance(p, dict) and isinstance(p.get("path"), str)]
        if isinstance(paths, list)
        else []
    )
    branch = branch_arn(f.repo(), f.args[1])
    return [
        *(Permission("fs:ImportFromStorage", namespace_arn(path)) for path in sources),
        Permission("fs:WriteObject", branch),
        Permission("fs:CreateCommit", branch),
    ]


_REPOS = "/repositories/{}"
_BRANCH = _REPOS + "/branches/{}"
_REF = _REPOS + "/refs/{}"
_USER = "/auth/users/{}"
_GROUP = "/auth/groups/{}"

RULES: dict[tuple[str, str], Rule] = {
    ("GET", "/user"): AUTHENTICATED,
    # The web UI's hint of what to offer (api/web.py): it evaluates the caller's own policies only.
    ("GET", "/user/permissions"): AUTHENTICATED,
    ("GET", "/config"): _on_all("fs:ReadConfig"),
    ("GET", "/config/storage"): _on_all("fs:ReadConfig"),
    ("GET", "/config/version"): AUTHENTICATED,
    # lakeFS asks only for a signed-in caller on these three (api/installation.py).
    ("GET", "/config/garbage-collection"): AUTHENTICATED,
    ("POST", "/statistics"): AUTHENTICATED,
    ("GET", "/usage-report/summary"): AUTHENTICATED,
    # What lakeFS OSS answers 501 to (api/unsupported.py): any signed-in caller learns that, as in lakeFS, which
    # checks "not supported" before authorizing.
    ("GET", "/auth/external/principals"): AUTHENTICATED,
    ("POST", _USER + "/external/principals"): AUTHENTICATED,
    ("DELETE", _USER + "/external/principals"): AUTHENTICATED,
    ("GET", _USER + "/external/principals/ls"): AUTHENTICATED,
    ("GET", _GROUP + "/acl"): AUTHENTICATED,
    ("POST", _GROUP + "/acl"): AUTHENTICATED,
    # repositories
    ("GET", "/repositories"): _on_all("fs:ListRepositories"),
    ("POST", "/repositories"): _create_repository,
    ("GET", _REPOS): _on_repo("fs:ReadRepository"),
    ("DELETE", _REPOS): _on_repo("fs:DeleteRepository"),
    ("GET", _REPOS + "/metadata"): _on_repo("fs:ReadRepository"),
    # lakeFS asks for both to read a range or metarange file (api/metadata_files.py).
    ("GET", _REPOS + "/metadata/meta_range/{}"): _on_repo_all(("fs:ListObjects", "fs:ReadRepository")),
    ("GET", _REPOS + "/metadata/range/{}"): _on_repo_all(("fs:ListObjects", "fs:ReadRepository")),
    ("GET", _REPOS + "/metadata/object/{}/{}"): _on_repo_all(("fs:ListObjects", "fs:ReadRepository")),
    ("POST", _REPOS + "/metadata"): _on_repo("fs:UpdateRepository"),
    ("DELETE", _REPOS + "/metadata"): _on_repo("fs:UpdateRepository"),
    ("GET", _REPOS + "/settings/gc_rules"): _on_repo("retention:GetGarbageCollectionRules"),
    ("PUT", _REPOS + "/settings/gc_rules"): _on_repo("retention:SetGarbageCollectionRules"),
    ("DELETE", _REPOS + "/settings/gc_rules"): _on_repo("retention:SetGarbageCollectionRules"),
    ("GET", _REPOS + "/gc/rules"): _on_repo("retention:GetGarbageCollectionRules"),
    ("POST", _REPOS + "/gc/rules"): _on_repo("retention:SetGarbageCollectionRules"),
    ("DELETE", _REPOS + "/gc/rules"): _on_repo("retention:SetGarbageCollectionRules"),
    ("GET", _REPOS + "/gc/rules/set_allowed"): _on_repo("retention:SetGarbageCollectionRules"),
    # lakeFS's CreateCommitRecord: fs:CreateCommit on the repository (api/commits.py).
    ("POST", _REPOS + "/commits"): _on_repo("fs:CreateCommit"),
    ("POST", _REPOS + "/gc/prepare_commits"): _on_repo("retention:PrepareGarbageCollectionCommits"),
    ("POST", _REPOS + "/gc/prepare_commits/async"): _on_repo("retention:PrepareGarbageCollectionCommits"),
    ("GET", _REPOS + "/gc/prepare_commits/status"): _on_repo("retention:PrepareGarbageCollectionCommits"),
    ("POST", _REPOS + "/gc/prepare_uncommited"): _on_repo("retention:PrepareGarbageCollectionUncommitted"),
    ("GET", _REPOS + "/settings/branch_protection"): _on_repo("branches:GetBranchProtectionRules"),
    ("PUT", _REPOS + "/settings/branch_protection"): _on_repo("branches:SetBranchProtectionRules"),
    ("GET", _REPOS + "/branch_protection"): _on_repo("branches:GetBranchProtectionRules"),
    ("POST", _REPOS + "/branch_protection"): _on_repo("branches:SetBranchProtectionRules"),
    ("DELETE", _REPOS + "/branch_protection"): _on_repo("branches:SetBranchProtectionRules"),
    ("GET", _REPOS + "/branch_protection/set_allowed"): _on_repo("branches:SetBranchProtectionRules"),
    # action runs (lakeFS's ci:ReadAction)
    ("GET", _REPOS + "/actions/runs"): _on_repo("ci:ReadAction"),
    ("GET", _REPOS + "/actions/runs/{}"): _on_repo("ci:ReadAction"),
    ("GET", _REPOS + "/actions/runs/{}/hooks"): _on_repo("ci:ReadAction"),
    ("GET", _REPOS + "/actions/runs/{}/hooks/{}/output"): _on_repo("ci:ReadAction"),
    # branches
    ("GET", _REPOS + "/branches"): _on_repo("fs:ListBranches"),
    ("POST", _REPOS + "/branches"): lambda f: [
        Permission("fs:CreateBranch", branch_arn(f.repo(), f.body.required_string("name")))
    ],
    ("GET", _BRANCH): _on_branch("fs:ReadBranch"),
    ("DELETE", _BRANCH): _on_branch("fs:DeleteBranch"),
    ("PUT", _BRANCH): _on_branch("fs:RevertBranch"),
    ("PUT", _BRANCH + "/hard_reset"): _on_branch("fs:RevertBranch"),
    ("POST", _BRANCH + "/revert"): _on_branch("fs:RevertBranch"),
    ("POST", _BRANCH + "/cherry-pick"): _on_branch("fs:CreateCommit"),
    ("POST", _BRANCH + "/commits"): _on_branch("fs:CreateCommit"),
    ("POST", _BRANCH + "/commits/async"): _on_branch("fs:CreateCommit"),
    # Reading a task's status reveals the commit it made: read access to the branch.
    ("GET", _BRANCH + "/commits/status"): _on_branch("fs:ReadBranch"),
    ("GET", _BRANCH + "/diff"): _on_repo("fs:ListObjects"),
    ("POST", _BRANCH + "/import"): _import_start,
    ("GET", _BRANCH + "/import"): _on_branch("fs:ReadBranch"),
    ("DELETE", _BRANCH + "/import"): _on_branch("fs:ImportCancel"),
    # commits and refs
    ("GET", _REPOS + "/commits/{}"): _on_repo("fs:ReadCommit"),
    ("GET", _REF + "/commits"): _on_branch("fs:ReadBranch"),
    ("POST", _REF + "/merge/{}"): _on_branch("fs:CreateCommit", 2),
    ("POST", _REF + "/merge/{}/async"): _on_branch("fs:CreateCommit", 2),
    # Reading a task's status reveals the commit it made: read access to the destination branch.
    ("GET", _REF + "/merge/{}/status"): _on_branch("fs:ReadBranch", 2),
    ("GET", _REF + "/merge/{}"): _on_repo("fs:ListCommits"),
    ("GET", _REF + "/diff/{}"): _on_repo("fs:ListObjects"),
    # objects
    ("GET", _REF + "/objects"): _on_object("fs:ReadObject"),
    # As lakeFS: writing the manifests needs fs:WriteObject on the object ARN named by the branch.
    ("POST", _REF + "/symlink"): lambda f: [Permission("fs:WriteObject", object_arn(f.repo(), f.args[1]))],
    ("HEAD", _REF + "/objects"): _on_object("fs:ReadObject"),
    ("GET", _REF + "/objects/stat"): _on_object("fs:ReadObject"),
    ("GET", _REF + "/objects/underlyingProperties"): _on_object("fs:ReadObject"),
    ("GET", _REF + "/objects/ls"): _on_repo("fs:ListObjects"),
    ("POST", _BRANCH + "/objects"): _on_object("fs:WriteObject"),
    ("GET", _BRANCH + "/objects/stage_allowed"): _on_object("fs:WriteObject"),
    ("PUT", _BRANCH + "/objects"): _stage_object,
    ("DELETE", _BRANCH + "/objects"): _on_object("fs:DeleteObject"),
    ("POST", _BRANCH + "/objects/delete"): BY_VIEW,
    ("POST", _BRANCH + "/objects/batch"): _upload_batch,
    ("POST", _BRANCH + "/objects/copy"): _copy_object,
    ("PUT", _BRANCH + "/objects/stat/user_metadata"): _on_object("fs:WriteObject"),
    ("GET", _BRANCH + "/staging/backing"): _on_object("fs:WriteObject"),
    ("PUT", _BRANCH + "/staging/backing"): _on_object("fs:WriteObject"),
    # Presigned multipart uploads (api/presigned_multipart.py), as lakeFS: writing the path.
    ("POST", _BRANCH + "/staging/pmpu"): _on_object("fs:WriteObject"),
    ("PUT", _BRANCH + "/staging/pmpu/{}"): _on_object("fs:WriteObject"),
    ("DELETE", _BRANCH + "/staging/pmpu/{}"): _on_object("fs:WriteObject"),
    ("PUT", _BRANCH + "/staging/pmpu/{}/parts/{}"): _on_object("fs:WriteObject"),
    ("PUT", _BRANCH + "/staging/pmpu/{}/parts/{}/copy"): _upload_part_copy,
    # tags
    ("GET", _REPOS + "/tags"): _on_repo("fs:ListTags"),
    ("POST", _REPOS + "/tags"): lambda f: [Permission("fs:CreateTag", tag_arn(f.repo(), f.body.required_string("id")))],
    ("GET", _REPOS + "/tags/{}"): _on_tag("fs:ReadTag"),
    ("DELETE", _REPOS + "/tags/{}"): _on_tag("fs:DeleteTag"),
    # pull requests (lakeFS's pr: actions; merging also needs fs:CreateCommit on the destination, which the
    # merge checks once it has read the pull request)
    ("GET", _REPOS + "/pulls"): _on_repo("pr:ListPullRequests"),
    ("POST", _REPOS + "/pulls"): _on_repo("pr:WritePullRequest"),
    ("GET", _REPOS + "/pulls/{}"): _on_repo("pr:ReadPullRequest"),
    ("PATCH", _REPOS + "/pulls/{}"): _on_repo("pr:WritePullRequest"),
    ("PUT", _REPOS + "/pulls/{}/merge"): _on_repo("pr:WritePullRequest"),
    # refs dump and restore, and the repository dump and restore tasks: lakeFS asks the listing or creating of
    # every kind of ref on the repository
    ("PUT", _REPOS + "/refs/dump"): _on_repo_all(_DUMP),
    ("PUT", _REPOS + "/refs/restore"): _on_repo_all(_RESTORE),
    ("POST", _REPOS + "/dump"): _on_repo_all(_DUMP),
    ("GET", _REPOS + "/dump"): _on_repo_all(_DUMP),
    ("POST", _REPOS + "/restore"): _on_repo_all(_RESTORE),
    ("GET", _REPOS + "/restore"): _on_repo_all(_RESTORE),
    # users and their access keys
    ("GET", "/auth/users"): _on_all("auth:ListUsers"),
    ("POST", "/auth/users"): lambda f: [Permission("auth:CreateUser", user_arn(f.body.required_string("id")))],
    ("GET", _USER): _on_user("auth:ReadUser"),
    ("DELETE", _USER): _on_user("auth:DeleteUser"),
    ("GET", _USER + "/credentials"): _on_user("auth:ListCredentials"),
    ("POST", _USER + "/credentials"): _on_user("auth:CreateCredentials"),
    ("GET", _USER + "/credentials/{}"): _on_user("auth:ReadCredentials"),
    ("DELETE", _USER + "/credentials/{}"): _on_user("auth:DeleteCredentials"),
    ("GET", _USER + "/groups"): _on_user("auth:ReadUser"),
    ("GET", _USER + "/policies"): _on_user("auth:ReadUser"),
    ("PUT", _USER + "/policies/{}"): _on_user("auth:AttachPolicy"),
    ("DELETE", _USER + "/policies/{}"): _on_user("auth:DetachPolicy"),
    # groups
    ("GET", "/auth/groups"): _on_all("auth:ListGroups"),
    ("POST", "/auth/groups"): lambda f: [Permission("auth:CreateGroup", group_arn(f.body.required_string("id")))],
    ("GET", _GROUP): _on_group("auth:ReadGroup"),
    ("DELETE", _GROUP): _on_group("auth:DeleteGroup"),
    ("GET", _GROUP + "/members"): _on_group("auth:ReadGroup"),
    ("PUT", _GROUP + "/members/{}"): _on_group("auth:AddGroupMember"),
    ("DELETE", _GROUP + "/members/{}"): _on_group("auth:RemoveGroupMember"),
    ("GET", _GROUP + "/policies"): _on_group("auth:ReadGroup"),
    ("PUT", _GROUP + "/policies/{}"): _on_group("auth:AttachPolicy"),
    ("DELETE", _GROUP + "/policies/{}"): _on_group("auth:DetachPolicy"),
    # policies
    ("GET", "/auth/policies"): _on_all("auth:ListPolicies"),
    ("POST", "/auth/policies"): lambda f: [Permission("auth:CreatePolicy", policy_arn(f.body.required_string("id")))],
    ("GET", "/auth/policies/{}"): _on_policy("auth:ReadPolicy"),
    ("PUT", "/auth/policies/{}"): _on_policy("auth:UpdatePolicy"),
    ("DELETE", "/auth/policies/{}"): _on_policy("auth:DeletePolicy"),
}


def rule_for(method: str, path: str) -> Rule | None:
    """The rule of a route, None when the table does not know it."""
    return RULES.get((method.upper(), normalize(path)))
