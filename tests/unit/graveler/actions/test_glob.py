"""Branch globs: Go's path.Match, placed chunk by chunk without backtracking.

The linear matcher is compared with a memoized reference that tries every split (slow, obviously right) on
random patterns and names; the pathological pattern of the report is matched with a bounded number of chunk
placements, counted rather than timed."""

from __future__ import annotations

import functools
import random

import pytest

from chalicelib.graveler.actions import glob as glob_module
from chalicelib.graveler.actions.glob import BadPattern, compile_glob, glob_match


def reference(pattern: str, name: str) -> bool:
    """Go's path.Match by exhaustive search over a tokenized pattern (memoized: polynomial, but simple)."""
    tokens: list[object] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            tokens.append(("lit", pattern[i + 1]))
            i += 2
        elif c == "[":
            j = i + 1
            negate = pattern[j] == "^"
            j += negate
            ranges = []
            while pattern[j] != "]" or not ranges:
                lo = pattern[j]
                j += 1
                hi = lo
                if pattern[j] == "-":
                    hi = pattern[j + 1]
                    j += 2
                ranges.append((lo, hi))
            tokens.append(("class", negate, tuple(ranges)))
            i = j + 1
        else:
            tokens.append(("star",) if c == "*" else ("any",) if c == "?" else ("lit", c))
            i += 1

    @functools.cache
    def go(t: int, n: int) -> bool:
        if t == len(tokens):
            return n == len(name)
        token = tokens[t]
        if token[0] == "star":
            return go(t + 1, n) or (n < len(name) and name[n] != "/" and go(t, n + 1))
        if n == len(name):
            return False
        c = name[n]
        if token[0] == "any":
            ok = c != "/"
        elif token[0] == "lit":
            ok = c == token[1]
        else:
            inside = any(lo <= c <= hi for lo, hi in token[2])  # type: ignore[index, misc]
            ok = c != "/" and inside != token[1]
        return ok and go(t + 1, n + 1)

    return go(0, 0)


def test_go_path_match_cases() -> None:
    cases = [
        ("abc", "abc", True),
        ("*", "abc", True),
        ("*c", "abc", True),
        ("a*", "a", True),
        ("a*", "ab/c", False),
        ("a*/b", "abc/b", True),
        ("a*/b", "a/c/b", False),
        ("a*b*c*d*e*/f", "axbxcxdxe/f", True),
        ("a*b*c*d*e*/f", "axbxcxdxexxx/f", True),
        ("a*b*c*d*e*/f", "axbxcxdxe/xxx/f", False),
        ("a*b?c*x", "abxbbxdbxebxczzx", True),
        ("a*b?c*x", "abxbbxdbxebxczzy", False),
        ("ab[c]", "abc", True),
        ("ab[b-d]", "abc", True),
        ("ab[e-g]", "abc", False),
        ("ab[^c]", "abc", False),
        ("ab[^e-g]", "abc", True),
        ("a\\*b", "a*b", True),
        ("a\\*b", "ab", False),
        ("a?b", "a☺b", True),
        ("a[^a]b", "a☺b", True),
        ("*x", "xxx", True),
        ("", "", True),
        ("", "a", False),
        ("main", "main", True),
        ("feature-*", "feature/x", False),
        ("[^a-c]x", "/x", False),
    ]
    for pattern, name, expected in cases:
        assert glob_match(pattern, name) is expected, (pattern, name)


@pytest.mark.parametrize("pattern", ["[", "[]", "[^]", "[a-]", "a\\", "[\\", "[x-]", "[-]", "[]a]"])
def test_bad_patterns_are_errors_and_match_nothing(pattern: str) -> None:
    with pytest.raises(BadPattern):
        compile_glob(pattern)
    assert not glob_match(pattern, pattern)


def test_agrees_with_an_exhaustive_reference_on_random_patterns() -> None:
    rng = random.Random(29)
    atoms = ["a", "b", "/", "*", "?", "[ab]", "[^a]", "\\*", "*", "a"]
    for _ in range(4000):
        pattern = "".join(rng.choice(atoms) for _ in range(rng.randint(0, 7)))
        name = "".join(rng.choice("ab/*") for _ in range(rng.randint(0, 8)))
        assert glob_match(pattern, name) == reference(pattern, name), (pattern, name)


def test_the_reported_pattern_is_placed_without_backtracking(monkeypatch: pytest.MonkeyPatch) -> None:
    """``*a*a*...*b`` against long names: each chunk is placed once, so the work grows with the name, not
    exponentially (the regex translation took 10 s at 36 characters and hours at 64)."""
    tried = 0
    original = glob_module._Chunk.fits_at

    def counting(self: object, name: str, at: int) -> bool:
        nonlocal tried
        tried += 1
        return original(self, name, at)  # type: ignore[arg-type]

    monkeypatch.setattr(glob_module._Chunk, "fits_at", counting)
    pattern = "*a" * 10 + "*b"
    for size in (36, 64, 256):
        tried = 0
        assert not glob_match(pattern, "a" * size)
        assert tried <= 2  # the literal chunks are found by str.find; only the last chunk is tried, once
    pattern = "*?a" * 10 + "*[b]"
    tried = 0
    assert not glob_match(pattern, "a" * 256)
    assert tried <= 11 * 257  # every chunk scans the name at most once


def test_a_glob_longer_than_the_bound_is_refused() -> None:
    with pytest.raises(BadPattern):
        compile_glob("*" * (glob_module.MAX_GLOB_CHARS + 1))
