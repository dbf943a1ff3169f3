"""DeleteObjects (POST /{repo}?delete): up to 1,000 keys, possibly on several branches, each reported alone."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import defaultdict

from chalicelib.graveler import errors

from ..context import Context, object_arn, split_key
from ..errors import S3Error, from_graveler
from ..model import Response
from ..xmlio import MalformedXml, child_text, children, element, parse
from .common import xml_response

__all__ = ["delete_objects"]

MAX_KEYS = 1000


def _error(key: str, error: S3Error) -> ET.Element:
    return element(
        "Error", children=[element("Key", key), element("Code", error.code), element("Message", error.message)]
    )


def delete_objects(ctx: Context) -> Response:
    try:
        root = parse(ctx.body, "Delete")
    except MalformedXml as e:
        raise S3Error("MalformedXML", str(e)) from e
    quiet = (child_text(root, "Quiet") or "").strip().lower() == "true"
    objects = children(root, "Object")
    if not objects or len(objects) > MAX_KEYS:
        raise S3Error("MalformedXML", f"a delete request names 1 to {MAX_KEYS} objects")
    ctx.engine.repositories.get_repository(ctx.bucket)
    failed: dict[str, S3Error] = {}
    keys: list[str] = []
    by_branch: dict[str, list[tuple[str, str]]] = defaultdict(list)  # branch -> [(key, path)]
    for obj in objects:
        key = child_text(obj, "Key") or ""
        keys.append(key)
        try:
            if child_text(obj, "VersionId"):
                raise S3Error("NotImplemented", "object versions are not supported")
            ref, slash, rest = key.partition("/")
            if ref and slash and not rest:
                # S3A deletes the directory marker of every parent after a write, ``main/`` among them: no
                # object has an empty path, and deleting a missing key succeeds in S3 (reported Deleted).
                ctx.authorize("fs:DeleteObject", object_arn(ctx.bucket, rest))
                continue
            branch, path = split_key(key)
            ctx.authorize("fs:DeleteObject", object_arn(ctx.bucket, path))
        except S3Error as e:
            failed[key] = e
            continue
        except errors.GravelerError as e:
            failed[key] = from_graveler(e)
            continue
        by_branch[branch].append((key, path))
    for branch, items in by_branch.items():
        try:
            failures = ctx.engine.objects.delete_objects(ctx.bucket, branch, [path for _, path in items])
        except errors.RepositoryNotFound:
            raise
        except errors.BranchNotFound:
            for key, _ in items:
                failed[key] = S3Error("NoSuchBranch", f"{branch!r} is not a branch: writes need a branch")
            continue
        except errors.GravelerError as e:
            for key, _ in items:
                failed[key] = from_graveler(e)
            continue
        by_path = {path: key for key, path in items}
        for path, error in failures:
            failed[by_path[path]] = from_graveler(error)
    results: list[ET.Element] = []
    for key in dict.fromkeys(keys):
        if key in failed:
            results.append(_error(key, failed[key]))
        elif not quiet:
            results.append(element("Deleted", children=[element("Key", key)]))
    return xml_response("DeleteResult", results)
