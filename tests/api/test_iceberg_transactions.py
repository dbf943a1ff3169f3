"""A multi-table transaction is isolated as well as all or nothing: its pointers move in one atomic staging write
(TableCommits.move_all over staged.uploads.upload_objects_if over StagingStore.set_if_all), so no reader of the branch
sees it half applied, and a crash after its metadata files were written leaves every pointer where it was."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from chalice.test import Client

from chalicelib import wiring
from chalicelib.graveler import errors
from chalicelib.graveler.usecases.conditional_uploads import MAX_ATOMIC_CHANGES
from chalicelib.iceberg.layout import POINTER_SUFFIX

from .iceberg_support import iceberg_error, iceberg_request
from .test_iceberg_requests import Creds, create, table

NAMES = ("a", "b", "c")


@pytest.fixture
def tables(repo: str, client: Client, credentials: Creds) -> dict[str, str]:
    """Three tables of repo1.main.sales: their uuids."""
    made = iceberg_request(client, "POST", "/namespaces", credentials, {"namespace": ["repo1", "main", "sales"]})
    assert made.status_code == 200, made.body
    for name in NAMES:
        assert create(client, credentials, name).status_code == 200
    return {name: table(client, credentials, name)["metadata"]["table-uuid"] for name in NAMES}


def change(name: str, uuid: str, value: str) -> dict[str, Any]:
    return {
        "identifier": {"namespace": ["repo1", "main", "sales"], "name": name},
        "requirements": [{"type": "assert-table-uuid", "uuid": uuid}],
        "updates": [{"action": "set-properties", "updates": {"v": value}}],
    }


def transaction(client: Client, credentials: Creds, uuids: dict[str, str], value: str) -> Any:
    body = {"table-changes": [change(name, uuids[name], value) for name in NAMES]}
    return iceberg_request(client, "POST", "/transactions/commit", credentials, body)


def states(client: Client, credentials: Creds) -> dict[str, tuple[str, str | None]]:
    """Each table's metadata location and property v, as a reader loads it."""
    loaded = {name: table(client, credentials, name) for name in NAMES}
    return {n: (t["metadata-location"], t["metadata"]["properties"].get("v")) for n, t in loaded.items()}


class StagingWrites:
    """Records every staged write of the engine's staging store (its methods patched on the instance), and runs
    ``before_atomic`` just before the atomic write."""

    def __init__(self, services: wiring.Services, monkeypatch: pytest.MonkeyPatch) -> None:
        engine = services.engine
        self.store = engine.ports.staging
        self.writes: list[tuple[str, list[str]]] = []
        self.before_atomic: Callable[[], None] | None = None
        for name, keys_of in (
            ("set", lambda args: [args[1].key]),
            ("set_if", lambda args: [args[1].key]),
            ("set_many", lambda args: [e.key for e in args[1]]),
            ("set_if_all", lambda args: [staged.key for staged, _ in args[1]]),
        ):
            monkeypatch.setattr(self.store, name, self._recorded(name, getattr(self.store, name), keys_of))

    def _recorded(self, name: str, original: Any, keys_of: Callable[[tuple[Any, ...]], list[str]]) -> Any:
        def write(*args: Any) -> Any:
            if name == "set_many":
                args = (args[0], list(args[1]))
            if name == "set_if_all" and self.before_atomic is not None:
                self.before_atomic()
            self.writes.append((name, keys_of(args)))
            return original(*args)

        return write

    def pointer_writes(self) -> list[tuple[str, list[str]]]:
        return [(name, keys) for name, keys in self.writes if any(k.endswith(POINTER_SUFFIX) for k in keys)]


def test_the_pointers_move_in_one_write_and_readers_see_all_or_none(
    services: wiring.Services,
    client: Client,
    credentials: Creds,
    tables: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    before = states(client, credentials)
    recorded = StagingWrites(services, monkeypatch)
    seen: list[dict[str, tuple[str, str | None]]] = []
    # A reader just before the one write that moves the pointers: every metadata file is written, no table moved.
    recorded.before_atomic = lambda: seen.append(states(client, credentials))
    done = transaction(client, credentials, tables, "1")
    assert done.status_code == 204, done.body
    assert seen == [before]
    after = states(client, credentials)
    assert {v for _, v in after.values()} == {"1"}
    # Every pointer in one call, none anywhere else, after the three metadata files: the writes of the request.
    names, keys = zip(*recorded.writes, strict=True)
    assert names == ("set", "set", "set", "set_if_all")
    assert keys[3] == [f"_iceberg/sales/{name}{POINTER_SUFFIX}" for name in NAMES]
    assert recorded.pointer_writes() == [("set_if_all", keys[3])]
    # What readers load now is exactly the metadata files written before the pointers moved.
    assert [location for location, _ in after.values()] == [f"s3://repo1/main/{k[0]}" for k in keys[:3]]


def test_a_crash_after_the_metadata_writes_moves_no_pointer(
    services: wiring.Services,
    client: Client,
    credentials: Creds,
    tables: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    before = states(client, credentials)
    recorded = StagingWrites(services, monkeypatch)

    def crash() -> None:
        # The Lambda dies (or the store fails) between the metadata files and the pointers' one write.
        raise errors.StorageError("the store went away")

    recorded.before_atomic = crash
    failed = transaction(client, credentials, tables, "1")
    assert failed.status_code == 503, failed.body
    assert states(client, credentials) == before
    written = [keys[0] for name, keys in recorded.writes if name != "set_if_all"]
    assert len(written) == 3 and all(k.endswith(".metadata.json") for k in written)  # written, named by no pointer
    assert recorded.pointer_writes() == []
    # The client's retry commits all three.
    recorded.before_atomic = None
    assert transaction(client, credentials, tables, "2").status_code == 204
    assert {v for _, v in states(client, credentials).values()} == {"2"}


def test_a_lost_race_moves_nothing_and_the_retry_succeeds(
    services: wiring.Services,
    client: Client,
    credentials: Creds,
    tables: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    recorded = StagingWrites(services, monkeypatch)
    before = states(client, credentials)

    def rival() -> None:
        recorded.before_atomic = None
        # Another transaction of c (and a) lands between this one's reads and its write.
        body = {"table-changes": [change("c", tables["c"], "rival"), change("a", tables["a"], "rival")]}
        assert iceberg_request(client, "POST", "/transactions/commit", credentials, body).status_code == 204

    recorded.before_atomic = rival
    lost = transaction(client, credentials, tables, "1")
    assert "none was changed" in iceberg_error(lost, 409, "CommitFailedException")
    rivalled = states(client, credentials)
    assert rivalled["b"] == before["b"] and rivalled["a"][1] == rivalled["c"][1] == "rival"
    assert transaction(client, credentials, tables, "2").status_code == 204
    assert {v for _, v in states(client, credentials).values()} == {"2"}


def test_more_tables_than_one_write_takes_is_refused_before_anything_is_written(
    services: wiring.Services,
    client: Client,
    credentials: Creds,
    tables: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    recorded = StagingWrites(services, monkeypatch)
    body = {"table-changes": [change(f"t{n}", tables["a"], "1") for n in range(MAX_ATOMIC_CHANGES + 1)]}
    refused = iceberg_request(client, "POST", "/transactions/commit", credentials, body)
    assert str(MAX_ATOMIC_CHANGES) in iceberg_error(refused, 400, "BadRequestException")
    assert recorded.writes == []
    assert json.loads(refused.body)["error"]["code"] == 400
