"""Authorization: may this user do these things? Policies come from the Directory, cached per user briefly.

A request's permissions are decided against the user's effective policies (its own and its groups'). Reading
them costs a few DynamoDB queries, so each warm container keeps them for CACHE_TTL_SECONDS; a change made in
this container clears the cache at once, a change made elsewhere applies here within the TTL (as lakeFS's
own authorization cache does).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence

from .directory import Directory
from .errors import PermissionDenied
from .policies import Permission, is_allowed
from .records import Policy

CACHE_TTL_SECONDS = 20.0
CACHE_MAX_USERS = 1024


class Authorizer:
    """Decides permissions for users; raises PermissionDenied when a request is not allowed."""

    def __init__(self, directory: Directory, clock: Callable[[], float] = time.time) -> None:
        self._directory = directory
        self._clock = clock
        self._lock = threading.Lock()
        self._cache: dict[str, tuple[list[Policy], float]] = {}

    def is_allowed(self, user_id: str, permissions: Sequence[Permission]) -> bool:
        return is_allowed(self._policies(user_id), permissions, user_id)

    def check(self, user_id: str, permissions: Sequence[Permission]) -> None:
        """Raises PermissionDenied naming the first permission that is not allowed."""
        policies = self._policies(user_id)
        for permission in permissions:
            if not is_allowed(policies, [permission], user_id):
                raise PermissionDenied(f"user {user_id} is not allowed to {permission.action} on {permission.resource}")

    def forget(self) -> None:
        with self._lock:
            self._cache.clear()

    def _policies(self, user_id: str) -> list[Policy]:
        now = self._clock()
        with self._lock:
            hit = self._cache.get(user_id)
        if hit is not None and hit[1] > now:
            return hit[0]
        policies = self._directory.effective_policies(user_id)
        with self._lock:
            if len(self._cache) >= CACHE_MAX_USERS:
                self._cache.clear()
            self._cache[user_id] = (policies, now + CACHE_TTL_SECONDS)
        return policies
