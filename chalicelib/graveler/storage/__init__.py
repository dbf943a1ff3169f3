"""What the engine keeps per container and per namespace: its caches (``caches``, the one module importing
cachetools), the caching RefStore (``cached_refs``) and what tells it that branches and tags it holds are current
(``ports``), one repository per storage namespace (``namespaces``) and the namespace's files as code outside
graveler uses them (``namespace_files``).
"""

__all__ = [
    "cached_refs",
    "caches",
    "namespace_files",
    "namespaces",
    "ports",
]
