"""``lakelet local clone|status|pull|commit|checkout``: a local directory kept in step with a branch path, as
``lakectl local``. The stack's ``export`` and ``import`` of a data directory are hung on this group by
lakelet/cli.py (the stack itself is ``lakelet up``).

The directory's index, ``.lakefs_ref.yaml`` as lakectl's, records the source (``src: lakefs://repo/branch/path/``)
and the commit it was last synced with (``at_head``). Local changes are found by checksum (MD5 against the
objects' ETags at ``at_head``); remote ones by diffing ``at_head`` with the branch head.
"""

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from lakelet.commands.api import q
from lakelet.commands.common import JsonOpt, key_values
from lakelet.commands.context import api, want_json
from lakelet.commands.diff import diff_path
from lakelet.commands.errors import CLIError
from lakelet.commands.output import out
from lakelet.commands.uri import URI, parse

if TYPE_CHECKING:
    from lakelet.commands.transfer import Remote

INDEX = ".lakefs_ref.yaml"


app = typer.Typer(no_args_is_help=True)


@dataclass
class Index:
    directory: Path
    src: URI  # repository, branch, path prefix ("" or ending in /)
    at_head: str

    @classmethod
    def load(cls, directory: Path) -> "Index":
        import yaml

        path = directory / INDEX
        try:
            data = yaml.safe_load(path.read_text()) or {}
        except FileNotFoundError:
            raise CLIError(
                f"{directory} is not a lakelet local directory (no {INDEX})",
                "clone one with 'lakelet local clone lakefs://REPO/BRANCH/PATH DIR'",
            ) from None
        return cls(directory, parse(str(data["src"]), ref=True), str(data["at_head"]))

    def save(self) -> None:
        import yaml

        (self.directory / INDEX).write_text(yaml.safe_dump({"src": str(self.src), "at_head": self.at_head}))

    def at(self, ref: str) -> URI:
        return URI(self.src.repository, ref, self.src.path)


def _prefix(path: str) -> str:
    return path if not path or path.endswith("/") else path + "/"


def local_files(directory: Path) -> dict[str, Path]:
    from lakelet.commands.download import is_dotgit
    from lakelet.commands.transfer import PART_SUFFIX

    files: dict[str, Path] = {}
    for root, dirs, names in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if not is_dotgit(d))
        for name in names:
            local = Path(root) / name
            rel = local.relative_to(directory).as_posix()
            if rel == INDEX or is_dotgit(name) or name.endswith(PART_SUFFIX) or not local.is_file():
                continue
            files[rel] = local
    return files


@dataclass(frozen=True, slots=True)
class Change:
    path: str  # relative to the directory / prefix
    type: str  # added | removed | modified
    source: str  # local | remote


def tracked(remotes: "Iterable[Remote]", prefix: str) -> "dict[str, Remote]":
    """The objects a directory holds, by path relative to it: those a download writes (transfer.local_paths).
    The others (inside .git, unsafe names, ...) are neither downloaded nor, being absent here, removed by a
    commit."""
    from lakelet.commands.download import local_paths

    by_rel = {r.path[len(prefix) :]: r for r in remotes}
    kept, _ = local_paths(list(by_rel))
    return {rel: by_rel[rel] for rel in kept}


def local_changes(index: Index) -> list[Change]:
    """What the directory changed since ``at_head``, by checksum."""
    from lakelet.commands.transfer import list_remote, md5_file

    prefix = index.src.path
    remote = tracked(list_remote(api(), index.at(index.at_head), prefix), prefix)
    files = local_files(index.directory)
    changes = []
    for rel in sorted(set(remote) | set(files)):
        r, f = remote.get(rel), files.get(rel)
        if r is None:
            changes.append(Change(rel, "added", "local"))
        elif f is None:
            changes.append(Change(rel, "removed", "local"))
        elif f.stat().st_size != r.size or md5_file(f) != r.checksum:
            changes.append(Change(rel, "modified", "local"))
    return changes


def branch_head(index: Index) -> str:
    a = api()
    branch = a.get(f"read branch {index.src}", f"/repositories/{q(index.src.repository)}/branches/{q(index.src.ref)}")
    return str(branch["commit_id"])


def remote_changes(index: Index, head: str) -> list[Change]:
    if head == index.at_head:
        return []
    a = api()
    kinds = {"added": "added", "removed": "removed", "changed": "modified"}
    diffs = a.pages(
        "diff the branch since the last sync",
        diff_path(index.src.repository, index.at_head, head),
        {"type": "two_dot", "prefix": index.src.path or None},
    )
    return [
        Change(d["path"][len(index.src.path) :], kinds.get(d["type"], d["type"]), "remote")
        for d in diffs
        if d.get("path_type") == "object"
    ]


