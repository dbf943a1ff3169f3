"""The bundle rows of ``make bench`` when there is no package to measure: a quick run reports them not measured,
with the reason, rather than packaging (tests/infra/test_bench_bundle.py measures a real package)."""

from __future__ import annotations

from pathlib import Path

from tests.bench.test_bench_smoke import check_rows, make_bench


def test_quick_bundle_rows_without_a_package_say_why(tmp_path: Path) -> None:
    results, printed = make_bench(tmp_path, f"--quick --only bundle --package-dir {tmp_path / 'none'}")
    check_rows(results, ["bundle"], printed)
    assert [r["value"] for r in results["rows"]] == [None, None]
    assert all("run make package first" in r["reason"] for r in results["rows"])
