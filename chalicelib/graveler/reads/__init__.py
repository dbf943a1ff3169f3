"""The read side: the reads and checks every use case shares (``shared``), sorted views and paginators
(``listing``), commit history (``history``), whether GC deleted an object's data (``collected``), Hive symlink
manifests (``symlinks``) and the commits GC keeps (``retention``).
"""

__all__ = [
    "collected",
    "history",
    "listing",
    "retention",
    "shared",
    "symlinks",
]
