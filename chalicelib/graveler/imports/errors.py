"""The errors of an import, under graveler's one tree (errors.py), so the API's status table and the workflows'
failure names cover them:

    Forbidden (403)
    └── ImportNotAllowed ....... the source is outside the deployment's allowed import locations
    NotFound (404)
    └── ImportNotFound ......... no import with this id on this branch
    Conflict (409)
    ├── ImportCanceled ......... a step found the import canceled and stopped
    └── ImportFinished ......... a cancel came after the import had ended
"""

from __future__ import annotations

from .. import errors


class ImportNotAllowed(errors.Forbidden):
    """The import names a source outside the allowed locations (the message names the setting)."""


class ImportNotFound(errors.NotFound):
    """No import with this id on this repository and branch."""


class ImportCanceled(errors.Conflict):
    """The import was canceled; the step that noticed stopped before its side effect."""


class ImportFinished(errors.Conflict):
    """The import already ended (completed or failed): there is nothing left to cancel."""


__all__ = ["ImportCanceled", "ImportFinished", "ImportNotAllowed", "ImportNotFound"]