def sync_to(index: Index, ref: str, parallelism: int) -> None:
    """Make the directory exactly the branch path at ``ref`` (a commit id): download what differs, delete the
    rest, then record ``ref`` as at_head."""
    from lakelet.commands.download import download
    from lakelet.commands.transfer import list_remote

    uri = index.at(ref)
    download(api(), uri, index.directory, True, parallelism, None)
    wanted = set(tracked(list_remote(api(), uri, index.src.path), index.src.path))
    for rel, local in local_files(index.directory).items():
        if rel not in wanted:
            local.unlink()
    index.at_head = ref
    index.save()


Parallelism = Annotated[int, typer.Option("--parallelism", "-p", min=1, max=256, help="files in flight")]


@app.command("clone")
def clone(
    source: Annotated[str, typer.Argument(help="lakefs://REPOSITORY/BRANCH/PATH")],
    directory: Annotated[Path | None, typer.Argument(help="local directory (default: the path's last name)")] = None,
    parallelism: Parallelism = 10,
) -> None:
    """Clone a branch path into a new local directory."""
    uri = parse(source, ref=True)
    uri = URI(uri.repository, uri.ref, _prefix(uri.path))
    target = directory or Path(uri.path.rstrip("/").rsplit("/", 1)[-1] or uri.repository)
    if target.exists() and any(target.iterdir()):
        raise CLIError(f"directory {target} is not empty", "clone into a new or empty directory")
    target.mkdir(parents=True, exist_ok=True)
    index = Index(target, uri, "")
    head = branch_head(index)
    sync_to(index, head, parallelism)
    out().info(f"cloned {uri} at {head[:12]} into {target}")


@app.command("init")
def init(
    source: Annotated[str, typer.Argument(help="lakefs://REPOSITORY/BRANCH/PATH")],
    directory: Annotated[Path, typer.Argument(help="local directory (default: the current one)")] = Path("."),
    force: Annotated[bool, typer.Option("--force", help="overwrite an existing link to a lakeFS path")] = False,
    gitignore: Annotated[
        bool, typer.Option("--gitignore/--no-gitignore", help="add the directory to the enclosing git's .gitignore")
    ] = True,
) -> None:
    """Link a local directory with a lakeFS path, without downloading anything: its files count as local changes
    until 'lakelet local commit' or 'pull'."""
    uri = parse(source, ref=True)
    if uri.path and not uri.path.endswith("/") and _is_object(uri):
        raise CLIError(f"lakeFS path {uri} is an existing object and cannot be used as a reference source", "")
    uri = URI(uri.repository, uri.ref, _prefix(uri.path))
    if (directory / INDEX).exists() and not force:
        raise CLIError(
            f"directory '{directory}' already linked to a lakeFS path", "run command with --force to overwrite"
        )
    directory.mkdir(parents=True, exist_ok=True)
    index = Index(directory, uri, "")
    index.at_head = branch_head(index)
    index.save()
    if gitignore:
        _ignore_in_git(directory)
    # As lakectl: the remote is shown as a prefix, with its trailing "/".
    remote = str(uri) if uri.path else f"{uri}/"
    out().line(f"Successfully linked local directory '{directory}' with remote '{remote}'")


def _is_object(uri: URI) -> bool:
    status, _ = api().raw(
        f"stat {uri}",
        "GET",
        f"/repositories/{q(uri.repository)}/refs/{q(uri.ref)}/objects/stat",
        {"path": uri.path},
        ok=(200, 404),
    )
    return status == 200


def _ignore_in_git(directory: Path) -> None:
    """lakectl's --gitignore: the directory goes in the .gitignore of the git work tree around it, if any."""
    here = directory.resolve()
    for root in (here, *here.parents):
        if (root / ".git").exists():
            if root == here:
                return  # the git root itself is never ignored
            entry = here.relative_to(root).as_posix() + "/"
            ignore = root / ".gitignore"
            lines = ignore.read_text().splitlines() if ignore.exists() else []
            if entry not in lines:
                ignore.write_text("\n".join([*lines, entry]) + "\n")
            return


@app.command("list")
def list_(
    directory: Annotated[Path, typer.Argument(help="where to look (default: the current directory)")] = Path("."),
    json_out: JsonOpt = False,
) -> None:
    """Find and list the directories under DIRECTORY that are linked with lakeFS."""
    rows = []
    for root, dirs, names in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if d != ".git")
        if INDEX in names:
            index = Index.load(Path(root))
            rows.append((Path(root).relative_to(directory).as_posix(), str(index.src), index.at_head))
    if want_json(json_out):
        out().json([{"directory": d, "remote_uri": r, "synced_commit": c} for d, r, c in rows])
        return
    out().table(["Directory", "Remote URI", "Synced commit"], rows)


