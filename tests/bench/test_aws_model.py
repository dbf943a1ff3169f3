"""bench/aws_model.py: the model's arithmetic on a small case computed by hand, its inputs read from the template
(packaged or its sources), and the three rows ``make bench`` writes from it."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import aws_model  # noqa: E402 - bench/ is scripts, not a package
import run  # noqa: E402

FULL_VCPU = 1769  # MB: one vCPU, so CPU seconds here count once


def small_model(timeout: float = 30.0, **kwargs: object) -> aws_model.Model:
    functions = dict.fromkeys(aws_model.FUNCTIONS, (timeout, FULL_VCPU))
    deployed = aws_model.Deployed(functions, {"commit": 16, "merge": 16, "import": 40}, "test")
    # 400 B a row: 1 WCU a write, 1,000 rows a Query page (1 MB holds 2,621), 400 / 4,096 RCU a row read.
    cpu = aws_model.Cpu(decode_s=1e-5, write_s=2e-5, read_s=1e-6, rows_per_range=10_000, row_bytes=400)
    # One shard and a plan with a pass over the rows unless a test says otherwise: the case done by hand.
    settings: dict[str, object] = {"shards": 1, "sketch": False, **kwargs}
    return aws_model.Model(deployed, cpu, threshold=50_000, slices=16, page_rows=1000, **settings)  # type: ignore[arg-type]


def test_the_model_adds_up_a_small_case_by_hand() -> None:
    m = small_model()
    # One reader, 100,000 rows: 100 pages x 20 ms + 100,000 x 10 us = 3.0 s; the partition's reads cap it at
    # 100,000 x 400 / 4,096 / 3,000 = 3.255 s.
    assert m.query(100_000, FULL_VCPU) == pytest.approx(3.2552, abs=1e-3)
    # Half the memory, half the CPU: the decode doubles, 100 pages x 20 ms + 2 s = 4.0 s... still under the cap.
    assert m.query(100_000, FULL_VCPU // 2) == pytest.approx(
        max(2.0 + 1.0 * FULL_VCPU / (FULL_VCPU // 2), 3.2552), 1e-3
    )
    assert m.staging_rate() == pytest.approx(1000 / (1 + 1 / 16))  # one write in 16 also goes to the sketch
    # A slice of 160,000 / 16 = 10,000 rows: 16 readers share the partition, 160,000 x 400 / 4,096 / 3,000 = 5.208 s
    # (each alone: 10 pages x 20 ms + 0.1 s); writing 10,000 rows 0.2 s; S3: its range, the base and its metarange.
    c = m.commit(160_000)
    steps = {s["step"]: s for s in c["steps"]}
    assert steps[aws_model.SLICE]["seconds"] == pytest.approx(5.2083 + 0.2 + 0.3, abs=1e-3)
    assert steps["Seal"]["seconds"] == pytest.approx(0.02)
    assert steps["Plan"]["seconds"] == pytest.approx(0.015 + 0.1 + 5.2083, abs=1e-3)
    assert steps["Finish"]["seconds"] == pytest.approx(17 * 0.1 + 0.02)
    assert steps["Landed"]["seconds"] == pytest.approx(0.01)
    # The API's count of 50,001 rows: 51 pages x 20 ms + 0.5 s < the cap of 1.6277 s; two calls and a transition.
    start = 1.6277 + 0.01 + 0.05
    assert c["started"] == pytest.approx(start, abs=1e-3)
    # Seal, Plan, the Map (one wave of 16: the slice and a transition, then the Map's own), Finish: 50 ms each.
    moved = start + 0.07 + (5.3233 + 0.05) + (5.7083 + 0.05 + 0.05) + (1.72 + 0.05)
    assert c["branch_moved"] == pytest.approx(moved, abs=1e-3)
    assert c["execution_ends"] == pytest.approx(moved + 0.06, abs=1e-3) and not c["failed"]


def test_the_drop_is_the_sweeps_in_runs_within_their_budget() -> None:
    m = small_model(timeout=300.0)
    # 1,000 WCU/s of one partition, the sketch's entries a sixteenth more (the 8 threads' 25-item batches would take
    # 40,000/s, the key listing 30,720/s).
    rate = 1000 / (1 + 1 / 16)
    assert m.drop_rate(FULL_VCPU) == pytest.approx(rate)
    small = m.drop(100_000)  # 106 s: one run, cut after its last round of 8 x 500 keys
    assert (small["runs"], small["seconds"]) == (1, pytest.approx(100_000 / rate + 4_000 / rate + 0.02))
    assert small["rows_gone_after"] == pytest.approx(600 + 300 + 100_000 / rate)  # due after the grace, next run
    large = m.drop(1_000_000)  # 1,062 s in runs of DROP_BUDGET_SECONDS (120 s), one every 5 minutes
    assert large["runs"] == 9 and large["seconds"] == pytest.approx(120 + 4_000 / rate + 0.02)
    assert large["ratio"] == pytest.approx(large["seconds"] / 300) and not large["over"]
    # Sixteen shards: sixteen partitions' writes, and the rows gone in one run.
    sharded = small_model(timeout=300.0, shards=16)
    assert sharded.staging_rate() == pytest.approx(16 * rate) and sharded.drop(1_000_000)["runs"] == 1


def test_a_sketch_and_shards_take_the_pass_and_the_partition_off_the_commit() -> None:
    slow, fast = small_model(), small_model(shards=10, sketch=True)
    # From the sketch: one bounded query of each shard, 20 ms each.
    assert {s["step"]: s for s in fast.commit(160_000)["steps"]}["Plan"]["seconds"] == pytest.approx(0.115 + 0.2)
    # Ten shards read in parallel: 16 pages x 20 ms + 1.6 s > 160,000 x 400 / 4,096 / 30,000 = 0.52 s.
    assert fast.query(160_000, FULL_VCPU) == pytest.approx(0.32 + 1.6)
    assert fast.commit(160_000)["branch_moved"] < slow.commit(160_000)["branch_moved"] - 5


def test_a_step_over_its_timeout_fails_the_execution_after_its_retries() -> None:
    m = small_model(timeout=2.0)  # the Plan needs 5.3 s
    c = m.commit(160_000)
    assert c["branch_moved"] is None and c["failed"]
    assert [s["reached"] for s in c["steps"]] == [True, True, False, False, False]
    # Five tries cut at 2 s (a transition each) and the waits of 1 + 2 + 4 + 8 s between them, after the seal.
    assert c["execution_ends"] == pytest.approx(c["started"] + 0.07 + 5 * 2.05 + 15, abs=1e-3)


def test_the_deployed_figures_come_from_the_packaged_template_or_its_sources(tmp_path: Path) -> None:
    sources = aws_model.deployed(tmp_path / "missing.json")
    config = json.loads((ROOT / ".chalice" / "config.json").read_text())
    plan = config["lambda_functions"]["commit_plan"]
    assert sources.functions["commit_plan"] == (float(plan["lambda_timeout"]), plan["lambda_memory_size"])
    # A function with no figures of its own takes the app's (Chalice's lookup).
    assert sources.functions["api_handler"] == (float(config["lambda_timeout"]), config["lambda_memory_size"])
    assert sources.map_concurrency == {"commit": 16, "merge": 16, "import": 40} and "config.json" in sources.source
    # The logical ids chalice package gives them (CommitSeal ..., APIHandler, DropRetired).
    ids = {"api_handler": "APIHandler"}
    resources: dict[str, object] = {
        ids.get(name, "".join(p.title() for p in name.split("_"))): {
            "Type": "AWS::Serverless::Function",
            "Properties": {"Timeout": 120 if name == "drop_retired" else 60, "MemorySize": 2048},
        }
        for name in aws_model.FUNCTIONS
    }
    for machine, concurrency in (("Commit", 8), ("Merge", 4), ("Import", 20)):
        definition = json.dumps({"States": {"BuildSlices": {"MaxConcurrency": concurrency}}})
        resources[f"{machine}StateMachine"] = {
            "Type": "AWS::StepFunctions::StateMachine",
            "Properties": {"DefinitionString": {"Fn::Sub": definition}},
        }
    template = tmp_path / "sam.json"
    template.write_text(json.dumps({"Resources": resources}))
    packaged = aws_model.deployed(template)
    assert packaged.functions["drop_retired"] == (120.0, 2048) and packaged.functions["commit_seal"] == (60.0, 2048)
    assert packaged.map_concurrency == {"commit": 8, "merge": 4, "import": 20} and "packaged" in packaged.source


def test_make_bench_writes_the_three_model_rows() -> None:
    args = argparse.Namespace(model_rows=500, timeout=600.0)
    rows = run.aws_model_rows(args)
    assert [r.id for r in rows] == ["aws_commit_500k", "aws_staging_per_branch", "aws_steps_within_timeouts"]
    by_id = {r.id: r for r in rows}
    for r in rows:
        assert isinstance(r.met, bool) and (r.met or r.reason)
    # As deployed, with the sharded staging and its sketch: every row met.
    assert by_id["aws_staging_per_branch"].value >= 10_000 and by_id["aws_staging_per_branch"].met
    assert by_id["aws_steps_within_timeouts"].met and by_id["aws_steps_within_timeouts"].value <= 0.5
    steps = by_id["aws_steps_within_timeouts"].details["steps"]
    assert {s["function"] for s in steps} == set(aws_model.FUNCTIONS) - {"api_handler"}
    assert by_id["aws_commit_500k"].details["commit"]["rows"] == 500_000
    assert "aws-model" in run.GROUPS and run.parse(["--quick"]).model_rows == 2_000


def test_with_the_shards_and_the_sketch_the_500k_commit_meets_its_goal_and_without_them_not() -> None:
    # CPU per row measured on 10,000 rows: a few hundred would weigh the fixed costs of the measurement in.
    commit, staging, steps = aws_model.figures(aws_model.run(10_000))
    assert commit["value"] <= commit["goal"] and commit["extra_ok"]
    assert staging["value"] >= staging["goal"] and steps["value"] <= steps["goal"]
    # A branch's first token is one shard, and the plan before the sketch passed over every row.
    commit, staging, steps = aws_model.figures(aws_model.run(10_000, shards=1, sketch=False))
    assert commit["value"] > commit["goal"] and staging["value"] < staging["goal"] and steps["value"] <= steps["goal"]
