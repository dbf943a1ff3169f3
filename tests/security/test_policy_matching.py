"""Guarantee 5: policy matching takes time linear in the path, whatever the pattern.

The old matcher compiled the glob to a regex; ``.../object/*/*/*/*/*.csv`` against a path of 190 slashes took
2.4 s there, and a 10,000-character path never finished. The matcher now finds each ``*``-separated segment
left to right and never revisits a choice; ``match_steps`` counts the positions it tries.
"""

from __future__ import annotations

import re
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from chalicelib.auth.policies import Permission, is_allowed, match_steps, matches
from chalicelib.auth.records import Effect, Policy, Statement


def _regex_matches(pattern: str, value: str) -> bool:
    """The semantics before the change: the glob as a DOTALL regex, matched in full."""
    parts = (".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.fullmatch("".join(parts), value, re.DOTALL) is not None


HOSTILE_PATTERN = "arn:lakefs:fs:::repository/r/object/" + "*/" * 40 + "*.csv"
LONG_PATH = "arn:lakefs:fs:::repository/r/object/" + "/" * 10_000


def test_a_10000_character_path_against_many_wildcards_is_linear() -> None:
    matched, steps = match_steps(HOSTILE_PATTERN, LONG_PATH)
    assert matched is False
    segments = HOSTILE_PATTERN.count("*") + 1
    assert steps <= len(LONG_PATH) + segments
    # The same, with ``?`` in every segment (the segments that str.find cannot look for).
    pattern = "arn:*" + "?/*" * 60 + "?.csv"
    matched, steps = match_steps(pattern, LONG_PATH + "x.csv")
    assert matched is True
    assert steps <= len(LONG_PATH) + 200
    started = time.perf_counter()
    for _ in range(10):
        matches(HOSTILE_PATTERN, LONG_PATH)
        matches(pattern, LONG_PATH)
    assert time.perf_counter() - started < 0.5  # generous: it takes a few milliseconds


def test_the_reported_policy_is_decided_quickly() -> None:
    statement = Statement(Effect.ALLOW, ("fs:ReadObject",), "arn:lakefs:fs:::repository/r/object/*/*/*/*/*.csv")
    policy = Policy("p", 0, (statement,))
    permission = Permission("fs:ReadObject", "arn:lakefs:fs:::repository/r/object/" + "/" * 190 + "x.csv")
    started = time.perf_counter()
    assert is_allowed([policy], [permission], "u")
    assert not is_allowed([policy], [Permission("fs:ReadObject", permission.resource + "x")], "u")
    assert time.perf_counter() - started < 0.5


ALPHABET = st.sampled_from("ab/*?.\n")


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(pattern=st.text(ALPHABET, max_size=12), value=st.text(st.sampled_from("ab/.\n*?"), max_size=14))
def test_same_answers_as_the_regex_it_replaces(pattern: str, value: str) -> None:
    assert matches(pattern, value) is _regex_matches(pattern, value)


@settings(max_examples=100, deadline=None, derandomize=True, database=None)
@given(pattern=st.text(max_size=10), value=st.text(max_size=12))
def test_same_answers_on_arbitrary_text(pattern: str, value: str) -> None:
    assert matches(pattern, value) is _regex_matches(pattern, value)
