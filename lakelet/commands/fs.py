"""``lakelet fs ls|cat|stat|rm|presign|update-metadata|upload|download``."""

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from lakelet.commands.api import q
from lakelet.commands.common import JsonOpt, key_values
from lakelet.commands.context import api, emit, want_json
from lakelet.commands.errors import CLIError
from lakelet.commands.output import out, timestamp
from lakelet.commands.uri import URI, parse
from lakelet.units import human_bytes

app = typer.Typer(no_args_is_help=True)
PathArg = Annotated[str, typer.Argument(help="lakefs://REPOSITORY/REF/PATH")]
Parallelism = Annotated[int, typer.Option("--parallelism", "-p", min=1, max=256, help="files in flight")]
DEFAULT_PARALLELISM = 10  # measured: more threads only add contention on a small server (bench/cli_transfer.py)
PreSign = Annotated[
    bool | None,
    typer.Option(
        "--pre-sign/--no-pre-sign", help="move bytes through presigned S3 URLs (default: when the server supports them)"
    ),
]


@app.command("ls")
def ls(
    uri_text: PathArg,
    recursive: Annotated[bool, typer.Option("--recursive", "-r", help="list everything below")] = False,
    json_out: JsonOpt = False,
) -> None:
    """List objects and common prefixes under a path."""
    uri = parse(uri_text, ref=True)
    a = api()
    prefix = uri.path
    items = list(
        a.pages(
            f"list {uri}",
            f"{_ref_path(uri)}/objects/ls",
            {"prefix": prefix, "delimiter": None if recursive else "/", "user_metadata": False},
        )
    )
    if want_json(json_out):
        out().json(items)
        return
    # As lakectl: names are shown after the prefix's last "/", so 'ls .../events' shows 'events/'.
    trim = prefix[: prefix.rfind("/") + 1]
    rows = []
    for i in items:
        shown = i["path"][len(trim) :] if not recursive else i["path"]
        if i.get("path_type") == "common_prefix":
            rows.append(("common_prefix", "", "", shown))
        else:
            rows.append(("object", timestamp(i.get("mtime")), human_bytes(i.get("size_bytes")), shown))
    out().table(["TYPE", "MODIFIED", "SIZE", "PATH"], rows)


@app.command("cat")
def cat(uri_text: PathArg, pre_sign: PreSign = None) -> None:
    """Write an object's content to stdout."""
    uri = parse(uri_text, ref=True, path=True)
    a = api()
    url = a.url(
        f"/repositories/{q(uri.repository)}/refs/{q(uri.ref)}/objects", {"path": uri.path, "presign": bool(pre_sign)}
    )
    response = a.http.request("GET", url, headers=a.auth_headers, redirect=False, preload_content=False)
    try:
        if response.status in (301, 302, 303, 307):
            location = response.headers["Location"]
            response.release_conn()
            response = a.http.request("GET", location, redirect=False, preload_content=False)
        if response.status != 200:
            from lakelet.commands.errors import from_status

            raise from_status(f"read {uri}", response.status, response.read(), response.reason or "")
        for block in response.stream(1024 * 1024):
            sys.stdout.buffer.write(block)
        sys.stdout.buffer.flush()
    finally:
        response.release_conn()


@app.command("stat")
def stat(uri_text: PathArg, pre_sign: PreSign = None, json_out: JsonOpt = False) -> None:
    """Show an object's metadata."""
    uri = parse(uri_text, ref=True, path=True)
    print_stat(_stat(f"stat {uri}", uri, pre_sign or None), json_out)


def print_stat(s: dict[str, Any], json_out: bool) -> None:
    if want_json(json_out):
        out().json(s)
        return
    lines = [
        f"Path: {s['path']}",
        f"Modified Time: {timestamp(s.get('mtime'))}",
        f"Size: {s.get('size_bytes')} bytes",
        f"Human Size: {human_bytes(s.get('size_bytes'))}",
        f"Physical Address: {s.get('physical_address')}",
        f"Checksum: {s.get('checksum')}",
        f"Content-Type: {s.get('content_type')}",
    ]
    if s.get("metadata"):
        lines.append("Metadata:")
        lines += [f"        {k} = {v}" for k, v in sorted(s["metadata"].items())]
    out().line("\n".join(lines))


