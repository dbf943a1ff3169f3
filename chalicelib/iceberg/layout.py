"""Where the catalog keeps things in a repository, and how Iceberg identifiers name them.

A namespace's first level is the repository and its second the ref (``quickstart.main.sales``): a branch to write,
any ref to read (a tag, a commit id, ``main@``, ``main~1``). Below the ref, everything is an ordinary object of the
repository, so commits, diffs, merges, reverts, tags, GC and the web UI see tables with no special case:

- ``_iceberg/<ns>/.../_namespace.json``: a namespace and its properties (its existence is the namespace's).
- ``_iceberg/<ns>/.../<table>.table.json``: a table's pointer, naming its current metadata file (a path in the
  repository). A table commit moves it with a conditional write; a table changed on two branches is a merge
  conflict on this path, which names the table.
- ``iceberg/<ns>/.../<table>-<uuid>/``: the table's default location. Engines write ``data/`` and ``metadata/``
  under it through the S3 gateway (``s3://<repo>/<branch>/iceberg/...``); the catalog writes the metadata JSON
  files there too. The uuid keeps a table re-created under a dropped or renamed one's name apart from it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import BadRequest

__all__ = [
    "CATALOG_PREFIX",
    "LOCATION_PREFIX",
    "NAMESPACE_MARKER",
    "POINTER_SUFFIX",
    "Namespace",
    "TableName",
    "metadata_file_path",
    "path_of_uri",
    "table_of_pointer",
    "uri",
]

CATALOG_PREFIX = "_iceberg/"
LOCATION_PREFIX = "iceberg/"
NAMESPACE_MARKER = "_namespace.json"
POINTER_SUFFIX = ".table.json"
_BAD_NAME = re.compile(r"[/\x00-\x1f\x7f]")


def _check_name(name: object, what: str) -> str:
    if not isinstance(name, str) or not name or name in (".", "..") or _BAD_NAME.search(name):
        raise BadRequest(f"invalid {what} {name!r}: a non-empty name without '/' or control characters")
    return name


@dataclass(frozen=True, slots=True)
class Namespace:
    """An Iceberg namespace: (repository, ref, *names). ``names`` is empty for the repository or ref level."""

    repo: str
    ref: str | None
    names: tuple[str, ...]

    @classmethod
    def of(cls, parts: object) -> Namespace:
        if not isinstance(parts, (list, tuple)) or not parts:
            raise BadRequest("a namespace is a non-empty list of names")
        checked = [_check_name(p, "namespace level") for p in parts]
        return cls(checked[0], checked[1] if len(checked) > 1 else None, tuple(checked[2:]))

    @classmethod
    def parse(cls, encoded: str) -> Namespace:
        """From a path parameter: the levels joined by the unit separator (0x1F), as the spec encodes them."""
        return cls.of(encoded.split("\x1f"))

    @property
    def parts(self) -> list[str]:
        return [self.repo, *([self.ref] if self.ref is not None else []), *self.names]

    @property
    def in_ref(self) -> bool:
        """Whether this is a namespace below a ref (a directory of the repository), not a repository or a ref."""
        return self.ref is not None and bool(self.names)

    def ref_or_fail(self) -> str:
        if self.ref is None:
            raise BadRequest(f"namespace {'.'.join(self.parts)} names a repository: add a ref (a branch to write)")
        return self.ref

    def need_names(self) -> None:
        if not self.in_ref:
            raise BadRequest(
                f"namespace {'.'.join(self.parts)} is a repository or a ref: tables and namespaces live in a "
                "namespace under a ref (<repository>.<ref>.<namespace>)"
            )

    @property
    def directory(self) -> str:
        """The catalog's directory of this namespace (ends with '/')."""
        return CATALOG_PREFIX + "".join(n + "/" for n in self.names)

    @property
    def marker(self) -> str:
        return self.directory + NAMESPACE_MARKER

    def child(self, name: str) -> Namespace:
        return Namespace(self.repo, self.ref, (*self.names, name))


@dataclass(frozen=True, slots=True)
class TableName:
    namespace: Namespace
    name: str

    @classmethod
    def of(cls, namespace: Namespace, name: object) -> TableName:
        namespace.need_names()
        return cls(namespace, _check_name(name, "table name"))

    @classmethod
    def from_identifier(cls, identifier: object) -> TableName:
        """From a TableIdentifier: ``{"namespace": [...], "name": "..."}``."""
        if not isinstance(identifier, dict):
            raise BadRequest("a table identifier is an object with namespace and name")
        return cls.of(Namespace.of(identifier.get("namespace")), identifier.get("name"))

    @property
    def pointer(self) -> str:
        return self.namespace.directory + self.name + POINTER_SUFFIX

    def default_location(self, table_uuid: str) -> str:
        return LOCATION_PREFIX + "".join(n + "/" for n in self.namespace.names) + f"{self.name}-{table_uuid}"

    def __str__(self) -> str:
        return ".".join([*self.namespace.parts, self.name])


def uri(repo: str, ref: str, path: str) -> str:
    """The S3 gateway's address of a repository path at a ref."""
    return f"s3://{repo}/{ref}/{path}"


def path_of_uri(repo: str, address: str) -> str:
    """The repository path an ``s3://<repo>/<ref>/<path>`` address names (any ref). BadRequest for another
    repository or scheme (s3a:// and s3n:// are S3 too, as Hadoop clients write them)."""
    match = re.fullmatch(r"s3[an]?://([^/]+)/([^/]+)/(.+)", address)
    if match is None or match.group(1) != repo:
        raise BadRequest(f"{address!r} is not a location in repository {repo} (s3://{repo}/<ref>/<path>)")
    return match.group(3).rstrip("/")


def table_of_pointer(path: str) -> str | None:
    """The table (``<namespace>.<table>``, below the ref) whose pointer is at ``path``; None for any other path.
    A merge conflict on a pointer is a table changed on both sides: this names it."""
    if not path.startswith(CATALOG_PREFIX) or not path.endswith(POINTER_SUFFIX):
        return None
    return ".".join(path[len(CATALOG_PREFIX) : -len(POINTER_SUFFIX)].split("/"))


def metadata_file_path(location_path: str, version: int, file_id: str) -> str:
    return f"{location_path}/metadata/{version:05d}-{file_id}.metadata.json"
