"""Name rules for repositories, branches, tags, refs and object paths (lakeFS's)."""

from __future__ import annotations

import re
import unicodedata

from .errors import Invalid, InvalidName

__all__ = [
    "normalize_storage_namespace",
    "validate_branch_id",
    "validate_path",
    "validate_ref",
    "validate_repository_id",
    "validate_tag_id",
]

_REPOSITORY = re.compile(r"[a-z0-9][a-z0-9-]{2,62}")
# lakeFS's ^\w[-\w]*$ in Go, where \w is ASCII only: re.ASCII keeps look-alike letters ("m\u0430in" with a
# Cyrillic a) out of branch names.
_BRANCH = re.compile(r"\w[-\w]*", re.ASCII)
# lakeFS sets no length for branch and tag names; DynamoDB keys hold 1 KB, so Lakelet documents 256 (bytes
# of UTF-8 for tags) rather than fail in the store.
MAX_BRANCH_CHARS = 256
MAX_TAG_BYTES = 256
# A ref is a branch, tag or commit id with ~N / ^N suffixes.
MAX_REF_CHARS = 512
_REF = re.compile(r"[^\s]+")
_TAG_FORBIDDEN_CHARS = set("^:?*[\\ ~") | {chr(c) for c in range(32)} | {"\x7f"}
_NAMESPACE = re.compile(r"s3://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](/.*)?", re.DOTALL)
# S3 keys hold 1,024 bytes. Lakelet's own keys under a namespace, after "<namespace>/", are at most about 210
# bytes today (the longest: a merge slice's conflicts file, _lakefs/workflows/merge/<execution name, <= 78>/
# <metarange id, 64>-<32>.json; then GC's sweep records with a 128-character run id; data is data/<11>/<32>).
# NAMESPACE_SUFFIX_BYTES keeps room for them and for growth; tests/unit pins every kind of key below it.
S3_MAX_KEY_BYTES = 1024
NAMESPACE_SUFFIX_BYTES = 255
MAX_NAMESPACE_KEY_BYTES = S3_MAX_KEY_BYTES - 1 - NAMESPACE_SUFFIX_BYTES
# The local stack keeps its own files in the bucket under this prefix (lakelet/stack/samples.py's marker), which no
# repository may claim; "_lakefs" names every namespace's metadata directory (ranges, markers, GC files), where
# the deploy's IAM rules grant metadata rights, so no namespace lies in one.
INTERNAL_PREFIX = "_lakelet"
METADATA_DIRECTORY = "_lakefs"
# Characters that do not show, or show as a plain space while being another: two namespaces that print alike
# must be one. Unicode categories: controls, format (zero-width, bidi), surrogates, private use, unassigned,
# line and paragraph separators; space separators other than " " are checked apart.
_ESCAPES = re.compile(r"(?:%[0-9A-Fa-f]{2})+")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def validate_repository_id(repo_id: str) -> None:
    if not _REPOSITORY.fullmatch(repo_id):
        raise InvalidName(f"repository name {repo_id!r} must match ^[a-z0-9][a-z0-9-]{{2,62}}$")


def validate_branch_id(branch_id: str) -> None:
    if len(branch_id) > MAX_BRANCH_CHARS:
        raise InvalidName(f"branch name is longer than {MAX_BRANCH_CHARS} characters")
    if not _BRANCH.fullmatch(branch_id):
        raise InvalidName(f"branch name {branch_id!r} must match ^[A-Za-z0-9_][-A-Za-z0-9_]*$")


def validate_tag_id(tag_id: str) -> None:
    """git ref-name rules, as lakeFS applies them to tags (stricter on ``/`` and ``~``, which Lakelet's URLs
    and ref expressions give a meaning), valid Unicode of at most MAX_TAG_BYTES."""
    if len(tag_id) > MAX_TAG_BYTES or not _is_text(tag_id) or len(tag_id.encode()) > MAX_TAG_BYTES:
        raise InvalidName(f"tag name must be valid Unicode of at most {MAX_TAG_BYTES} bytes")
    bad = (
        not tag_id
        or tag_id == "@"
        or ".." in tag_id
        or "/" in tag_id
        or "@{" in tag_id
        or tag_id.endswith((".", ".lock"))
        or tag_id.startswith(".")
        or any(c in _TAG_FORBIDDEN_CHARS for c in tag_id)
    )
    if bad:
        raise InvalidName(f"tag name {tag_id!r} is not a valid git ref name")


