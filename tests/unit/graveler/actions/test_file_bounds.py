"""What one guarded operation reads of _lakefs_actions/ is bounded (files, bytes, nesting, values), refused with
its reason before anything large is read or built, and a file is parsed once per content, not once per operation.
"""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.adapters.action_yaml import load_action_yaml
from chalicelib.graveler.actions import EventType, HookEvent, HookOutcome, HookRunner, InvalidActionFile, RunStore
from chalicelib.graveler.actions.spec import (
    MAX_ACTION_DEPTH,
    MAX_ACTION_FILE_BYTES,
    MAX_ACTION_FILES,
    MAX_ACTION_FILES_BYTES,
    parse_action,
)
from chalicelib.graveler.errors import GravelerError
from chalicelib.graveler.writes.batch_upload import NewObject

from .test_files_cache import Reads, action, new_container


def padded(name: str, size: int) -> bytes:
    """A valid action of about ``size`` bytes (a long description)."""
    body = action(name)
    return body + b"description: " + b"x" * max(0, size - len(body) - 20) + b"\n"


def test_more_files_than_the_bound_refuse_the_operation(g: Any, repo: Any) -> None:
    """Before: the 1,001st file and beyond were silently skipped and every one below was read; now a ref with
    more than MAX_ACTION_FILES refuses, naming the bound, before reading one."""
    for i in range(MAX_ACTION_FILES + 1):
        g.objects.upload_object("repo", "main", f"_lakefs_actions/{i:03d}.yaml", action(f"a{i}"))
    with pytest.raises(InvalidActionFile, match=f"more than {MAX_ACTION_FILES} action files"):
        g.actions.action_files("repo", "main")
    with pytest.raises(GravelerError, match="action files"):
        g.commits.commit("repo", "main", "u", "many actions")
    g.objects.delete_object("repo", "main", "_lakefs_actions/000.yaml")
    assert len(g.actions.action_files("repo", "main")) == MAX_ACTION_FILES


def test_too_many_bytes_in_all_refuse_before_any_file_is_read(
    g: Any, repo: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ten 43 KB files made every commit and branch creation take 13 s; now the entries' sizes refuse them."""
    for i in range(10):
        g.objects.upload_object("repo", "main", f"_lakefs_actions/{i}.yaml", padded(f"a{i}", 43_000))
    assert MAX_ACTION_FILES_BYTES < 10 * 43_000
    reads = Reads(g, monkeypatch)
    with pytest.raises(InvalidActionFile, match=f"more than the {MAX_ACTION_FILES_BYTES} bytes"):
        g.actions.action_files("repo", "main")
    assert reads.data == []  # no file's bytes were read
    with pytest.raises(InvalidActionFile):
        g.commits.commit("repo", "main", "u", "big actions")


def test_one_file_over_the_bound_is_refused_by_its_size(g: Any, repo: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    g.objects.upload_object("repo", "main", "_lakefs_actions/big.yaml", padded("big", MAX_ACTION_FILE_BYTES + 10))
    reads = Reads(g, monkeypatch)
    with pytest.raises(InvalidActionFile, match=r"big\.yaml: larger than"):
        g.actions.action_files("repo", "main")
    assert reads.data == []


def test_deep_nesting_is_refused_before_anything_is_built() -> None:
    """40 KB of ``[`` took 5.9 s to refuse (PyYAML's constructor recursing); the event pass stops at the bound."""
    nested = b"[" * 20_000 + b"]" * 20_000
    with pytest.raises(ValueError, match=f"nested deeper than {MAX_ACTION_DEPTH}"):
        load_action_yaml(nested)
    with pytest.raises(InvalidActionFile, match="nested deeper"):
        parse_action(nested, load_action_yaml, "_lakefs_actions/deep.yaml")
    flat = b"[" + b"1," * 20_000 + b"1]"
    with pytest.raises(InvalidActionFile, match="more than"):
        parse_action(flat, load_action_yaml, "_lakefs_actions/wide.yaml")
    assert parse_action(action("ok"), load_action_yaml).name == "ok"


class Counting:
    """A decoder that counts its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, data: bytes) -> Any:
        self.calls += 1
        return load_action_yaml(data)


class Passing:
    def invoke(self, hook: Any, payload: bytes, timeout_seconds: float) -> HookOutcome:
        return HookOutcome(True, "ok")


def test_each_file_is_parsed_once_per_content() -> None:
    from chalicelib.adapters.memory import MemoryBlockStore

    files = [("_lakefs_actions/a.yaml", action("a")), ("_lakefs_actions/bad.yaml", b"name: [")]
    decoder = Counting()
    runner = HookRunner(
        {"webhook": Passing()}, RunStore(MemoryBlockStore()), lambda r, ref: files, decoder, lambda r: "s3://b/r"
    )
    event = HookEvent(EventType.PRE_MERGE, "repo", "main", branch_id="main")
    for _ in range(5):
        with pytest.raises(InvalidActionFile, match=r"bad\.yaml"):
            runner.run(event)
    assert decoder.calls == 2  # one per file, the bad one included
    files[1] = ("_lakefs_actions/bad.yaml", action("b"))  # new content under the same path: parsed afresh
    assert runner.run(event) is not None
    assert decoder.calls == 3


def test_subdirectories_are_jumped_over_not_read(g: Any, repo: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """lakeFS lists _lakefs_actions/ with a delimiter; reading every key under it would make a million objects in
    ``_lakefs_actions/data/`` cost every operation a million records. Here 2,000 of them cost a few."""
    for batch in range(2):
        objects = [NewObject(f"_lakefs_actions/data/{batch}{i:04d}", b"x") for i in range(1000)]
        g.objects.upload_objects("repo", "main", objects)
    g.objects.upload_object("repo", "main", "_lakefs_actions/z.yaml", action("z"))
    yielded = {"committed": 0, "staged": 0}

    def counting(kind: str, inner: Any) -> Any:
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            for item in inner(*args, **kwargs):
                yielded[kind] += 1
                yield item

        return wrapped

    import chalicelib.graveler.usecases.objects as objects_module

    monkeypatch.setattr(objects_module, "staged_changes", counting("staged", objects_module.staged_changes))
    assert [p for p, _ in g.actions.action_files("repo", "main")] == ["_lakefs_actions/z.yaml"]
    assert yielded["staged"] < 10
    monkeypatch.undo()
    g.commits.commit("repo", "main", "u", "many under data/")
    new_container(g)
    monkeypatch.setattr(g.ports.committed, "iterate", counting("committed", g.ports.committed.iterate))
    assert [p for p, _ in g.actions.action_files("repo", "main")] == ["_lakefs_actions/z.yaml"]
    assert yielded["committed"] < 10


def test_more_subdirectories_than_the_bound_refuse(g: Any, repo: Any) -> None:
    g.objects.upload_objects("repo", "main", [NewObject(f"_lakefs_actions/d{i:03d}/x", b"x") for i in range(101)])
    with pytest.raises(InvalidActionFile, match="more than 100 directories"):
        g.actions.action_files("repo", "main")
