"""``make bench`` in its quick mode, so that the benchmark scripts never break silently: the commands the Makefile
target runs (read with ``make -n``, run with this interpreter), every row of bench/results.json with its goal and
``met`` field, and the table of docs/performance.md generated from a full run's results."""

from __future__ import annotations

import json
import math
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import readme_table  # noqa: E402 - bench/ is scripts, not a package

ROW_IDS = {
    "engine": ["commit_spread", "merge_spread", "commit_clustered", "listing_engine"],
    "stack": [
        "listing_app",
        "aws_calls",
        "aws_calls_presigned",
        "s3_gateway",
        "cli_help",
        "cli_repo_list",
        "import_app",
        "cli_vs_aws_sync",
    ],
    "gc": ["gc_mark"],
    "spark": ["spark_s3a_read", "spark_lakefs_read"],
    "first-run": ["first_run"],
    "aws-model": ["aws_commit_500k", "aws_staging_per_branch", "aws_steps_within_timeouts"],
    "bundle": ["bundle_size", "handler_import"],
    "first-request": ["first_request"],
}


def make_bench(tmp_path: Path, args: str) -> tuple[dict[str, Any], str]:
    """Runs what ``make bench`` runs, with this interpreter; returns the results and the printed output."""
    out = tmp_path / "results.json"
    plan = subprocess.run(
        [
            "make",
            "-n",
            "-s",
            "bench",
            f"VENV={Path(sys.executable).parent.parent}",
            f"BENCH_OUT={out}",
            f"BENCH_ARGS={args}",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    commands = [shlex.split(line) for line in plan.splitlines() if "bench/" in line and "python" in line]
    assert [c[1] for c in commands] == ["bench/run.py", "bench/readme_table.py"], plan
    printed = ""
    for command in commands:
        done = subprocess.run(
            [sys.executable, *command[1:]],
            cwd=ROOT,
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            timeout=900,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        printed += done.stdout
    return json.loads(out.read_text()), printed


def check_rows(results: dict[str, Any], groups: list[str], printed: str) -> None:
    rows = results["rows"]
    assert [r["id"] for r in rows] == [i for g in groups for i in ROW_IDS[g]]
    for r in rows:
        assert isinstance(r["met"], bool) and r["goal_text"] and r["op"] in ("<=", ">=")
        assert r["what"] in printed and r["goal_text"] in printed
        if r["value"] is None:
            assert not r["met"] and r["reason"], r
            continue
        assert math.isfinite(r["value"]) and r["value"] >= 0, r
        assert r["ratio"] == pytest.approx(r["value"] / r["goal"]), r
        within = r["value"] <= r["goal"] if r["op"] == "<=" else r["value"] >= r["goal"]
        if not within:
            assert not r["met"] and r["reason"], r
        if not r["met"]:
            assert r["reason"] and "NOT MET" in printed, r


@pytest.mark.e2e
def test_quick_bench_measures_every_row_but_the_gc_mark(tmp_path: Path) -> None:
    groups = ["engine", "stack", "first-run", "aws-model"]
    results, printed = make_bench(tmp_path, f"--quick --only {','.join(groups)}")
    assert results["quick"] is True and results["sizes"]["objects"] == 20_000
    check_rows(results, groups, printed)
    by_id = {r["id"]: r for r in results["rows"]}
    # Figures that are counts or shapes, not timings: what the code does today.
    calls = by_id["aws_calls"]["details"]["calls"]
    assert set(calls) == {
        "stat",
        "upload",
        "list 100",
        "create branch",
        "commit of 1 change",
        "presigned upload + link",
        "gateway put",
        "gateway get",
    }
    assert all(n >= 1 for n in calls.values()), calls
    # The gateway row's reason is its AWS calls per request, the same counts.
    assert by_id["s3_gateway"]["details"]["aws_calls"] == {"put": calls["gateway put"], "get": calls["gateway get"]}
    assert by_id["aws_calls_presigned"]["value"] == calls["presigned upload + link"]
    assert by_id["commit_spread"]["details"]["read"] >= 1 and by_id["listing_app"]["details"]["objects"] == 1_000
    assert by_id["first_run"]["value"] is None and not by_id["first_run"]["met"]
    assert "holds a --quick run" in printed  # the published table is not rewritten from a quick run


@pytest.mark.e2e
def test_quick_bench_measures_each_functions_first_request(tmp_path: Path) -> None:
    results, printed = make_bench(tmp_path, "--quick --only first-request")
    check_rows(results, ["first-request"], printed)
    details = {r["id"]: r for r in results["rows"]}["first_request"]["details"]
    assert set(details) == {"api_handler", "s3_gateway", "commit_seal"}
    assert details["api_handler"]["status"] == 200 and details["s3_gateway"]["status"] == 200


@pytest.mark.spark
def test_quick_bench_gc_mark_reports_the_jobs_own_rate(tmp_path: Path) -> None:
    results, printed = make_bench(tmp_path, "--quick --only gc")
    check_rows(results, ["gc"], printed)
    details = results["rows"][0]["details"]
    assert details["objects"] == 2_000 and details["own_seconds"] > 0 and details["listing_seconds"] > 0
    assert results["rows"][0]["value"] == pytest.approx(details["objects"] / details["own_seconds"])
    # The fixed cost comes from a small mark of its own, and the rest of the own work is spread over the objects.
    assert details["probe_objects"] == 500 and details["fixed_seconds"] > 0
    spread = details["fixed_seconds"] + details["per_object_seconds"] * (details["objects"] - 500)
    assert spread == pytest.approx(max(details["own_seconds"], details["fixed_seconds"]))
    assert "fixed" in results["rows"][0]["measured"]


@pytest.mark.spark
def test_quick_bench_spark_reads_the_same_files_both_ways(tmp_path: Path) -> None:
    results, printed = make_bench(tmp_path, "--quick --only spark")
    check_rows(results, ["spark"], printed)
    s3a, lakefs_fs = results["rows"]
    details = s3a["details"]
    assert details["mib"] == 8 and details["files"] == 2 and details["bytes"] > 4 * 2**20
    assert s3a["value"] == pytest.approx(details["gateway_seconds"] / details["moto_seconds"])
    assert lakefs_fs["value"] is None and "hadoop-lakefs-assembly" in lakefs_fs["reason"]


def test_the_gc_row_says_from_how_many_objects_the_rate_is_met() -> None:
    import run

    assert run.gc_break_even(0.5, 5e-6) == "from about 100,000 objects"  # 0.5 s + 5 us x n <= n / 100k
    assert run.gc_break_even(0.5, 1e-5).startswith("hardly at any size")
    assert run.gc_break_even(0.5, 9.5e-6).startswith("hardly at any size")  # not a number of objects in the 10^20s


def test_the_readme_table_is_generated_between_its_markers(tmp_path: Path) -> None:
    results = {
        "generated_at": "2026-11-25T00:00:00Z",
        "quick": False,
        "sizes": {"objects": 1_000_000},
        "machine": {"cpus": 2, "python": "3.12.1"},
        "rows": [
            {"what": "a | b", "measured": "5.9x", "goal_text": "<= 2x", "ratio": 2.95, "met": False, "reason": "slow"},
            {"what": "c", "measured": "1.2", "goal_text": "<= 1.3", "ratio": 0.92, "met": True, "reason": ""},
        ],
    }
    (tmp_path / "results.json").write_text(json.dumps(results))
    readme = tmp_path / "README.md"
    readme.write_text(f"# T\n\nbefore\n{readme_table.BEGIN}\nold table\n{readme_table.END}\nafter\n")
    assert readme_table.main(tmp_path / "results.json", readme) == 0
    text = readme.read_text()
    assert "old table" not in text and text.startswith("# T\n\nbefore\n") and text.endswith("\nafter\n")
    assert "| a \\| b | 5.9x | <= 2x | 2.95 | no: slow |" in text and "| c | 1.2 | <= 1.3 | 0.92 | yes |" in text
    assert readme_table.main(tmp_path / "results.json", readme) == 0
    assert readme.read_text() == text  # idempotent
    # The real page carries the block.
    real = (ROOT / "docs" / "performance.md").read_text()
    assert real.index(readme_table.BEGIN) < real.index(readme_table.END)


def test_a_run_of_some_groups_replaces_only_their_rows_in_the_results() -> None:
    """``--only aws-model`` into a full run's file: the model's rows are replaced where they stood, the others kept,
    and the file says when the group was measured again; a quick run never mixes into a full one."""
    import run

    def r(id: str, value: float) -> dict[str, Any]:
        return {"id": id, "value": value}

    previous = {
        "generated_at": "2026-11-25T19:24:49Z",
        "quick": False,
        "sizes": {"objects": 1_000_000, "model_rows": 20_000},
        "rows": [r("commit_spread", 1.4), r("aws_commit_500k", 22.0), r("gc_mark", 2.0)],
    }
    fresh = {
        "generated_at": "2026-11-28T10:00:00Z",
        "quick": False,
        "sizes": {"objects": 20, "model_rows": 30_000},
        "rows": [r("aws_commit_500k", 7.5), r("aws_staging_per_branch", 15_000.0)],
    }
    result = run.merged(previous, fresh, ["aws-model"])
    assert [(x["id"], x["value"]) for x in result["rows"]] == [
        ("commit_spread", 1.4),
        ("aws_commit_500k", 7.5),
        ("gc_mark", 2.0),
        ("aws_staging_per_branch", 15_000.0),
    ]
    assert result["generated_at"] == previous["generated_at"]
    assert result["updated"] == {"aws-model": fresh["generated_at"]}
    assert result["sizes"] == {"objects": 1_000_000, "model_rows": 30_000}
    assert run.merged(previous, {**fresh, "quick": True}, ["aws-model"])["rows"] == fresh["rows"]


def test_the_lakefs_bench_says_it_is_skipped_without_the_jar() -> None:
    """bench/spark_lakefs.py needs lakeFS's hadoop-lakefs-assembly jar; without it, a message and exit 0, no stack."""
    env = {k: v for k, v in os.environ.items() if k != "LAKELET_LAKEFS_FS_JAR"}
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "spark_lakefs.py")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "LAKELET_LAKEFS_FS_JAR" in json.loads(done.stdout)["skipped"]
    assert "skipped" in done.stderr
