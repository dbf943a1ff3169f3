"""The cyclic garbage collector's full collections kept short in the running stack (issue 43).

Why: ``lakelet up`` holds moto's whole state in its own heap, some 50 to 60 objects per staged object (the S3 key,
the staged row's item and its attributes). The interpreter walks every object it tracks in a full (generation 2)
collection, and starts one whenever the objects that survived the younger collections reach a quarter of those
that survived the last full one. So as data grows, full collections come at a steady pace and each walks
everything: in three rounds of 10,000 uploads and a commit of them (0.3 s of work), every commit held one, of
0.33, 0.80 and 0.81 s (a loaded 2-core machine; chalicelib's ``freeze_long_lived`` covers only what exists at
start).

What it does, while the stack runs:

- after each full collection, :func:`gc.freeze` moves what survived it to the permanent generation, which no
  collection walks: the next full collection walks only what was allocated since the last one, and the
  interpreter's pace (a quarter of the last survivors) makes them small and frequent instead of large. The freeze
  runs on this module's thread, woken by :data:`gc.callbacks`, not inside the collector's callback.
- A frozen object is still freed by reference counting the moment nothing refers to it (moto's records are
  dictionaries of values: no cycles). Only a reference cycle that dies after being frozen waits, for a
  compaction: unfreeze, collect, freeze again, which walks everything once. It runs when the process is idle (it
  used less than :data:`IDLE_SHARE` of a core over :data:`IDLE_WINDOW` seconds), something was frozen since the
  last one, and at most every :data:`COMPACT_EVERY` seconds: the full walk happens while nobody waits for it. A
  process that is never idle compacts anyway after :data:`COMPACT_AT_LATEST` seconds, so such cycles cannot
  pile up without bound under steady load (at most one pause of a full walk an hour, under a second here).
- :func:`uninstall` (the stack's stop) unfreezes everything, so a process that goes on (tests) collects it all.
"""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Callable
from typing import Any

#: The process counts as idle when it used less than this share of one core over IDLE_WINDOW seconds.
IDLE_SHARE = 0.05
IDLE_WINDOW = 2.0
#: At most one compaction in this many seconds.
COMPACT_EVERY = 600.0
#: A compaction even while the process is busy, this long after the last one.
COMPACT_AT_LATEST = 3600.0


class GcPolicy:
    """The thread that freezes after full collections and compacts when idle. ``cpu`` and ``clock``: the process's
    CPU seconds and a monotonic clock (tests give their own)."""

    def __init__(
        self,
        *,
        idle_window: float = IDLE_WINDOW,
        idle_share: float = IDLE_SHARE,
        compact_every: float = COMPACT_EVERY,
        compact_at_latest: float = COMPACT_AT_LATEST,
        cpu: Callable[[], float] = time.process_time,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._idle_window = idle_window
        self._idle_share = idle_share
        self._compact_every = compact_every
        self._compact_at_latest = compact_at_latest
        self._cpu = cpu
        self._clock = clock
        self._collected = threading.Event()  # a full collection ended: freeze what survived it
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        #: Freezes since the last compaction, and compactions so far (tests and the bench read them).
        self.freezes = 0
        self.compactions = 0

    def start(self) -> None:
        gc.callbacks.append(self._on_collection)
        self._thread = threading.Thread(target=self._run, name="lakelet-gc-policy", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._on_collection in gc.callbacks:
            gc.callbacks.remove(self._on_collection)
        self._stopping.set()
        self._collected.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        gc.unfreeze()

    def compact(self) -> None:
        """Walk everything once: what died in a cycle after being frozen is collected."""
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        self._collected.clear()  # the collection just made is frozen already
        self.freezes = 0
        self.compactions += 1

    def _on_collection(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "stop" and info.get("generation") == 2:
            self._collected.set()

    def _run(self) -> None:
        since, used = self._clock(), self._cpu()
        last_compaction = self._clock()
        while True:
            collected = self._collected.wait(self._idle_window)
            if self._stopping.is_set():
                return
            if collected:
                self._collected.clear()
                gc.freeze()
                self.freezes += 1
            now = self._clock()
            if now - since < self._idle_window:
                continue
            idle = self._cpu() - used < self._idle_share * (now - since)
            since_last = now - last_compaction
            if self.freezes and ((idle and since_last >= self._compact_every) or since_last >= self._compact_at_latest):
                self.compact()
                last_compaction = self._clock()
            since, used = self._clock(), self._cpu()


_policy: list[GcPolicy] = []
_lock = threading.Lock()


def install() -> None:
    """Idempotent: the policy runs until :func:`uninstall`."""
    with _lock:
        if not _policy:
            policy = GcPolicy()
            policy.start()
            _policy.append(policy)


def uninstall() -> None:
    with _lock:
        if _policy:
            _policy.pop().stop()


def installed() -> GcPolicy | None:
    return _policy[0] if _policy else None
