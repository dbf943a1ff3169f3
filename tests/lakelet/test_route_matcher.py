"""The local stack's route matcher answers exactly as chalice local's: the same route, the same captured
parameters (chalice's dict, partial captures of routes tried before included), the same query, the same refusal."""

from __future__ import annotations

import random
import re

import pytest
from chalice.local import RouteMatcher

from app import app
from lakelet.stack.route_matcher import IndexedRouteMatcher, matcher_for

_CAPTURE = re.compile(r"\{[^}]+\}")


def _paths(routes: list[str]) -> list[str]:
    """Every route filled with values (some equal to literals of other routes), then altered copies of them: a
    part changed, one added or removed, a trailing slash, a query, the root, nothing routable."""
    rng = random.Random(43)
    literals = sorted({part for route in routes for part in route.split("/") if part and not part.startswith("{")})
    values = ["main", "repo1", "a%2Fb", "x.y", "", *rng.sample(literals, 8)]
    filled = [_CAPTURE.sub(lambda _: rng.choice(values), route) for route in routes for _ in range(3)]
    altered = []
    for path in filled:
        parts = path.split("/")
        at = rng.randrange(1, len(parts)) if len(parts) > 1 else 0
        altered.append("/".join([*parts[:at], "zzz", *parts[at + 1 :]]))
        altered.append("/".join([*parts, rng.choice(values)]))
        altered.append("/".join(parts[:-1]) or "/")
        altered.append(path + "/")
        altered.append(path + "?amount=100&after=&prefix=a%2F")
    return [*filled, *altered, "/", "", "//", "/api/v1", "/nothing/here"]


def _answer(matcher: RouteMatcher, path: str) -> object:
    try:
        found = matcher.match_route(path)
    except ValueError as e:
        return ("refused", str(e))
    return (found.route, found.captured, found.query_params)


def test_the_indexed_matcher_answers_as_chalices_for_every_route_of_the_app() -> None:
    routes = list(app.routes)
    assert len(routes) > 100
    chalices, ours = RouteMatcher(routes), IndexedRouteMatcher(routes)
    paths = _paths(routes)
    matched = 0
    for path in paths:
        expected = _answer(chalices, path)
        assert _answer(ours, path) == expected, path
        matched += expected[0] != "refused"
    assert matched > len(routes)  # most filled paths route, and every altered kind was tried


@pytest.mark.parametrize(
    "routes",
    [
        # chalice's loop keeps what a route captured before it failed: the dict a later match returns has it too.
        ["/a/{x}/b", "/a/{y}/c"],
        ["/{p}/{q}", "/s/t", "/s/{r}"],
    ],
)
def test_partial_captures_are_kept_as_chalice_keeps_them(routes: list[str]) -> None:
    for path in ["/a/1/c", "/a/1/b", "/s/t", "/s/u", "/v/w", "/a/1/d"]:
        assert _answer(IndexedRouteMatcher(routes), path) == _answer(RouteMatcher(routes), path), path


def test_one_matcher_serves_every_connection_of_an_app() -> None:
    assert matcher_for(app) is matcher_for(app)
    assert matcher_for(app).route_urls == sorted(app.routes)


def test_a_remembered_path_answers_as_the_first_time_and_its_parameters_are_the_callers() -> None:
    matcher = IndexedRouteMatcher(list(app.routes))
    first = matcher.match_route("/api/v1/repositories/r1/refs/main/commits?amount=100")
    first.captured["ref"] = "changed by the caller"
    again = matcher.match_route("/api/v1/repositories/r1/refs/main/commits/?amount=5")
    chalices = RouteMatcher(list(app.routes)).match_route("/api/v1/repositories/r1/refs/main/commits?amount=5")
    assert (again.route, again.captured, again.query_params) == (
        first.route,
        chalices.captured,  # {"repository": "r1", "ref": "main"} and what routes tried before captured
        {"amount": ["5"]},
    )
    assert again.captured["ref"] == "main"
    for _ in range(2):
        with pytest.raises(ValueError, match="No matching route found for: /no/such/route"):
            matcher.match_route("/no/such/route")


def test_only_paths_of_a_bounded_length_are_remembered() -> None:
    matcher = IndexedRouteMatcher(list(app.routes))
    long_ref = "r" * 2_000
    found = matcher.match_route(f"/api/v1/repositories/r1/refs/{long_ref}/commits")
    assert found.captured["ref"] == long_ref
    assert all(len(path) <= 1024 for path in matcher._matched)
    matcher.match_route("/api/v1/repositories/r1/refs/main/commits")
    assert "/api/v1/repositories/r1/refs/main/commits" in matcher._matched
