"""Conformance helpers: the served spec, checking a response against the lakefs-sdk model the spec names, a
seeded in-memory deployment, and a snapshot of everything it stores (to prove a refused request changed
nothing)."""

from __future__ import annotations

import base64
import copy
import json
import re
import sys
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

import lakefs_sdk

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from app import app  # noqa: E402 (the project on sys.path first, for a run outside pytest)
from chalicelib import wiring  # noqa: E402
from chalicelib.settings import Settings  # noqa: E402
from tests.api.support import without_extensions  # noqa: E402

SPEC_FILE = Path(__file__).resolve().parent / "lakefs-served.json"
PREFIX = "/api/v1"
BUCKET = "conformance"
ADMIN_KEY = "AKIAIOSFODNN7EXAMPLE"
ADMIN_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
_PARAMETER = re.compile(r"\{[^}]+\}")

__all__ = ["app"]

# The operations lakeFS OSS answers 501 Not Implemented (pkg/api/controller.go), and so does Lakelet
# (chalicelib/api/unsupported.py): the only 5xx the conformance tests accept.
LAKEFS_OSS_501 = frozenset(
    {
        # As the served spec names them (lakefs-sdk's method names); oauthCallback and the group ACLs are not
        # in the SDK, so not in the spec (test_spec.EXTENSIONS).
        "sts_login",
        "external_principal_login",
        "get_external_principal",
        "create_user_external_principal",
        "delete_user_external_principal",
        "list_user_external_principals",
    }
)


@cache
def spec() -> dict[str, Any]:
    return json.loads(SPEC_FILE.read_text())


def basic(key: str = ADMIN_KEY, secret: str = ADMIN_SECRET) -> str:
    return "Basic " + base64.b64encode(f"{key}:{secret}".encode()).decode()


def operation(method: str, template: str) -> dict[str, Any]:
    return spec()["paths"][template][method.lower()]  # type: ignore[no-any-return]


def template_of(method: str, path: str) -> str:
    """The spec path a concrete path (without /api/v1) belongs to."""
    for template, operations in spec()["paths"].items():
        if method.lower() in operations:
            pattern = "^" + _PARAMETER.sub("[^/]+", re.escape(template).replace(r"\{", "{").replace(r"\}", "}")) + "$"
            if re.match(pattern, path):
                return str(template)
    raise AssertionError(f"{method} {path} is not in the served spec")


