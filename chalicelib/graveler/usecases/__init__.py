"""The engine's use cases, one module each (the engine record, ``graveler/engine.py``, holds one object of each):

- ``repositories``: create, list, delete (pull requests go with it), the repository's storage namespace;
- ``branches_and_tags``: branches and tags; ``objects``: stat, read, list, upload, link, copy, delete;
- ``presigned_multipart``: presigned multipart uploads;
- ``staged_writes``: conditional uploads (``conditional_uploads``) and deletes (``conditional_delete``), staging by
  address (``staged_objects``);
- ``commits`` (and ``commit_records``) and ``merges``: through the runner, inline or as workflows;
- ``diffs``: the log, diffs, merge base and preview; ``rewrites``: revert, cherry-pick, reset;
- ``dump_tasks``: refs dump and restore as tasks; ``pull_requests``; ``action_files``: action files and hooks;
- ``collection_inputs``: what garbage collection reads and releases.

Each is built from the engine's ports (``graveler/parts.py``) and the shared reads (``graveler/reads/shared.py``) by
``build_engine``; the domain they work on (records, errors, ports, refs, staging, committed ranges) stays at
graveler's root. The import use case is ``graveler/imports/``, with its steps.
"""

__all__ = [
    "action_files",
    "branches_and_tags",
    "collection_inputs",
    "commit_records",
    "commits",
    "conditional_delete",
    "conditional_uploads",
    "diffs",
    "dump_tasks",
    "merges",
    "objects",
    "presigned_multipart",
    "pull_requests",
    "repositories",
    "rewrites",
    "staged_objects",
    "staged_writes",
]
