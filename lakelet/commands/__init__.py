"""The ``lakelet`` CLI's commands, one module per command group: typer, rich when printing to a terminal, and a
small HTTP client of its own (api.py).

main.py is the root app and the console entry point; settings.py reads lakectl's configuration; api.py is the
server connection; upload.py and download.py move files in parallel (presigned URLs where offered), with what
they share in transfer.py.
"""

# What lakelet/cli.py uses: the root tree and registry (main) and the groups the stack's commands join.
__all__ = ["gc", "localdir", "main"]
