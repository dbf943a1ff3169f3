"""Every workflow task, by the Chalice function name the ASL files use ("${commit_seal}", "${merge_plan}", ...):
the one table app.py registers the Lambda functions from, and the local stack routes moto's invocations by."""

from __future__ import annotations

from . import commit, dumps, imports, merge

__all__ = ["HANDLERS"]

HANDLERS = {**commit.HANDLERS, **merge.HANDLERS, **imports.HANDLERS, **dumps.HANDLERS}
