"""What the graveler unit tests share."""

from __future__ import annotations

from typing import Any


def put_files(g: Any, branch: str, **files: bytes | None) -> None:
    """Uploads (or, for None, deletes) each file on the branch of repository "repo"; "__" in a name is "/"."""
    for name, data in files.items():
        path = name.replace("__", "/")
        if data is None:
            g.objects.delete_object("repo", branch, path)
        else:
            g.objects.upload_object("repo", branch, path, data)


def rebuilt(g: Any, **parts: Any) -> Any:
    """The engine over ``g``'s parts with some replaced (a store wrapped to race or count): an engine's parts are
    fixed when it is built, so a test that wraps a store builds another engine over the wrapped one."""
    import dataclasses

    from chalicelib.graveler.engine import build_engine

    return build_engine(dataclasses.replace(g.ports, **parts))
