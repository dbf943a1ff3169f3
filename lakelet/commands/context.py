"""Per-invocation state: the global flags, the resolved settings and the server connection (built lazily)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lakelet.commands.api import Api
from lakelet.commands.output import out
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
            self._settings = resolve(
                self.config_path,
                endpoint=self.endpoint,
                access_key_id=self.access_key_id,
                secret_access_key=self.secret_access_key,
            )
        return self._settings

    @property
    def api(self) -> Api:
        if self._api is None:
            self._api = Api(self.settings)
        return self._api


_current = Session()


def set_session(value: Session) -> None:
    """Called by the root command for each invocation (the CLI runner runs many in one process)."""
    global _current
    _current = value


def session() -> Session:
    return _current


def api() -> Api:
    return session().api


def want_json(flag: bool) -> bool:
    """--json given to the command itself or to the root (``lakelet --json ...``)."""
    return flag or session().json


def emit(data: Any, text: str, json_out: bool) -> None:
    """What a command answers: ``data`` as JSON with --json, else ``text``."""
    if want_json(json_out):
        out().json(data)
    else:
        out().line(text)


def emit_table[T](
    items: Iterable[T], json_out: bool, columns: Sequence[str], row: Callable[[T], Sequence[Any]]
) -> None:
    """A listing: the items as JSON with --json, else a table of ``row(item)`` under ``columns``."""
    listed = list(items)
    if want_json(json_out):
        out().json(listed)
    else:
        out().table(columns, [row(i) for i in listed])
