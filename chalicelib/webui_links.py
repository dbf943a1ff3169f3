"""lakeFS's web UI addresses, turned into ours: a lakeFS user's bookmark or a link from lakeFS's docs
(``/repositories/quickstart/objects?ref=main&path=data/``) opens the same page of our UI
(``#/repositories/quickstart/objects?ref=main&prefix=data/``), where it would otherwise meet a JSON 404.

Our UI routes by the URL's hash (webui/src/lib/paths.js), and index.html names its assets relative to ``/``, so
these addresses are answered with a redirect to the hash route rather than with index.html. The redirect is
relative (``../../#/...``): it lands on the UI whatever prefix (an API Gateway stage) the app is served under.
The pages lakeFS has and we do not (datasets, setup, its login page) open our UI's nearest page.
"""

from __future__ import annotations

import posixpath
import urllib.parse
from collections.abc import Mapping, Sequence

__all__ = ["hash_route", "relative_redirect"]

# lakeFS's repository tabs (webui/src/pages/index.jsx) -> ours (webui/src/pages/repository.js).
_REPOSITORY_TABS = {
    "objects": "objects",
    "object": "objects",
    "commits": "commits",
    "branches": "branches",
    "tags": "tags",
    "pulls": "pulls",
    "compare": "compare",
    "actions": "actions",
    "settings": "settings",
}
# Tabs whose second segment names one thing our UI shows on its own page (a commit, a pull request, a run).
_DETAIL_TABS = frozenset({"commits", "pulls", "actions"})
_ADMIN_TABS = frozenset({"users", "groups", "policies"})


def _query(pairs: Mapping[str, str]) -> str:
    kept = {k: v for k, v in pairs.items() if v is not None}
    return "?" + urllib.parse.urlencode(kept, quote_via=urllib.parse.quote, safe="/") if kept else ""


def _route(parts: Sequence[str], query: Mapping[str, str] | None = None) -> str:
    return "#/" + "/".join(urllib.parse.quote(p, safe="") for p in parts) + _query(query or {})


def _objects_query(tab: str, query: Mapping[str, str]) -> dict[str, str]:
    """lakeFS's ``objects?path=DIR/`` lists a folder and ``object?path=FILE`` shows a file; ours lists
    ``prefix`` and shows ``path`` beside it."""
    out = {"ref": query["ref"]} if query.get("ref") else {}
    path = query.get("path", "")
    if tab == "object" or (path and not path.endswith("/")):
        parent = posixpath.dirname(path)
        out["prefix"] = parent + "/" if parent else ""
        if path:
            out["path"] = path
    elif path:
        out["prefix"] = path
    return out


def hash_route(parts: Sequence[str], query: Mapping[str, str]) -> str:
    """Our UI's hash route for a lakeFS UI path (its segments, decoded) and query."""
    if not parts or parts[0] not in ("repositories", "auth"):
        return _route(["repositories"])
    if parts[0] == "auth":
        tab = parts[1] if len(parts) > 1 else ""
        if tab not in _ADMIN_TABS:
            return _route(["repositories"])  # lakeFS's login and credentials pages: ours are the UI's own
        return _route(["admin", tab, *parts[2:3]])
    if len(parts) == 1:
        return _route(["repositories"])
    repo = parts[1]
    tab = _REPOSITORY_TABS.get(parts[2] if len(parts) > 2 else "objects", "objects")
    source = parts[2] if len(parts) > 2 else "objects"
    if tab == "objects":
        return _route(["repositories", repo, tab], _objects_query(source, query))
    if tab == "compare":  # lakeFS: ?ref=BASE&compare=OTHER
        keep = {"base": query.get("ref", ""), "compare": query.get("compare", "")}
        return _route(["repositories", repo, tab], {k: v for k, v in keep.items() if v})
    detail = parts[3:4] if tab in _DETAIL_TABS and len(parts) > 3 and parts[3] != "create" else []
    keep = {"ref": query["ref"]} if tab == "commits" and query.get("ref") else {}
    return _route(["repositories", repo, tab, *detail], keep)


def relative_redirect(depth: int, route: str) -> str:
    """A Location that reaches the UI's root from a path ``depth`` folders below it, then the hash route."""
    return ("../" * depth or "./") + route
