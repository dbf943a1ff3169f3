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


def small_model(timeout: float = 30.0) -> aws_model.Model:
    functions = dict.fromkeys(aws_model.STEPS, (timeout, FULL_VCPU))
    deployed = aws_model.Deployed(functions, (30.0, FULL_VCPU), (900.0, FULL_VCPU), 16, "test")
    # 400 B a row: 1 WCU a write, 1,000 rows a Query page (1 MB holds 2,621), 400 / 4,096 RCU a row read.
    cpu = aws_model.Cpu(decode_s=1e-5, write_s=2e-5, rows_per_range=10_000, row_bytes=400)
    return aws_model.Model(deployed, cpu, threshold=50_000, slices=16, page_rows=1000)


def test_the_model_adds_up_a_small_case_by_hand() -> None:
    m = small_model()
    # One reader, 100,000 rows: 100 pages x 20 ms + 100,000 x 10 us = 3.0 s; the partition's reads cap it at
    # 100,000 x 400 / 4,096 / 3,000 = 3.255 s.
    assert m.query(100_000, FULL_VCPU) == pytest.approx(3.2552, abs=1e-3)
    # Half the memory, half the CPU: the decode doubles, 100 pages x 20 ms + 2 s = 4.0 s... still under the cap.
    assert m.query(100_000, FULL_VCPU // 2) == pytest.approx(
        max(2.0 + 1.0 * FULL_VCPU / (FULL_VCPU // 2), 3.2552), 1e-3
    )
    # Deleting 100,000 rows: 1,000 WCU/s of one partition, 100 s (the 8 threads of 25-item batches would take 2.5 s).
    assert m.drop(100_000, FULL_VCPU) == pytest.approx(100.0)
    assert m.staging_rate() == 1000.0
    # A slice of 160,000 / 16 = 10,000 rows: 16 readers share the partition, 160,000 x 400 / 4,096 / 3,000 = 5.208 s
    # (each alone: 10 pages x 20 ms + 0.1 s); writing 10,000 rows 0.2 s; S3: base metarange, 1 range, its metarange.
    assert m.slice_time(160_000, FULL_VCPU) == pytest.approx(5.2083 + 0.2 + 0.3, abs=1e-3)

    c = m.commit(160_000, previous=0)
    steps = {s["step"]: s for s in c["steps"]}
    assert steps["Seal"]["seconds"] == pytest.approx(0.02)
    assert steps["Plan"]["seconds"] == pytest.approx(0.015 + 0.1 + 5.2083, abs=1e-3)
    assert steps["Finish"]["seconds"] == pytest.approx(17 * 0.1 + 0.02)
    assert steps["Drop"]["seconds"] == pytest.approx(0.005)
    # The API's count of 50,001 rows: 51 pages x 20 ms + 0.5 s < the cap of 1.6277 s; two calls and a transition.
    start = 1.6277 + 0.01 + 0.05
    assert c["started"] == pytest.approx(start, abs=1e-3)
    # Seal, Plan, the Map (one wave of 16: the slice and a transition, then the Map's own), Finish: 50 ms each.
    moved = start + 0.07 + (5.3233 + 0.05) + (5.7083 + 0.05 + 0.05) + (1.72 + 0.05)
    assert c["branch_moved"] == pytest.approx(moved, abs=1e-3)
    assert c["execution_ends"] == pytest.approx(moved + 0.055, abs=1e-3) and not c["failed"]


def test_a_step_over_its_timeout_fails_the_execution_after_its_retries() -> None:
    m = small_model()
    c = m.commit(160_000, previous=100_000)  # the previous commit's 100,000 rows are due: 100 s to drop
    drop = c["steps"][-1]
    assert drop["step"] == "Drop" and drop["over"] and drop["seconds"] == pytest.approx(100.005)
    assert c["failed"] and c["branch_moved"] is not None  # the branch moved, then the execution fails
    # Five tries cut at 30 s (a transition each) and the waits of 1 + 2 + 4 + 8 s between them.
    assert c["execution_ends"] == pytest.approx(c["branch_moved"] + 5 * 30.05 + 15)
    # A Plan over its timeout: the branch never moves and the later steps are not reached.
    late = small_model(timeout=2.0).commit(160_000, previous=0)
    assert late["branch_moved"] is None and late["failed"]
    assert [s["reached"] for s in late["steps"]] == [True, True, False, False, False]


def test_the_deployed_figures_come_from_the_packaged_template_or_its_sources(tmp_path: Path) -> None:
    sources = aws_model.deployed(tmp_path / "missing.json")
    config = json.loads((ROOT / ".chalice" / "config.json").read_text())
    assert sources.functions["Drop"] == (float(config["lambda_timeout"]), config["lambda_memory_size"])
    assert sources.map_concurrency == 16 and "config.json" in sources.source
    definition = json.dumps({"States": {"BuildSlices": {"MaxConcurrency": 8, "Resource": "${commit_build_slice}"}}})
    # The logical ids chalice package gives them (CommitSeal ..., APIHandler, CollectGarbage).
    ids = {"api_handler": "APIHandler"}
    resources = {
        ids.get(name, "".join(p.title() for p in name.split("_"))): {
            "Type": "AWS::Serverless::Function",
            "Properties": {"Timeout": 120 if name == "commit_drop" else 60, "MemorySize": 2048},
        }
        for name in [*aws_model.FUNCTIONS.values(), "api_handler", "collect_garbage"]
    }
    resources["CommitStateMachine"] = {
        "Type": "AWS::StepFunctions::StateMachine",
        "Properties": {"DefinitionString": {"Fn::Sub": definition}},
    }
    template = tmp_path / "sam.json"
    template.write_text(json.dumps({"Resources": resources}))
    packaged = aws_model.deployed(template)
    assert packaged.functions["Drop"] == (120.0, 2048) and packaged.functions["Seal"] == (60.0, 2048)
    assert packaged.map_concurrency == 8 and "packaged template" in packaged.source


def test_make_bench_writes_the_three_model_rows() -> None:
    args = argparse.Namespace(model_rows=500, timeout=600.0)
    rows = run.aws_model_rows(args)
    assert [r.id for r in rows] == ["aws_commit_500k", "aws_staging_per_branch", "aws_steps_within_timeouts"]
    by_id = {r.id: r for r in rows}
    for r in rows:
        assert isinstance(r.met, bool) and (r.met or r.reason)
    # Today, as configured: staging is one partition key, and some step at 1M needs more than half its timeout.
    assert by_id["aws_staging_per_branch"].value == 1000.0 and not by_id["aws_staging_per_branch"].met
    assert by_id["aws_steps_within_timeouts"].value is not None and by_id["aws_steps_within_timeouts"].value > 0.5
    assert by_id["aws_commit_500k"].details["commit"]["rows"] == 500_000
    assert "aws-model" in run.GROUPS and run.parse(["--quick"]).model_rows == 2_000
