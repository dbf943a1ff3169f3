"""A merge is "no changes" exactly when lakeFS says so, tried with the ``lakefs`` client on the local stack."""

from __future__ import annotations

import lakefs
import pytest
from lakefs.exceptions import BadRequestException

pytestmark = pytest.mark.e2e


def test_an_emptied_tree_merges_into_a_branch_made_from_the_first_commit(repo: lakefs.Repository) -> None:
    main = repo.branch("main")
    b = repo.branch("b").create(source_reference="main")
    b.object("x.txt").upload(b"x")
    b.commit(message="add x")
    b.object("x.txt").delete()
    emptied = b.commit(message="delete x")
    target = repo.branch("target").create(source_reference="main")

    merge_commit = repo.ref(emptied.id).merge_into(target)

    head = target.get_commit()
    assert head.id == merge_commit
    assert list(head.parents) == [main.get_commit().id, emptied.id]
    assert list(target.objects()) == []
    # Merged once, the same commit is already up to date, as lakeFS answers.
    with pytest.raises(BadRequestException, match="no changes"):
        repo.ref(emptied.id).merge_into(target)


def test_already_up_to_date_answers_stay(repo: lakefs.Repository) -> None:
    main = repo.branch("main")
    main.object("a.txt").upload(b"a")
    main.commit(message="one")
    dev = repo.branch("dev").create(source_reference="main")
    main.object("b.txt").upload(b"b")
    main.commit(message="two")
    for source in (dev, main):
        with pytest.raises(BadRequestException, match="no changes"):
            source.merge_into(main)
    fresh = repo.branch("fresh").create(source_reference="main~2")
    with pytest.raises(BadRequestException, match="no changes"):
        fresh.merge_into(main)
