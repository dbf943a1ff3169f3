"""Where the CLI finds its server and credentials, as lakectl does, plus the local stack as a last resort.

Precedence, lowest first: the YAML file (``--config``, else ``~/.lakectl.yaml``: ``credentials.access_key_id``,
``credentials.secret_access_key``, ``server.endpoint_url``), then the ``LAKECTL_*`` environment variables, then
the command-line flags. When none of them names an endpoint, a running ``lakelet up`` is found through its
state file (lakelet/stack/statefile.py), so the commands it prints work with no setup at all.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lakelet.commands.errors import CLIError

ENV_ENDPOINT = "LAKECTL_SERVER_ENDPOINT_URL"
ENV_ACCESS_KEY_ID = "LAKECTL_CREDENTIALS_ACCESS_KEY_ID"
ENV_SECRET_ACCESS_KEY = "LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY"
ENV_CONFIG_FILE = "LAKECTL_CONFIG_FILE"
API_SUFFIX = "/api/v1"


def default_config_path(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    if env.get(ENV_CONFIG_FILE):
        return Path(env[ENV_CONFIG_FILE]).expanduser()
    return Path(env.get("HOME") or Path.home()) / ".lakectl.yaml"


@dataclass(frozen=True, slots=True)
class Settings:
    """What a command connects with, and where each value came from (for ``doctor`` and error messages)."""

    endpoint: str  # without /api/v1 and without a trailing slash
    access_key_id: str
    secret_access_key: str
    source: str  # "config file /x", "environment", "flags", "lakelet up (state file)", or a mix

    @property
    def api_url(self) -> str:
        return self.endpoint + API_SUFFIX


def normalize_endpoint(url: str) -> str:
    """lakectl accepts the server with or without /api/v1; keep the bare server URL."""
    url = url.strip().rstrip("/")
    url = url.removesuffix(API_SUFFIX)
    if not url.startswith(("http://", "https://")):
        raise CLIError(
            f"server endpoint {url!r} is not an http(s) URL",
            f"fix server.endpoint_url or {ENV_ENDPOINT}, e.g. http://127.0.0.1:8000",
        )
    return url


def read_config_file(path: Path) -> dict[str, Any]:
    """The YAML file as a dict; {} when it does not exist."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        return {}
    except OSError as e:
        raise CLIError(f"cannot read config file {path}: {e.strerror}", "check its permissions") from None
    import yaml  # only when a file exists: most runs configure through the environment or the state file

    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as e:
        raise CLIError(
            f"config file {path} is not valid YAML ({str(e).splitlines()[0]})",
            "fix it or write it again with 'lakelet config'",
        ) from None
    if not isinstance(data, dict):
        raise CLIError(f"config file {path} is not a YAML mapping", "write it again with 'lakelet config'")
    return data


def _nested(data: Mapping[str, Any], section: str, key: str) -> str | None:
    value = data.get(section)
    if isinstance(value, Mapping) and value.get(key) not in (None, ""):
        return str(value[key])
    return None


def resolve(
    config_path: Path | None = None,
    *,
    endpoint: str | None = None,
    access_key_id: str | None = None,
    secret_access_key: str | None = None,
    environ: Mapping[str, str] | None = None,
    state_dir: Path | None = None,
) -> Settings:
    """Merge file < environment < flags; fall back on a running local stack when no endpoint is set."""
    env = os.environ if environ is None else environ
    path = config_path if config_path is not None else default_config_path(env)
    if config_path is not None and not path.exists():
        raise CLIError(f"config file {path} does not exist", "create it with 'lakelet config' or drop --config")
    data = read_config_file(path)
    layers = [
        (
            f"config file {path}",
            {
                "endpoint": _nested(data, "server", "endpoint_url"),
                "key": _nested(data, "credentials", "access_key_id"),
                "secret": _nested(data, "credentials", "secret_access_key"),
            },
        ),
        (
            "environment",
            {
                "endpoint": env.get(ENV_ENDPOINT) or None,
                "key": env.get(ENV_ACCESS_KEY_ID) or None,
                "secret": env.get(ENV_SECRET_ACCESS_KEY) or None,
            },
        ),
        ("flags", {"endpoint": endpoint, "key": access_key_id, "secret": secret_access_key}),
    ]
    merged: dict[str, str | None] = {"endpoint": None, "key": None, "secret": None}
    sources: list[str] = []
    for name, layer in layers:
        used = False
        for field, value in layer.items():
            if value is not None:
                merged[field], used = value, True
        if used:
            sources.append(name)
    if merged["endpoint"] is None:
        from lakelet.stack.statefile import read_state

        state = read_state(state_dir)
        if state is not None:
            merged["endpoint"] = str(state["api_url"])
            merged["key"] = merged["key"] or str(state.get("access_key_id") or "")
            merged["secret"] = merged["secret"] or str(state.get("secret_access_key") or "")
            sources.append("lakelet up (state file)")
    if merged["endpoint"] is None:
        raise CLIError(
            "no lakeFS server configured and no running 'lakelet up' found",
            f"run 'lakelet config', set {ENV_ENDPOINT}, or start 'lakelet up'",
        )
    if not merged["key"] or not merged["secret"]:
        raise CLIError(
            f"no credentials for {merged['endpoint']}",
            f"run 'lakelet config' or set {ENV_ACCESS_KEY_ID} and {ENV_SECRET_ACCESS_KEY}",
        )
    return Settings(normalize_endpoint(merged["endpoint"]), merged["key"], merged["secret"], " < ".join(sources))


def write_config_file(path: Path, endpoint: str, access_key_id: str, secret_access_key: str) -> None:
    """Write (or update) the lakectl file, keeping keys it already has; owner-only since it holds a secret."""
    data = read_config_file(path)
    data.setdefault("credentials", {})
    data.setdefault("server", {})
    data["credentials"].update({"access_key_id": access_key_id, "secret_access_key": secret_access_key})
    data["server"]["endpoint_url"] = endpoint
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    import yaml

    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        yaml.safe_dump(data, out, default_flow_style=False, sort_keys=True)
    os.replace(tmp, path)
