"""ListBuckets (GET /): the repositories, as buckets."""

from __future__ import annotations

from chalicelib.graveler.records import Repository, RepositoryState

from ..context import Context
from ..model import Response
from ..xmlio import element, iso8601
from .common import owner, xml_response

__all__ = ["list_buckets"]


def list_buckets(ctx: Context) -> Response:
    ctx.authorize("fs:ListRepositories", "*")
    repositories: list[Repository] = []
    after = ""
    while True:
        page = ctx.engine.repositories.list_repositories(after=after, amount=1000)
        repositories.extend(r for r in page.results if r.state is RepositoryState.ACTIVE)
        if not page.has_more:
            break
        after = page.next_offset
    buckets = [
        element("Bucket", children=[element("Name", r.id), element("CreationDate", iso8601(r.creation_date))])
        for r in repositories
    ]
    return xml_response("ListAllMyBucketsResult", [owner(ctx.user_id), element("Buckets", children=buckets)])
