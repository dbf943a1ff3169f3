"""graveler: the versioning engine, pure Python.

It knows repositories, branches, tags, commits, staging areas and committed ranges, and reaches storage
only through the ports in ``ports.py``. It never imports boto3, pynamodb or chalice (a test enforces it);
the one third-party import allowed is pyarrow, inside ``committed/format.py``.
"""
