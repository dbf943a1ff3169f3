"""The first run: a clean clone to a ready ``make run``, as on a fresh machine, with empty pip and npm caches.

The clone is of this checkout's HEAD (committed work only). Everything the run writes goes to one temporary
directory, removed afterwards: the clone with its new .venv and webui/node_modules, pip's and npm's caches
(``PIP_CACHE_DIR``, ``npm_config_cache``), and the stack's data directory. Only the network is shared with this
machine. The clock runs from ``make run``'s start to the banner; the phases come from the time make echoes each
command: the venv, pip's installs, ``npm ci`` and the web UI's build (beside the venv and pip), and the stack's
start.
"""

from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

PROJECT = Path(__file__).resolve().parent.parent
BANNER = "Lakelet local stack is ready."
# The moments of a run: the first line make prints that contains the marker (make echoes each recipe line before
# it runs it; the web UI's build and the stack print a line when done).
EVENTS = {
    "venv": " -m venv ",
    "pip": " -m pip install ",
    "npm ci": "npm ci ",
    "web UI build": "node build.mjs",
    "web UI built": "webui: first load",
    "stack": "bin/lakelet up ",
    "ready": BANNER,
}
# Each phase, from one event to another. The venv and pip run side by side with npm ci and the web UI's build
# (the Makefile's run target), so the phases add up to more than the total when both sides are busy.
PHASES = {
    "venv": ("venv", "pip"),
    "pip": ("pip", "stack"),
    "npm ci": ("npm ci", "web UI build"),
    "web UI build": ("web UI build", "web UI built"),
    "stack start": ("stack", "ready"),
}
# Variables of this process that would point the run at this machine's environment instead of a fresh one.
_LEAKS = (
    "VIRTUAL_ENV",
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONDONTWRITEBYTECODE",
    "PIP_FIND_LINKS",
    "PIP_NO_INDEX",
    "npm_config_offline",
)


class FirstRunError(Exception):
    """The run did not reach its banner; the message ends with what make printed last."""


def _stop(process: subprocess.Popen[str]) -> None:
    """Ctrl-C for the whole of make's process group (make, the stack), as a user stops it; then a kill."""
    for sig, grace in ((signal.SIGINT, 30.0), (signal.SIGKILL, 10.0)):
        if process.poll() is not None:
            return
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(grace)
        except subprocess.TimeoutExpired:
            continue


def measure(api_port: int, s3_port: int, timeout: float = 900.0, source: Path = PROJECT) -> dict[str, Any]:
    """Seconds from ``make run`` to its banner in a fresh clone of ``source``, and the seconds of each phase."""
    with tempfile.TemporaryDirectory(prefix="lakelet-first-run-") as scratch:
        root = Path(scratch)
        clone = root / "clone"
        subprocess.run(["git", "clone", "--quiet", str(source), str(clone)], check=True, timeout=120)
        env = {k: v for k, v in os.environ.items() if k not in _LEAKS}
        env.update(
            PIP_CACHE_DIR=str(root / "pip-cache"),
            npm_config_cache=str(root / "npm-cache"),
            XDG_DATA_HOME=str(root / "xdg"),
            PIP_DISABLE_PIP_VERSION_CHECK="1",
        )
        run_args = f"--api-port {api_port} --s3-port {s3_port} --data-dir {root / 'data'}"
        lines: list[str] = []
        marks: dict[str, float] = {}
        cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.monotonic()
        process = subprocess.Popen(
            ["make", "run", f"RUN_ARGS={run_args}"],
            cwd=clone,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            bufsize=1,
            start_new_session=True,
        )
        # The reader can block on a silent make: the timer stops the run so the reader sees the end of output.
        timer = threading.Timer(timeout, _stop, (process,))
        timer.start()
        try:
            assert process.stdout is not None
            for line in process.stdout:
                now = time.monotonic() - started
                lines.append(line.rstrip("\n"))
                for event, marker in EVENTS.items():
                    if event not in marks and marker in line:
                        marks[event] = now
                if "ready" in marks:
                    break
        finally:
            timer.cancel()
            _stop(process)
            if process.stdout is not None:
                process.stdout.close()
            # make has reaped pip, npm and the stack by now: their CPU time counts in this process's children.
            cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
            shutil.rmtree(clone, ignore_errors=True)  # large (a venv, node_modules): removed even on failure
        if "ready" not in marks:
            tail = " | ".join(line for line in lines[-8:] if line.strip())
            raise FirstRunError(f"make run did not print its banner within {timeout:.0f} s: {tail}")
    phases = {
        phase: round(marks[end] - marks[start], 1)
        for phase, (start, end) in PHASES.items()
        if start in marks and end in marks
    }
    cpu = sum(getattr(cpu_after, f) - getattr(cpu_before, f) for f in ("ru_utime", "ru_stime"))
    return {
        "seconds": round(marks["ready"], 1),
        # What the run cost the machine, beyond waiting on the network; unlike the wall time, other load on a
        # shared machine hardly changes it. It includes the stack's own stop.
        "cpu_seconds": round(cpu, 1),
        "phases": phases,
        "events": {event: round(at, 1) for event, at in sorted(marks.items(), key=lambda item: item[1])},
    }


if __name__ == "__main__":
    import json
    import sys

    print(json.dumps(measure(int(sys.argv[1]), int(sys.argv[2])), indent=2))
