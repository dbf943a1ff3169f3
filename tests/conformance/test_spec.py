"""The committed spec is the one build_spec.py derives from lakefs-sdk for the routes app.py serves, and every
route app.py serves is a lakeFS operation the SDK knows (Lakelet adds no routes of its own under /api/v1)."""

from __future__ import annotations

import json

from .build_spec import SPEC_FILE, _normalize, build, render, served_routes

REGENERATE = "regenerate it: .venv/bin/python -m tests.conformance.build_spec"


def test_the_committed_spec_is_up_to_date() -> None:
    assert SPEC_FILE.read_text() == render(build()), f"{SPEC_FILE.name} is stale; {REGENERATE}"


def test_every_served_route_is_in_the_spec() -> None:
    spec = json.loads(SPEC_FILE.read_text())
    documented = {(method.upper(), _normalize(path)) for path, ops in spec["paths"].items() for method in ops}
    served = {(method, _normalize(path)) for method, path in served_routes()}
    assert served - documented == set(), f"served but not lakeFS operations (or the spec is stale; {REGENERATE})"
    assert documented - served == set()
