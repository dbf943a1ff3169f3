"""The S3 gateway core, independent of Chalice and of any HTTP server: ``S3Gateway.handle(Request) -> Response``.

Buckets are repositories and keys are ``<ref>/<path>``. Requests are authenticated with AWS Signature V4
(sigv4.py, payload.py), routed by method and sub-resource (router.py) to one module per operation (ops/), and
every error is answered from the single table of S3 codes (errors.py). graveler does the work underneath.
"""

from .gateway import S3Gateway
from .model import Request, Response

__all__ = ["Request", "Response", "S3Gateway", "function_url"]
