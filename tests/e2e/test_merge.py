"""Diff, merge and history operations through the official lakeFS client on the local stack."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import lakefs
import pytest
from lakefs.client import Client
from lakefs.exceptions import BadRequestException, ConflictException

pytestmark = pytest.mark.e2e


def _read(ref: lakefs.Reference, path: str) -> str | None:
    obj = ref.object(path)
    if not obj.exists():
        return None
    with obj.reader(mode="r") as reader:
        return reader.read()


@pytest.fixture
def forked(repo: lakefs.Repository) -> tuple[lakefs.Branch, lakefs.Branch]:
    main = repo.branch("main")
    for path in ("a", "b", "c", "logs/1"):
        main.object(path).upload(f"{path}-0")
    main.commit(message="base")
    return main, repo.branch("dev").create(source_reference="main")


def test_diff_and_merge(forked: tuple[lakefs.Branch, lakefs.Branch], repo: lakefs.Repository, client: Client) -> None:
    main, dev = forked
    dev.object("a").upload("a-dev")
    dev.object("b").delete()
    dev.object("new/1").upload("n")
    dev.commit(message="dev work")
    main.object("c").upload("c-main")
    main.commit(message="main work")

    changes = {c.path: c.type for c in main.diff(dev)}
    assert changes == {"a": "changed", "b": "removed", "new/1": "added"}  # three-dot: dev's side only
    assert {c.path for c in main.diff(dev, prefix="new/")} == {"new/1"}

    reference = dev.merge_into(main, message="bring dev", metadata={"run": "1"})
    merged = repo.commit(reference).get_commit()
    assert merged.parents == [main.get_commit().parents[0], dev.get_commit().id]
    assert merged.metadata == {"run": "1", ".lakefs.merge.strategy": "default"}
    assert (_read(main, "a"), _read(main, "b"), _read(main, "c"), _read(main, "new/1")) == (
        "a-dev",
        None,
        "c-main",
        "n",
    )
    assert list(main.diff(dev)) == []

    with pytest.raises(BadRequestException):
        dev.merge_into(main)  # nothing new
    base = client.sdk_client.refs_api.find_merge_base(repo.id, "dev", "main")
    assert base.base_commit_id == dev.get_commit().id


def test_conflicts_and_strategies(forked: tuple[lakefs.Branch, lakefs.Branch], client: Client) -> None:
    main, dev = forked
    for path in ("a", "b", "logs/1"):
        dev.object(path).upload(f"{path}-dev")
    dev.commit(message="dev work")
    main.object("a").upload("a-main")
    main.object("b").delete()
    main.object("logs/1").upload("logs-main")
    main.commit(message="main work")

    with pytest.raises(ConflictException) as caught:
        dev.merge_into(main)
    assert caught.value.body["conflicts"] == [
        {"path": "a", "source": "changed", "destination": "changed"},
        {"path": "b", "source": "changed", "destination": "deleted"},
        {"path": "logs/1", "source": "changed", "destination": "changed"},
    ]

    # Per-path strategies are a Lakelet extension: the sdk's generic call sends the extra field as is.
    api = client.sdk_client.refs_api.api_client
    body = {
        "path_strategies": [{"path": "logs/**", "strategy": "dest-wins"}],
        "strategy": "source-wins",
        "dry_run": True,
    }
    preview = api.call_api(
        f"/repositories/{main.repo_id}/refs/dev/merge/main",
        "POST",
        {},
        [],
        {"Content-Type": "application/json", "Accept": "application/json"},
        body=body,
        auth_settings=["basic_auth"],
        response_types_map={"200": "object"},
    ).data
    assert preview["summary"]["conflict"] == 3 and preview["summary"]["unresolved"] == 0
    assert [r["conflict"]["resolution"] for r in preview["results"]] == ["source-wins", "source-wins", "dest-wins"]

    dev.merge_into(main, strategy="source-wins")
    assert (_read(main, "a"), _read(main, "b"), _read(main, "logs/1")) == ("a-dev", "b-dev", "logs/1-dev")


def test_revert_cherry_pick_reset_and_log(repo: lakefs.Repository, client: Client) -> None:
    main = repo.branch("main")
    main.object("a").upload("1")
    first = main.commit(message="first").get_commit()
    main.object("a").upload("2")
    main.object("logs/x").upload("x")
    second = main.commit(message="second").get_commit()

    assert [c.message for c in main.log(objects=["a"])] == ["second", "first"]
    assert [c.message for c in main.log(prefixes=["logs/"])] == ["second"]
    assert [c.message for c in main.log(stop_at=first.id)] == ["second", "first"]
    assert [c.message for c in main.log(max_amount=1, limit=True, first_parent=True)] == ["second"]
    future = datetime.now(UTC) + timedelta(days=1)
    assert list(main.log(since=future)) == []

    reverted = main.revert(second.id)
    assert reverted.message == f"Revert {second.id}" and _read(main, "a") == "1" and _read(main, "logs/x") is None

    hotfix = repo.branch("hotfix").create(source_reference=first.id)
    picked = hotfix.cherry_pick(second.id)
    assert picked.message == "second" and picked.metadata["cherry-pick-origin"] == second.id
    assert (_read(hotfix, "a"), _read(hotfix, "logs/x")) == ("2", "x")

    hotfix.object("a").upload("staged")
    hotfix.object("tmp/1").upload("t")
    hotfix.reset_changes("object", "a")
    assert _read(hotfix, "a") == "2"
    hotfix.reset_changes("common_prefix", "tmp/")
    assert list(hotfix.uncommitted()) == []

    client.sdk_client.experimental_api.hard_reset_branch(repo.id, "hotfix", first.id)
    assert hotfix.get_commit().id == first.id and _read(hotfix, "a") == "1"
