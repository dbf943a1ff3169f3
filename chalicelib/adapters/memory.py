"""In-memory twins of the ports, the reference behaviour the contract suites (tests/contract) hold the AWS
adapters to: graveler's RefStore, StagingStore, BlockStore and WorkflowRunner, the branch protection and
repository metadata stores, auth's store and cipher, and GC's JobStarter. Each is thread-safe where the API tests
use it from several threads, and none persists anything.

One module per twin (``memory_<twin>.py`` beside this one); this module gathers them under one name, so
``from chalicelib.adapters.memory import MemoryRefStore, MemoryBlockStore`` keeps working wherever it is written.
"""

from __future__ import annotations

from .memory_auth import MemoryAuthStore
from .memory_blocks import MemoryBlockStore
from .memory_cipher import MemoryCipher
from .memory_jobs import MemoryJobStarter
from .memory_metadata import MemoryRepositoryMetadataStore
from .memory_protection import MemoryBranchProtectionStore
from .memory_refs import MemoryRefStore
from .memory_staging import MemoryStagingStore
from .memory_workflows import MemoryWorkflowRunner

__all__ = [
    "MemoryAuthStore",
    "MemoryBlockStore",
    "MemoryBranchProtectionStore",
    "MemoryCipher",
    "MemoryJobStarter",
    "MemoryRefStore",
    "MemoryRepositoryMetadataStore",
    "MemoryStagingStore",
    "MemoryWorkflowRunner",
]
