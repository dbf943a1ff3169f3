"""Running the hooks of an event: the use case behind every guarded operation (commit, merge, branch and tag
creation and deletion, revert, cherry-pick), inline or in a workflow step alike.

``run`` loads the actions on the event's ref, keeps those whose ``on:`` matches, runs their hooks in file order
(a failed hook stops the rest of its action, as in lakeFS; other actions still run), records the run and every
hook's output, and for a failed pre-event raises HookAborted (412). Nothing here holds a lock: callers run
pre-hooks before their compare-and-swap and post-hooks after it.

Time is bounded twice: each hook by its own ``timeout`` capped at ``max_hook_seconds``, and the whole run by
``max_run_seconds``. Inline operations answer through API Gateway, whose limit is 29 s, so the deployment caps a
run below it; lakeFS's default hook timeout (1 minute) is then cut to what is left. A hook given no time fails.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime

from ..records import Branch
from .errors import HookAborted, InvalidActionFile
from .events import HookEvent
from .files_cache import ActionFilesCache
from .ports import ActionFiles, HookInvoker, HookOutcome
from .records import COMPLETED, FAILED, ActionRun, HookRun, hook_run_id, new_run_id
from .spec import Action, Decoder, HookSpec, parse_action
from .store import RunStore

log = logging.getLogger(__name__)

# How much of a failed hook's output the 412's message carries (the whole output stays in the run).
MESSAGE_OUTPUT_CHARS = 2000


def event_payload(event: HookEvent, action: str, hook_id: str, now: float) -> dict[str, object]:
    """lakeFS's event JSON (pkg/actions/event.go): empty optional fields are left out as Go's omitempty does."""
    payload: dict[str, object] = {
        "event_type": str(event.event_type),
        "event_time": datetime.fromtimestamp(now, UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "action_name": action,
        "hook_id": hook_id,
        "repository_id": event.repository_id,
        "branch_id": event.branch_id,
    }
    for key, value in (("source_ref", event.source_ref), ("tag_id", event.tag_id), ("commit_id", event.commit_id)):
        if value:
            payload[key] = value
    payload["commit_message"] = event.commit_message
    payload["committer"] = event.committer
    if event.commit_metadata:
        payload["commit_metadata"] = dict(event.commit_metadata)
    return payload


class HookRunner:
    """Runs the hooks of events over the invokers (by hook type), the store of runs and the actions' source."""

    def __init__(
        self,
        invokers: Mapping[str, HookInvoker],
        store: RunStore,
        files: ActionFiles,
        decode: Decoder,
        namespace_of: Callable[[str], str],
        max_hook_seconds: float = 25.0,
        max_run_seconds: float = 25.0,
        clock: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
        cache: ActionFilesCache | None = None,
    ) -> None:
        """``cache``: where parsed files are remembered by content (the engine's; a private one without it)."""
        self.invokers = invokers
        self.store = store
        self.files = files
        self.decode = decode
        self.namespace_of = namespace_of
        self.max_hook_seconds = max_hook_seconds
        self.max_run_seconds = max_run_seconds
        self._clock = clock
        self._monotonic = monotonic
        self.cache = cache or ActionFilesCache()

    def actions(self, repo_id: str, ref: str, branch: Branch | None = None) -> list[Action]:
        """Every action on the ref, in file order. Raises InvalidActionFile for the first bad file."""
        files = self.files(repo_id, ref) if branch is None else self.files(repo_id, ref, branch)
        return [self._parse(path, data) for path, data in files]

    def _parse(self, path: str, data: bytes) -> Action:
        return self.cache.action(path, data, lambda: parse_action(data, self.decode, path))

    def run(self, event: HookEvent, branch: Branch | None = None) -> ActionRun | None:
        """The run of the event's matching actions (None when none matches: nothing is recorded).

        Raises HookAborted when a hook of a pre-event failed, InvalidActionFile when an action file on the ref is
        bad (for a pre-event: a guard that cannot be read refuses, rather than lets the operation through).
        ``branch``: the actions ref's branch record as the caller read it in this request.
        """
        matched = [
            a
            for a in self.actions(event.repository_id, event.actions_ref, branch)
            if a.matches(event.event_type, event.branch_id)
        ]
        if not matched:
            # Only post-events carry a key, and their ref is a commit, whose actions never change: an event that
            # matches nothing now matched nothing on any earlier try either, so no run was ever claimed.
            return None
        namespace = self.namespace_of(event.repository_id)
        if event.idempotency_key:
            earlier = self.store.claimed(namespace, event.idempotency_key)
            if earlier is not None:
                return self.store.get(namespace, earlier)
        run_id = new_run_id(self._clock())
        start = self._clock()
        deadline = self._monotonic() + self.max_run_seconds
        hooks: list[HookRun] = []
        outputs: dict[str, str] = {}
        failures: list[tuple[HookRun, HookOutcome]] = []
        for a_index, action in enumerate(matched):
            for h_index, hook in enumerate(action.hooks):
                hook_start = self._clock()
                outcome = self._invoke(event, action, hook, deadline)
                record = HookRun(
                    run_id,
                    hook_run_id(a_index, h_index),
                    action.name,
                    hook.id,
                    hook_start,
                    self._clock(),
                    COMPLETED if outcome.ok else FAILED,
                )
                hooks.append(record)
                outputs[record.hook_run_id] = outcome.output
                if not outcome.ok:
                    failures.append((record, outcome))
                    break  # the rest of this action's hooks do not run
        run = ActionRun(
            run_id,
            event.repository_id,
            str(event.event_type),
            event.branch_id,
            event.commit_id,
            event.source_ref,
            start,
            self._clock(),
            FAILED if failures else COMPLETED,
            tuple(hooks),
        )
        self.store.save(namespace, run, outputs)
        if event.idempotency_key:
            self.store.claim(namespace, event.idempotency_key, run_id)
        if failures and event.event_type.is_pre:
            raise HookAborted(
                abort_message(str(event.event_type), run_id, failures),
                run_id,
                tuple(r.hook_run_id for r, _ in failures),
            )
        if failures:
            log.warning(
                "%s run %s of %s: %d hook(s) failed", event.event_type, run_id, event.repository_id, len(failures)
            )
        return run

    def run_post(self, event: HookEvent) -> ActionRun | None:
        """A post-event's run: its failures are recorded and never undo the operation, and neither does a bad
        action file or a store that cannot be written (logged instead). The pre-event's run named by the event's
        ``pre_run_id`` gets the operation's commit first, whether or not any action matches the post-event."""
        if event.pre_run_id and event.commit_id:
            try:
                self.store.set_commit(self.namespace_of(event.repository_id), event.pre_run_id, event.commit_id)
            except Exception:
                log.exception("run %s of %s: commit id not written", event.pre_run_id, event.repository_id)
        try:
            return self.run(event)
        except InvalidActionFile as e:
            log.warning("%s hooks of %s not run: %s", event.event_type, event.repository_id, e)
        except Exception:
            log.exception("%s hooks of %s failed to run", event.event_type, event.repository_id)
        return None

    def _invoke(self, event: HookEvent, action: Action, hook: HookSpec, deadline: float) -> HookOutcome:
        left = deadline - self._monotonic()
        if left <= 0:
            return HookOutcome(False, "", f"not run: the run's time limit of {self.max_run_seconds:g}s was spent")
        invoker = self.invokers.get(hook.type)
        if invoker is None:
            return HookOutcome(False, "", f"no {hook.type} hooks in this deployment")
        payload = json.dumps(event_payload(event, action.name, hook.id, self._clock())).encode("utf-8")
        timeout = min(hook.timeout_seconds, self.max_hook_seconds, left)
        try:
            return invoker.invoke(hook, payload, timeout)
        except Exception as e:  # an invoker's bug must fail the hook, not leave the run unrecorded
            log.exception("hook %s of action %s", hook.id, action.name)
            return HookOutcome(False, f"{type(e).__name__}: {e}", f"hook failed: {type(e).__name__}")


def abort_message(event_type: str, run_id: str, failures: Sequence[tuple[HookRun, HookOutcome]]) -> str:
    """lakeFS's wording (HookAbortError over a multierror), which its web UI and lakectl parse for the run id and
    the failing hook run id, then the first failed hook's output."""
    count = f"{len(failures)} error occurred" if len(failures) == 1 else f"{len(failures)} errors occurred"
    lines = [
        f"\t* hook run id '{r.hook_run_id}' failed on action '{r.action}' hook '{r.hook_id}': {o.error}"
        for r, o in failures
    ]
    text = f"{event_type} hook aborted, run id '{run_id}': {count}:\n" + "\n".join(lines) + "\n\n"
    first, outcome = failures[0]
    if outcome.output:
        shown = outcome.output[:MESSAGE_OUTPUT_CHARS]
        more = "\n[...]" if len(outcome.output) > MESSAGE_OUTPUT_CHARS else ""
        text += f"output of hook run '{first.hook_run_id}':\n{shown}{more}"
    return text
