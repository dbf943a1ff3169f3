"""What the auth unit tests share."""

from __future__ import annotations


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now