@app.command("status")
def status(
    directory: Annotated[Path, typer.Argument(help="local directory")] = Path("."),
    local_only: Annotated[bool, typer.Option("--local", "-l", help="local changes only")] = False,
    json_out: JsonOpt = False,
) -> None:
    """Show local changes (by checksum) and, unless -l, changes on the branch since the last sync."""
    index = Index.load(directory)
    changes = local_changes(index)
    if not local_only:
        changes += remote_changes(index, branch_head(index))
    if want_json(json_out):
        out().json([{"path": c.path, "type": c.type, "source": c.source} for c in changes])
        return
    out().info(f"directory {directory} tracks {index.src} at {index.at_head[:12]}")
    if not changes:
        out().line("No diff found.")
        return
    out().table(["SOURCE", "CHANGE", "PATH"], [(c.source, c.type, c.path) for c in changes])


@app.command("pull")
def pull(
    directory: Annotated[Path, typer.Argument(help="local directory")] = Path("."),
    force: Annotated[bool, typer.Option("--force", help="overwrite local changes")] = False,
    parallelism: Parallelism = 10,
) -> None:
    """Bring the directory to the branch's head."""
    index = Index.load(directory)
    if not force and local_changes(index):
        raise CLIError(f"{directory} has local changes", "commit them ('lakelet local commit') or pull --force")
    head = branch_head(index)
    sync_to(index, head, parallelism)
    out().info(f"{directory} is at {head[:12]}")


@app.command("checkout")
def checkout(
    directory: Annotated[Path, typer.Argument(help="local directory")] = Path("."),
    ref: Annotated[str | None, typer.Option("--ref", help="another ref of the repository")] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="discard local changes")] = False,
    parallelism: Parallelism = 10,
) -> None:
    """Reset the directory to its last synced commit, or to --ref, discarding local changes."""
    index = Index.load(directory)
    if not yes and local_changes(index):
        raise CLIError(f"{directory} has local changes that checkout would discard", "pass --yes")
    target = index.at_head
    if ref:
        a = api()
        target = str(a.get(f"resolve {ref}", f"/repositories/{q(index.src.repository)}/commits/{q(ref)}")["id"])
    sync_to(index, target, parallelism)
    out().info(f"{directory} is at {target[:12]}")


@app.command("commit")
def commit(
    directory: Annotated[Path, typer.Argument(help="local directory")] = Path("."),
    message: Annotated[str, typer.Option("--message", "-m", help="commit message")] = "",
    meta: Annotated[list[str] | None, typer.Option("--meta", help="KEY=VALUE (repeatable)")] = None,
    force: Annotated[bool, typer.Option("--force", help="commit even if the branch moved since the last sync")] = False,
    parallelism: Parallelism = 10,
    json_out: JsonOpt = False,
) -> None:
    """Upload the directory's changes to the branch path and commit them."""
    from lakelet.commands.commit import print_commit, run_commit
    from lakelet.commands.fs import delete_objects
    from lakelet.commands.transfer import list_remote
    from lakelet.commands.upload import upload

    if not message:
        raise typer.BadParameter("a commit needs a message (-m)")
    index = Index.load(directory)
    head = branch_head(index)
    if head != index.at_head and not force:
        raise CLIError(
            f"the branch moved since {directory} was synced ({index.at_head[:12]} -> {head[:12]})",
            "run 'lakelet local pull' first, or commit --force",
        )
    changes = local_changes(index)
    if not changes:
        raise CLIError("no local changes to commit", "change some files first")
    a = api()
    prefix = index.src.path
    branch = index.at(index.src.ref)
    existing: dict[str, Remote] = {r.path: r for r in list_remote(a, branch, prefix)}
    touched = {c.path for c in changes if c.type in ("added", "modified")}
    if touched:
        upload(a, branch, directory, True, parallelism, None, existing=existing, only=touched)
    removed = [prefix + c.path for c in changes if c.type == "removed"]
    for start in range(0, len(removed), 1000):
        errors = delete_objects("remove deleted files", branch, removed[start : start + 1000])
        if errors:
            raise CLIError(
                f"could not remove {len(errors)} deleted file(s), e.g. {errors[0].get('path')}: "
                f"{errors[0].get('message')}",
                "check permissions and retry",
            )
    result: dict[str, Any] = run_commit(branch, {"message": message, "metadata": key_values(meta, "--meta")})
    index.at_head = str(result["id"])
    index.save()
    print_commit(branch, result, json_out)
