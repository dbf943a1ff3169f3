"""Builds the GC job's package as the zip EMR Serverless puts on the job's path (``--conf spark.submit.pyFiles``):
emr/lakelet_gc/*.py under ``lakelet_gc/``, sources only (EMR's Python, 3.9, is not the one that builds it), with
fixed timestamps and order so that the same sources give the same bytes and a redeploy uploads nothing new.

Usage: ``python -m infra.gc_bundle OUT.zip`` (``make package`` runs it; ``make deploy`` uploads the zip beside
emr/gc_job.py, the entry point that imports it).
"""

from __future__ import annotations

import argparse
import zipfile
from collections.abc import Sequence
from pathlib import Path

from infra.access import GC_BUNDLE

__all__ = ["GC_BUNDLE", "PACKAGE", "build"]

PACKAGE = Path(__file__).resolve().parents[1] / "emr" / "lakelet_gc"
# The earliest time a zip can hold; any fixed one would do.
_EPOCH = (1980, 1, 1, 0, 0, 0)


def build(out: Path, package: Path = PACKAGE) -> list[str]:
    """Writes the zip of ``package`` to ``out``; returns the names it holds."""
    names: list[str] = []
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as bundle:
        for source in sorted(package.glob("*.py")):
            name = f"{package.name}/{source.name}"
            info = zipfile.ZipInfo(name, _EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            bundle.writestr(info, source.read_bytes())
            names.append(name)
    return names


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Zip the GC job's package (emr/lakelet_gc/) for EMR Serverless.")
    parser.add_argument("out", type=Path, help=f"the zip to write, e.g. build/dev/emr/{GC_BUNDLE}")
    args = parser.parse_args(argv)
    names = build(args.out)
    print(f"{args.out}: {len(names)} modules of {PACKAGE.name}")


if __name__ == "__main__":
    main()
