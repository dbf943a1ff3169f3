"""Every workflow task, by the Chalice function name the ASL files use ("${commit_seal}", "${merge_plan}", ...)."""

from __future__ import annotations

from . import commit, imports, merge

HANDLERS = {**commit.HANDLERS, **merge.HANDLERS, **imports.HANDLERS}
