"""The facade is a composition: no base class but ``object``, no logic of its own (its methods are the use cases'
bound methods), its parts fixed at construction (assigning anything afterwards fails loudly), and nothing it
routes to is lost: every name callers used on the mixin facade is still there."""

from __future__ import annotations

import inspect

import pytest

from chalicelib import wiring
from chalicelib.graveler.service import Graveler

# The public names of the facade before it was a composition (main at the start of issue 30's items 1-3, with the
# conditional delete merged since): callers on other branches keep calling these.
ROUTED = [
    "abort_presigned_multipart",
    "action_files",
    "all_commits",
    "branch_heads",
    "check_upload_branch",
    "cherry_pick",
    "commit",
    "commit_status",
    "commit_steps",
    "committed_for",
    "complete_presigned_multipart",
    "copy_object",
    "copy_part",
    "create_bare_repository",
    "create_branch",
    "create_commit_record",
    "create_repository",
    "create_tag",
    "delete_branch",
    "delete_object",
    "delete_object_if",
    "delete_objects",
    "delete_repository",
    "delete_tag",
    "diff_refs",
    "diff_uncommitted",
    "find_merge_base",
    "get_branch",
    "get_commit",
    "get_repository",
    "get_tag",
    "hard_reset",
    "is_dirty",
    "iterate_repositories",
    "link_object",
    "link_upload",
    "list_branches",
    "list_objects",
    "list_repositories",
    "list_tags",
    "log",
    "merge",
    "merge_status",
    "merge_steps",
    "metadata_file",
    "namespace_files",
    "new_physical_address",
    "now",
    "prepare_move",
    "presign_metadata_file",
    "presign_object",
    "presign_part",
    "presign_upload",
    "preview_merge",
    "read_metadata_file",
    "read_object",
    "refuse_dirty",
    "refuse_existing_repository",
    "release_retired",
    "repository_for_write",
    "reset_branch",
    "resolve",
    "revert",
    "run_post_hooks",
    "run_pre_hooks",
    "stage_object",
    "staged_addresses",
    "start_presigned_multipart",
    "stat_object",
    "stat_readable",
    "storage_class",
    "update_user_metadata",
    "upload_object",
    "upload_objects",
]
PARTS = "refs staging blocks committed workflows protection guard collected hooks action_files_cache upload_branches"


def test_the_facade_has_no_base_class_and_no_methods_of_its_own() -> None:
    assert Graveler.__bases__ == (object,)
    own = {name for name, value in vars(Graveler).items() if inspect.isfunction(value)}
    assert own == {"__init__"}


def test_every_name_callers_use_is_routed_to_a_use_case() -> None:
    g = wiring.memory_services().graveler
    assert len(ROUTED) == 74
    for name in ROUTED:
        found = getattr(g, name)
        if name in ("commit_steps", "merge_steps"):
            continue
        # A bound method of a use-case object, not of the facade.
        assert inspect.ismethod(found) and not isinstance(found.__self__, Graveler), name
    for name in PARTS.split():
        assert getattr(g, name) is getattr(g.parts, name)


@pytest.mark.parametrize("name", ["_clock", "_sleep", "hooks", "workflows", "refs"])
def test_nothing_is_set_after_construction(name: str) -> None:
    g = wiring.memory_services().graveler
    with pytest.raises(AttributeError):
        setattr(g, name, None)
