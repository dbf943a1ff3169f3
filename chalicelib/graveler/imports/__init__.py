"""Zero-copy import of objects already in S3 (lakeFS's importStart / importStatus / importCancel).

An import lists its sources, maps them to paths on the branch and commits entries that point at the source
objects themselves (nothing is copied) on the branch ``_<branch>_imported``, then merges that into the branch.
It runs as idempotent steps (steps.py), inline or as a workflow with the slices built in parallel; the status
records (status.py) carry progress, completion and cancellation. Sources must lie inside the deployment's
allowed import locations (request.py).
"""

from .errors import ImportCanceled, ImportFinished, ImportNotAllowed, ImportNotFound
from .internal import check_not_internal
from .plan import (
    ImportCommitted,
    ImportedSlice,
    ImportFailed,
    ImportMerged,
    ImportPlan,
    ImportSlice,
    manifest_address,
    manifest_bytes,
    split_s3,
)
from .ports import ImportRecords, SourceLister, SourceObject
from .request import (
    COMMON_PREFIX,
    OBJECT,
    ImportLocation,
    ImportRequest,
    check_allowed,
    check_locations,
    import_branch_name,
)
from .service import EXECUTION_PREFIX, Importer, ImportParts, ImportStatus
from .status import CANCELED_MESSAGE, CANCELING, COMPLETED, FAILED, MERGING, RUNNING, ImportRecord
from .steps import DEFAULT_MAX_SLICES, ImporterParts, ImportSteps

__all__ = [
    "CANCELED_MESSAGE",
    "CANCELING",
    "COMMON_PREFIX",
    "COMPLETED",
    "DEFAULT_MAX_SLICES",
    "EXECUTION_PREFIX",
    "FAILED",
    "MERGING",
    "OBJECT",
    "RUNNING",
    "ImportCanceled",
    "ImportCommitted",
    "ImportFailed",
    "ImportFinished",
    "ImportLocation",
    "ImportMerged",
    "ImportNotAllowed",
    "ImportNotFound",
    "ImportParts",
    "ImportPlan",
    "ImportRecord",
    "ImportRecords",
    "ImportRequest",
    "ImportSlice",
    "ImportStatus",
    "ImportSteps",
    "ImportedSlice",
    "Importer",
    "ImporterParts",
    "SourceLister",
    "SourceObject",
    "check_allowed",
    "check_locations",
    "check_not_internal",
    "errors",
    "import_branch_name",
    "manifest_address",
    "manifest_bytes",
    "plan",
    "ports",
    "split_s3",
    "status",
]
