"""Compiles the Lambda bundle ``chalice package`` wrote, so that a cold start reads bytecode instead of compiling
every module it imports (issue 23: 1.76 s to import the app from sources, 0.82 s from bytecode).

Every ``.py`` of deployment.zip gets its ``__pycache__/<name>.cpython-3XY.pyc`` beside it, as the import system
looks for it. The pycs are unchecked-hash pycs (PEP 552): the interpreter never compares them with their source's
mtime, so the zip's timestamps do not matter and nothing tries to rewrite them on Lambda's read-only file system.
They are compiled by this interpreter, whose version must be the functions' runtime (their bytecode is tied to
one minor version); the template says which runtime that is. Tracebacks name the files where Lambda unpacks the
bundle (/var/task).

Usage: ``python -m infra.bytecode build/dev/package`` (``make package`` runs it after ``chalice package``).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import py_compile
import shutil
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

LAMBDA_TASK_ROOT = "/var/task"
BUNDLE = "deployment.zip"
TEMPLATE = "sam.json"
# Our own code must compile; third-party files that do not (test data, Python 2 leftovers) stay source only,
# as they would never be imported by the runtime either.
OWN_CODE = ("app.py", "chalicelib/")


class BytecodeError(RuntimeError):
    """The bundle cannot be compiled for its runtime."""


@dataclass(frozen=True, slots=True)
class Compiled:
    sources: int
    compiled: int
    skipped: tuple[str, ...]


def runtimes(template: dict[str, Any]) -> set[str]:
    """The Python runtimes of the template's functions (``python3.12``)."""
    found = set()
    for resource in template.get("Resources", {}).values():
        if resource.get("Type") in {"AWS::Serverless::Function", "AWS::Lambda::Function"}:
            runtime = resource.get("Properties", {}).get("Runtime")
            if isinstance(runtime, str):
                found.add(runtime)
    globals_runtime = template.get("Globals", {}).get("Function", {}).get("Runtime")
    if isinstance(globals_runtime, str):
        found.add(globals_runtime)
    return found


def check_runtime(template: dict[str, Any]) -> None:
    here = f"python{sys.version_info.major}.{sys.version_info.minor}"
    found = runtimes(template)
    if found != {here}:
        raise BytecodeError(
            f"the functions run on {sorted(found) or 'no runtime'} but this interpreter is {here}: bytecode is "
            "tied to one Python version; package with the runtime's Python"
        )


def cached_name(source: str) -> str:
    """Where the import system looks for the bytecode of the zip entry ``source`` (``a/b.py`` ->
    ``a/__pycache__/b.cpython-312.pyc``)."""
    path = PurePosixPath(source)
    return str(path.parent / "__pycache__" / f"{path.stem}.{sys.implementation.cache_tag}.pyc")


def compile_bundle(bundle: Path) -> Compiled:
    """Rewrites ``bundle`` with an unchecked-hash pyc for every ``.py`` (any pyc it held is replaced)."""
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        out = root / "compiled.zip"
        skipped: list[str] = []
        sources = compiled = 0
        with zipfile.ZipFile(bundle) as old, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as new:
            for info in old.infolist():
                if info.filename.endswith(".pyc"):
                    continue
                data = old.read(info)
                new.writestr(info, data, compress_type=zipfile.ZIP_DEFLATED)
                if not info.filename.endswith(".py") or info.is_dir():
                    continue
                sources += 1
                pyc = _compile(root, info.filename, data)
                if pyc is None:
                    if info.filename.startswith(OWN_CODE):
                        raise BytecodeError(f"{info.filename} does not compile")
                    skipped.append(info.filename)
                    continue
                entry = zipfile.ZipInfo(cached_name(info.filename), date_time=info.date_time)
                entry.external_attr = 0o644 << 16
                new.writestr(entry, pyc, compress_type=zipfile.ZIP_DEFLATED)
                compiled += 1
        shutil.move(out, bundle)
    return Compiled(sources, compiled, tuple(skipped))


def _compile(root: Path, name: str, data: bytes) -> bytes | None:
    source = root / "src" / name
    source.parent.mkdir(parents=True, exist_ok=True)
    source.write_bytes(data)
    target = root / "pyc"
    try:
        py_compile.compile(
            str(source),
            cfile=str(target),
            dfile=f"{LAMBDA_TASK_ROOT}/{name}",
            doraise=True,
            invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
        )
    except py_compile.PyCompileError:
        return None
    finally:
        source.unlink()
    return target.read_bytes()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("package_dir", type=Path, help="the directory chalice package wrote (sam.json, deployment.zip)")
    args = parser.parse_args(argv)
    try:
        check_runtime(json.loads((args.package_dir / TEMPLATE).read_text()))
        done = compile_bundle(args.package_dir / BUNDLE)
    except BytecodeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(
        f"{BUNDLE}: {done.compiled} of {done.sources} modules compiled for "
        f"{importlib.util.MAGIC_NUMBER.hex()} ({sys.implementation.cache_tag}), {len(done.skipped)} left as source"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
