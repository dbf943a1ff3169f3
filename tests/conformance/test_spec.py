"""The committed spec is the one build_spec.py derives from lakefs-sdk for the routes app.py serves, and every
route app.py serves is a lakeFS operation the SDK knows, apart from the few EXTENSIONS below (lakeFS operations
newer than the SDK, and the web UI's two)."""

from __future__ import annotations

import json

from .build_spec import (
    EXTENSION_OPERATIONS,
    SERVED_FILE,
    SPEC_FILE,
    _normalize,
    build,
    render,
    served_document,
    served_routes,
)

REGENERATE = "regenerate it: .venv/bin/python -m tests.conformance.build_spec"

# lakeFS operations Lakelet serves that lakefs-sdk 1.88 (the spec's source) does not have yet: the asynchronous
# commit and merge of newer lakeFS API versions, commitAsync (POST .../commits/async, answering TaskCreation)
# and its status (GET .../commits/status?id=..., answering CommitAsyncStatus), mergeIntoBranchAsync (POST
# .../refs/{source}/merge/{dest}/async) and its status (GET .../merge/{dest}/status?id=..., MergeAsyncStatus).
# chalicelib/api/commits.py and diff_merge.py serve them; tests/api/test_tasks.py checks their answers. Not in the
# spec, so the fuzz test leaves them out. The web UI's two (chalicelib/api/web.py): ending the cookie session
# (POST /auth/logout) and the caller's permission hints (GET /user/permissions); tests/api/test_webui_session.py.
# The batch upload the CLI uses for small files (POST .../objects/batch, chalicelib/api/batch_body.py);
# tests/api/test_upload_batch.py.
# Served routes that are not in lakefs-sdk's operations, each described in build_spec.EXTENSION_OPERATIONS (and in
# the document Lakelet serves at /api/v1/openapi.json).
EXTENSIONS: frozenset[tuple[str, str]] = frozenset(EXTENSION_OPERATIONS)


def test_the_committed_spec_is_up_to_date() -> None:
    assert SPEC_FILE.read_text() == render(build()), f"{SPEC_FILE.name} is stale; {REGENERATE}"
    assert SERVED_FILE.read_text() == render(served_document(build())), f"{SERVED_FILE.name} is stale; {REGENERATE}"


def test_the_served_document_names_every_served_route_and_nothing_else() -> None:
    served_doc = json.loads(SERVED_FILE.read_text())
    documented = {(m.upper(), _normalize(path)) for path, ops in served_doc["paths"].items() for m in ops}
    assert documented == {(method, _normalize(path)) for method, path in served_routes()}
    lakefs = json.loads(SPEC_FILE.read_text())
    for path, operations in lakefs["paths"].items():
        assert served_doc["paths"][path] == operations  # lakeFS's operations as lakefs-sdk describes them
    for path, operations in served_doc["paths"].items():
        for method, operation in operations.items():
            if (method.upper(), _normalize(path)) in EXTENSIONS:
                assert operation["x-lakelet"] and operation["description"], (method, path)


def test_every_served_route_is_in_the_spec() -> None:
    spec = json.loads(SPEC_FILE.read_text())
    documented = {(method.upper(), _normalize(path)) for path, ops in spec["paths"].items() for method in ops}
    served = {(method, _normalize(path)) for method, path in served_routes()}
    assert served - documented - EXTENSIONS == set(), (
        f"served but not lakeFS operations (or the spec is stale; {REGENERATE})"
    )
    assert documented - served == set()


def test_the_extensions_are_served_and_not_in_the_sdk() -> None:
    """An extension the SDK gained (after an upgrade) belongs in the spec instead; one no longer served goes."""
    spec = json.loads(SPEC_FILE.read_text())
    documented = {(method.upper(), _normalize(path)) for path, ops in spec["paths"].items() for method in ops}
    served = {(method, _normalize(path)) for method, path in served_routes()}
    assert served >= EXTENSIONS
    assert EXTENSIONS & documented == set()
