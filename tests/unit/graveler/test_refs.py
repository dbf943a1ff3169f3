import pytest

from chalicelib.adapters.memory import MemoryRefStore
from chalicelib.graveler import errors
from chalicelib.graveler.identity import commit_id
from chalicelib.graveler.records import Branch, Commit, RefKind, Tag
from chalicelib.graveler.refs import RefExpression, parse_ref, resolve_ref

REPO = "repo"


def _commit(refs, message, parents=(), when=1):
    cid = commit_id("u", message, "", when, {}, parents)
    refs.add_commit(REPO, Commit(cid, "u", message, when, "", {}, tuple(parents), 1))
    return cid


@pytest.fixture
def graph():
    """c1 <- c2 <- c3 <- m (merge of c3 and f1); f1's parent is c2. main at m, feature at f1, tag v1 at c2."""
    refs = MemoryRefStore()
    c1 = _commit(refs, "c1")
    c2 = _commit(refs, "c2", [c1])
    c3 = _commit(refs, "c3", [c2])
    f1 = _commit(refs, "f1", [c2])
    m = _commit(refs, "merge", [c3, f1])
    refs.create_branch(REPO, Branch("main", m, "tok-main", ("sealed-1",)))
    refs.create_branch(REPO, Branch("feature", f1, "tok-feature"))
    refs.create_tag(REPO, Tag("v1", c2))
    return refs, {"c1": c1, "c2": c2, "c3": c3, "f1": f1, "m": m}


def test_parse_modifiers():
    assert parse_ref("main") == RefExpression("main")
    assert parse_ref("main~") == RefExpression("main", (("~", 1),))
    assert parse_ref("main~2^2~1") == RefExpression("main", (("~", 2), ("^", 2), ("~", 1)))
    assert parse_ref("main^0") == RefExpression("main", (("^", 0),))
    assert parse_ref("main@") == RefExpression("main", (), "@")
    assert parse_ref("main$") == RefExpression("main", (), "$")


@pytest.mark.parametrize(
    "bad",
    ["", "~1", "main~x", "main@@", "main@1", "main~1@", "main@~1", "main$$", "a b", "main^^x", "main~99999999999"],
)
def test_parse_rejects_bad_expressions(bad):
    with pytest.raises(errors.InvalidRef):
        parse_ref(bad)


def test_branch_resolves_with_staging(graph):
    refs, c = graph
    got = resolve_ref(refs, REPO, "main")
    assert got.kind is RefKind.BRANCH and got.commit_id == c["m"] and got.include_staging
    assert got.branch.staging_token == "tok-main"


def test_at_and_dollar_select_the_view(graph):
    refs, c = graph
    committed = resolve_ref(refs, REPO, "main@")
    assert committed.commit_id == c["m"] and not committed.include_staging
    assert resolve_ref(refs, REPO, "main$").include_staging
    with pytest.raises(errors.InvalidRef):
        resolve_ref(refs, REPO, "v1@")


def test_tilde_and_caret_walk_history(graph):
    refs, c = graph
    assert resolve_ref(refs, REPO, "main~1").commit_id == c["c3"]
    assert resolve_ref(refs, REPO, "main~").commit_id == c["c3"]
    assert resolve_ref(refs, REPO, "main^").commit_id == c["c3"]
    assert resolve_ref(refs, REPO, "main^2").commit_id == c["f1"]
    assert resolve_ref(refs, REPO, "main^2~1").commit_id == c["c2"]
    assert resolve_ref(refs, REPO, "main~3").commit_id == c["c1"]
    assert resolve_ref(refs, REPO, "main^0").commit_id == c["m"]
    assert resolve_ref(refs, REPO, "main~1^1~1").commit_id == c["c1"]
    assert resolve_ref(refs, REPO, "v1~1").commit_id == c["c1"]
    assert resolve_ref(refs, REPO, "main~1").kind is RefKind.COMMIT


def test_walking_past_the_root_or_parents(graph):
    refs, _ = graph
    with pytest.raises(errors.RefNotFound):
        resolve_ref(refs, REPO, "main~4")
    with pytest.raises(errors.InvalidRef):
        resolve_ref(refs, REPO, "main^3")
    with pytest.raises(errors.InvalidRef):
        resolve_ref(refs, REPO, "main~1^2")


def test_tag_full_id_and_prefix(graph):
    refs, c = graph
    assert resolve_ref(refs, REPO, "v1").kind is RefKind.TAG
    assert resolve_ref(refs, REPO, "v1").commit_id == c["c2"]
    assert resolve_ref(refs, REPO, c["c3"]).commit_id == c["c3"]
    assert resolve_ref(refs, REPO, c["c3"][:10]).commit_id == c["c3"]
    assert resolve_ref(refs, REPO, c["f1"][:10] + "~1").commit_id == c["c2"]


def test_unknown_short_and_ambiguous_refs_are_not_found(graph):
    refs, c = graph
    with pytest.raises(errors.RefNotFound):
        resolve_ref(refs, REPO, "nope")
    with pytest.raises(errors.RefNotFound):
        resolve_ref(refs, REPO, c["c1"][:3])  # too short to be a prefix
    # A one-hex-digit-shorter prefix shared by two commits is ambiguous.
    refs.add_commit(REPO, Commit("abcd" + "0" * 60, "u", "x", 1, "", {}, (), 1))
    refs.add_commit(REPO, Commit("abcd" + "1" * 60, "u", "y", 1, "", {}, (), 1))
    with pytest.raises(errors.RefNotFound):
        resolve_ref(refs, REPO, "abcd")


def test_branch_wins_over_tag_and_prefix(graph):
    refs, c = graph
    refs.create_tag(REPO, Tag("feature", c["c1"]))
    assert resolve_ref(refs, REPO, "feature").commit_id == c["f1"]
