"""Where a running ``lakelet up`` says how to reach it: ``<data dir>/state.json``.

The stack writes the file when it is ready and removes it on a clean stop; the CLI and ``lakelet gc run`` read
it when nothing else is configured, so a command printed by the stack can be pasted as is. A file whose pid is
no longer alive (the stack was killed) is treated as absent.

Format (``format`` 1), every URL without a trailing slash:
    {"format": 1, "pid": 1234, "started_at": "2026-11-24T05:40:00Z", "data_dir": "/home/u/.local/share/lakelet",
     "api_url": "http://127.0.0.1:8000",          # the lakeFS API is at api_url + "/api/v1"
     "ui_url": "http://127.0.0.1:8000/",
     "s3_gateway_url": "http://127.0.0.1:8001",
     "moto_url": "http://127.0.0.1:54321",       # takes only requests signed with the key pair below
     "access_key_id": "...", "secret_access_key": "...",
     "bucket": "...", "region": "us-east-1"}
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ENV_DATA_DIR = "LAKELET_DATA_DIR"
STATE_FILE_NAME = "state.json"
STATE_FORMAT = 1


def default_data_dir(environ: Mapping[str, str] | None = None) -> Path:
    """``$LAKELET_DATA_DIR``, else ``$XDG_DATA_HOME/lakelet``, else ``~/.local/share/lakelet``."""
    env = os.environ if environ is None else environ
    if env.get(ENV_DATA_DIR):
        return Path(env[ENV_DATA_DIR]).expanduser()
    base = env.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base).expanduser() / "lakelet"


def state_path(data_dir: Path | None = None) -> Path:
    return (data_dir if data_dir is not None else default_data_dir()) / STATE_FILE_NAME


def stack_state(stack: Any) -> dict[str, Any]:
    """What the state file says about a started stack (a LocalStack: this module imports only the standard
    library, tests/unit/test_dependency_direction.py)."""
    return {
        "pid": os.getpid(),
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "data_dir": str(stack.data_dir) if stack.data_dir is not None else "",
        "api_url": stack.endpoint,
        "ui_url": stack.endpoint + "/",
        "s3_gateway_url": stack.s3_url,
        "moto_url": stack.moto_url,
        "access_key_id": stack.credentials.access_key_id,
        "secret_access_key": stack.credentials.secret_access_key,
        "aws_access_key_id": stack.aws_credentials.access_key_id,
        "aws_secret_access_key": stack.aws_credentials.secret_access_key,
        "bucket": stack.bucket,
        "region": stack.region,
    }


def write_state(data_dir: Path, state: Mapping[str, Any]) -> Path:
    """Atomically (rename) write the state file, readable by its owner only: it holds the admin secret."""
    data_dir.mkdir(parents=True, exist_ok=True)
    body = {"format": STATE_FORMAT, **state}
    fd, tmp = tempfile.mkstemp(prefix=".state-", dir=data_dir)
    try:
        with os.fdopen(fd, "w") as out:
            json.dump(body, out, indent=2, sort_keys=True)
        os.chmod(tmp, 0o600)
        os.replace(tmp, data_dir / STATE_FILE_NAME)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return data_dir / STATE_FILE_NAME


def remove_state(data_dir: Path, pid: int | None = None) -> None:
    """Remove the state file, but only ours (``pid``) when given: a second stack may have taken over."""
    path = data_dir / STATE_FILE_NAME
    if pid is not None:
        current = _load(path)
        if current is not None and current.get("pid") != pid:
            return
    path.unlink(missing_ok=True)


def read_state(data_dir: Path | None = None) -> dict[str, Any] | None:
    """The state of a running stack, or None when there is no file, it is unreadable or its process is gone."""
    state = _load(state_path(data_dir))
    if state is None or state.get("format") != STATE_FORMAT:
        return None
    pid = state.get("pid")
    if not isinstance(pid, int) or not _alive(pid):
        return None
    return state


def _load(path: Path) -> dict[str, Any] | None:
    try:
        value = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
