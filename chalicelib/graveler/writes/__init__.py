"""The write side of a branch: its staging area (``staging``, spread over shards by ``staging_shards``, retired
tokens dropped by ``deferred_drop``, a sealed token read once for a commit and its hooks by
``staging_snapshot``, uncommitted changes dropped by ``reset``), writes under a precondition
(``preconditions``, ``conditional_writes``), batch uploads, the linking of presigned uploads, where object data
goes (``addressing``) and the bounds of an object's stored fields (``object_fields``).
"""

__all__ = [
    "addressing",
    "batch_upload",
    "conditional_writes",
    "deferred_drop",
    "linking",
    "object_fields",
    "preconditions",
    "reset",
    "staging",
    "staging_shards",
    "staging_snapshot",
]
