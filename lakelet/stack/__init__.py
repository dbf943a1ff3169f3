"""The embedded local stack of ``lakelet up``: moto standing in for AWS, the Chalice app and the S3 gateway
served next to it, the local Spark GC, and the state file through which the CLI finds a running stack.

Only this package (and lakelet/persistence/, its data directory) imports moto, Chalice or chalicelib; the
CLI's commands (lakelet/commands/) talk to a stack over HTTP and read its state file, nothing else.
"""

# The commands lakelet/cli.py hangs on the tree, the state file the CLI reads, and the stack itself (local.LocalStack,
# app_environment.Credentials) for tests and benchmarks.
__all__ = ["app_environment", "cli", "export_cli", "import_source", "local", "statefile"]