def _is_text(value: str) -> bool:
    """False for a string holding a lone surrogate (from a JSON escape or a percent-encoded path)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def validate_ref(ref: str) -> None:
    if len(ref) > MAX_REF_CHARS or not _is_text(ref):
        raise InvalidName(f"ref must be valid Unicode of at most {MAX_REF_CHARS} characters")
    if not _REF.fullmatch(ref):
        raise InvalidName(f"ref {ref!r} must be non-empty with no whitespace")


def validate_path(path: str) -> None:
    if not path:
        raise Invalid("path is required")
    if "\x00" in path:
        raise Invalid("path must not contain NUL")
    if not _is_text(path):
        raise Invalid("path must be valid Unicode (it holds a lone surrogate)")
    if len(path.encode()) > 1024:
        # DynamoDB sort keys hold at most 1024 bytes: staging is keyed by path.
        raise Invalid("path is longer than 1024 bytes")


def validate_storage_namespace(namespace: str) -> None:
    """Raises Invalid unless ``namespace`` is one normalize_storage_namespace accepts."""
    normalize_storage_namespace(namespace)


def normalize_storage_namespace(namespace: str) -> str:
    """The one spelling of a namespace Lakelet stores, claims and writes under: ``s3://bucket/prefix``.

    s3://bucket/prefix: a prefix (never the bucket's root) of non-empty segments, none ``.`` or ``..``, without
    ``?`` or ``#`` (which would end the key of an s3:// URL). Two spellings clients produce are accepted and
    folded into that one: one trailing ``/``, and a doubled ``/`` right after the bucket, which is what
    ``f"{prefix}/{name}"`` gives with a prefix ending in ``/`` (lakeFS accepts it). Escapes and Unicode forms are
    folded too (:func:`_one_spelling`): ``s3://b/%76`` and ``s3://b/v`` are one namespace, as are the NFC and NFD
    spellings of a name. Folding rather than keeping
    the key exactly makes ``s3://b//x`` and ``s3://b/x`` one namespace, so the claim and the nesting checks see
    them as one and no two repositories ever share objects under the two spellings.

    Refused besides: invisible characters and segments with surrounding spaces (two namespaces that print alike
    are one), the local stack's INTERNAL_PREFIX and any METADATA_DIRECTORY segment, and a key prefix longer than
    MAX_NAMESPACE_KEY_BYTES (every key Lakelet writes under it must stay within S3's 1,024 bytes)."""
    if len(namespace) > S3_MAX_KEY_BYTES + len("s3://") + 64:
        # Not echoed: a namespace this long cannot be one, and the message should stay readable.
        raise Invalid(f"storage namespace is too long: its key prefix may hold {MAX_NAMESPACE_KEY_BYTES} bytes")
    if not _NAMESPACE.fullmatch(namespace):
        raise Invalid(f"storage namespace {namespace!r} must look like s3://bucket/prefix")
    bucket, _, path = namespace.removeprefix("s3://").partition("/")
    path = _one_spelling(path)
    if "?" in namespace or "#" in namespace or any(_invisible(c) for c in namespace + path):
        raise Invalid(f"storage namespace {namespace!r} must not hold '?', '#', control or invisible characters")
    path = path.removesuffix("/")
    if path.startswith("/") and not path.startswith("//"):
        path = path[1:]
    if not path:
        raise Invalid(f"storage namespace {namespace!r} is a bucket's root: give a prefix, s3://bucket/prefix")
    segments = path.split("/")
    if any(segment in ("", ".", "..") for segment in segments):
        raise Invalid(f"storage namespace {namespace!r} has an empty, '.' or '..' segment")
    if any(segment != segment.strip() for segment in segments):
        raise Invalid(f"storage namespace {namespace!r} has a segment starting or ending with a space")
    if segments[0] == INTERNAL_PREFIX:
        raise Invalid(f"storage namespace {namespace!r} is under {INTERNAL_PREFIX}/, where Lakelet keeps its own files")
    if METADATA_DIRECTORY in segments:
        raise Invalid(
            f"storage namespace {namespace!r} lies inside a {METADATA_DIRECTORY}/ directory, where "
            "repositories keep their metadata"
        )
    if len(path.encode()) > MAX_NAMESPACE_KEY_BYTES:
        raise Invalid(
            "storage namespace is too long: its key prefix (after the bucket) may hold "
            f"{MAX_NAMESPACE_KEY_BYTES} bytes, so that every key under it stays within S3's "
            f"{S3_MAX_KEY_BYTES}"
        )
    return f"s3://{bucket}/{path}"


def _one_spelling(path: str) -> str:
    """Folds the spellings that name one thing into one. Percent-escapes as RFC 3986 (6.2.2) and RFC 3987 (3.2)
    read them: an escaped unreserved character is that character (``%76`` is ``v``), an escaped UTF-8 sequence
    is its character (``caf%C3%A9`` is ``café``), any other escape keeps upper-case hex digits (``%2f`` is
    ``%2F``, ``%20`` stays). Then Unicode text in NFC, so a composed and a decomposed ``é`` (which print alike)
    are one namespace to the claim, the nesting checks and the policies."""
    return unicodedata.normalize("NFC", _ESCAPES.sub(_fold_escapes, path))


def _fold_escapes(match: re.Match[str]) -> str:
    data = bytes.fromhex(match.group(0).replace("%", ""))
    out: list[str] = []
    i = 0
    while i < len(data):
        byte = data[i]
        width = 1 if byte < 0x80 else 2 if 0xC2 <= byte <= 0xDF else 3 if 0xE0 <= byte <= 0xEF else 4
        if byte >= 0x80 and 0xC2 <= byte <= 0xF4:
            try:
                out.append(data[i : i + width].decode("utf-8"))
                i += width
                continue
            except UnicodeDecodeError:
                pass
        char = chr(byte)
        out.append(char if char in _UNRESERVED else f"%{byte:02X}")
        i += 1
    return "".join(out)


def _invisible(c: str) -> bool:
    category = unicodedata.category(c)
    return category in _INVISIBLE_CATEGORIES or (category == "Zs" and c != " ")
