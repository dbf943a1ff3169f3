"""PynamoDB models of the Lakelet tables: the one definition of their key schemas and attributes.

PynamoDB reads a table's name, region and endpoint from the model class when the class is created. The row
classes below declare the attributes only; ``model_set`` derives concrete models bound to one set of table
names and one endpoint, and caches them, so stores with different names (tests, stages) coexist in a process.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pynamodb.attributes import (
    BooleanAttribute,
    JSONAttribute,
    ListAttribute,
    NumberAttribute,
    TTLAttribute,
    UnicodeAttribute,
)
from pynamodb.connection import Connection
from pynamodb.models import Model

from .names import TableNames
from .wire import FastItemsConnection


class RepositoryRow(Model):
    """One repository (table ``repositories``, hash key repository_id)."""

    repository_id = UnicodeAttribute(hash_key=True)
    storage_namespace = UnicodeAttribute()
    default_branch_id = UnicodeAttribute()
    creation_date = NumberAttribute()
    state = UnicodeAttribute()
    read_only = BooleanAttribute(default=False)
    # Absent on repositories created before generations (read as "").
    generation = UnicodeAttribute(null=True)
    # Absent on repositories created before range formats (read as 1, graveler/committed/params.py).
    range_format = NumberAttribute(null=True)


# Staging tokens are "<repository>-<branch>:<uuid>" (and a shard suffix) with a "|<stamp>" when retired: never a
# space, which neither a repository id nor a branch id may hold.
RETIRED_SEPARATOR = " "


class BranchRow(Model):
    """One branch (table ``branches``: repository_id, branch_id)."""

    repository_id = UnicodeAttribute(hash_key=True)
    branch_id = UnicodeAttribute(range_key=True)
    commit_id = UnicodeAttribute()
    staging_token = UnicodeAttribute()
    # Stored as a DynamoDB list (possibly empty) so a condition can compare it whole, order included.
    sealed_tokens = ListAttribute(of=UnicodeAttribute, default=list)
    hidden = BooleanAttribute(default=False)
    # The retired entries (graveler/branches/branch_moves.py), one string joined by RETIRED_SEPARATOR, absent when
    # none: a branch retires a token per commit and keeps it for minutes, so a busy branch holds a hundred of them,
    # and as one attribute they cost one value to encode, send, compare in the swap's condition and decode instead
    # of a list element each (about a third of a one-change commit's CPU locally, and request bytes on AWS).
    retired = UnicodeAttribute(null=True)
    # The same entries as a list, as rows written before ``retired`` hold them (read when ``retired`` is absent;
    # the next swap of the row writes ``retired`` and drops it).
    retired_tokens = ListAttribute(of=UnicodeAttribute, null=True)


class TagRow(Model):
    """One tag (table ``tags``: repository_id, tag_id)."""

    repository_id = UnicodeAttribute(hash_key=True)
    tag_id = UnicodeAttribute(range_key=True)
    commit_id = UnicodeAttribute()


class CommitRow(Model):
    """One commit (table ``commits``: repository_id, commit_id), so a prefix of an id is a range query."""

    repository_id = UnicodeAttribute(hash_key=True)
    commit_id = UnicodeAttribute(range_key=True)
    committer = UnicodeAttribute()
    message = UnicodeAttribute()
    creation_date = NumberAttribute()
    # "" (EMPTY_METARANGE) is valid: DynamoDB refuses empty strings only in key attributes.
    meta_range_id = UnicodeAttribute()
    metadata = JSONAttribute(default=dict)
    parents = ListAttribute(of=UnicodeAttribute, default=list)
    generation = NumberAttribute()


class StagedRow(Model):
    """One staged change (table ``staging``: staging_token, key); a query returns a token's keys in order.

    DynamoDB orders string range keys by their UTF-8 bytes, which is Python's ``str`` order.
    """

    staging_token = UnicodeAttribute(hash_key=True)
    key = UnicodeAttribute(range_key=True)
    # An explicit flag rather than a sentinel value: a tombstone has no entry fields at all.
    tombstone = BooleanAttribute(default=False)
    physical_address = UnicodeAttribute(null=True)
    size = NumberAttribute(null=True)
    etag = UnicodeAttribute(null=True)
    mtime = NumberAttribute(null=True)
    content_type = UnicodeAttribute(null=True)
    user_metadata = JSONAttribute(null=True)


class PullRequestRow(Model):
    """One pull request (table ``pulls``: repository, pull_request_id). ``repository`` is "<repository id>#<its
    generation>", so a repository created again under the same id starts with none. ``record`` is the pull request
    as JSON: one attribute, so that an update's compare-and-swap compares the whole of it."""

    repository = UnicodeAttribute(hash_key=True)
    pull_request_id = UnicodeAttribute(range_key=True)
    record = UnicodeAttribute()


