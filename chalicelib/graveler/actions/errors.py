"""The errors of actions and hooks; they live in graveler's one error tree (graveler/errors.py), named here for
the package's callers."""

from ..errors import HookAborted, HookRunNotFound, InvalidActionFile, RunNotFound

__all__ = ["HookAborted", "HookRunNotFound", "InvalidActionFile", "RunNotFound"]