def check_response(method: str, template: str, status: int, body: bytes) -> None:
    """The status is one the operation documents (or an error it may give) and a JSON body parses, exactly,
    as the lakefs-sdk model the spec names for that status."""
    responses = operation(method, template)["responses"]
    documented = responses.get(str(status))
    if documented is None:
        if status < 400:
            # The SDK records statuses only for operations with a response body; the others take any.
            assert set(responses) == {"default"}, f"{method} {template}: undocumented success status {status}"
            return
        documented = {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
    content = documented.get("content", {})
    schema = content.get("application/json", {}).get("schema")
    if schema is None or method == "HEAD":
        return
    if schema.get("type") == "string":
        # lakeFS answers some of these (a new branch's commit id) as plain text; the SDK takes either.
        assert body.decode("utf-8"), f"{method} {template}: empty string response"
        return
    conform(schema, json.loads(body), f"{method} {template} {status}")


def conform(schema: dict[str, Any], payload: Any, where: str) -> None:
    if "$ref" in schema:
        model = getattr(lakefs_sdk, schema["$ref"].rsplit("/", 1)[1])
        parsed = model.from_dict(payload)
        assert parsed is not None, where
        as_parsed = parsed.to_dict()
        sent = _dates_parsed(as_parsed, without_extensions(payload), where)
        assert _drop_none(as_parsed) == _drop_none(sent), (where, payload)
    elif schema.get("type") == "array":
        assert isinstance(payload, list), where
        for item in payload:
            conform(schema["items"], item, where)
    elif schema.get("type") == "object":
        assert isinstance(payload, dict) and all(isinstance(v, str) for v in payload.values()), where
    elif schema.get("type") == "string":
        assert isinstance(payload, str), where


def _dates_parsed(parsed: Any, payload: Any, where: str) -> Any:
    """The payload with each string the SDK read as a date-time turned into that datetime (the model's to_dict
    gives datetimes back, not the text), after checking the text is RFC 3339 with its time zone, as lakeFS
    sends it."""
    if isinstance(parsed, datetime) and isinstance(payload, str):
        sent = datetime.fromisoformat(payload)
        assert "T" in payload and sent.tzinfo is not None, (where, payload)
        return sent
    if isinstance(parsed, dict) and isinstance(payload, dict):
        return {k: _dates_parsed(parsed.get(k), v, where) for k, v in payload.items()}
    if isinstance(parsed, list) and isinstance(payload, list) and len(parsed) == len(payload):
        return [_dates_parsed(a, b, where) for a, b in zip(parsed, payload, strict=True)]
    return payload


def _drop_none(value: Any) -> Any:
    """lakeFS omits absent optional fields or sends them as null; both are the same to a client."""
    if isinstance(value, dict):
        return {k: _drop_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_none(v) for v in value]
    return value


def seeded_services() -> wiring.Services:
    """An in-memory deployment with data for every route to find: an admin, a user, repositories (one
    read-only), branches, a tag, committed and staged objects, metadata, a policy."""
    services = wiring.memory_services(Settings(bucket=BUCKET))
    auth, engine = services.auth, services.engine
    auth.setup("admin", ADMIN_KEY, ADMIN_SECRET)
    auth.directory.create_user("jane")
    auth.directory.add_member("Developers", "jane")
    engine.repositories.create_repository("repo1", f"s3://{BUCKET}/repo1")
    engine.repositories.create_repository("frozen", f"s3://{BUCKET}/frozen", read_only=True)
    engine.objects.upload_object("repo1", "main", "a.txt", b"hello", "text/plain", {"k": "v"})
    engine.objects.upload_object("repo1", "main", "dir/b.csv", b"x,y\n1,2\n", "text/csv")
    engine.commits.commit("repo1", "main", "admin", "first")
    engine.branches.create_branch("repo1", "dev", "main")
    engine.objects.upload_object("repo1", "dev", "a.txt", b"changed")
    engine.branches.create_tag("repo1", "v1", "main")
    assert services.repository_metadata is not None
    services.repository_metadata.set(
        "repo1", engine.repositories.get_repository("repo1").creation_date, {"owner": "me"}
    )
    # The server key is made on first use; made here, so no request is seen "changing" the stores by it.
    auth.token_signer()
    auth.address_signer()
    return services


class Seed:
    """The seeded deployment, built once; ``fresh()`` gives new services holding a copy of its data (cheaper
    than seeding again: the fuzz run needs one per example)."""

    def __init__(self) -> None:
        self._pristine = seeded_services()
        self._state = snapshot(self._pristine)

    def fresh(self) -> wiring.Services:
        from chalicelib.adapters.import_records import MemoryImportRecords
        from chalicelib.adapters.memory import (
            MemoryAuthStore,
            MemoryBlockStore,
            MemoryBranchProtectionStore,
            MemoryRefStore,
            MemoryRepositoryMetadataStore,
            MemoryStagingStore,
        )
        from chalicelib.adapters.memory_source import MemorySourceLister
        from chalicelib.auth.service import AuthService

        refs, staging, blocks, store = MemoryRefStore(), MemoryStagingStore(), MemoryBlockStore(), MemoryAuthStore()
        metadata = MemoryRepositoryMetadataStore(refs)
        cipher = self._pristine.auth._cipher  # the seeded secrets and server key were sealed with it
        services = wiring.assemble(
            self._pristine.settings,
            refs,
            staging,
            blocks,
            AuthService(store, cipher),
            metadata,
            MemoryBranchProtectionStore(refs),
            # As wiring.memory_services wires imports: sources in the same memory store, records beside them.
            import_sources=MemorySourceLister(blocks),
            import_records=MemoryImportRecords(),
        )
        for store_object in _stores(services):
            for key, value in self._state.items():
                owner, _, attribute = key.partition(".")
                if owner == type(store_object).__name__:
                    setattr(store_object, attribute, copy.deepcopy(value))
        return services


def _stores(services: wiring.Services) -> tuple[Any, ...]:
    engine = services.engine
    protection = engine.ports.protection.store if engine.ports.protection is not None else None
    stores = (
        engine.ports.refs,
        engine.ports.staging,
        engine.ports.blocks,
        services.auth.store,
        services.repository_metadata,
        protection,
        engine.imports.ports.records if engine.imports.ports is not None else None,
    )
    return tuple(store for store in stores if store is not None)


def snapshot(services: wiring.Services) -> dict[str, Any]:
    """Everything the in-memory stores hold, copied: equal snapshots mean nothing changed."""
    state: dict[str, Any] = {}
    for store in _stores(services):
        for name, value in vars(store).items():
            if isinstance(value, (dict, set, list)):
                state[f"{type(store).__name__}.{name}"] = copy.deepcopy(value)
    return state
