"""Namespaces: list, create, load, exists, update properties, drop (empty only). The repository and ref levels are
namespaces that exist when the repository exists and the ref resolves; they are created and dropped with the
lakeFS API (repositories and branches), never here. Below the ref, a namespace is its marker object."""

from __future__ import annotations

from dataclasses import dataclass

from chalicelib.auth.policies import ALL, Permission, object_arn, repository_arn
from chalicelib.graveler import errors

from . import bounds
from .errors import BadRequest, NamespaceAlreadyExists, NamespaceNotEmpty, NoSuchNamespace
from .layout import NAMESPACE_MARKER, Namespace
from .metadata import Json
from .store import Authorize, TableStore

__all__ = ["Authorize", "NamespacePage", "Namespaces", "PropertiesUpdate"]

MAX_PAGE = 1000
_MARKER_DIRECTORY = NAMESPACE_MARKER


@dataclass(frozen=True, slots=True)
class NamespacePage:
    namespaces: list[list[str]]
    next_token: str | None


@dataclass(frozen=True, slots=True)
class PropertiesUpdate:
    updated: list[str]
    removed: list[str]
    missing: list[str]


def page_size(raw: str | None) -> int:
    if raw is None or raw == "":
        return MAX_PAGE
    try:
        size = int(raw)
    except ValueError:
        raise BadRequest(f"pageSize {raw!r} is not a number") from None
    if size < 1:
        raise BadRequest("pageSize must be positive")
    return min(size, MAX_PAGE)


def _properties(value: object) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise BadRequest("properties must map strings to strings")
    return dict(value)


class Namespaces:
    """Shared by every request; each call's ``authorize`` checks that request's caller (store.py)."""

    def __init__(self, store: TableStore) -> None:
        self.store = store

    def list(self, authorize: Authorize, parent: Namespace | None, token: str | None, size: int) -> NamespacePage:
        after = token or ""
        engine = self.store.engine
        if parent is None:
            authorize([Permission("fs:ListRepositories", ALL)])
            repos = engine.repositories.list_repositories(after=after, amount=size)
            names = [[str(r.id)] for r in repos.results]
            return NamespacePage(names, names[-1][0] if repos.has_more else None)
        self.store.check_ref(parent)
        if parent.ref is None:
            authorize([Permission("fs:ListBranches", repository_arn(parent.repo))])
            branches = engine.branches.list_branches(parent.repo, after=after, amount=size)
            names = [[parent.repo, str(b.id)] for b in branches.results]
            return NamespacePage(names, names[-1][1] if branches.has_more else None)
        authorize([Permission("fs:ListObjects", repository_arn(parent.repo))])
        if parent.names:
            self._require(authorize, parent)
        found: list[list[str]] = []
        start = after + "/" if after else ""
        for name, is_directory in self.store.children(authorize, parent.repo, parent.ref, parent.directory, start):
            if not is_directory:
                continue
            if len(found) == size:
                return NamespacePage(found, found[-1][-1])
            found.append(parent.child(name).parts)
        return NamespacePage(found, None)

    def _require(self, authorize: Authorize, namespace: Namespace) -> None:
        """NoSuchNamespace unless it exists (the ref level exists when the ref resolves)."""
        self.store.check_ref(namespace)
        if namespace.names and not self.store.exists(
            authorize, namespace.repo, namespace.ref_or_fail(), namespace.marker
        ):
            raise NoSuchNamespace(f"namespace {'.'.join(namespace.parts)} does not exist")

    def require(self, authorize: Authorize, namespace: Namespace) -> None:
        """For the table use cases: the namespace exists, and is one that can hold tables."""
        namespace.need_names()
        self._require(authorize, namespace)

    def create(self, authorize: Authorize, namespace: Namespace, properties: object) -> dict[str, str]:
        namespace.need_names()
        props = _properties(properties)
        authorize([Permission("fs:WriteObject", object_arn(namespace.repo, namespace.marker))])
        branch = self.store.check_branch(namespace)
        if len(namespace.names) > 1:
            parent = Namespace(namespace.repo, namespace.ref, namespace.names[:-1])
            try:
                self._require(authorize, parent)
            except NoSuchNamespace:
                # The spec gives create no 404: the request names a parent that is not there.
                raise BadRequest(f"parent namespace {'.'.join(parent.parts)} does not exist") from None
        bounds.check_namespace_loadable(props, ".".join(namespace.parts))
        try:
            self.store.write(authorize, namespace.repo, branch, namespace.marker, {"properties": props}, if_absent=True)
        except errors.PreconditionFailed:
            raise NamespaceAlreadyExists(f"namespace {'.'.join(namespace.parts)} already exists") from None
        return props

    def load(self, authorize: Authorize, namespace: Namespace) -> dict[str, str]:
        if not namespace.in_ref:
            authorize([Permission("fs:ReadRepository", repository_arn(namespace.repo))])
            self.store.check_ref(namespace)
            return {}
        authorize([Permission("fs:ReadObject", object_arn(namespace.repo, namespace.marker))])
        self.store.check_ref(namespace)
        stored = self.store.read(authorize, namespace.repo, namespace.ref_or_fail(), namespace.marker)
        if stored is None:
            raise NoSuchNamespace(f"namespace {'.'.join(namespace.parts)} does not exist")
        return _properties(stored.value.get("properties"))

    def update_properties(
        self, authorize: Authorize, namespace: Namespace, removals: object, updates: object
    ) -> PropertiesUpdate:
        namespace.need_names()
        if removals is not None and (not isinstance(removals, list) or not all(isinstance(r, str) for r in removals)):
            raise BadRequest("removals must be a list of property names")
        removing, setting = list(removals or []), _properties(updates)
        if set(removing) & set(setting):
            raise BadRequest(f"properties both updated and removed: {sorted(set(removing) & set(setting))}")
        authorize([Permission("fs:WriteObject", object_arn(namespace.repo, namespace.marker))])
        branch = self.store.check_branch(namespace)
        for _ in range(3):
            stored = self.store.read(authorize, namespace.repo, branch, namespace.marker)
            if stored is None:
                raise NoSuchNamespace(f"namespace {'.'.join(namespace.parts)} does not exist")
            props = _properties(stored.value.get("properties"))
            missing = [r for r in removing if r not in props]
            removed = [r for r in removing if r in props]
            new = {k: v for k, v in props.items() if k not in removed} | setting
            bounds.check_namespace_loadable(new, ".".join(namespace.parts))
            try:
                new_marker = {"properties": new}
                self.store.write(authorize, namespace.repo, branch, namespace.marker, new_marker, if_match=stored.etag)
            except errors.PreconditionFailed:
                continue  # another update came first: apply ours to what it left
            return PropertiesUpdate(sorted(setting), removed, missing)
        raise errors.TooManyTries(f"namespace {'.'.join(namespace.parts)} kept changing")

    def drop(self, authorize: Authorize, namespace: Namespace) -> None:
        namespace.need_names()
        authorize([Permission("fs:DeleteObject", object_arn(namespace.repo, namespace.marker))])
        branch = self.store.check_branch(namespace)
        self._require(authorize, namespace)
        for name, _ in self.store.children(authorize, namespace.repo, branch, namespace.directory, amount=2):
            if name != _MARKER_DIRECTORY:
                raise NamespaceNotEmpty(f"namespace {'.'.join(namespace.parts)} is not empty: it holds {name}")
        self.store.delete(authorize, namespace.repo, branch, namespace.marker)

    def to_json(self, namespace: Namespace, properties: dict[str, str]) -> Json:
        return {"namespace": namespace.parts, "properties": properties}
