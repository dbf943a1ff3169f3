"""What the graveler unit tests share."""

from __future__ import annotations

from typing import Any


def put_files(g: Any, branch: str, **files: bytes | None) -> None:
    """Uploads (or, for None, deletes) each file on the branch of repository "repo"; "__" in a name is "/"."""
    for name, data in files.items():
        path = name.replace("__", "/")
        if data is None:
            g.delete_object("repo", branch, path)
        else:
            g.upload_object("repo", branch, path, data)
