"""Printing: rich tables and progress on a terminal, plain text when piped, JSON with --json.

``Output`` is built once per invocation by the root callback (lakelet/commands/main.py) and reached with
``out()``; it decides whether colours and progress frames are allowed (never when stdout is not a terminal).
"""

from __future__ import annotations

import datetime
import json
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console


def jsonable(value: Any) -> Any:
    """SDK models and plain values as JSON-ready data."""
    if hasattr(value, "to_dict"):
        return jsonable(value.to_dict())
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, (datetime.datetime, datetime.date)):
        return value.isoformat()
    return value


def timestamp(seconds: float | None) -> str:
    if not seconds:
        return ""
    return datetime.datetime.fromtimestamp(seconds, datetime.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


@dataclass
class Output:
    """Where and how to print for this invocation."""

    no_color: bool = False
    json_default: bool = False

    # rich is imported when something is printed through it, not at start: JSON and piped tables never need it.
    @cached_property
    def console(self) -> Console:
        from rich.console import Console

        return Console(no_color=self.no_color, highlight=False, soft_wrap=True)

    @cached_property
    def err(self) -> Console:
        from rich.console import Console

        return Console(stderr=True, no_color=self.no_color, highlight=False, soft_wrap=True)

    @property
    def interactive(self) -> bool:
        """Progress frames and spinners only on a terminal; logs and pipes get none."""
        if "console" in self.__dict__:
            return self.console.is_terminal
        return _is_terminal(sys.stdout)

    def json(self, data: Any) -> None:
        sys.stdout.write(json.dumps(jsonable(data), indent=2, sort_keys=True) + "\n")
        sys.stdout.flush()

    def table(self, columns: Sequence[str], rows: Iterable[Sequence[Any]], title: str | None = None) -> None:
        """A rich table on a terminal; aligned plain text otherwise (never truncated, so pipes get every value)."""
        cells = [["" if v is None else str(v) for v in row] for row in rows]
        if not self.interactive:
            widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
            lines = [title] if title else []
            for row in [list(columns), *cells]:
                lines.append("  ".join(v.ljust(w) for v, w in zip(row, widths, strict=False)).rstrip())
            sys.stdout.write("\n".join(lines) + "\n")
            sys.stdout.flush()
            return
        from rich.table import Table

        table = Table(*columns, title=title, header_style="bold", pad_edge=False, show_edge=False, box=None)
        for column in table.columns:
            column.overflow = "fold"
        for row in cells:
            table.add_row(*row)
        self.console.print(table)

    def line(self, text: str) -> None:
        if "console" in self.__dict__ or _is_terminal(sys.stdout):
            self.console.print(text, markup=False, highlight=False)
        else:
            _write_plain(sys.stdout, text)

    def info(self, text: str) -> None:
        """Status for humans, on stderr so that stdout stays data."""
        if "err" in self.__dict__ or _is_terminal(sys.stderr):
            self.err.print(text, markup=False, highlight=False)
        else:
            _write_plain(sys.stderr, text)

    def error(self, text: str) -> None:
        """The one line of a failed command, on stderr."""
        self.info(text)


def _is_terminal(stream: Any) -> bool:
    """What rich's Console.is_terminal decides for a stream (rich 15, pinned), without importing rich: a tty,
    unless TTY_COMPATIBLE or FORCE_COLOR say otherwise."""
    import os

    if os.environ.get("TTY_COMPATIBLE") == "1":
        return True
    if os.environ.get("TTY_COMPATIBLE") == "0":
        return False
    if os.environ.get("FORCE_COLOR") is not None:  # rich 15 reads any non-empty value as "yes", "0" included
        return os.environ["FORCE_COLOR"] != ""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _write_plain(stream: Any, text: str) -> None:
    """A line to a pipe, unchanged. (rich, which printed it before, also expanded tabs and turned ':x:'-style
    codes into emoji even in a pipe; data such as commit messages now comes out as the server holds it.)"""
    stream.write(text + "\n")
    stream.flush()


_current = Output()


def set_output(output: Output) -> None:
    global _current
    _current = output


def out() -> Output:
    return _current
