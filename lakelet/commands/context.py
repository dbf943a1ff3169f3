"""Per-invocation state: the global flags, the resolved settings and the server connection (built lazily)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import click

from lakelet.commands.api import Api
from lakelet.commands.settings import Settings, resolve


@dataclass
class Session:
    config_path: Path | None = None
    endpoint: str | None = None
    access_key_id: str | None = None
    secret_access_key: str | None = None
    json: bool = False
    debug: bool = False
    _settings: Settings | None = field(default=None, repr=False)
    _api: Api | None = field(default=None, repr=False)

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            self._settings = resolve(self.config_path, endpoint=self.endpoint, access_key_id=self.access_key_id,
                                     secret_access_key=self.secret_access_key)
        return self._settings

    @property
    def api(self) -> Api:
        if self._api is None:
            self._api = Api(self.settings)
        return self._api


def session() -> Session:
    """The root command's Session (a default one when a command runs outside the root app, as in tests)."""
    ctx = click.get_current_context(silent=True)
    root = ctx.find_root() if ctx is not None else None
    if root is None:
        return Session()
    if not isinstance(root.obj, Session):
        root.obj = Session()
    return root.obj


def api() -> Api:
    return session().api


def want_json(flag: bool) -> bool:
    """--json given to the command itself or to the root (``lakelet --json ...``)."""
    return flag or session().json
