"""Where a local stack listens and with which keys, unless told otherwise: shared by ``lakelet up``, the CLI
and ``lakelet gc run``, with no dependency, so the CLI works from a plain ``pip install .`` (no local stack)."""

from __future__ import annotations

# The same example key pair as lakeFS's quickstart: well known, so nobody mistakes it for a secret.
DEFAULT_ACCESS_KEY_ID = "AKIAIOSFOLKFSSAMPLES"
DEFAULT_SECRET_ACCESS_KEY = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
DEFAULT_API_PORT = 8000
DEFAULT_S3_PORT = 8001
LOCAL_HOST = "127.0.0.1"
LOCAL_REGION = "us-east-1"
# How many connections the local servers queue before accepting them (socketserver's default is 5: a burst of
# 40 client threads saw resets). The kernel caps it at net.core.somaxconn.
LISTEN_BACKLOG = 1024
# The local stack's ready import source: a bucket in its moto that imports may read (``lakelet import-source
# upload`` fills it), so `lakelet import --from s3://lakelet-import/...` works with no setting.
LOCAL_IMPORT_BUCKET = "lakelet-import"
