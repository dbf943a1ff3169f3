"""A small thread-safe LRU map. Ranges and metaranges never change once written, so entries never go stale."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable


class LRUCache[K, V]:
    """Keeps at most ``capacity`` values and, when ``weigh`` is given, at most ``max_weight`` total weight,
    evicting the least recently used first (the newest value always stays, however heavy).

    ``get_or_load`` loads outside the lock, so a slow read never blocks other threads; two threads missing the
    same key may both load it, which is harmless for immutable content.
    """

    def __init__(self, capacity: int, max_weight: int | None = None, weigh: Callable[[V], int] | None = None) -> None:
        self._capacity = max(0, capacity)
        self._max_weight = max_weight
        self._weigh = weigh
        self._lock = threading.Lock()
        self._items: OrderedDict[K, tuple[V, int]] = OrderedDict()
        self._weight = 0

    def get(self, key: K) -> V | None:
        with self._lock:
            item = self._items.get(key)
            if item is None:
                return None
            self._items.move_to_end(key)
            return item[0]

    def put(self, key: K, value: V) -> None:
        if self._capacity == 0:
            return
        weight = self._weigh(value) if self._weigh is not None else 0
        with self._lock:
            previous = self._items.pop(key, None)
            if previous is not None:
                self._weight -= previous[1]
            self._items[key] = (value, weight)
            self._weight += weight
            while len(self._items) > 1 and (
                len(self._items) > self._capacity or (self._max_weight is not None and self._weight > self._max_weight)
            ):
                _, (_, evicted) = self._items.popitem(last=False)
                self._weight -= evicted

    def get_or_load(self, key: K, load: Callable[[], V]) -> V:
        value = self.get(key)
        if value is None:
            value = load()
            self.put(key, value)
        return value

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._weight = 0

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    @property
    def weight(self) -> int:
        with self._lock:
            return self._weight
