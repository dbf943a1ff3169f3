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

Each takes a frozen record of its own (``ObjectParts``, ``BranchParts``, ``RepositoryParts``, ``HistoryParts``,
``RewriteParts``, ``ActionParts``, ...): the stores and callables it uses, the shared reads
(``graveler/reads/shared.py``) among them as bound methods. ``build_engine`` builds every record from the engine's
ports (``graveler/parts.py``); a test builds one from fakes. The domain they work on stays at graveler's root
(records, errors, ports, refs) and in its rooms (``writes/``, ``reads/``, ``branches/``, ``committed/``, ...).
The import use case is ``graveler/imports/``, with its steps.
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
