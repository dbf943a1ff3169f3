"""The CLI's errors and exit codes: one line saying what was wrong and what to do, never a traceback.

Exit codes (README, "The lakelet CLI"): 0 ok, 1 error, 2 usage (click's own), 3 merge conflict,
130 interrupted (Ctrl-C; what is done stays done and running the command again resumes).
"""

from __future__ import annotations

import json

EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_CONFLICT = 3
EXIT_INTERRUPTED = 130


class CLIError(Exception):
    """An error the user can act on: ``message`` says what went wrong, ``hint`` what to do."""

    exit_code = EXIT_ERROR

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def line(self) -> str:
        return f"{self.message}: {self.hint}" if self.hint else self.message


class MergeConflict(CLIError):
    """A merge stopped on conflicts; ``conflicts`` is the server's list (path, source, destination)."""

    exit_code = EXIT_CONFLICT

    def __init__(
        self,
        message: str,
        conflicts: list[dict[str, str]],
        more: bool,
        shown: bool = False,
        hint: str | None = None,
    ) -> None:
        super().__init__(message, hint_for(409, "conflict found") if hint is None else hint)
        self.conflicts = conflicts
        self.more = more
        self.shown = shown  # already printed (as JSON)


# The hint follows the error's cause, read from lakeFS's words in the message (the same words its clients match
# on); the status only picks the hint when no cause is recognised. First match wins: the running command's own
# hints (COMMAND_CAUSES, the only ones that name a flag: tests/cli/test_hints.py checks each against that
# command's options, or against the command quoted as 'lakelet CMD ...' around it), then the general ones.
COMMAND_CAUSES: tuple[tuple[str, str, str], ...] = (  # (command path under `lakelet`, words, hint)
    ("commit", "no changes", "there is nothing to commit; pass --allow-empty-commit to commit anyway"),
    ("merge", "no changes", "there is nothing to merge; pass --allow-empty to merge anyway"),
    ("branch revert", "no changes", "the revert changes nothing; pass --allow-empty to commit it anyway"),
    ("revert", "no changes", "the revert changes nothing; pass --allow-empty to commit it anyway"),
    ("merge", "conflict found", "settle them with --strategy or --path-strategy GLOB=source-wins|dest-wins"),
    ("pr merge", "conflict found", "settle them with --strategy source-wins|dest-wins, or on the branches"),
    (
        "gc get-config",
        "no garbage collection rules",
        "the repository has no GC rules (GC never collects it): set them with 'lakelet gc set-config "
        'lakefs://REPO --filename rules.json\', rules.json holding {"default_retention_days": 21, "branches": []}',
    ),
)
_CAUSES: tuple[tuple[str, str], ...] = (
    (
        "protected branch",
        "a branch protection rule refuses direct changes: change it through a merge from another branch "
        "('lakelet branch-protect list' shows the rules)",
    ),
    ("hook aborted", "a pre-hook refused it: its output is above; fix what it reports and retry"),
    ("dirty branch", "commit them ('lakelet commit') or discard them ('lakelet branch reset') first"),
    ("uncommitted changes", "commit them ('lakelet commit') or discard them ('lakelet branch reset') first"),
    (
        "is not allowed: the deployment's setting",
        "the server's operator lists the locations imports may read (the setting named above); import from one of them",
    ),
    ("conflict found", "the same paths changed on both sides: settle them on the branches and retry"),
    ("no changes", "there is nothing to do"),
    ("read-only repository", "the repository is read-only"),
    ("not implemented", "this server does not offer it"),
    ("installation not found", "this server keeps no usage report (as lakeFS with usage reporting off)"),
    ("no such api route", "this server does not offer this part of lakeFS's API"),
)
_HINTS = {
    400: "check the command's arguments",
    401: "check the access key id and secret ('lakelet doctor')",
    403: "the user lacks the permission; ask an admin to attach a policy",
    404: "check the repository, ref and path",
    409: "it already exists or changed meanwhile; check and retry",
    412: "a precondition failed; check and retry",
    420: "too many requests; retry later",
    405: "this server does not offer it",
    501: "this server does not offer it",
}


def server_message(body: str | bytes | None) -> str:
    if not body:
        return ""
    try:
        data = json.loads(body)
    except (ValueError, TypeError):
        text = body.decode(errors="replace") if isinstance(body, bytes) else str(body)
        return text.strip().splitlines()[0][:200] if text.strip() else ""
    return str(data.get("message", "")) if isinstance(data, dict) else ""


def running_command() -> str:
    """The path under ``lakelet`` of the command being run (``"branch revert"``), or "" outside one."""
    from typer._click.globals import get_current_context  # typer's own click (it vendors one privately)

    ctx = get_current_context(silent=True)
    names: list[str] = []
    while ctx is not None and ctx.parent is not None:
        names.append(ctx.info_name or "")
        ctx = ctx.parent
    return " ".join(reversed(names))


def hint_for(status: int, message: str, command: str | None = None) -> str:
    """What to do about an error: from its cause when lakeFS's words name one, else from its status. The
    command's own hints (``command``, by default the one running) come first."""
    lowered = message.lower()
    command = running_command() if command is None else command
    for path, words, hint in COMMAND_CAUSES:
        if path == command and words in lowered:
            return hint
    for words, hint in _CAUSES:
        if words in lowered:
            return hint
    return _HINTS.get(status, "retry, or run with --debug")


def from_status(what: str, status: int, body: str | bytes | None, reason: str = "") -> CLIError:
    """An API answer turned into a CLIError naming the operation and the server's message."""
    message = server_message(body) or reason or "no message"
    return CLIError(f"{what} failed ({status} {message})", hint_for(status, message))
