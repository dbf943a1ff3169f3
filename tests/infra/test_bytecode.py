"""infra/bytecode.py on small bundles: what ``make package`` does to deployment.zip after ``chalice package``
(tests/infra/test_bundle.py checks the real bundle)."""

from __future__ import annotations

import importlib.util
import json
import marshal
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from infra import bytecode

TAG = sys.implementation.cache_tag
HERE = f"python{sys.version_info.major}.{sys.version_info.minor}"


def _bundle(path: Path, files: dict[str, str]) -> Path:
    with zipfile.ZipFile(path, "w") as bundle:
        for name, text in files.items():
            bundle.writestr(name, text)
    return path


def _template(runtime: str) -> dict[str, object]:
    function = {"Type": "AWS::Serverless::Function", "Properties": {"Runtime": runtime, "Handler": "app.app"}}
    return {"Resources": {"APIHandler": function, "S3Gateway": function}}


def test_every_module_gets_an_unchecked_hash_pyc_where_the_import_system_looks(tmp_path: Path) -> None:
    bundle = _bundle(
        tmp_path / "deployment.zip",
        {
            "app.py": "VALUE = 'from app'\n",
            "chalicelib/__init__.py": "",
            "chalicelib/mod.py": "import app\nVALUE = app.VALUE + ' via mod'\n",
            "chalicelib/__pycache__/mod.cpython-312.pyc": "stale bytes",
            "vendor/legacy.py": "print 'python 2'\n",
            "chalicelib/data.json": "{}",
        },
    )
    done = bytecode.compile_bundle(bundle)
    assert (done.sources, done.compiled, done.skipped) == (4, 3, ("vendor/legacy.py",))
    with zipfile.ZipFile(bundle) as z:
        names = z.namelist()
        pycs = {n: z.read(n) for n in names if n.endswith(".pyc")}
    assert set(pycs) == {
        f"__pycache__/app.{TAG}.pyc",
        f"chalicelib/__pycache__/__init__.{TAG}.pyc",
        f"chalicelib/__pycache__/mod.{TAG}.pyc",
    }
    assert "chalicelib/data.json" in names and "vendor/legacy.py" in names
    for data in pycs.values():
        assert data[:4] == importlib.util.MAGIC_NUMBER
        assert int.from_bytes(data[4:8], "little") == 0b01  # hash-based, source never checked (PEP 552)


def test_the_compiled_bundle_runs_from_its_pycs_on_a_read_only_tree(tmp_path: Path) -> None:
    bundle = _bundle(
        tmp_path / "deployment.zip",
        {"app.py": "VALUE = 'compiled'\n", "chalicelib/__init__.py": "", "chalicelib/mod.py": "X = 1\n"},
    )
    bytecode.compile_bundle(bundle)
    task = tmp_path / "task"
    with zipfile.ZipFile(bundle) as z:
        z.extractall(task)
    # Sources edited after packaging: an unchecked pyc is still what runs (so no mtime can invalidate it).
    (task / "app.py").write_text("VALUE = 'source'\n")
    files_before = sorted(p.relative_to(task) for p in task.rglob("*"))
    for path in task.rglob("*"):
        path.chmod(0o555 if path.is_dir() else 0o444)
    task.chmod(0o555)
    try:
        run = subprocess.run(
            [sys.executable, "-c", "import app, chalicelib.mod; print(app.VALUE, app.__spec__.cached)"],
            cwd=task,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(task)},
        )
    finally:
        for path in [task, *task.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
    assert run.returncode == 0, run.stderr
    value, cached = run.stdout.split()
    assert value == "compiled" and cached == str(task / "__pycache__" / f"app.{TAG}.pyc")
    assert sorted(p.relative_to(task) for p in task.rglob("*")) == files_before


def test_a_traceback_names_the_file_where_lambda_unpacks_it(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path / "deployment.zip", {"app.py": "def fail():\n    raise ValueError('x')\n"})
    bytecode.compile_bundle(bundle)
    with zipfile.ZipFile(bundle) as z:
        code = z.read(f"__pycache__/app.{TAG}.pyc")
    assert marshal.loads(code[16:]).co_filename == "/var/task/app.py"


def test_own_code_that_does_not_compile_fails_the_package(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path / "deployment.zip", {"chalicelib/broken.py": "def (:\n"})
    with pytest.raises(bytecode.BytecodeError, match=re.escape("chalicelib/broken.py does not compile")):
        bytecode.compile_bundle(bundle)


def test_the_interpreter_must_be_the_functions_runtime(tmp_path: Path) -> None:
    package = tmp_path / "package"
    package.mkdir()
    _bundle(package / "deployment.zip", {"app.py": "X = 1\n"})
    (package / "sam.json").write_text(json.dumps(_template("python3.9")))
    wrong = subprocess.run(
        [sys.executable, "-m", "infra.bytecode", str(package)],
        capture_output=True,
        text=True,
        check=False,
        cwd=Path(bytecode.__file__).parents[1],
    )
    assert wrong.returncode == 1
    assert f"the functions run on ['python3.9'] but this interpreter is {HERE}" in wrong.stderr
    (package / "sam.json").write_text(json.dumps(_template(HERE)))
    right = subprocess.run(
        [sys.executable, "-m", "infra.bytecode", str(package)],
        capture_output=True,
        text=True,
        check=False,
        cwd=Path(bytecode.__file__).parents[1],
    )
    assert right.returncode == 0, right.stderr
    assert "1 of 1 modules compiled" in right.stdout
