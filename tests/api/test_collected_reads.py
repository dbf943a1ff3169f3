"""Reading an object whose data garbage collection deleted answers 410 Gone in every read mode of the API: a plain
GET, a presigned GET (no URL to missing data is handed out), HEAD, and stat (410 with the object's stats, as
lakeFS); objects GC cannot have touched are served as before."""

from __future__ import annotations

import lakefs_sdk
import pytest

from chalicelib import wiring
from chalicelib.graveler.reads.collected import sweeps_prefix
from chalicelib.graveler.writes.addressing import partition_of
from tests.clocks import engine_clock

from .support import Api, assert_error, body_of, conforms

OBJECTS = "/repositories/repo1/refs/main/objects"
DAY = 86_400


@pytest.fixture
def collected(api: Api, services: wiring.Services) -> wiring.Services:
    """repo1/main: old.txt written ten days ago and collected by a sweep, new.txt written now."""
    api.create_repo("repo1")
    engine = services.engine
    clock = engine_clock(services)
    real_clock = clock.source
    clock.source = lambda: real_clock() - 10 * DAY
    api.upload("repo1", "main", "old.txt", b"old data")
    clock.source = real_clock
    api.upload("repo1", "main", "new.txt", b"new data")
    api.commit("repo1", "main", "both")
    namespace = engine.repositories.get_repository("repo1").storage_namespace
    cutoff = real_clock() - DAY
    # What emr/gc_job.py does: record the sweep, then delete the data.
    engine.ports.blocks.put(f"{sweeps_prefix(namespace)}partition={partition_of(cutoff + 3600)}/run_id=r1.json", b"{}")
    engine.ports.blocks.delete(engine.objects.stat_object("repo1", "main", "old.txt").physical_address)
    return services


def test_every_read_mode_answers_410(api: Api, collected: wiring.Services) -> None:
    path = {"path": "old.txt"}
    assert_error(api.get(OBJECTS, query=path), 410)
    assert_error(api.get(OBJECTS, query={**path, "presign": "true"}), 410)
    assert api.head(OBJECTS, query=path).status_code == 410
    assert api.head(OBJECTS, query={**path, "presign": "true"}).status_code == 410
    for presign in ("false", "true"):
        stat = api.get(OBJECTS + "/stat", query={**path, "presign": presign})
        assert stat.status_code == 410
        stats = conforms(lakefs_sdk.ObjectStats, body_of(stat))
        assert stats.path == "old.txt" and stats.size_bytes == 8 and stats.physical_address_expiry is None
        assert "X-Amz-Signature" not in stats.physical_address
    # The entry itself is still there: it lists.
    listed = body_of(api.get(OBJECTS + "/ls"))["results"]
    assert [entry["path"] for entry in listed] == ["new.txt", "old.txt"]


def test_data_gc_has_not_touched_is_served(api: Api, collected: wiring.Services) -> None:
    path = {"path": "new.txt"}
    assert api.get(OBJECTS, query=path).body == b"new data"
    assert api.get(OBJECTS, query={**path, "presign": "true"}).status_code == 302
    assert api.head(OBJECTS, query=path).status_code == 200
    assert api.get(OBJECTS + "/stat", query=path).status_code == 200
