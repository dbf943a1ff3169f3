"""lakefs:// URIs: ``lakefs://<repo>``, ``lakefs://<repo>/<ref>`` and ``lakefs://<repo>/<ref>/<path>``."""

from __future__ import annotations

from dataclasses import dataclass

from .errors import Invalid
from .validation import validate_ref, validate_repository_id

SCHEME = "lakefs://"


@dataclass(frozen=True, slots=True)
class LakeFSURI:
    repository: str
    ref: str = ""
    path: str = ""

    def __str__(self) -> str:
        parts = [self.repository] + ([self.ref] if self.ref else []) + ([self.path] if self.path else [])
        return SCHEME + "/".join(parts)


def parse_uri(uri: str) -> LakeFSURI:
    """Parses a lakefs:// URI. Raises Invalid for another scheme, a bad repository name or an empty ref."""
    if not uri.startswith(SCHEME):
        raise Invalid(f"{uri!r} is not a lakefs:// URI")
    repository, _, rest = uri[len(SCHEME) :].partition("/")
    validate_repository_id(repository)
    if not rest:
        return LakeFSURI(repository)
    ref, sep, path = rest.partition("/")
    validate_ref(ref)
    if sep and not path:
        # lakefs://repo/main/ names the ref, like lakefs://repo/main.
        return LakeFSURI(repository, ref)
    return LakeFSURI(repository, ref, path)
