"""Runs and hook outputs, kept in the repository's namespace under ``_lakefs/actions/`` (as lakeFS keeps its hook
logs) through the BlockStore port, so the S3 adapter and its memory twin both serve it:

    <ns>/_lakefs/actions/log/<run id>/run.manifest      the run and its hook runs (JSON)
    <ns>/_lakefs/actions/log/<run id>/<hook run id>.log  a hook's output
    <ns>/_lakefs/actions/index/branch/<branch>/<run id>  empty markers: runs by branch ...
    <ns>/_lakefs/actions/index/commit/<commit>/<run id>  ... and by commit, listed without reading every run
    <ns>/_lakefs/actions/done/<key digest>               the run id a retried workflow step already ran

Blobs are written once; the manifest is written after the outputs and markers, so a run that is listed has all
of its parts. Run ids sort newest first, so a listing in address order is newest first.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator

from .. import errors
from ..ports import BlockStore
from ..records import Page
from .errors import HookRunNotFound, RunNotFound
from .records import ActionRun

ROOT = "_lakefs/actions/"
MANIFEST = "run.manifest"


class RunStore:
    """Reads and writes runs of one deployment; every method takes the repository's storage namespace."""

    def __init__(self, blocks: BlockStore) -> None:
        self.blocks = blocks

    def save(self, namespace: str, run: ActionRun, outputs: dict[str, str]) -> None:
        """Writes the hook outputs (by hook run id), the index markers, then the run itself."""
        base = _base(namespace)
        for hook_run_id, text in outputs.items():
            self.blocks.put(f"{base}log/{run.run_id}/{hook_run_id}.log", text.encode("utf-8"))
        if run.branch:
            self.blocks.put(f"{base}index/branch/{run.branch}/{run.run_id}", b"")
        if run.commit_id:
            self.blocks.put(f"{base}index/commit/{run.commit_id}/{run.run_id}", b"")
        self.blocks.put(f"{base}log/{run.run_id}/{MANIFEST}", json.dumps(run.to_json()).encode("utf-8"))

    def set_commit(self, namespace: str, run_id: str, commit_id: str) -> None:
        """Writes ``commit_id`` onto a run recorded without it (a pre-commit's, once its commit landed): the commit's
        marker first, then the manifest again. Idempotent; a run that is not there is left alone, as lakeFS's
        UpdateCommitID leaves a missing pre-run."""
        try:
            run = self.get(namespace, run_id)
        except RunNotFound:
            return
        if run.commit_id == commit_id:
            return
        self.save(namespace, run.with_commit(commit_id), {})

    def get(self, namespace: str, run_id: str) -> ActionRun:
        """Raises RunNotFound."""
        if not run_id or "/" in run_id:
            raise RunNotFound(f"run {run_id}")
        try:
            data = self.blocks.get(f"{_base(namespace)}log/{run_id}/{MANIFEST}")
        except errors.ObjectNotFound:
            raise RunNotFound(f"run {run_id}") from None
        return ActionRun.from_json(json.loads(data))

    def output(self, namespace: str, run_id: str, hook_run_id: str) -> bytes:
        """A hook's output. Raises RunNotFound or HookRunNotFound."""
        run = self.get(namespace, run_id)
        if hook_run_id not in {h.hook_run_id for h in run.hooks}:
            raise HookRunNotFound(f"hook run {hook_run_id} of run {run_id}")
        try:
            return self.blocks.get(f"{_base(namespace)}log/{run_id}/{hook_run_id}.log")
        except errors.ObjectNotFound:
            return b""

    def list(
        self, namespace: str, branch: str = "", commit_id: str = "", after: str = "", amount: int = 100
    ) -> Page[ActionRun]:
        """Runs newest first, of a branch and/or a commit when given, after the run id ``after``."""
        base = _base(namespace)
        ids: Iterator[str]
        if commit_id:
            ids = self._ids(f"{base}index/commit/{commit_id}/")
        elif branch:
            ids = self._ids(f"{base}index/branch/{branch}/")
        else:
            ids = (
                a[len(f"{base}log/") : -len(MANIFEST) - 1]
                for a, _ in self.blocks.list_blobs(f"{base}log/")
                if a.endswith("/" + MANIFEST)
            )
        results: list[ActionRun] = []
        for run_id in ids:
            if after and run_id <= after:
                continue
            try:
                run = self.get(namespace, run_id)
            except RunNotFound:
                continue  # markers written, manifest not (yet): not a run
            if branch and run.branch != branch:
                continue
            if len(results) == amount:
                return Page(results, True, results[-1].run_id)
            results.append(run)
        return Page(results, False, "")

    def _ids(self, prefix: str) -> Iterator[str]:
        return (a[len(prefix) :] for a, _ in self.blocks.list_blobs(prefix))

    def claim(self, namespace: str, key: str, run_id: str) -> str | None:
        """Records that the step with this key ran as ``run_id``; the run id recorded earlier if one was."""
        address = f"{_base(namespace)}done/{hashlib.sha256(key.encode()).hexdigest()}"
        if self.blocks.put_if_absent(address, run_id.encode()):
            return None
        return self.blocks.get(address).decode()

    def claimed(self, namespace: str, key: str) -> str | None:
        address = f"{_base(namespace)}done/{hashlib.sha256(key.encode()).hexdigest()}"
        try:
            return self.blocks.get(address).decode()
        except errors.ObjectNotFound:
            return None


def _base(namespace: str) -> str:
    return namespace.rstrip("/") + "/" + ROOT
