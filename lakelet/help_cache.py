"""The help screens typer rendered, kept so that the next ``lakelet --help`` prints them without importing typer.

``lakelet --help`` (or ``lakelet repo --help``, any chain of subcommand names then ``--help`` or ``-h``) costs
typer's import and the build of the whole command tree, about four times a bare interpreter's start, to print a
text that only changes when the CLI's code, typer or the terminal does. The first time, the screen typer prints is
recorded (stdout passes through untouched) and written under the user's cache directory; later runs print it
back. Its file name is a hash of everything the text depends on: the arguments, every module of the ``lakelet``
package and typer's (their paths, sizes and modification times), the Python version, the terminal's width and
whether stdout is one, and the environment variables that change help output. Change any of them and the screen
is rendered again. Nothing here imports typer; a cache that cannot be read or written only means typer renders.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

HELP_FLAGS = frozenset({"--help", "-h"})
# Variables that can change what typer or click print (colours, width, completion), or a default shown in help.
_ENV_PREFIXES = ("LAKECTL_", "LAKELET_", "TYPER_", "_TYPER", "_LAKELET", "CLICK_")
_ENV_NAMES = frozenset(
    {"COLUMNS", "LINES", "TERM", "NO_COLOR", "FORCE_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "TTY_COMPATIBLE", "LANG"}
)
# Values never shown in help, left out of the key rather than hashed into a file name.
_SECRET_WORDS = ("SECRET", "PASSWORD", "TOKEN")
KEPT = 32  # screens kept; the oldest go first
PACKAGE_DIR = Path(__file__).resolve().parent


def cacheable(args: Sequence[str]) -> bool:
    """``[name ...] --help``: subcommand names, then one help flag, and nothing else."""
    return bool(args) and args[-1] in HELP_FLAGS and all(a and not a.startswith("-") for a in args[:-1])


def cache_dir() -> Path:
    root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(root) / "lakelet" / "help"


def _tree_state(top: Path) -> Iterator[str]:
    for directory, subdirectories, files in os.walk(top):
        subdirectories[:] = sorted(d for d in subdirectories if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(directory, name)
                stat = os.stat(path)
                yield f"{path}:{stat.st_size}:{stat.st_mtime_ns}"


def _typer_dir() -> Path | None:
    # Found without importing it: the first sys.path entry that holds the package.
    for entry in sys.path:
        candidate = Path(entry or ".") / "typer" / "__init__.py"
        if candidate.is_file():
            return candidate.parent
    return None


def _terminal() -> str:
    stream = sys.stdout
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    try:
        columns = os.get_terminal_size(sys.__stdout__.fileno()).columns if sys.__stdout__ else 0
    except (OSError, ValueError):
        columns = 0
    return f"tty={tty}:columns={columns}:encoding={getattr(stream, 'encoding', '')}"


def key(args: Sequence[str]) -> str:
    """The hash of everything the help screen for ``args`` depends on."""
    import hashlib  # only for help screens: a command never needs it

    digest = hashlib.sha256()
    environment = sorted(
        (name, value)
        for name, value in os.environ.items()
        if (name in _ENV_NAMES or name.startswith(_ENV_PREFIXES)) and not any(w in name for w in _SECRET_WORDS)
    )
    typer_dir = _typer_dir()
    parts = [
        "\0".join(args),
        sys.version,
        sys.executable,
        _terminal(),
        repr(environment),
        *_tree_state(PACKAGE_DIR),
        *(_tree_state(typer_dir) if typer_dir is not None else ["no typer"]),
    ]
    for part in parts:
        digest.update(part.encode("utf-8", "surrogateescape") + b"\n")
    return digest.hexdigest()


def lookup(args: Sequence[str]) -> str | None:
    """The recorded screen for ``args``, or None (not cacheable, not recorded yet, or unreadable)."""
    if not cacheable(args):
        return None
    try:
        return (cache_dir() / f"{key(args)}.txt").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


class _Recorder:
    """Writes through to the real stdout and keeps a copy."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self.parts: list[str] = []

    def write(self, text: str) -> int:
        written = self._stream.write(text)
        self.parts.append(text)  # after the write: click probes streams with bytes, which a text stream refuses
        return written

    def __getattr__(self, name: str) -> object:
        return getattr(self._stream, name)


@contextmanager
def recording(args: Sequence[str]) -> Iterator[list[int]]:
    """Around a run of the CLI: when ``args`` ask for a help screen and the run ends with exit code 0 (the block
    appends it to the yielded list), stores what it printed on stdout."""
    if not cacheable(args):
        yield []
        return
    name = key(args)
    real = sys.stdout
    recorder = _Recorder(real)
    sys.stdout = recorder
    codes: list[int] = []
    try:
        yield codes
    finally:
        sys.stdout = real
    text = "".join(recorder.parts)
    if codes == [0] and text:
        _store(name, text)


def _store(name: str, text: str) -> None:
    directory = cache_dir()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        partial = directory / f".{name}.{os.getpid()}"
        partial.write_text(text, encoding="utf-8")
        partial.replace(directory / f"{name}.txt")
        screens = sorted(directory.glob("*.txt"), key=lambda p: p.stat().st_mtime_ns, reverse=True)
        for old in [screen for screen in screens if screen.stem != name][KEPT - 1 :]:
            old.unlink(missing_ok=True)
    except OSError:
        pass