class AuthRow(Model):
    """Users, access keys, groups, policies, the rows that link them, and sealed server keys (table ``auth``:
    pk, sk). See auth.py for the layout."""

    pk = UnicodeAttribute(hash_key=True)
    sk = UnicodeAttribute(range_key=True)
    user_id = UnicodeAttribute(null=True)
    # base64 of the SecretCipher's ciphertext (KMS); never the secret in clear.
    encrypted_secret = UnicodeAttribute(null=True)
    creation_date = NumberAttribute(null=True)
    description = UnicodeAttribute(null=True)
    # A policy's statements: [{"effect", "action": [...], "resource"}], as lakeFS writes them.
    statements = JSONAttribute(null=True)
    sealed_key = UnicodeAttribute(null=True)
    # A user's generation (auth/records.py): random per creation, named by its login tokens.
    generation = UnicodeAttribute(null=True)
    # A revoked login token's row only: the token's expiry. DynamoDB's TTL deletes the row some time after it
    # (the table's TimeToLiveSpecification in infra/ names this attribute); the token is refused for its
    # expiry by then anyway.
    expires_at = TTLAttribute(null=True)
    # The usage report's rows (usage.py): the installation id, and a month's request count (added to, atomically).
    installation_id = UnicodeAttribute(null=True)
    usage_count = NumberAttribute(null=True)


@dataclass(frozen=True, slots=True)
class ModelSet:
    """The models bound to one set of table names, one region and one endpoint."""

    repositories: type[RepositoryRow]
    branches: type[BranchRow]
    tags: type[TagRow]
    commits: type[CommitRow]
    staging: type[StagedRow]
    auth: type[AuthRow]
    pulls: type[PullRequestRow]

    def all(self) -> Iterator[type[Model]]:
        yield from (self.repositories, self.branches, self.tags, self.commits, self.staging, self.auth, self.pulls)


def key_attribute_names(model: type[Model]) -> list[str]:
    """The names of a model's key attributes: what a query that only needs the keys should fetch."""
    return [attr.attr_name for attr in model.get_attributes().values() if attr.is_hash_key or attr.is_range_key]


def _bind[R: Model](row: type[R], table_name: str, region: str, endpoint_url: str | None) -> type[R]:
    meta: dict[str, Any] = {
        "table_name": table_name,
        "region": region,
        "host": endpoint_url,
        "billing_mode": "PAY_PER_REQUEST",
    }
    # Subclassing keeps the attributes and gives the subclass its own Meta, connection and DoesNotExist.
    return type(f"{row.__name__}_{table_name}", (row,), {"Meta": type("Meta", (), meta)})


def _share_connection(models: ModelSet) -> None:
    # PynamoDB gives every model its own botocore session and client; building one loads the service and
    # endpoint data again (~0.1 s each, six per set: a Lambda cold start pays it). The models of a set talk
    # to one endpoint, so they share the first model's connection. Building a TableConnection sends nothing
    # (the table's schema comes from the model, no DescribeTable).
    shared: Connection | None = None
    for model in models.all():
        table_connection = model._get_connection()
        if shared is None:
            shared = table_connection.connection
            # Items of reads come from the wire past botocore's parser (wire.py); nothing else changes.
            shared.__class__ = FastItemsConnection
            continue
        shared.add_meta_table(table_connection.get_meta_table())
        table_connection.connection = shared


@functools.lru_cache(maxsize=256)
def model_set(names: TableNames, region: str, endpoint_url: str | None = None) -> ModelSet:
    """The models of ``names`` at ``region``/``endpoint_url``; the same call returns the same classes."""
    models = ModelSet(
        repositories=_bind(RepositoryRow, names.repositories, region, endpoint_url),
        branches=_bind(BranchRow, names.branches, region, endpoint_url),
        tags=_bind(TagRow, names.tags, region, endpoint_url),
        commits=_bind(CommitRow, names.commits, region, endpoint_url),
        staging=_bind(StagedRow, names.staging, region, endpoint_url),
        auth=_bind(AuthRow, names.auth, region, endpoint_url),
        pulls=_bind(PullRequestRow, names.pulls, region, endpoint_url),
    )
    _share_connection(models)
    return models
