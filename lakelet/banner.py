"""What ``lakelet local`` prints once it is ready: where the API and the S3 gateway are, the key pair, and how
to connect."""

from __future__ import annotations

from lakelet.local import LocalStack


def _kept(stack: LocalStack) -> str:
    if stack.data_dir is None:
        return "--ephemeral: all state is in memory and ends with this process"
    return f"state kept in {stack.data_dir}"


def connection_info(stack: LocalStack) -> str:
    """The connection banner for a started stack."""
    keys = stack.credentials
    namespace = stack.default_namespace_prefix + "example"
    return f"""\
Lakelet local stack is ready.

  Web UI              {stack.endpoint}/   (log in with the key pair below)
  lakeFS API          {stack.api_url}
  Healthcheck         {stack.api_url}/healthcheck
  Access key ID       {keys.access_key_id}
  Secret access key   {keys.secret_access_key}
  Namespace prefix    {stack.default_namespace_prefix}   (default_namespace_prefix in GET /config)
  S3 gateway          {stack.s3_url}   (bucket = repository, key = <branch or ref>/<path>)
  AWS stand-in        moto at {stack.moto_url} ({_kept(stack)})

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

S3 clients (aws cli, boto3) need only the endpoint and the key pair:
  export AWS_ACCESS_KEY_ID={keys.access_key_id}
  export AWS_SECRET_ACCESS_KEY={keys.secret_access_key}
  aws s3 ls s3://example/main/ --endpoint-url {stack.s3_url}
  boto3.client("s3", endpoint_url="{stack.s3_url}", region_name="us-east-1")

Press Ctrl-C to stop.
"""
