"""Moving a branch: every change of a branch record through one compare-and-swap loop (``branch_moves``), the checks
before a head moves (``move_checks``) and branch protection (``protection``).
"""

__all__ = [
    "branch_moves",
    "move_checks",
    "protection",
]
