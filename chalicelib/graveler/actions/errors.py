"""The errors of actions and hooks, hung under graveler's families so api/errors.py maps them without a new row.

    GravelerError (graveler/errors.py)
    ├── Invalid ....................... 400
    │   └── InvalidActionFile ......... an action file that does not parse or validate (a Lua hook among them)
    ├── NotFound ...................... 404
    │   ├── RunNotFound
    │   └── HookRunNotFound
    └── PreconditionFailed ............ 412
        └── HookAborted ............... a pre-hook failed: the operation did not happen
"""

from __future__ import annotations

from .. import errors


class InvalidActionFile(errors.Invalid):
    pass


class RunNotFound(errors.NotFound):
    lakefs_message = "not found"


class HookRunNotFound(errors.NotFound):
    lakefs_message = "not found"


class HookAborted(errors.PreconditionFailed):
    """lakeFS's HookAbortError: "<event> hook aborted, run id '<id>': <errors>"; its web UI and lakectl read the run
    id and the failing hook run id out of this very wording, so the message is the whole text."""

    lakefs_message = ""

    def __init__(self, message: str, run_id: str, failed: tuple[str, ...]) -> None:
        super().__init__(message)
        self.run_id = run_id
        # The hook run ids that failed, in run order.
        self.failed = failed
