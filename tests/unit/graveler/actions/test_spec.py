"""Action files: lakeFS's schema, its events and branch globs, and the refusal of what Lakelet does not run."""

import pytest
import yaml

from chalicelib.graveler.actions import EventType, InvalidActionFile, glob_match, parse_action, parse_duration
from chalicelib.graveler.actions.spec import MAX_ACTION_FILE_BYTES

GOOD = b"""
name: Good files check
description: checks before a merge
on:
  pre-merge:
    branches: [main, "release-*"]
  post-commit:
hooks:
  - id: check_files
    type: webhook
    properties:
      url: http://127.0.0.1:9/check
      timeout: 1m30s
      query_params: {prefix: data/, ext: [csv, parquet]}
  - id: notify
    type: lambda
    properties:
      function_name: arn:aws:lambda:us-east-1:123456789012:function:notify
"""


def parse(text: bytes):
    return parse_action(text, yaml.safe_load, "_lakefs_actions/a.yaml")


def test_parses_lakefs_action_file():
    action = parse(GOOD)
    assert action.name == "Good files check"
    assert set(action.on) == {EventType.PRE_MERGE, EventType.POST_COMMIT}
    assert [h.id for h in action.hooks] == ["check_files", "notify"]
    assert action.hooks[0].timeout_seconds == 90
    assert action.hooks[1].timeout_seconds == 60  # lakeFS's default
    assert action.matches(EventType.PRE_MERGE, "main")
    assert action.matches(EventType.PRE_MERGE, "release-1")
    assert not action.matches(EventType.PRE_MERGE, "dev")
    assert action.matches(EventType.POST_COMMIT, "anything")
    assert not action.matches(EventType.PRE_COMMIT, "main")


def test_every_lakefs_event_is_known():
    names = {e.value for e in EventType}
    for kind in (
        "commit",
        "merge",
        "create-branch",
        "delete-branch",
        "create-tag",
        "delete-tag",
        "revert",
        "cherry-pick",
    ):
        assert {f"pre-{kind}", f"post-{kind}"} <= names


def test_lua_hook_refused_with_a_clear_message():
    text = b"name: a\non: {pre-commit: }\nhooks:\n  - id: lua_check\n    type: lua\n    properties: {script: x}\n"
    with pytest.raises(InvalidActionFile, match="Lua hooks are not supported by Lakelet"):
        parse(text)


@pytest.mark.parametrize(
    "text, words",
    [
        (b"on: {pre-commit: }\nhooks: [{id: ab, type: webhook, properties: {url: 'http://x'}}]", "missing name"),
        (b"name: a\nhooks: [{id: ab, type: webhook, properties: {url: 'http://x'}}]", "missing 'on'"),
        (
            b"name: a\non: {pre-push: }\nhooks: [{id: ab, type: webhook, properties: {url: 'http://x'}}]",
            "event 'pre-push' is not supported",
        ),
        (b"name: a\non: {pre-commit: }\nhooks: []", "missing hooks"),
        (b"name: a\non: {pre-commit: }\nhooks: [{id: ab, type: exec, properties: {}}]", "unknown type"),
        (b"name: a\non: {pre-commit: }\nhooks: [{id: ab, type: webhook, properties: {url: 'ftp://x'}}]", "http(s)"),
        (
            b"name: a\non: {pre-commit: }\n"
            b"hooks: [{id: ab, type: webhook, properties: {url: 'http://x', timeout: 5x}}]",
            "invalid timeout",
        ),
        (b"name: a\non: {pre-commit: }\nhooks: [{id: ab, type: lambda, properties: {}}]", "function_name"),
        (
            b"name: a\non: {pre-commit: }\nhooks: [{id: ab, type: webhook, properties: {url: 'http://x'}},"
            b" {id: ab, type: webhook, properties: {url: 'http://y'}}]",
            "duplicate hook id",
        ),
        (b"name: [unclosed", "not valid YAML"),
        (b"- a list", "mapping"),
    ],
)
def test_bad_files_refused(text, words):
    with pytest.raises(InvalidActionFile, match=words.replace("(", r"\(").replace(")", r"\)")) as info:
        parse(text)
    assert "_lakefs_actions/a.yaml" in str(info.value)


def test_go_durations():
    assert parse_duration("30s") == 30
    assert parse_duration("1m30s") == 90
    assert parse_duration("500ms") == 0.5
    assert parse_duration("1.5h") == 5400
    with pytest.raises(ValueError):
        parse_duration("10")


def test_globs_are_go_path_match():
    assert glob_match("feature-*", "feature-x")
    assert not glob_match("feature-*", "feature/x")  # * never crosses a separator
    assert glob_match("v?", "v1")
    assert glob_match("[a-c]x", "bx")
    assert not glob_match("[^a-c]x", "bx")
    assert not glob_match("[", "[")


def test_an_oversized_or_exploding_action_file_is_refused_before_it_is_walked() -> None:
    big = b"name: x\n# " + b"a" * MAX_ACTION_FILE_BYTES
    with pytest.raises(InvalidActionFile, match="larger than"):
        parse_action(big, yaml.safe_load)
    # A few hundred bytes of aliases that expand to 9**9 values.
    levels = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    levels += [f"a{n}: &a{n} [" + ", ".join([f"*a{n - 1}"] * 9) + "]" for n in range(1, 10)]
    bomb = ("\n".join(levels) + "\nname: bomb\non: {pre-commit: {}}\nhooks: *a9\n").encode()
    with pytest.raises(InvalidActionFile, match="more than"):
        parse_action(bomb, yaml.safe_load)
