"""Lakelet's user-side package: the ``lakelet`` CLI and the embedded local stack (not deployed to Lambda)."""

# The console entry (cli.main), its two halves and what they share; help_cache is cli's own.
__all__ = ["cli", "commands", "defaults", "persistence", "stack", "units"]
