"""What an import asks for, checked before anything is written: the locations (lakeFS's ImportLocation), the
commit's message and metadata, and whether each source lies inside the deployment's allowed import locations.

A ``common_prefix`` location maps every source key ``<prefix><rest>`` to ``<destination><rest>`` and replaces
everything under ``destination`` (so a re-import drops what the source no longer holds); an ``object`` location
maps one source key to the destination key itself. Destinations may not overlap: each one's keys form an interval
of the key space, and the intervals in destination order are the import's listing in key order.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from .. import errors
from ..runs.plan_json import Json
from ..validation import validate_path
from .errors import ImportNotAllowed

COMMON_PREFIX = "common_prefix"
OBJECT = "object"
LOCATION_TYPES = (COMMON_PREFIX, OBJECT)
_SCHEME = "s3://"
# Legacy us-east-1 buckets may hold capitals and underscores; nothing else belongs in a bucket name.
_BUCKET = re.compile(r"[A-Za-z0-9._-]{1,255}")
_PERCENT_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")


@dataclass(frozen=True, slots=True)
class ImportLocation:
    """One source: ``path`` is ``s3://bucket/key-or-prefix``; ``destination`` a path on the branch."""

    type: str
    path: str
    destination: str

    @property
    def bucket(self) -> str:
        return self.path.removeprefix(_SCHEME).partition("/")[0]

    @property
    def key(self) -> str:
        """The source key (object) or key prefix (common_prefix), without the bucket."""
        return self.path.removeprefix(_SCHEME).partition("/")[2]

    def destination_key(self, source_key: str) -> str:
        """Where a source key lands on the branch."""
        if self.type == OBJECT:
            return self.destination
        return self.destination + source_key[len(self.key) :]

    def source_key(self, destination_key: str) -> str:
        """The source key that lands at ``destination_key`` (which must lie under the destination)."""
        if self.type == OBJECT:
            return self.key
        return self.key + destination_key[len(self.destination) :]

    def covers(self, key: str) -> bool:
        """Whether ``key`` lies in this location's destination interval."""
        return key == self.destination if self.type == OBJECT else key.startswith(self.destination)

    def to_json(self) -> Json:
        return {"type": self.type, "path": self.path, "destination": self.destination}

    @classmethod
    def from_json(cls, data: Json) -> ImportLocation:
        return cls(str(data["type"]), str(data["path"]), str(data["destination"]))


@dataclass(frozen=True, slots=True)
class ImportRequest:
    """An import as started: its id, where it goes, the sources (in destination order) and the commit it makes.
    ``date`` is fixed once, so every retry of a step computes the same commit ids."""

    repository: str
    branch: str
    import_id: str
    locations: tuple[ImportLocation, ...]
    committer: str
    message: str
    date: float
    metadata: dict[str, str] = field(default_factory=dict)
    force: bool = False

    @property
    def import_branch(self) -> str:
        """The branch the import commits to before merging into ``branch`` (lakeFS's name for it)."""
        return import_branch_name(self.branch)

    def to_json(self) -> Json:
        return {
            "repository": self.repository,
            "branch": self.branch,
            "import_id": self.import_id,
            "locations": [loc.to_json() for loc in self.locations],
            "committer": self.committer,
            "message": self.message,
            "date": self.date,
            "metadata": dict(self.metadata),
            "force": self.force,
        }

    @classmethod
    def from_json(cls, data: Json) -> ImportRequest:
        return cls(
            str(data["repository"]),
            str(data["branch"]),
            str(data["import_id"]),
            tuple(ImportLocation.from_json(loc) for loc in data["locations"]),
            str(data["committer"]),
            str(data["message"]),
            float(data["date"]),
            {str(k): str(v) for k, v in data.get("metadata", {}).items()},
            bool(data.get("force", False)),
        )


def import_branch_name(branch: str) -> str:
    return f"_{branch}_imported"


