"""The one ``lakefs://`` parser (the CLI's; the server takes repository, ref and path as separate fields)."""

from __future__ import annotations

import pytest

from lakelet.commands.errors import CLIError
from lakelet.commands.uri import URI, parse


def test_uri_parts() -> None:
    assert parse("lakefs://repo") == URI("repo")
    assert parse("lakefs://repo/main") == URI("repo", "main")
    assert parse("lakefs://repo/main/") == URI("repo", "main")
    assert parse("lakefs://repo/main~1/a/b/c.csv") == URI("repo", "main~1", "a/b/c.csv")
    assert str(URI("repo", "main", "a/b")) == "lakefs://repo/main/a/b"
    assert parse("lakefs://repo/main", ref=True).ref == "main"


@pytest.mark.parametrize("bad", ["s3://repo/main", "lakefs://", "lakefs:///main", "lakefs://repo//path", "repo/main"])
def test_malformed_uris_are_refused_with_the_form_to_write(bad: str) -> None:
    with pytest.raises(CLIError) as caught:
        parse(bad)
    assert "lakefs://repository/ref/path" in caught.value.line()


def test_a_command_that_needs_a_ref_says_so() -> None:
    with pytest.raises(CLIError, match="names no"):
        parse("lakefs://repo", ref=True)
