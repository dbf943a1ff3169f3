"""``lakefs://repository/ref/path`` URIs, parsed as lakectl does."""

from __future__ import annotations

from dataclasses import dataclass

from lakelet.commands.errors import CLIError

SCHEME = "lakefs://"


@dataclass(frozen=True, slots=True)
class URI:
    repository: str
    ref: str = ""
    path: str = ""

    def __str__(self) -> str:
        text = SCHEME + self.repository
        if self.ref:
            text += "/" + self.ref
            if self.path:
                text += "/" + self.path
        return text

    def need_ref(self, what: str = "a ref") -> URI:
        if not self.ref:
            raise CLIError(f"{self} names no {what}", f"use lakefs://{self.repository}/<{what.split()[-1]}>")
        return self


def parse(text: str, *, ref: bool = False, path: bool = False) -> URI:
    """Split a lakefs:// URI; ``ref``/``path`` say which parts the command requires."""
    if not text.startswith(SCHEME):
        raise CLIError(f"{text!r} is not a lakefs:// URI", "write it as lakefs://repository/ref/path")
    rest = text[len(SCHEME) :]
    repository, _, remainder = rest.partition("/")
    ref_part, _, path_part = remainder.partition("/")
    if not repository:
        raise CLIError(f"{text!r} names no repository", "write it as lakefs://repository/ref/path")
    if not ref_part and path_part:
        # lakefs://repo//path: a path needs a ref in front of it (lakectl refuses it too).
        raise CLIError(f"{text!r} names an object path but no ref", "write it as lakefs://repository/ref/path")
    uri = URI(repository, ref_part, path_part)
    if ref:
        uri.need_ref()
    if path and not uri.path:
        raise CLIError(f"{text!r} names no object path", f"write it as lakefs://{repository}/{ref_part or 'ref'}/path")
    return uri
