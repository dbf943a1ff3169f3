"""The README stays a front door (short, linking every page of docs/), every relative link of the docs leads to
a file and heading that exist, and every page's examples follow the snippet rules (tests/docs/snippets.py)."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

from tests.docs.snippets import SnippetError, doc_pages, extract

PROJECT_DIR = Path(__file__).resolve().parents[2]
README = PROJECT_DIR / "README.md"
MAX_README_LINES = 300
_LINK = re.compile(r"!?\[[^\]]*\]\((?P<target>[^)\s]+)\)")
_HEADING = re.compile(r"^#{1,6}\s+(?P<title>.+?)\s*#*\s*$")


def _slug(title: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[`*_]|<[^>]+>", "", title).lower()
    text = "".join(c for c in text if c in " -" or unicodedata.category(c)[0] in "LN")
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    anchors: set[str] = set()
    fenced = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced and (heading := _HEADING.match(line)):
            anchors.add(_slug(heading.group("title")))
    return anchors


def _prose(page: Path) -> str:
    """The page without its fenced blocks, whose brackets are code."""
    kept, fenced = [], False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced:
            kept.append(line)
    return "\n".join(kept)


def test_readme_is_a_front_door_of_at_most_300_lines() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_README_LINES, f"README.md has {len(lines)} lines; move detail into docs/"


def test_readme_links_every_docs_page() -> None:
    linked = {m.group("target").split("#")[0] for m in _LINK.finditer(_prose(README))}
    pages = {f"docs/{p.name}" for p in (PROJECT_DIR / "docs").glob("*.md")}
    assert pages, "docs/ has no pages"
    assert not pages - linked, f"README.md links none of {sorted(pages - linked)}"


@pytest.mark.parametrize("page", doc_pages(PROJECT_DIR), ids=lambda p: str(p.relative_to(PROJECT_DIR)))
def test_relative_links_lead_to_a_file_and_heading(page: Path) -> None:
    broken = []
    for match in _LINK.finditer(_prose(page)):
        target = match.group("target")
        if re.match(r"^[a-z]+:", target):
            continue  # http(s), mailto: outside the repository
        path, _, anchor = target.partition("#")
        goal = (page.parent / path).resolve() if path else page
        if not goal.exists():
            broken.append(f"{target}: no file {goal}")
        elif anchor and goal.suffix == ".md" and anchor not in _anchors(goal):
            broken.append(f"{target}: no heading #{anchor} in {goal.name}")
    assert not broken, f"{page.relative_to(PROJECT_DIR)}: " + "; ".join(broken)


@pytest.mark.parametrize("page", doc_pages(PROJECT_DIR), ids=lambda p: str(p.relative_to(PROJECT_DIR)))
def test_examples_follow_the_snippet_rules(page: Path) -> None:
    snippets = extract(page, page.relative_to(PROJECT_DIR))
    assert all(s.skip is None or s.skip.strip() for s in snippets)


def test_a_skip_without_a_reason_is_refused(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("text\n\n<!-- snippet: skip () -->\n```sh\nfalse\n```\n")
    with pytest.raises(SnippetError, match=re.escape("page.md:3: a skipped snippet must say why")):
        extract(page, Path("page.md"))
    page.write_text("<!-- snippet: skip -->\n```sh\nfalse\n```\n")
    with pytest.raises(SnippetError, match="unknown snippet directive"):
        extract(page, Path("page.md"))


def test_an_unmarked_block_that_cannot_run_is_refused(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# t\n\n```\noutput\n```\n")
    with pytest.raises(SnippetError, match=re.escape("page.md:3: a block in 'no language' cannot be run")):
        extract(page, Path("page.md"))


def test_snippets_carry_their_markdown_line_and_indentation(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "- item:\n  ```python\n  x = 1\n  ```\n\n<!-- snippet: skip (an AWS account) -->\n```sh\nmake deploy\n```\n"
    )
    first, second = extract(page, Path("page.md"))
    assert (first.where, first.language, first.code, first.skip) == ("page.md:3", "python", "x = 1\n", None)
    assert (second.where, second.skip) == ("page.md:8", "an AWS account")