def check_locations(locations: Sequence[ImportLocation]) -> tuple[ImportLocation, ...]:
    """The locations in destination order; Invalid for an unknown type, a path that is not s3://bucket/..., a bad
    destination, or destinations that overlap."""
    if not locations:
        raise errors.Invalid("paths: at least one import location is required")
    for loc in locations:
        if loc.type not in LOCATION_TYPES:
            raise errors.Invalid(f"paths: type must be one of {', '.join(LOCATION_TYPES)}, got {loc.type!r}")
        if not loc.path.startswith(_SCHEME) or not _BUCKET.fullmatch(loc.bucket):
            raise errors.Invalid(f"paths: path must be an s3://bucket/... location, got {loc.path!r}")
        _check_plain(loc.key, "path", loc.path)
        _check_plain(loc.destination, "destination", loc.destination)
        if loc.type == OBJECT:
            if not loc.key or loc.key.endswith("/"):
                raise errors.Invalid(f"paths: an object location names one object, got {loc.path!r}")
            if not loc.destination:
                raise errors.Invalid("paths: an object location needs a destination path")
        if loc.destination:
            validate_path(loc.destination)
    ordered = tuple(sorted(locations, key=lambda loc: loc.destination))
    for before, after in itertools.pairwise(ordered):
        if before.covers(after.destination) or (
            before.type == COMMON_PREFIX and after.destination.startswith(before.destination)
        ):
            raise errors.Invalid(
                f"paths: destinations {before.destination!r} and {after.destination!r} overlap; import them separately"
            )
    return ordered


def _check_plain(text: str, field_name: str, shown: str) -> None:
    """Invalid unless ``text`` (a source key or a destination) is a plain key: no empty, ``.`` or ``..`` segment
    (one trailing ``/``, a prefix's, is fine), no control character, no percent escape. The allowed-locations
    check compares text, so anything a reader might resolve or decode differently from that text is refused
    rather than trusted; lakeFS's clients send plain keys."""
    segments = text.split("/")
    if segments[-1] == "":
        segments.pop()  # "prefix/" and the empty destination (the branch's root)
    if any(segment in ("", ".", "..") for segment in segments):
        raise errors.Invalid(f"paths: {field_name} must not hold an empty, '.' or '..' segment, got {shown!r}")
    if any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in text):
        raise errors.Invalid(f"paths: {field_name} must not hold control characters, got {shown!r}")
    if _PERCENT_ESCAPE.search(text):
        raise errors.Invalid(f"paths: {field_name} must be a plain key, not percent-encoded, got {shown!r}")


def _under(loc: ImportLocation, prefix: str) -> bool:
    """Whether the location lies under an allowed ``s3://bucket[/key prefix]``: the bucket compared whole, so an
    allowed ``s3://data`` does not let ``s3://data-private/`` in."""
    if not prefix.startswith(_SCHEME):
        return False
    bucket, _, key_prefix = prefix[len(_SCHEME) :].partition("/")
    return loc.bucket == bucket and loc.key.startswith(key_prefix)


def check_allowed(locations: Sequence[ImportLocation], allowed: Sequence[str], setting: str) -> None:
    """ImportNotAllowed (403) unless every location lies under one of ``allowed`` (s3:// prefixes). Otherwise an
    import would let any user read whatever the Lambda role can read. check_locations has made each path plain
    first, so the text compared here is the key S3 reads."""
    for loc in locations:
        if not any(_under(loc, prefix) for prefix in allowed if prefix):
            where = ", ".join(allowed) if allowed else "none are configured"
            raise ImportNotAllowed(
                f"import from {loc.path} is not allowed: the deployment's setting {setting} lists the locations "
                f"imports may read ({where})"
            )


__all__ = [
    "COMMON_PREFIX",
    "LOCATION_TYPES",
    "OBJECT",
    "ImportLocation",
    "ImportRequest",
    "check_allowed",
    "check_locations",
    "import_branch_name",
]
