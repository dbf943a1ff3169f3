"""POST /repositories/{repository}/refs/{branch}/symlink: lakeFS's createSymlinkFile, Hive/Athena symlink
manifests of a branch's objects under its storage namespace (graveler/reads/symlinks.py), answered 201 StorageURI."""

from __future__ import annotations

from chalice import Blueprint, Response

from chalicelib.graveler.reads.symlinks import write_symlinks

from . import names
from .endpoint import json_response, route, services
from .params import Query

__all__ = ["bp"]

bp = Blueprint(__name__)


@route(bp, "/repositories/{repository}/refs/{branch}/symlink", ["POST"])
def create_symlink_file(repository: str, branch: str) -> Response:
    location = Query(bp.current_request.query_params).string("location")
    engine = services().engine
    root, _ = write_symlinks(
        engine.objects, engine.repositories, names.repository(repository), names.branch(branch), location
    )
    return json_response({"location": root}, 201)
