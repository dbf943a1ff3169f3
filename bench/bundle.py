"""The Lambda bundle as ``make package`` ships it (issue 35, item 5): its unzipped size against Lambda's 250 MB
limit, and each function's cold import, handler by handler.

The bundle (deployment.zip) is unzipped into a temporary directory that plays /var/task. Each function's handler
(``app.app``, ``app.s3_gateway``, ... from sam.json) is imported in a fresh interpreter that sees only the bundle
and the standard library (``-S``: no site-packages; ``-E``: no PYTHON* variables), from the .pyc files the bundle
carries (infra/bytecode.py) and without writing any (``-B``), as Lambda's read-only /var/task would; each import
runs several times and the median is kept. Every function ships the same bundle and its handler lives in app.py,
so the import is the same module's for each: the figures differ by the handler's own lookup and by noise.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

LAMBDA_UNZIPPED_LIMIT = 250 * 1024 * 1024  # bytes: the function and its layers, unzipped
# Runs in the fresh interpreter: the bundle first on the path, then the handler, timed.
_IMPORT = """
import sys, time
sys.path.insert(0, {task!r})
c, w = time.process_time(), time.perf_counter()
module = __import__({module!r}, fromlist=["_"])
handler = getattr(module, {attribute!r})
print(time.process_time() - c, time.perf_counter() - w, len(sys.modules))
"""


def functions(template: dict[str, Any]) -> dict[str, str]:
    """Logical id -> handler ("module.attribute") of every function in the packaged template."""
    return {
        logical_id: resource["Properties"]["Handler"]
        for logical_id, resource in template["Resources"].items()
        if resource["Type"] in ("AWS::Serverless::Function", "AWS::Lambda::Function")
    }


def unzipped_size(bundle: Path) -> tuple[int, dict[str, int]]:
    """Total unzipped bytes, and the bytes of each top-level entry (package or module)."""
    tops: dict[str, int] = {}
    with zipfile.ZipFile(bundle) as archive:
        for info in archive.infolist():
            top = info.filename.split("/", 1)[0]
            tops[top] = tops.get(top, 0) + info.file_size
    return sum(tops.values()), tops


def import_handler(task: Path, handler: str) -> tuple[float, float, int]:
    """CPU and wall seconds of importing ``handler`` from ``task`` in a fresh interpreter, and modules loaded."""
    module, attribute = handler.rsplit(".", 1)
    code = _IMPORT.format(task=str(task), module=module, attribute=attribute)
    env = {"PATH": os.environ.get("PATH", ""), "AWS_REGION": "us-east-1", "LAKELET_STAGE": "bench"}
    done = subprocess.run(
        [sys.executable, "-S", "-E", "-B", "-c", code], cwd=task, env=env, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"importing {handler} from the bundle failed:\n{done.stderr[-2000:]}")
    cpu, wall, modules = done.stdout.split()[-3:]
    return float(cpu), float(wall), int(modules)


def measure(package_dir: Path, repeats: int, only: list[str] | None = None) -> dict[str, Any]:
    template = json.loads((package_dir / "sam.json").read_text())
    bundle = package_dir / "deployment.zip"
    total, tops = unzipped_size(bundle)
    handlers = functions(template)
    chosen = {k: v for k, v in handlers.items() if only is None or k in only}
    per_function: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="lakelet-bundle-") as tmp:
        task = Path(tmp)
        with zipfile.ZipFile(bundle) as archive:
            archive.extractall(task)
        for logical_id, handler in chosen.items():
            runs = [import_handler(task, handler) for _ in range(repeats)]
            per_function[logical_id] = {
                "handler": handler,
                "cpu": statistics.median(r[0] for r in runs),
                "wall": statistics.median(r[1] for r in runs),
                "modules": runs[-1][2],
                "runs": len(runs),
            }
    largest = dict(sorted(tops.items(), key=lambda item: -item[1])[:8])
    return {
        "zipped_bytes": bundle.stat().st_size,
        "unzipped_bytes": total,
        "limit_bytes": LAMBDA_UNZIPPED_LIMIT,
        "largest": largest,
        "functions": len(handlers),
        "per_function": per_function,
    }
