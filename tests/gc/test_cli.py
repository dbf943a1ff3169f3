"""``lakelet gc run`` without a stack: its options, defaults from the environment, and the printed summary."""

from __future__ import annotations

from lakelet import cli
from lakelet import gc as local_gc
from lakelet.local import DEFAULT_ACCESS_KEY_ID

SUMMARY = {
    "run_id": "20270101T000000Z-abcdef12",
    "repository": "repo",
    "storage_namespace": "s3://bucket/repo",
    "mode": "mark-and-sweep",
    "summary_location": "s3://bucket/repo/_lakefs/retention/gc/summary/run_id=r/summary.json",
    "mark": {"active_commits": 3, "objects_listed": 10, "bytes_listed": 10 * 1024 * 1024, "objects_too_young": 1,
             "min_age_seconds": 86400, "objects_protected": 6, "objects_marked": 3, "bytes_marked": 3 * 1024},
    "sweep": {"objects_deleted": 2, "bytes_deleted": 2048, "objects_failed": 1,
              "failures": [{"address": "s3://bucket/repo/data/p/x", "code": "AccessDenied", "message": "no"}]},
}


def test_gc_run_options_and_their_environment_defaults() -> None:
    env = {"LAKECTL_SERVER_ENDPOINT_URL": "http://127.0.0.1:9999", "LAKELET_AWS_ENDPOINT_URL": "http://moto:1"}
    options = cli.build_parser(env).parse_args(["gc", "run", "repo", "--mark-only", "--min-age-seconds", "0"])
    assert (options.command, options.gc_command, options.repository) == ("gc", "run", "repo")
    assert options.mark_only and options.sweep_run is None and options.min_age_seconds == 0
    assert options.endpoint == "http://127.0.0.1:9999" and options.s3_endpoint == "http://moto:1"
    assert options.access_key_id == DEFAULT_ACCESS_KEY_ID and options.list_slices == 1
    assert options.handler is local_gc.run_command
    defaults = cli.build_parser({}).parse_args(["gc", "run", "repo"])
    assert defaults.endpoint == "http://127.0.0.1:8000" and defaults.s3_endpoint is None
    assert defaults.min_age_seconds == 86_400


def test_gc_run_without_an_s3_endpoint_says_what_it_needs(capsys) -> None:  # type: ignore[no-untyped-def]
    assert cli.main(["gc", "run", "repo", "--s3-endpoint", ""]) == 1
    assert "AWS stand-in" in capsys.readouterr().err


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


def test_the_job_module_is_loaded_once() -> None:
    assert local_gc.load_job() is local_gc.load_job()
    assert local_gc.load_job().__name__ == "gc_job"
