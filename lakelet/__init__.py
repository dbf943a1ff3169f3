"""Lakelet's user-side package: the ``lakelet`` CLI and the embedded local stack (not deployed to Lambda)."""
