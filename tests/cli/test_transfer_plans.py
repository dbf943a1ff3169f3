"""What a transfer plans to move, without a server: destination paths of uploads, local paths of downloads (never
outside the target directory), and the exit code of each kind of error."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from lakelet.commands.download import plan_download
from lakelet.commands.errors import EXIT_CONFLICT, CLIError, MergeConflict, from_status
from lakelet.commands.transfer import PART_SUFFIX, remote_of
from lakelet.commands.upload import BATCH_MAX_BYTES, BATCH_MAX_FILES, UploadItem, batches, plan_upload
from lakelet.commands.uri import URI, parse


def test_upload_plan_recursive_and_single(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "x.txt").write_text("x")
    (tmp_path / "a" / "b" / "y.csv").write_text("yy")
    (tmp_path / "a" / ("z" + PART_SUFFIX)).write_text("partial download, never uploaded")
    plan = plan_upload(tmp_path / "a", URI("r", "main", "pre"), recursive=True)
    assert [(i.path, i.size) for i in plan] == [("pre/x.txt", 1), ("pre/b/y.csv", 2)]
    only = plan_upload(tmp_path / "a", URI("r", "main", "pre/"), recursive=True, only={"b/y.csv"})
    assert [i.path for i in only] == ["pre/b/y.csv"]
    assert [i.path for i in plan_upload(tmp_path / "a" / "x.txt", URI("r", "main", "dir/"), False)] == ["dir/x.txt"]
    assert [i.path for i in plan_upload(tmp_path / "a" / "x.txt", URI("r", "main", "n.txt"), False)] == ["n.txt"]
    with pytest.raises(CLIError, match="is not a directory"):
        plan_upload(tmp_path / "a" / "x.txt", URI("r", "main", ""), recursive=True)


class _Listing:
    def __init__(self, paths: list[str]) -> None:
        self.paths = paths

    def raw_pages(self, what: str, path: str, query: Mapping[str, Any] | None = None) -> Iterator[dict[str, Any]]:
        for p in self.paths:
            yield {"path": p, "path_type": "object", "size_bytes": 1, "checksum": "c"}


def test_download_plan_stays_inside_the_target(tmp_path: Path) -> None:
    # "./dot.txt" used to be written as dot.txt, over an object of that name: a "." segment is skipped too.
    listing = _Listing(["pre/ok.txt", "pre/sub/ok2.txt", "pre/../escape.txt", "pre/./dot.txt", "pre//abs.txt"])
    plan = plan_download(listing, URI("r", "main", "pre"), tmp_path, recursive=True)  # type: ignore[arg-type]
    root = tmp_path.resolve()
    assert [i.local for i in plan] == [root / "ok.txt", root / "sub" / "ok2.txt"]


GIT = "a path inside .git is never written (git runs what some of its files name)"
UNSAFE = "not a safe local file name (an empty, . or .. segment)"


def test_download_plan_skips_git_and_names_that_cannot_be_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    long_name = "n" * 256
    skipped = {
        "pre/.git/config": GIT,
        "pre/sub/.GIT/hooks/post-checkout": GIT,
        "pre/.Git": GIT,
        "pre/.git./config": GIT,
        "pre/.git /config": GIT,
        "pre/GIT~1/config": GIT,
        "pre/.g\u200cit/config": GIT,
        "pre/.": UNSAFE,
        "pre/": UNSAFE,
        "pre/a//b": UNSAFE,
        f"pre/{long_name}": "a name longer than 255 bytes",
        f"pre/d/{'é' * 128}": "a name longer than 255 bytes",
        "pre/f" + PART_SUFFIX: f"names ending in {PART_SUFFIX} are kept for partial downloads",
        "pre/x": "it is also the folder of other objects (x/...)",
        "pre/x/y": "it is also the folder of other objects (x/y/...)",
    }
    kept = [
        "pre/f",
        "pre/x/y/z",
        "pre/.gitignore",
        "pre/.github/workflow.yml",
        "pre/git/config",
        "pre/ok." + "n" * 250,
        "pre/sub/.gitmodules",
    ]
    listing = _Listing(sorted(skipped) + kept)
    plan = plan_download(listing, URI("r", "main", "pre/"), tmp_path, recursive=True)  # type: ignore[arg-type]
    root = tmp_path.resolve()
    assert sorted(i.local for i in plan) == sorted(root.joinpath(*p[4:].split("/")) for p in kept)
    lines = capsys.readouterr().err.splitlines()
    assert sorted(lines) == sorted(f"skipping {path}: {why}" for path, why in skipped.items())


def test_a_single_download_into_a_folder_refuses_a_git_name(tmp_path: Path) -> None:
    class Stat:
        def raw(self, what: str, method: str, path: str, query: Mapping[str, Any] | None = None) -> tuple[int, Any]:
            return 200, {"path": "p/.GIT", "size_bytes": 1, "checksum": "c"}

    with pytest.raises(CLIError, match=r"refusing to write .*\.GIT: a path inside \.git is never written"):
        plan_download(Stat(), URI("r", "main", "p/.GIT"), tmp_path, recursive=False)  # type: ignore[arg-type]
    assert plan_download(Stat(), URI("r", "main", "p/.GIT"), tmp_path / "named", recursive=False)[0].local == (
        tmp_path / "named"
    )  # a target file the user named is theirs to choose


def test_uris_and_errors() -> None:
    assert parse("lakefs://repo/main/a/b.txt") == URI("repo", "main", "a/b.txt")
    assert str(parse("lakefs://repo/main/")) == "lakefs://repo/main"
    with pytest.raises(CLIError, match="names no object path"):
        parse("lakefs://repo/main", path=True)
    assert from_status("merge", 400, b'{"message": "branch main has uncommitted changes"}').line() == (
        "merge failed (400 branch main has uncommitted changes): commit them ('lakelet commit') or discard them "
        "('lakelet branch reset') first"
    )
    assert from_status("x", 502, b"<html>bad gateway</html>").line() == (
        "x failed (502 <html>bad gateway</html>): retry, or run with --debug"
    )
    assert MergeConflict("m", [], False).exit_code == EXIT_CONFLICT == 3


def _items(*sizes: int) -> list[UploadItem]:
    return [UploadItem(Path(f"f{n}"), f"p/f{n}", size) for n, size in enumerate(sizes)]


def test_batches_share_the_work_and_keep_to_the_bounds() -> None:
    assert [len(b) for b in batches(_items(*[1] * 1000), 10)] == [25] * 40
    assert [len(b) for b in batches(_items(*[1] * 20), 10)] == [1] * 20
    assert [len(b) for b in batches(_items(*[1] * 10_000), 10)] == [BATCH_MAX_FILES] * (10_000 // BATCH_MAX_FILES)
    # Bytes: a batch never carries more than the server takes; a file of exactly the bound goes alone.
    half = BATCH_MAX_BYTES // 2
    grouped = batches(_items(half, half, 1, BATCH_MAX_BYTES, 1), 1)
    assert [[i.size for i in b] for b in grouped] == [[half, half], [1], [BATCH_MAX_BYTES], [1]]
    assert batches([], 4) == []


def test_only_http_addresses_count_as_presigned_urls() -> None:
    row = {"path": "a", "size_bytes": 3, "checksum": '"abc"'}
    assert remote_of({**row, "physical_address": "s3://bucket/data/x"}).url is None
    assert remote_of({**row, "physical_address": "https://bucket.s3/x?X-Amz-Signature=1"}).url == (
        "https://bucket.s3/x?X-Amz-Signature=1"
    )
    assert remote_of(row) == remote_of({**row, "physical_address": ""})
    assert remote_of(row).checksum == "abc"
