"""graveler: the versioning engine, pure Python.

It knows repositories, branches, tags, commits, staging areas and committed ranges, and reaches storage
only through the ports in ``ports.py``. It never imports boto3, pynamodb or chalice (a test enforces it);
the third-party imports allowed are pyarrow, inside the range format package ``committed/``, and cachetools,
inside ``caches.py``.

Public surface (what code outside graveler imports): the engine record ``engine.Engine``, built by
``engine.build_engine`` from the record of its ports (``parts``, with the shared ``reads`` and the
``action_files`` the hooks read, for wiring), the error tree ``errors``, the records and ports, the use cases'
modules (their records: ``commit_records.CommitRecord``, ``conditional_uploads.ConditionalObject``, ...), and the
helpers the API and gateway build on.
``committed`` is meant to be internal (the API and GC still import a few of its names).
"""

__all__ = [
    "actions",
    "branches",
    "commit",
    "committed",
    "dumps",
    "engine",
    "errors",
    "imports",
    "merge",
    "parts",
    "ports",
    "reads",
    "records",
    "runs",
    "storage",
    "usecases",
    "validation",
    "writes",
]