@app.command("stage")
def stage(
    uri_text: PathArg,
    location: Annotated[str, typer.Option("--location", help="the object's full address, e.g. s3://bucket/key")],
    size: Annotated[int, typer.Option("--size", min=0, help="the object's size in bytes")],
    checksum: Annotated[str, typer.Option("--checksum", help="the object's MD5 as hex")],
    mtime: Annotated[int, typer.Option("--mtime", help="modified time, Unix seconds (default: now)")] = 0,
    content_type: Annotated[str, typer.Option("--content-type", help="MIME type of the contents")] = "",
    meta: Annotated[list[str] | None, typer.Option("--meta", help="KEY=VALUE metadata (repeatable)")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Link an object already stored with a path (an uncommitted change): one of the repository's own objects (a
    zero-copy copy) or one under the deployment's allowed import locations. lakectl refuses an address inside the
    namespace before asking; lakeFS's server takes one, and so does Lakelet's, which decides (and says why not)."""
    from lakelet.commands.common import key_values

    uri = parse(uri_text, ref=True, path=True)
    a = api()
    body: dict[str, Any] = {
        "physical_address": location,
        "checksum": checksum,
        "size_bytes": size,
        "content_type": content_type,
        "metadata": key_values(meta, "--meta"),
    }
    if mtime:
        body["mtime"] = mtime
    _, staged = a.raw(f"stage {location} at {uri}", "PUT", f"{_branch_path(uri)}/objects", {"path": uri.path}, body)
    print_stat(staged, json_out)


@app.command("rm")
def rm(
    uri_text: PathArg,
    recursive: Annotated[bool, typer.Option("--recursive", "-r", help="remove everything under the path")] = False,
) -> None:
    """Remove an object, or everything under a prefix with -r (uncommitted until you commit)."""
    uri = parse(uri_text, ref=True)
    a = api()
    if not recursive:
        if not uri.path:
            raise CLIError(f"{uri} names no object", "give a path, or -r to remove a prefix")
        # The server deletes a missing path as a no-op: say what lakectl's server says (404) instead of "removed".
        if not _exists(uri):
            below = _has_objects_below(uri)
            raise CLIError(
                f"remove {uri} failed (404 object not found)",
                "it is a prefix: remove everything under it with -r" if below else "check the path ('lakelet fs ls')",
            )
        a.raw(f"remove {uri}", "DELETE", f"{_branch_path(uri)}/objects", {"path": uri.path})
        out().info(f"removed {uri}")
        return
    from lakelet.commands.transfer import list_remote

    paths = [r.path for r in list_remote(a, uri, uri.path)]
    for start in range(0, len(paths), 1000):
        batch = paths[start : start + 1000]
        errors = delete_objects(f"remove under {uri}", uri, batch)
        if errors:
            first = errors[0]
            raise CLIError(
                f"could not remove {len(errors)} object(s), e.g. {first.get('path')}: {first.get('message')}",
                "check permissions and retry",
            )
    out().info(f"removed {len(paths)} object(s) under {uri}")


@app.command("presign")
def presign(uri_text: PathArg, json_out: JsonOpt = False) -> None:
    """Print a presigned URL to read an object straight from storage."""
    uri = parse(uri_text, ref=True, path=True)
    s = _stat(f"presign {uri}", uri, True)
    address = str(s.get("physical_address") or "")
    if not address.startswith("http"):
        raise CLIError("the server does not presign URLs for this object", "read it with 'lakelet fs cat'")
    emit({"url": address, "expiry": s.get("physical_address_expiry")}, address, json_out)


@app.command("update-metadata")
def update_metadata(
    uri_text: PathArg,
    metadata: Annotated[list[str], typer.Option("--metadata", help="KEY=VALUE (repeatable)")],
    json_out: JsonOpt = False,
) -> None:
    """Set user metadata on an object (PUT .../objects/stat/user_metadata)."""
    uri = parse(uri_text, ref=True, path=True)
    values = key_values(metadata, "--metadata")
    a = api()
    path = f"/repositories/{q(uri.repository)}/branches/{q(uri.ref)}/objects/stat/user_metadata"
    status, answer = a.raw(
        f"update metadata of {uri}",
        "PUT",
        path,
        {"path": uri.path},
        {"set": values},
        ok=(200, 201, 204, 403, 404, 405, 501),
    )
    # A server without the route answers 405/501, a lakeFS-style 404, or (chalice's router, like API
    # Gateway's) a 403 asking for a SigV4 header.
    no_route = status == 403 and "Authorization header requires" in str((answer or {}).get("message", ""))
    if status == 403 and not no_route:
        from lakelet.commands.errors import from_status

        raise from_status(f"update metadata of {uri}", 403, None, str((answer or {}).get("message", "")))
    if status in (405, 501) or no_route or (status == 404 and _exists(uri)):
        raise CLIError(
            "this server cannot update object metadata (no PUT .../objects/stat/user_metadata)",
            "upgrade the server, or upload the object again with its metadata",
        )
    if status == 404:
        raise CLIError(f"update metadata of {uri} failed (404 object not found)", "check the path and branch")
    if want_json(json_out):
        out().json({"path": uri.path, "metadata": values})
    else:
        out().info(f"updated metadata of {uri}")


def _exists(uri: URI) -> bool:
    try:
        _stat("stat", uri, None)
    except CLIError:
        return False
    return True


def _has_objects_below(uri: URI) -> bool:
    _, page = api().raw(
        f"list {uri}", "GET", f"{_ref_path(uri)}/objects/ls", {"prefix": uri.path.rstrip("/") + "/", "amount": 1}
    )
    return bool((page or {}).get("results"))


def _ref_path(uri: URI) -> str:
    return f"/repositories/{q(uri.repository)}/refs/{q(uri.ref)}"


def _branch_path(uri: URI) -> str:
    return f"/repositories/{q(uri.repository)}/branches/{q(uri.ref)}"


def _stat(what: str, uri: URI, presign: bool | None) -> dict[str, Any]:
    stat: dict[str, Any] = api().get(what, f"{_ref_path(uri)}/objects/stat", {"path": uri.path, "presign": presign})
    return stat


def delete_objects(what: str, uri: URI, paths: list[str]) -> list[dict[str, Any]]:
    """Delete up to 1,000 objects of a branch in one call; the server's per-path errors."""
    _, result = api().raw(what, "POST", f"{_branch_path(uri)}/objects/delete", None, {"paths": paths})
    return list((result or {}).get("errors") or [])


@app.command("upload")
def upload(
    uri_text: Annotated[str, typer.Argument(help="lakefs://REPOSITORY/BRANCH/PATH (a prefix ending in / with -r)")],
    source: Annotated[Path, typer.Option("--source", "-s", help="local file, or directory with -r")],
    recursive: Annotated[bool, typer.Option("--recursive", "-r", help="upload a directory tree")] = False,
    parallelism: Parallelism = DEFAULT_PARALLELISM,
    pre_sign: PreSign = None,
    content_type: Annotated[str | None, typer.Option(help="content type (default: guessed from the name)")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Upload files in parallel; files already there with the same checksum are skipped (resume by re-running)."""
    from lakelet.commands.upload import upload as run_upload

    uri = parse(uri_text, ref=True)
    progress = run_upload(api(), uri, source, recursive, parallelism, pre_sign, content_type)
    if want_json(json_out):
        out().json(progress.counts())


@app.command("download")
def download(
    uri_text: PathArg,
    dest: Annotated[Path, typer.Argument(help="local file or directory (default: current directory)")] = Path("."),
    recursive: Annotated[bool, typer.Option("--recursive", "-r", help="download everything under the path")] = False,
    parallelism: Parallelism = DEFAULT_PARALLELISM,
    pre_sign: PreSign = None,
    json_out: JsonOpt = False,
) -> None:
    """Download objects in parallel; local files that already match are skipped."""
    from lakelet.commands.download import download as run_download

    uri = parse(uri_text, ref=True, path=not recursive)
    progress = run_download(api(), uri, dest, recursive, parallelism, pre_sign)
    if want_json(json_out):
        out().json(progress.counts())
