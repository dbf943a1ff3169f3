"""``lakelet gc run`` without a stack: its options, defaults from the environment, and the printed summary."""

from __future__ import annotations

import os
import socket
from pathlib import Path

from lakelet import cli
from lakelet.stack import local_gc as local_gc
from lakelet.stack import statefile
from lakelet.stack.local import DEFAULT_ACCESS_KEY_ID

SUMMARY = {
    "run_id": "20270101T000000Z-abcdef12",
    "repository": "repo",
    "storage_namespace": "s3://bucket/repo",
    "mode": "mark-and-sweep",
    "summary_location": "s3://bucket/repo/_lakefs/retention/gc/summary/run_id=r/summary.json",
    "mark": {
        "active_commits": 3,
        "objects_listed": 10,
        "bytes_listed": 10 * 1024 * 1024,
        "objects_too_young": 1,
        "min_age_seconds": 86400,
        "objects_protected": 6,
        "objects_marked": 3,
        "bytes_marked": 3 * 1024,
    },
    "sweep": {
        "objects_deleted": 2,
        "bytes_deleted": 2048,
        "objects_failed": 1,
        "failures": [{"address": "s3://bucket/repo/data/p/x", "code": "AccessDenied", "message": "no"}],
    },
}


def test_gc_run_takes_the_running_stack_from_its_state_file(tmp_path: Path) -> None:
    state = {
        "pid": os.getpid(),
        "api_url": "http://127.0.0.1:1234",
        "moto_url": "http://127.0.0.1:5678",
        "access_key_id": "AKIDSTATE",
        "secret_access_key": "state-secret",
        "aws_access_key_id": "AKIDMOTO",
        "aws_secret_access_key": "moto-secret",
    }
    statefile.write_state(tmp_path, state)

    def parse(argv: list[str]) -> local_gc.GCRunOptions:
        endpoint = argv[argv.index("--endpoint") + 1] if "--endpoint" in argv else None
        return local_gc.GCRunOptions(argv[2], tmp_path, tmp_path, endpoint=endpoint)

    target = local_gc.resolve_target(parse(["gc", "run", "repo"]))
    assert target.from_state and target.s3_endpoint == "http://127.0.0.1:5678" and target.repeat_flags == ()
    assert (target.api.endpoint, target.api.access_key_id, target.api.secret_access_key) == (
        "http://127.0.0.1:1234",
        "AKIDSTATE",
        "state-secret",
    )
    assert target.moto_keys == ("AKIDMOTO", "moto-secret")  # moto's own pair, not the admin's
    # Another API named on the command line: the state file's keys and moto URL are not for it.
    other = local_gc.resolve_target(parse(["gc", "run", "repo", "--endpoint", "http://127.0.0.1:9"]))
    assert not other.from_state and other.s3_endpoint is None
    assert other.api.access_key_id == DEFAULT_ACCESS_KEY_ID and other.repeat_flags == (
        "--endpoint",
        "http://127.0.0.1:9",
    )
    statefile.remove_state(tmp_path)
    gone = local_gc.resolve_target(parse(["gc", "run", "repo"]))
    assert not gone.from_state and gone.api.endpoint == "http://127.0.0.1:8000" and gone.s3_endpoint is None


def test_gc_run_without_a_stack_says_so_at_once(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        free = probe.getsockname()[1]
    assert cli.main(["gc", "run", "repo", "--data-dir", str(tmp_path), "--endpoint", f"http://127.0.0.1:{free}"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"no Lakelet stack answers at http://127.0.0.1:{free}" in err
    assert "lakelet up" in err and str(tmp_path) in err


def test_the_summary_reads_well() -> None:
    text = local_gc.format_summary(SUMMARY)
    assert "GC run 20270101T000000Z-abcdef12 of repo (s3://bucket/repo), mode mark-and-sweep" in text
    assert "objects listed        10 (10.0 MiB)" in text
    assert "marked                3 (3.0 KiB)" in text
    assert "deleted               2 (2.0 KiB)" in text
    assert "s3://bucket/repo/data/p/x: AccessDenied no" in text
    dry = local_gc.format_summary({k: v for k, v in SUMMARY.items() if k != "sweep"})
    assert "dry run: a sweep would reclaim 3.0 KiB" in dry
    assert "--sweep-run 20270101T000000Z-abcdef12" in dry and "deleted" not in dry
    # The printed command repeats the flags that did not come from the state file, so it can be pasted as is.
    pasted = local_gc.format_summary(
        {k: v for k, v in SUMMARY.items() if k != "sweep"}, "/venv/bin/lakelet", ("--endpoint", "http://h:1")
    )
    assert "run `/venv/bin/lakelet gc run repo --sweep-run 20270101T000000Z-abcdef12 --endpoint http://h:1`" in pasted


def test_the_job_module_is_loaded_once() -> None:
    assert local_gc.load_job() is local_gc.load_job()
    assert local_gc.load_job().__name__ == "lakelet_gc"
