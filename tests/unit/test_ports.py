"""Ports live together, and no port is a grab-bag: every public Protocol of chalicelib sits in its package's one
ports module (but for the few named below, each with its reason), and auth's store is the sum of one port per
concern, so code that needs one concern can ask for that part alone."""

from __future__ import annotations

import ast
import pathlib

from chalicelib.auth import ports as auth_ports

ROOT = pathlib.Path(__file__).resolve().parents[2]
CHALICELIB = ROOT / "chalicelib"
# Protocols outside a ports module: (file, class) with the reason.
NOT_IN_A_PORTS_MODULE = {
    # The type of engine.merges.merge as a pull request calls it: a function's signature, not storage.
    ("chalicelib/graveler/usecases/pull_requests.py", "MergeEntry"),
    # What listing reads a cached range through (a view of rows already in memory), not a store.
    ("chalicelib/graveler/reads/listing.py", "RowBlock"),
    # The signatures of three shared reads with a default argument, as a use case's own record names them
    # (bound methods of one Reads in the engine, plain functions in a test): functions, not storage.
    ("chalicelib/graveler/reads/shared.py", "RepositoryForWrite"),
    ("chalicelib/graveler/reads/shared.py", "RunPreHooks"),
    ("chalicelib/graveler/reads/shared.py", "CommitOf"),
    # The three stores a conditional write reads, as fields of whichever record a use case holds: a view of
    # ports already declared in graveler/ports.py, not a port of its own.
    ("chalicelib/graveler/writes/conditional_writes.py", "StagingPorts"),
    # Beside its one use case at the chalicelib root, which has no package (and so no ports module) yet.
    ("chalicelib/repository_metadata.py", "RepositoryMetadataStore"),
}
AUTH_CONCERNS = ("UserStore", "CredentialStore", "GroupStore", "PolicyStore", "ServerKeyStore", "RevokedTokens")


def _protocols() -> list[tuple[str, ast.ClassDef]]:
    return [
        (str(path.relative_to(ROOT)), node)
        for path in sorted(CHALICELIB.rglob("*.py"))
        for node in ast.parse(path.read_text()).body
        if isinstance(node, ast.ClassDef) and any(ast.unparse(base).endswith("Protocol") for base in node.bases)
    ]


def test_public_protocols_live_in_ports_modules() -> None:
    stray = {
        (path, node.name)
        for path, node in _protocols()
        if not node.name.startswith("_") and not path.endswith("/ports.py")
    }
    assert stray == NOT_IN_A_PORTS_MODULE


def test_every_port_says_what_it_promises() -> None:
    assert [
        f"{path}: {node.name}"
        for path, node in _protocols()
        if ast.get_docstring(node) is None and not node.name.startswith("_")
    ] == []


def test_the_auth_store_is_one_port_per_concern() -> None:
    store = auth_ports.AuthStore
    assert tuple(base.__name__ for base in store.__bases__[: len(AUTH_CONCERNS)]) == AUTH_CONCERNS
    own = [name for name, value in vars(store).items() if callable(value) and not name.startswith("_")]
    assert own == []
    methods = {
        concern: [n for n, v in vars(getattr(auth_ports, concern)).items() if callable(v) and not n.startswith("_")]
        for concern in AUTH_CONCERNS
    }
    # Each concern is small, and together they are the whole store, each method in exactly one of them.
    assert max(len(m) for m in methods.values()) <= 10
    everything = [name for names in methods.values() for name in names]
    assert len(everything) == len(set(everything)) == 30
