"""The GC job as EMR Serverless gets it: the entry point emr/gc_job.py alone in a directory, and its package only
in the zip ``make package`` builds (infra/gc_bundle.py), on the path as spark.submit.pyFiles puts it."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

from infra import gc_bundle

ENTRY_POINT = Path(__file__).resolve().parents[2] / "emr" / "gc_job.py"


def test_the_zip_holds_every_module_of_the_package_and_is_the_same_for_the_same_sources(tmp_path: Path) -> None:
    first = tmp_path / "a" / gc_bundle.GC_BUNDLE
    names = gc_bundle.build(first)
    assert names == sorted(f"lakelet_gc/{p.name}" for p in gc_bundle.PACKAGE.glob("*.py"))
    assert "lakelet_gc/__init__.py" in names and "lakelet_gc/session.py" in names
    with zipfile.ZipFile(first) as bundle:
        assert bundle.namelist() == names  # no __pycache__, no other file of the folder
        assert bundle.read("lakelet_gc/mark.py") == (gc_bundle.PACKAGE / "mark.py").read_bytes()
    second = tmp_path / "b" / gc_bundle.GC_BUNDLE
    gc_bundle.build(second)
    assert first.read_bytes() == second.read_bytes()


def test_the_entry_point_runs_from_the_zip_alone(tmp_path: Path) -> None:
    bundle = tmp_path / "deps" / gc_bundle.GC_BUNDLE
    gc_bundle.build(bundle)
    workdir = tmp_path / "job"
    workdir.mkdir()
    (workdir / "gc_job.py").write_bytes(ENTRY_POINT.read_bytes())
    env = {"PYTHONPATH": str(bundle), "PATH": "/usr/bin:/bin"}
    # The job parses its command line before Spark starts: a bad one exits 2 with argparse's message, which
    # proves the entry point found main() in the zip (and only there: the checkout is not on the path).
    refused = subprocess.run(
        [sys.executable, "gc_job.py", "--storage-namespace", "s3://b/p"],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert refused.returncode == 2, refused.stderr
    assert "the following arguments are required: --run-id" in refused.stderr
    where = subprocess.run(
        [sys.executable, "-c", "import lakelet_gc.session as s; print(s.__file__)"],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert where.stdout.strip() == str(bundle / "lakelet_gc" / "session.py")
