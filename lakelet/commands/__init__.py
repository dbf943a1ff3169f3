"""The ``lakelet`` CLI's commands (typer + rich on the official lakeFS clients), one module per command group.

main.py is the root app and the console entry point; settings.py reads lakectl's configuration; api.py is the
server connection; transfer.py moves files in parallel through presigned URLs.
"""
