"""Graveler records to the JSON shapes of lakeFS's OpenAPI (Repository, Ref, Commit, ObjectStats, ...)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import orjson

from chalicelib.auth.records import Credential, User
from chalicelib.graveler.reads.listing import MAX_AMOUNT, ListedRows
from chalicelib.graveler.records import Branch, Commit, Diff, DiffType, Entry, ListedObject, Page, Repository, Tag
from chalicelib.usage import InstallationReport

# lakeFS's commit record version: 1 since parents are stored first-parent first (what Lakelet always does).
COMMIT_VERSION = 1
OBJECT = "object"
COMMON_PREFIX = "common_prefix"
SINGLE_STORAGE_ID = ""


def pagination(page: Page[Any]) -> dict[str, Any]:
    """lakeFS's Pagination; ``max_per_page`` is the server's maximum page size (1000), whatever was asked."""
    return {
        "has_more": page.has_more,
        "next_offset": page.next_offset,
        "results": len(page.results),
        "max_per_page": MAX_AMOUNT,
    }


def listing[T](page: Page[T], item: Callable[[T], dict[str, Any]]) -> dict[str, Any]:
    return {"pagination": pagination(page), "results": [item(r) for r in page.results]}


def repository(repo: Repository) -> dict[str, Any]:
    return {
        "id": repo.id,
        "creation_date": repo.creation_date,
        "default_branch": repo.default_branch_id,
        # lakeFS's id of the data store, for servers with several; Lakelet has one, whose id is "".
        "storage_id": SINGLE_STORAGE_ID,
        "storage_namespace": repo.storage_namespace,
        "read_only": repo.read_only,
    }


def ref(record: Branch | Tag) -> dict[str, Any]:
    return {"id": record.id, "commit_id": record.commit_id}


def commit(record: Commit) -> dict[str, Any]:
    return {
        "id": record.id,
        "parents": list(record.parents),
        "committer": record.committer,
        "message": record.message,
        # Seconds, as lakeFS shows them; the record keeps the sub-second time it orders the log by.
        "creation_date": int(record.creation_date),
        "meta_range_id": record.meta_range_id,
        "metadata": dict(record.metadata),
        "generation": record.generation,
        "version": COMMIT_VERSION,
    }


def object_stats(
    path: str,
    entry: Entry,
    user_metadata: bool = True,
    presigned: str | None = None,
    presign_expiry: int | None = None,
) -> dict[str, Any]:
    """ObjectStats of one entry; with ``presigned`` the physical address is that URL (lakeFS's presign=true)."""
    stats: dict[str, Any] = {
        "path": path,
        "path_type": OBJECT,
        "physical_address": entry.physical_address if presigned is None else presigned,
        "checksum": entry.etag,
        "size_bytes": entry.size,
        "mtime": entry.mtime,
        "content_type": entry.content_type,
    }
    if presigned is not None and presign_expiry is not None:
        stats["physical_address_expiry"] = presign_expiry
    if user_metadata:
        stats["metadata"] = dict(entry.user_metadata)
    return stats


def common_prefix(path: str) -> dict[str, Any]:
    # lakeFS fills the required ObjectStats fields of a common prefix with zero values.
    return {"path": path, "path_type": COMMON_PREFIX, "physical_address": "", "checksum": "", "mtime": 0}


def listed_object(item: ListedObject, user_metadata: bool = True) -> dict[str, Any]:
    if item.entry is None:
        return common_prefix(item.key)
    return object_stats(item.key, item.entry, user_metadata)


def encoded_listing(page: Page[Any], rows: ListedRows, user_metadata: bool = True) -> bytes:
    """The ObjectStatsList of a listing page as orjson's bytes, built from ``rows`` (the page's results).

    The row dicts never leave this function, so a row's stored user metadata (canonical JSON text) goes into the
    output as it is, a fragment orjson copies without parsing, and the rows without metadata share one: one dict
    per row instead of two, and no JSON parse of what is re-encoded at once.
    """
    body = {"pagination": pagination(page), "results": _row_stats(rows, user_metadata)}
    return orjson.dumps(body)


_EMPTY_METADATA_JSON = orjson.Fragment(b"{}")


def _metadata_json(value: str | dict[str, str]) -> orjson.Fragment | dict[str, str]:
    if isinstance(value, dict):
        return value
    return _EMPTY_METADATA_JSON if value == "{}" else orjson.Fragment(value)


def _row_stats(rows: ListedRows, user_metadata: bool) -> list[dict[str, Any]]:
    """``listed_object`` of every row, read straight from the columns (no entry per row), metadata as JSON."""
    columns = zip(rows.keys, rows.addresses, rows.sizes, rows.etags, rows.mtimes, rows.content_types, strict=True)
    metadata: list[orjson.Fragment | dict[str, str]]
    if rows.metadata.count("{}") == len(rows.metadata):
        metadata = [_EMPTY_METADATA_JSON] * len(rows.metadata)  # the usual page: no row has user metadata
    else:
        metadata = [_metadata_json(value) for value in rows.metadata]
    results = [
        {
            "path": key,
            "path_type": OBJECT,
            "physical_address": address,
            "checksum": etag,
            "size_bytes": size,
            "mtime": mtime,
            "content_type": content_type,
            "metadata": meta,
        }
        if address is not None
        else common_prefix(key)
        for (key, address, size, etag, mtime, content_type), meta in zip(columns, metadata, strict=True)
    ]
    if not user_metadata:
        for stats in results:
            stats.pop("metadata", None)
    return results


def diff(item: Diff) -> dict[str, Any]:
    """lakeFS's Diff: an object row always says size_bytes (0 when there is no new entry: removed, or a conflict
    deleted on the right), a prefix_changed row (a common prefix folded by the delimiter) never does."""
    if item.type is DiffType.PREFIX_CHANGED:
        return {"type": str(item.type), "path": item.key, "path_type": COMMON_PREFIX}
    size = 0 if item.entry is None else item.entry.size
    return {"type": str(item.type), "path": item.key, "path_type": OBJECT, "size_bytes": size}


def credentials_with_secret(credential: Credential, secret: str) -> dict[str, Any]:
    return {
        "access_key_id": credential.access_key_id,
        "secret_access_key": secret,
        "creation_date": credential.creation_date,
    }


def user(record: User) -> dict[str, Any]:
    """lakeFS's User as its store answers it (GET /user, a user, the lists of users and of a group's members):
    lakeFS reads an unset friendly name and email back as empty strings, present, not absent. Lakelet keeps
    neither, so both are always ""."""
    return {"id": record.id, "creation_date": record.creation_date, "friendly_name": "", "email": ""}


def object_errors(failures: Sequence[tuple[str, int, str]]) -> dict[str, Any]:
    return {"errors": [{"path": path, "status_code": status, "message": message} for path, status, message in failures]}


def usage_report(report: InstallationReport) -> dict[str, Any]:
    """lakeFS's InstallationUsageReport."""
    return {
        "installation_id": report.installation_id,
        "reports": [{"year": r.year, "month": r.month, "count": r.count} for r in report.reports],
    }


def usage_report_text(report: InstallationReport) -> str:
    """lakeFS's text form of the report (``Accept: text/plain``), line for line."""
    lines = [f"Usage for installation ID: {report.installation_id}"]
    lines += [f"{r.year}-{r.month:02d}: {r.count:12d}" for r in report.reports]
    return "\n".join(lines) + "\n"
