"""Fenced examples of the README and docs/, as the snippet test runs them.

The rules live here so the docs and the test cannot disagree on them (docs/README.md, "The examples", says the
same in prose): a block is run when its language is Python or a shell; any other block, and any runnable one
that cannot run against a local stack, carries ``<!-- snippet: skip (reason) -->`` on the line before its
fence. The examples are written for the default ports; ``rewrite`` points them at the stack under test.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

PYTHON = frozenset({"python", "py"})
SHELL = frozenset({"sh", "bash", "shell"})
CONSOLE = frozenset({"console"})
RUNNABLE = PYTHON | SHELL | CONSOLE

# The addresses the docs are written for; nothing else of a snippet is rewritten.
DOC_API_HOSTPORT = "127.0.0.1:8000"
DOC_S3_HOSTPORT = "127.0.0.1:8001"

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^`]*)$")
_DIRECTIVE = re.compile(r"^\s*<!--\s*snippet:(?P<body>.*?)-->\s*$")
_SKIP = re.compile(r"^\s*skip\s*\((?P<reason>.*)\)\s*$")


class SnippetError(ValueError):
    """A page breaks the rules: a skip without a reason, an unknown directive, an unmarked block, no close."""


@dataclass(frozen=True, slots=True)
class Snippet:
    path: Path  # as written in failures: relative to the project
    line: int  # 1-based line of the block's first code line
    language: str
    code: str
    skip: str | None  # the reason, when marked skip

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"

    @property
    def runs(self) -> bool:
        return self.skip is None


def doc_pages(project: Path) -> list[Path]:
    """The README first, then every page of docs/ by name: the order the test runs them in."""
    return [project / "README.md", *sorted((project / "docs").glob("*.md"))]


def extract(path: Path, shown_as: Path) -> list[Snippet]:
    """Every fenced block of ``path``, with its skip marker; raises SnippetError for a page that breaks the rules."""
    lines = path.read_text(encoding="utf-8").splitlines()
    snippets: list[Snippet] = []
    index = 0
    while index < len(lines):
        opened = _FENCE.match(lines[index])
        directive = _DIRECTIVE.match(lines[index])
        if directive and not (index + 1 < len(lines) and _FENCE.match(lines[index + 1])):
            raise SnippetError(f"{shown_as}:{index + 1}: a snippet directive must sit on the line right before a fence")
        if not opened:
            index += 1
            continue
        indent, fence = opened.group("indent"), opened.group("fence")
        language = opened.group("info").strip().split(" ")[0].lower() if opened.group("info").strip() else ""
        skip = _skip_reason(lines[index - 1] if index else "", shown_as, index)
        body: list[str] = []
        close = index + 1
        while close < len(lines) and not (lines[close].strip() == fence and lines[close].startswith(indent)):
            body.append(lines[close][len(indent) :] if lines[close].startswith(indent) else lines[close].lstrip())
            close += 1
        if close == len(lines):
            raise SnippetError(f"{shown_as}:{index + 1}: the fence is never closed")
        if skip is None and language not in RUNNABLE:
            raise SnippetError(
                f"{shown_as}:{index + 1}: a block in {language or 'no language'!r} cannot be run; "
                "mark it <!-- snippet: skip (why) --> or make it Python or shell"
            )
        snippets.append(Snippet(shown_as, index + 2, language, "\n".join(body) + "\n", skip))
        index = close + 1
    return snippets


def _skip_reason(previous: str, shown_as: Path, fence_index: int) -> str | None:
    directive = _DIRECTIVE.match(previous)
    if not directive:
        return None
    skip = _SKIP.match(directive.group("body"))
    if not skip:
        raise SnippetError(
            f"{shown_as}:{fence_index}: unknown snippet directive {previous.strip()!r}; "
            "the only one is <!-- snippet: skip (reason) -->"
        )
    reason = skip.group("reason").strip()
    if not reason:
        raise SnippetError(f"{shown_as}:{fence_index}: a skipped snippet must say why")
    return reason


def rewrite(code: str, api_hostport: str, s3_hostport: str) -> str:
    """The snippet with the documented addresses replaced by the stack's own."""
    return code.replace(DOC_S3_HOSTPORT, s3_hostport).replace(DOC_API_HOSTPORT, api_hostport)


def console_commands(code: str) -> str:
    """A console block's commands: its ``$ `` lines; the rest is output."""
    return "\n".join(line[2:] if line.startswith("$ ") else "" for line in code.splitlines()) + "\n"
