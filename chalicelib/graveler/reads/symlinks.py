"""Hive/Athena symlink manifests of a branch, as lakeFS's createSymlinkFile writes them.

For every "directory" of the objects under a location (the path up to an object's last ``/``), one text file
``<namespace>/symlinks/<repository>/<branch>/<directory>/symlink.txt`` lists the physical addresses of the
objects directly in it, one per line, in path order. A table declared with Hive's SymlinkTextInputFormat over
``.../symlinks/<repository>/<branch>/<table path>`` then reads the branch's data where it lies. Only
objects are listed: the listing is recursive, so each directory gets its own manifest.

One difference from lakeFS, on purpose: objects at the top level of the repository (no ``/`` in their path)
get ``.../<branch>/symlink.txt``; lakeFS writes ``.../<branch>//symlink.txt`` there (an empty directory
segment, which Hive and Athena cannot name as a table location). lakeFS also writes an empty manifest for the
top level when the first object listed is in a directory; nothing is written here for a directory without
objects, so an empty branch or location writes nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from .listing import MAX_AMOUNT

if TYPE_CHECKING:
    from ..usecases.objects import Objects
    from ..usecases.repositories import Repositories

__all__ = ["SYMLINKS_DIRECTORY", "manifest_address", "symlinks_root", "write_symlinks"]

SYMLINKS_DIRECTORY = "symlinks"
MANIFEST_NAME = "symlink.txt"


def symlinks_root(namespace: str) -> str:
    """What lakeFS answers as the StorageURI: the root of every repository's manifests in the namespace."""
    return f"{namespace.rstrip('/')}/{SYMLINKS_DIRECTORY}"


def manifest_address(namespace: str, repo_id: str, branch_id: str, directory: str) -> str:
    parts = [symlinks_root(namespace), repo_id, branch_id] + ([directory] if directory else [])
    return "/".join(parts + [MANIFEST_NAME])


def _directory(path: str) -> str:
    index = path.rfind("/")
    return path[:index] if index != -1 else ""


def _objects(objects: Objects, repo_id: str, branch_id: str, location: str) -> Iterator[tuple[str, str]]:
    """(path, physical address) of every object under ``location`` on the branch, staged ones included."""
    after = ""
    while True:
        page = objects.list_objects(repo_id, branch_id, prefix=location, after=after, amount=MAX_AMOUNT)
        for row in page.results:
            if row.entry is not None:
                yield str(row.key), row.entry.physical_address
        if not page.has_more or not page.results:
            return
        after = str(page.results[-1].key)


def write_symlinks(
    objects: Objects, repositories: Repositories, repo_id: str, branch_id: str, location: str = ""
) -> tuple[str, int]:
    """Writes the manifests of the objects under ``location`` (a path prefix) on the branch; returns the
    manifests' root (``<namespace>/symlinks``) and how many manifests were written. Raises RepositoryNotFound,
    NotFound (no such branch), StorageError."""
    repo = repositories.get_repository(repo_id)
    files = repositories.namespace_files(repo.storage_namespace)
    # The directories still open, outermost first, each with its addresses so far. A directory's objects need
    # not come together in path order ("a/b/c" sorts between "a/a" and "a/d"), but every path under "a/" does:
    # a directory is complete once a path outside it is listed. lakeFS writes a directory whenever the listing
    # leaves it, so the later part overwrites the earlier; here each manifest lists all its directory's objects.
    open_dirs: list[tuple[str, list[str]]] = []
    written = 0

    def close_until(directory: str | None) -> None:
        nonlocal written
        while open_dirs and (directory is None or not _contains(open_dirs[-1][0], directory)):
            name, addresses = open_dirs.pop()
            files.put(manifest_address(repo.storage_namespace, repo.id, branch_id, name), "\n".join(addresses).encode())
            written += 1

    for path, physical_address in _objects(objects, repo.id, branch_id, location):
        directory = _directory(path)
        close_until(directory)
        if not open_dirs or open_dirs[-1][0] != directory:
            open_dirs.append((directory, []))
        open_dirs[-1][1].append(physical_address)
    close_until(None)
    return symlinks_root(repo.storage_namespace), written


def _contains(outer: str, directory: str) -> bool:
    """Whether ``directory`` is ``outer`` or lies under it ("" is the top level, containing everything)."""
    return outer == "" or directory == outer or directory.startswith(outer + "/")
