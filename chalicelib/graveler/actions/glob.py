"""Branch globs as Go's ``path.Match`` reads them (lakeFS matches ``branches:`` with it), in linear passes.

A pattern is a run of chunks, each optionally led by ``*``; a chunk is a fixed-length run of literals, ``?`` and
``[...]`` classes (``^`` negates, ``a-z`` ranges, ``\\`` escapes). ``*`` and ``?`` never match ``/``. Since every
chunk has a fixed length, the leftmost place a chunk fits after the previous one is always as good as any later
one (whatever a later place could lead to, the leftmost leaves more of the name to it), so each chunk is placed
once and never revisited: no backtracking. The last chunk, when led by a star, must end the name, so it is tried
at one place only. A translation to a backtracking regex took 10 s for ``*a*a*a*a*a*a*a*a*a*a*b`` against a
36-character branch, holding the interpreter lock; this takes microseconds.

A bad pattern (an unterminated or empty class, a trailing ``\\``, an unescaped ``-`` or ``]`` as a range's end)
is an error, as Go's ErrBadPattern: spec.py refuses it when the action file is read.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BadPattern", "compile_glob", "glob_match"]

# Patterns are matched against branch names (at most 256 characters); a longer pattern is refused when read.
MAX_GLOB_CHARS = 1024


class BadPattern(ValueError):
    """Go's path.ErrBadPattern."""


@dataclass(frozen=True, slots=True)
class _Class:
    negate: bool
    ranges: tuple[tuple[str, str], ...]

    def accepts(self, c: str) -> bool:
        if c == "/":
            return False
        inside = any(lo <= c <= hi for lo, hi in self.ranges)
        return inside != self.negate


_ANY = None  # ``?``
_Token = str | _Class | None


@dataclass(frozen=True, slots=True)
class _Chunk:
    star: bool
    tokens: tuple[_Token, ...]

    @property
    def literal(self) -> str | None:
        """The chunk's text when it holds literals only (then str.find places it)."""
        if all(isinstance(t, str) for t in self.tokens):
            return "".join(t for t in self.tokens if isinstance(t, str))
        return None

    def fits_at(self, name: str, at: int) -> bool:
        if at + len(self.tokens) > len(name):
            return False
        for offset, token in enumerate(self.tokens):
            c = name[at + offset]
            if token is None:
                if c == "/":
                    return False
            elif isinstance(token, str):
                if c != token:
                    return False
            elif not token.accepts(c):
                return False
        return True


@dataclass(frozen=True, slots=True)
class Glob:
    chunks: tuple[_Chunk, ...]

    def match(self, name: str) -> bool:
        at = 0
        last = len(self.chunks) - 1
        for index, chunk in enumerate(self.chunks):
            if chunk.star and not chunk.tokens:  # a trailing star: the rest of the name, unless it crosses a "/"
                return "/" not in name[at:]
            if not chunk.star:
                if not chunk.fits_at(name, at):
                    return False
                at += len(chunk.tokens)
                continue
            if index == last:
                start = len(name) - len(chunk.tokens)
                return start >= at and "/" not in name[at:start] and chunk.fits_at(name, start)
            found = self._leftmost(chunk, name, at)
            if found < 0:
                return False
            at = found + len(chunk.tokens)
        return at == len(name)

    @staticmethod
    def _leftmost(chunk: _Chunk, name: str, at: int) -> int:
        """Where the chunk first fits at or after ``at`` without the star crossing a "/"; -1 if nowhere."""
        slash = name.find("/", at)
        end = len(name) if slash < 0 else slash  # the star stops before the first "/" (the chunk may hold none)
        literal = chunk.literal
        if literal is not None:
            found = name.find(literal, at)
            return found if 0 <= found <= end else -1
        for start in range(at, end + 1):
            if chunk.fits_at(name, start):
                return start
        return -1


def compile_glob(pattern: str) -> Glob:
    """The pattern's chunks; raises BadPattern."""
    if len(pattern) > MAX_GLOB_CHARS:
        raise BadPattern(f"longer than {MAX_GLOB_CHARS} characters")
    chunks: list[_Chunk] = []
    i = 0
    while i < len(pattern) or not chunks:
        star = False
        while i < len(pattern) and pattern[i] == "*":
            star, i = True, i + 1
        tokens: list[_Token] = []
        while i < len(pattern) and pattern[i] != "*":
            c = pattern[i]
            if c == "?":
                tokens.append(_ANY)
                i += 1
            elif c == "[":
                token, i = _parse_class(pattern, i + 1)
                tokens.append(token)
            elif c == "\\":
                if i + 1 >= len(pattern):
                    raise BadPattern("a trailing backslash")
                tokens.append(pattern[i + 1])
                i += 2
            else:
                tokens.append(c)
                i += 1
        chunks.append(_Chunk(star, tuple(tokens)))
        if i >= len(pattern):
            break
    return Glob(tuple(chunks))


def _parse_class(pattern: str, i: int) -> tuple[_Class, int]:
    """The class opening just before ``i`` and the index after its ``]``."""
    negate = i < len(pattern) and pattern[i] == "^"
    if negate:
        i += 1
    ranges: list[tuple[str, str]] = []
    while True:
        if i >= len(pattern):
            raise BadPattern("an unterminated character class")
        if pattern[i] == "]" and ranges:
            return _Class(negate, tuple(ranges)), i + 1
        lo, i = _class_char(pattern, i)
        hi = lo
        if i < len(pattern) and pattern[i] == "-":
            hi, i = _class_char(pattern, i + 1)
        ranges.append((lo, hi))


def _class_char(pattern: str, i: int) -> tuple[str, int]:
    if i >= len(pattern) or pattern[i] in "-]":
        raise BadPattern("a character class with an empty or unescaped '-' or ']'")
    if pattern[i] == "\\":
        if i + 1 >= len(pattern):
            raise BadPattern("a trailing backslash")
        return pattern[i + 1], i + 2
    return pattern[i], i + 1


def glob_match(pattern: str, name: str) -> bool:
    """Whether ``name`` matches; a bad pattern matches nothing (lakeFS treats its error as no match)."""
    try:
        return compile_glob(pattern).match(name)
    except BadPattern:
        return False
