"""What ``lakelet local`` prints once it is ready: where the API is, the key pair, and how to connect."""

from __future__ import annotations

from lakelet.local import LocalStack


def connection_info(stack: LocalStack, s3_port: int) -> str:
    """The connection banner for a started stack. ``s3_port`` is only reserved: the S3 gateway is not built yet."""
    keys = stack.credentials
    namespace = stack.default_namespace_prefix + "example"
    return f"""\
Lakelet local stack is ready.

  lakeFS API          {stack.api_url}
  Healthcheck         {stack.api_url}/healthcheck
  Access key ID       {keys.access_key_id}
  Secret access key   {keys.secret_access_key}
  Namespace prefix    {stack.default_namespace_prefix}   (default_namespace_prefix in GET /config)
  S3 gateway          port {s3_port} reserved: not yet served (comes with the S3 gateway issue)
  AWS stand-in        moto at {stack.moto_url} (all state is in memory and ends with this process)

Environment read by lakectl and by the lakefs Python client's Client():
  export LAKECTL_SERVER_ENDPOINT_URL={stack.endpoint}
  export LAKECTL_CREDENTIALS_ACCESS_KEY_ID={keys.access_key_id}
  export LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY={keys.secret_access_key}

Python (pip install lakefs):
  import lakefs
  from lakefs.client import Client
  client = Client(host="{stack.endpoint}", username="{keys.access_key_id}",
                  password="{keys.secret_access_key}")
  repo = lakefs.Repository("example", client=client).create(storage_namespace="{namespace}")

Press Ctrl-C to stop.
"""
