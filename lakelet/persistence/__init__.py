"""Persistence of ``lakelet up``: moto's whole state kept in a data directory, across stops and kills.

Everything the local stack keeps (repositories, branches, commits, staged objects, object bytes, ranges, users,
keys, policies, KMS keys, GC rules and reports, Step Functions state machines and executions) lives in the moto
server's memory; the app itself keeps nothing that matters between requests. So persisting the stack means
persisting moto, and that is done with a snapshot plus a journal:

- snapshot.py pickles every moto backend at once (on open, at a clean stop, and when the journal has grown);
- middleware.py journals each AWS request that may change moto's state before moto's answer leaves, under a
  lock that makes the journal's order moto's order (journal.py: framed, checksummed, group-committed fsync);
- determinism.py pins moto's random numbers and clock per request, so a replay makes the same IDs;
- workflows.py carries Step Functions executions across (their ends are journaled; cut-off ones are FAILED);
- recovery.py rebuilds moto from them on open; store.py ties these together; datadir.py owns the directory's
  layout, format version and lock.
"""

from lakelet.persistence.datadir import DataDirError
from lakelet.persistence.recovery import Recovery
from lakelet.persistence.store import Persistence

__all__ = ["DataDirError", "Persistence", "Recovery"]
