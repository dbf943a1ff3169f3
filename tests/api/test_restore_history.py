"""A refs restore checks the history inside the dump before writing anything (issue 40, item 6): a commit naming a
parent the dump lacks, commits that are each other's parent, a branch or tag name creation refuses, a ref naming a
commit the dump lacks, and commits whose metaranges are not in the namespace are refused with 400, the target left
bare. A metarange missing under a commit is permanent: 500 without Retry-After, never 503 "retry later"."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

import pytest

from chalicelib import wiring
from chalicelib.graveler.dumps.dump_files import header_line

from .support import Api, assert_error, body_of

Records = dict[str, list[dict[str, Any]]]


def _dumped(api: Api, repo: str, services: wiring.Services) -> tuple[str, Records]:
    """The repository's namespace and the records of a fresh dump of its history (two commits on main, one on
    dev, a tag)."""
    api.upload(repo, "main", "a.csv", b"1")
    api.commit(repo, "main", "first")
    assert api.post(f"/repositories/{repo}/branches", json_body={"name": "dev", "source": "main"}).status_code == 201
    api.upload(repo, "dev", "b.csv", b"2")
    api.commit(repo, "dev", "second")
    assert api.post(f"/repositories/{repo}/tags", json_body={"id": "v1", "ref": "main"}).status_code == 201
    manifest = body_of(api.request("PUT", f"/repositories/{repo}/refs/dump"))
    namespace = body_of(api.get(f"/repositories/{repo}"))["storage_namespace"]
    records: Records = {}
    for kind in ("commits", "branches", "tags"):
        data = services.engine.ports.blocks.get(
            f"{namespace}/_lakefs/refs_dump/{manifest[f'{kind}_meta_range_id']}.jsonl"
        )
        records[kind] = [json.loads(line) for line in data.decode().splitlines()[1:]]
    return namespace, records


def _restore(api: Api, services: wiring.Services, namespace: str, records: Records, target: str) -> Any:
    """Writes the records as dump files (each named by its SHA-256, as a dump names them) and restores them into a
    new bare repository on the same namespace."""
    manifest = {}
    for kind, rows in records.items():
        data = header_line(kind, len(rows)) + "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows).encode()
        dump_id = hashlib.sha256(data).hexdigest()
        services.engine.ports.blocks.put(f"{namespace}/_lakefs/refs_dump/{dump_id}.jsonl", data)
        manifest[f"{kind}_meta_range_id"] = dump_id
    body = {"name": target, "storage_namespace": namespace, "default_branch": "main"}
    assert api.post("/repositories", json_body=body, query={"bare": "true"}).status_code == 201
    return api.request("PUT", f"/repositories/{target}/refs/restore", json_body=manifest)


def _by_message(records: Records, message: str) -> dict[str, Any]:
    return next(c for c in records["commits"] if c["message"] == message)


def _missing_parent(records: Records) -> None:
    _by_message(records, "second")["parents"] = ["f" * 64]


def _cycle(records: Records) -> None:
    # The first commit of all (the repository's, no parents) is made a child of the latest: a cycle of parents.
    root = next(c for c in records["commits"] if not c["parents"])
    root["parents"] = [_by_message(records, "second")["id"]]


def _bad_branch(records: Records) -> None:
    records["branches"].append({**records["branches"][0], "id": "../../x"})


def _bad_tag(records: Records) -> None:
    records["tags"].append({**records["tags"][0], "id": "v1..x"})


def _ref_to_nothing(records: Records) -> None:
    records["tags"].append({**records["tags"][0], "id": "v2", "commit_id": "e" * 64})


def _missing_metarange(records: Records) -> None:
    _by_message(records, "first")["meta_range_id"] = "d" * 64


CASES: dict[str, tuple[Callable[[Records], None], str]] = {
    "missing-parent": (_missing_parent, "lacks"),
    "cycle": (_cycle, "cycle"),
    "branch-name": (_bad_branch, "branch name"),
    "tag-name": (_bad_tag, "tag"),
    "ref-to-missing-commit": (_ref_to_nothing, "lack"),
    "missing-metarange": (_missing_metarange, "metarange"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_restore_refuses_a_history_that_does_not_hold_together(
    api: Api, repo: str, services: wiring.Services, case: str
) -> None:
    namespace, records = _dumped(api, repo, services)
    damage, said = CASES[case]
    damage(records)
    message = assert_error(_restore(api, services, namespace, records, "copy"), 400)
    assert said in message
    # Nothing was written: the target is still bare, and takes the undamaged dump afterwards.
    assert body_of(api.get("/repositories/copy/branches"))["results"] == []
    assert body_of(api.get("/repositories/copy/tags"))["results"] == []
    api.request("DELETE", "/repositories/copy")
    _, intact = _dumped_again(api, repo, services)
    assert _restore(api, services, namespace, intact, "copy").status_code == 200


def _dumped_again(api: Api, repo: str, services: wiring.Services) -> tuple[str, Records]:
    manifest = body_of(api.request("PUT", f"/repositories/{repo}/refs/dump"))
    namespace = body_of(api.get(f"/repositories/{repo}"))["storage_namespace"]
    records: Records = {}
    for kind in ("commits", "branches", "tags"):
        data = services.engine.ports.blocks.get(
            f"{namespace}/_lakefs/refs_dump/{manifest[f'{kind}_meta_range_id']}.jsonl"
        )
        records[kind] = [json.loads(line) for line in data.decode().splitlines()[1:]]
    return namespace, records


def test_a_missing_metarange_is_a_permanent_fault_not_retry_later(
    api: Api, repo: str, services: wiring.Services
) -> None:
    api.upload(repo, "main", "a.csv", b"1")
    commit = api.commit(repo, "main", "first")
    namespace = body_of(api.get(f"/repositories/{repo}"))["storage_namespace"]
    services.engine.ports.blocks.delete(f"{namespace}/_lakefs/{commit['meta_range_id']}")
    services.engine.ports.committed.storage.clear_cache()  # as a new container starts
    answer = api.get(f"/repositories/{repo}/refs/main/objects/stat", query={"path": "a.csv"})
    assert answer.status_code == 500, answer.body
    assert "Retry-After" not in answer.headers
