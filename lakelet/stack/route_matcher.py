"""chalice local's route matching, with the same answers at a fraction of the cost (the local stack's API Gateway).

Why: chalice's ``RouteMatcher`` splits every route of the app and compares it with the request's path, for every
request, in sorted order until one matches; over Lakelet's ~150 routes that was 6% of the API's time for a log of
100 commits (py-spy). :class:`IndexedRouteMatcher` splits each route once and only tries the routes with as many
parts as the path, in the same sorted order, with the same comparison: a route of another length can never match,
and chalice's loop never looks at one (it compares the lengths first). So the same route wins and the captured
parameters are the same dict, including what chalice's loop leaves in it from routes that matched partway. The
answer depends on the path alone, so it is remembered per path (a copy of the captured dict goes out each time).
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

from chalice.app import Chalice
from chalice.local import MatchResult, RouteMatcher

__all__ = ["IndexedRouteMatcher", "matcher_for"]

# One per set of routes (an app's routes are fixed once it serves): built on a connection's first request.
_matchers: dict[tuple[str, ...], IndexedRouteMatcher] = {}
_MATCHERS_MAX = 16
# Paths remembered per matcher before the memory is emptied, and the longest one remembered: anyone who reaches
# the port (a web page's requests included) chooses paths, so what they can make it hold stays small (4 MiB).
_PATHS_MAX = 4096
_PATH_CHARS_MAX = 1024


class IndexedRouteMatcher(RouteMatcher):
    """A RouteMatcher whose routes are split once and grouped by their number of parts."""

    def __init__(self, route_urls: list[str]) -> None:
        super().__init__(route_urls)
        # Per number of parts: (route, its parts as (capture name, None) or (None, literal)), in sorted order.
        self._by_length: dict[int, list[tuple[str, list[tuple[str | None, str | None]]]]] = {}
        for route_url in self.route_urls:
            parts: list[tuple[str | None, str | None]] = [
                (part[1:-1], None) if part.startswith("{") and part.endswith("}") else (None, part)
                for part in route_url.split("/")
            ]
            self._by_length.setdefault(len(parts), []).append((route_url, parts))
        # Per path: the route and the captured parameters (None: no route). The lakeFS API carries object paths
        # in the query, so a stack sees few distinct paths (routes x repositories x refs).
        self._matched: dict[str, tuple[str | None, dict[str, str]]] = {}

    def match_route(self, url: str) -> MatchResult:
        parsed_url = urlparse(url)
        query_params = parse_qs(parsed_url.query, keep_blank_values=True)
        path = parsed_url.path
        # API Gateway removes the trailing slash if the route is not the root (as chalice's matcher does).
        if path != "/" and path.endswith("/"):
            path = path[:-1]
        found = self._matched.get(path)
        if found is None:
            found = self._match(path)
            if len(path) <= _PATH_CHARS_MAX:
                if len(self._matched) >= _PATHS_MAX:
                    self._matched.clear()
                self._matched[path] = found
        route_url, captured = found
        if route_url is None:
            raise ValueError(f"No matching route found for: {url}")
        return MatchResult(route_url, dict(captured), query_params)

    def _match(self, path: str) -> tuple[str | None, dict[str, str]]:
        parts = path.split("/")
        captured: dict[str, str] = {}
        for route_url, route_parts in self._by_length.get(len(parts), ()):
            for part, (name, literal) in zip(parts, route_parts, strict=True):
                if name is not None:
                    captured[name] = part
                elif part != literal:
                    break
            else:
                return route_url, captured
        return None, {}


def matcher_for(app: Chalice) -> IndexedRouteMatcher:
    """The app's matcher, built once for its routes."""
    routes = tuple(app.routes)
    found = _matchers.get(routes)
    if found is None:
        if len(_matchers) >= _MATCHERS_MAX:
            _matchers.clear()
        found = _matchers[routes] = IndexedRouteMatcher(list(routes))
    return found
