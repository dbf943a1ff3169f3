"""Constants and type aliases have one home: ``Json`` (the shape of a workflow state or a template) is defined
in graveler/runs/plan_json.py, the codec of the records the steps hand each other, and ``DEFAULT_MAX_SLICES`` in
graveler/runs/slicing.py, which cuts commits, merges and imports into slices; everyone else imports them.

The commit and merge packages still define their own copies (PENDING): they are being reshaped as use cases, and
move to these homes with that change. Until then their values must agree, and no new copy may appear anywhere.
"""

from __future__ import annotations

import re
from pathlib import Path

from chalicelib.graveler import commit, merge
from chalicelib.graveler.imports import steps as import_steps
from chalicelib.graveler.runs import slicing

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("chalicelib", "lakelet", "emr", "infra", "bench", "tests")
PENDING = {
    "chalicelib/graveler/commit/steps.py",
    "chalicelib/graveler/commit/request.py",
    "chalicelib/graveler/merge/steps.py",
    "chalicelib/graveler/merge/request.py",
}


def defined_in(pattern: str) -> set[str]:
    definition = re.compile(pattern, re.MULTILINE)
    return {
        str(path.relative_to(ROOT))
        for folder in FOLDERS
        for path in (ROOT / folder).rglob("*.py")
        if ".venv" not in path.parts and definition.search(path.read_text(encoding="utf-8"))
    }


def test_json_is_defined_once() -> None:
    found = defined_in(r"^Json\s*(:\s*\w+\s*)?=")
    assert "chalicelib/graveler/runs/plan_json.py" in found
    assert found - PENDING == {"chalicelib/graveler/runs/plan_json.py"}


def test_max_slices_is_defined_once_and_the_copies_left_agree() -> None:
    found = defined_in(r"^DEFAULT_MAX_SLICES\s*=")
    assert found - PENDING == {"chalicelib/graveler/runs/slicing.py"}
    assert import_steps.DEFAULT_MAX_SLICES is slicing.DEFAULT_MAX_SLICES
    assert commit.DEFAULT_MAX_SLICES == merge.DEFAULT_MAX_SLICES == slicing.DEFAULT_MAX_SLICES
