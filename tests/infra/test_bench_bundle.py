"""``make bench``'s bundle rows in quick mode, on the output of ``make package`` (the infra tier's fixture): the
bundle's unzipped size against Lambda's 250 MB, and the cold import of each handler from the unzipped bundle."""

from __future__ import annotations

import zipfile
from pathlib import Path

from chalicelib.workflows.tasks import HANDLERS as WORKFLOW_TASKS
from tests.bench.test_bench_smoke import check_rows, make_bench
from tests.infra.conftest import Package


def test_quick_bench_measures_the_bundle_and_the_handlers_imports(package: Package, tmp_path: Path) -> None:
    results, printed = make_bench(tmp_path, f"--quick --only bundle --package-dir {package.template_path.parent}")
    check_rows(results, ["bundle"], printed)
    size, imports = results["rows"]
    with zipfile.ZipFile(package.bundle_path) as archive:
        unzipped = sum(info.file_size for info in archive.infolist())
    assert size["details"]["unzipped_bytes"] == unzipped
    assert size["value"] == unzipped / 2**20 and size["details"]["limit_bytes"] == 250 * 1024 * 1024
    # pyspark never ships in the Lambda bundle (GC runs on EMR Serverless); pyarrow does.
    assert "pyspark" not in size["details"]["largest"] and "pyarrow" in size["details"]["largest"]
    per = imports["details"]["per_function"]
    assert set(per) == {"APIHandler", "S3Gateway", "CollectGarbage"}
    # The API, the gateway, the two schedules (collect_garbage, drop_retired) and one function per workflow task.
    assert imports["details"]["functions"] == 4 + len(WORKFLOW_TASKS)
    assert per["APIHandler"]["handler"] == "app.app" and per["S3Gateway"]["handler"] == "app.s3_gateway"
    # The import saw the bundle only (no site-packages): the app and its dependencies came from it.
    assert all(f["modules"] > 100 and f["runs"] == 1 and f["cpu"] > 0 for f in per.values())
