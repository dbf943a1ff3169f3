"""Import is a use case of the engine like commit and merge: wired where they are (wiring.py builds its ports into
the engine), launched through the one inline-or-workflow decision (workflow_runner.Runner, the Workflows record's
import runner and threshold), merged through the one merge entry; an engine built without its ports answers a
clear Unsupported rather than failing on a missing store."""

from __future__ import annotations

import dataclasses

import pytest

from chalicelib import wiring
from chalicelib.api.errors import status_for
from chalicelib.graveler import errors
from chalicelib.graveler.engine import build_engine, engine_parts
from chalicelib.graveler.imports import COMMON_PREFIX, COMPLETED, EXECUTION_PREFIX, ImportLocation
from chalicelib.settings import ENV_IMPORT_ALLOWED_LOCATIONS, Settings

ALLOWED = "s3://source/allowed/"


def test_wiring_puts_the_import_workflow_beside_the_commit_and_merge_ones() -> None:
    settings = Settings(
        bucket="bucket",
        region="us-east-1",
        commit_state_machine_arn="arn:aws:states:us-east-1:1:stateMachine:commit",
        import_state_machine_arn="arn:aws:states:us-east-1:1:stateMachine:import",
        import_inline_threshold=7,
        import_max_slices=3,
    )
    workflows = wiring.workflows(settings)
    assert workflows.commit is not None and workflows.imports is not None
    assert (workflows.import_threshold, workflows.import_max_slices) == (7, 3)
    assert wiring.workflows(Settings(bucket="bucket")).imports is None


def test_the_engine_of_the_services_carries_the_import_ports_and_allowed_locations() -> None:
    services = wiring.memory_services(Settings(bucket="bucket", import_allowed_locations=(ALLOWED,)))
    imports = services.engine.imports.ports
    assert imports is not None
    assert (imports.allowed, imports.setting) == ((ALLOWED,), ENV_IMPORT_ALLOWED_LOCATIONS)


def test_an_import_above_the_threshold_starts_through_the_engines_workflow_port() -> None:
    """The facade's start_import (what importStart calls) records the import and hands it to the runner the
    engine was built with: the same WorkflowRunner port as commit and merge, named after the import."""
    from chalicelib.adapters.memory import MemoryWorkflowRunner
    from chalicelib.graveler.parts import Workflows

    services = wiring.memory_services(
        Settings(bucket="bucket", import_allowed_locations=(ALLOWED,)), sleep=lambda s: None
    )
    base = services.engine
    runner = MemoryWorkflowRunner()
    g = build_engine(
        dataclasses.replace(base.ports, workflows=Workflows(imports=runner, import_threshold=2)), base.imports.ports
    )
    g.repositories.create_repository("repo", "s3://bucket/repo")
    for i in range(3):
        g.ports.blocks.put(f"{ALLOWED}data/f{i}", b"x")
    where = [ImportLocation(COMMON_PREFIX, ALLOWED + "data/", "imported/")]
    large = g.imports.submit("repo", "main", where, "alice", "import")
    execution = runner.describe(EXECUTION_PREFIX + large.import_id)
    assert execution is not None and execution.input == {"request": large.to_json(), "max_slices": 16}
    # At the threshold it runs inline, before the call returns; the workflow is not started for it.
    small = g.imports.submit("repo", "main", [ImportLocation(COMMON_PREFIX, ALLOWED + "data/f1", "one/")], "a", "m")
    assert runner.describe(EXECUTION_PREFIX + small.import_id) is None
    done = g.imports.status("repo", "main", small.import_id)
    assert done.record.state == COMPLETED and done.commit is not None
    assert done.commit.id == g.branches.get_branch("repo", "main").commit_id


def test_an_engine_without_import_ports_answers_unsupported() -> None:
    services = wiring.memory_services()
    base = services.engine
    g = build_engine(engine_parts(base.ports.refs, base.ports.staging, base.ports.blocks, base.ports.committed))
    g.repositories.create_repository("repo", "s3://bucket/repo")
    where = [ImportLocation(COMMON_PREFIX, ALLOWED, "x/")]
    for call in (
        lambda: g.imports.submit("repo", "main", where, "a", "m"),
        lambda: g.imports.status("repo", "main", "0" * 32),
        lambda: g.imports.cancel("repo", "main", "0" * 32),
        lambda: g.imports.steps,
    ):
        with pytest.raises(errors.Unsupported) as refused:
            call()
        assert status_for(refused.value) == 501
