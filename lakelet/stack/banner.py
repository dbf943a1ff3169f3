"""What ``lakelet up`` prints once it is ready: where the API and the S3 gateway are, the key pair, and how
to connect."""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from lakelet.defaults import LOCAL_IMPORT_BUCKET
from lakelet.stack.statefile import default_data_dir

if TYPE_CHECKING:
    from lakelet.stack.local import LocalStack


def lakelet_command() -> str:
    """How to run ``lakelet`` from the user's shell, so that a printed command can be pasted as is: ``lakelet``
    when that is on PATH, else the venv's script by its full path, else ``python -m lakelet``."""
    script = Path(sys.executable).parent / "lakelet"
    on_path = shutil.which("lakelet")
    if on_path and script.is_file() and Path(on_path).resolve() == script.resolve():
        return "lakelet"
    if script.is_file():
        return shlex.quote(str(script))
    return f"{shlex.quote(sys.executable)} -m lakelet"


def _on_path() -> str:
    """How a new terminal gets ``lakelet`` on PATH, when the venv that runs the stack is not on it already."""
    if lakelet_command() == "lakelet":
        return ""
    activate = Path(sys.executable).parent / "activate"
    if not activate.is_file():
        return ""
    return f"  CLI                 source {shlex.quote(str(activate))}   (in a new terminal: puts lakelet on PATH)\n"


def _kept(stack: LocalStack) -> str:
    if stack.data_dir is None:
        return "--ephemeral: all state is in memory and ends with this process"
    return f"state kept in {stack.data_dir}"


def connection_info(stack: LocalStack) -> str:
    """The connection banner for a started stack."""
    keys = stack.credentials
    namespace = f"{stack.default_namespace_prefix}/example"
    repo = stack.sample_repository or "example"
    lakelet = lakelet_command()
    state = (
        f"  State file          {stack.data_dir / 'state.json'}   (read by the CLI and gc)\n" if stack.data_dir else ""
    )
    # The printed command must find this stack: name its data directory unless it is the one gc looks in anyway.
    data_dir_flag = ""
    if stack.data_dir is not None and stack.data_dir.resolve() != default_data_dir().resolve():
        data_dir_flag = f" --data-dir {shlex.quote(str(stack.data_dir))}"
    limits = f"  {stack.aws_limits.summary()}\n" if stack.aws_limits is not None else ""
    sample = ""
    if stack.sample_repository:
        sample = f"""
A first repository, {repo} (branch main), is ready, with GC rules that keep 7 days of history:
  {lakelet} gc run {repo} --mark-only{data_dir_flag}     # Spark in local mode, installed on first use; needs Java 17
"""
    return f"""\
Lakelet local stack is ready.

  Web UI              {stack.endpoint}/   (log in with the key pair below)
  lakeFS API          {stack.api_url}
  Healthcheck         {stack.api_url}/healthcheck
  Iceberg catalog     {stack.endpoint}/iceberg/api   (REST catalog: <repository>.<ref>.<namespace>, docs/iceberg.md)
  Access key ID       {keys.access_key_id}
  Secret access key   {keys.secret_access_key}
  Namespace prefix    {stack.default_namespace_prefix}   (default_namespace_prefix in GET /config)
  S3 gateway          {stack.s3_url}   (bucket = repository, key = <branch or ref>/<path>)
  AWS stand-in        moto at {stack.moto_url} ({_kept(stack)})
  Import source       s3://{LOCAL_IMPORT_BUCKET}/   (fill it: {lakelet} import-source upload DIR --prefix events/)
{_on_path()}{state}{limits}{sample}
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
  aws s3 ls s3://{repo}/main/ --endpoint-url {stack.s3_url}
  boto3.client("s3", endpoint_url="{stack.s3_url}", region_name="us-east-1")

Press Ctrl-C to stop.
"""
