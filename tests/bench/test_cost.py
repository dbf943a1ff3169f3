"""bench/cost.py's arithmetic, on the team workload, worked out by hand from the prices and counts in the script."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import cost  # noqa: E402 - bench/ is scripts, not a package

TEAM = next(w for w in cost.WORKLOADS if w.name == "team")


def test_the_team_workload_units_are_the_counted_calls_times_the_mix() -> None:
    # 50k calls: stat 15,000 (2 reads each), list 10,000 (1 + 8), presigned 10,000 (2 reads, 1 write, a HEAD and a
    # copy PUT), upload 2,500 (2 reads, 1 write, 1 PUT), create branch 2,500 (1 read, a 2-item transaction = 4 WRU),
    # gateway get 7,500 (2 reads, 1 GET), gateway put 2,500 (2 reads, 1 write, 1 PUT); 2,000 commits (5 reads, 4
    # writes, 2 PUTs, 1 GET).
    units = cost.monthly_units(TEAM, cost.MEASURED_REQUESTS)
    assert units.rru == 30_000 + 90_000 + 20_000 + 5_000 + 2_500 + 15_000 + 5_000 + 10_000
    assert units.wru == 10_000 + 2_500 + 10_000 + 2_500 + 8_000
    assert units.s3_write == 10_000 + 2_500 + 2_500 + 4_000
    assert units.s3_read == 10_000 + 7_500 + 2_000


def test_the_team_bill_by_hand() -> None:
    bill = cost.lakelet(TEAM, cost.MEASURED_REQUESTS)
    assert bill["S3 storage"] == 23.00  # 1,000 GB at $0.023
    assert bill["DynamoDB requests"] == round(177_500 * 0.125e-6 + 33_000 * 0.625e-6, 2) == 0.04
    assert bill["S3 requests"] == round(19_000 * 0.005e-3 + 19_500 * 0.0004e-3, 2) == 0.10
    assert bill["API Gateway"] == round((40_000 + 2_000) * 3.5e-6, 2) == 0.15  # the gateway's 20% use no API GW
    lambda_cost = 52_000 * 0.2e-6 + (50_000 * 0.060 + 2_000 * 0.400) * 0.0000166667
    assert bill["Lambda"] == round(lambda_cost, 2) == 0.07
    assert bill["EMR Serverless (GC)"] == round(2.5 * (16 * 0.052624 + 64 * 0.0057785), 2) == 3.03
    assert bill["KMS"] == 1.00
    rows = {r["workload"]: r for r in cost.table(cost.MEASURED_REQUESTS)}
    assert rows["team"]["Lakelet"] == 27.94
    # lakeFS with PostgreSQL: c5d.large all month plus its 20 GB root volume, db.t4g.micro plus 20 GB.
    assert rows["team"]["lakeFS + RDS"] == round(23 + 0.10 + 730 * 0.096 + 1.6 + 3.03 + 730 * 0.016 + 2.3, 2)
    # Idle, Lakelet pays the key and the daily GC run; lakeFS pays for its server.
    assert rows["idle"]["Lakelet"] == 2.21 and rows["idle"]["lakeFS + DynamoDB"] == 72.89


def test_counts_come_from_make_bench_results_when_present(tmp_path: Path) -> None:
    requests = {op: ["DynamoDB POST DynamoDB_20120810.GetItem"] for op in cost.MEASURED_REQUESTS}
    requests["gateway get"] = ["S3 GET /bucket/key"]
    results = tmp_path / "results.json"
    results.write_text(json.dumps({"rows": [{"id": "aws_calls", "details": {"requests": requests}}]}))
    read, source = cost.measured_requests(results)
    assert read["stat"] == ["DynamoDB GetItem"] and read["gateway get"] == ["S3 GET"]
    assert "make bench" in source
    assert cost.measured_requests(tmp_path / "missing.json")[0] is cost.MEASURED_REQUESTS


def test_a_call_without_a_price_is_refused() -> None:
    with pytest.raises(ValueError, match="no price for 'DynamoDB Scan'"):
        cost.units("stat", ["DynamoDB Scan"])


def test_the_break_even_is_the_servers_fixed_cost_over_the_per_call_cost() -> None:
    per_million, fixed, calls = cost.break_even_calls(cost.MEASURED_REQUESTS)
    # Per call: API Gateway on 80% of calls, a Lambda request and 60 ms at 1 GB, 1.5 KB of logs.
    by_hand = 0.8 * 3.5 + 0.2 + 0.060 * 0.0000166667 * 1e6 + 1500 * 1e6 / 1e9 * 0.50
    assert per_million == pytest.approx(by_hand, abs=0.02)
    assert fixed == pytest.approx(2 * 730 * 0.192 + 2 * 20 * 0.08 + 730 * (0.0225 + 2 * 0.008), abs=0.02)
    assert calls == pytest.approx(fixed / per_million * 1e6)
