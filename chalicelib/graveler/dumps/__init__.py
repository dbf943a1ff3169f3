"""Refs dump and restore: a repository's commits, branches and tags written to its storage namespace
(``refs_dump``, the commits file in bounded chunks ``dump_files``) and read back into a bare repository
(``refs_restore``, after the checks of ``restore_checks``). The tasks that run them are the use case
``usecases/dump_tasks.py``.
"""

__all__ = [
    "dump_files",
    "refs_dump",
    "refs_restore",
    "restore_checks",
]
