"""Downloads never write ``.git``, and names that cannot be local files are skipped with one line each while the
rest of the transfer goes on: ``fs download -r`` and ``local clone`` of a branch that holds them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from lakelet.commands.transfer import PART_SUFFIX
from tests.cli.conftest import Result, read_tree

Cli = Callable[..., Result]

GIT = "a path inside .git is never written (git runs what some of its files name)"
LONG = "n" * 256
# What a hostile branch holds below p/: objects a download must skip, and why.
SKIPPED = {
    ".git/config": GIT,
    "sub/.GIT/hooks/post-checkout": GIT,
    "x": "it is also the folder of other objects (x/...)",
    LONG: "a name longer than 255 bytes",
    "f" + PART_SUFFIX: f"names ending in {PART_SUFFIX} are kept for partial downloads",
}
WRITTEN = {"x/y": b"under x\n", "f": b"beside its part name\n", "sub/ok.txt": b"fine\n", ".gitignore": b"*.tmp\n"}


def _upload(cli: Cli, tmp_path: Path, repo: str) -> None:
    contents = {**dict.fromkeys(SKIPPED, b"[core]\n\tfsmonitor = touch pwned\n"), **WRITTEN}
    for n, (path, data) in enumerate(contents.items()):
        source = tmp_path / f"source-{n}"
        source.write_bytes(data)
        cli("fs", "upload", "--source", str(source), f"lakefs://{repo}/main/p/{path}")
    cli("commit", f"lakefs://{repo}/main", "-m", "hostile names")


def _skip_lines(result: Result) -> list[str]:
    return sorted(line for line in result.stderr.splitlines() if line.startswith("skipping "))


def test_download_and_clone_skip_git_and_unwritable_names(cli: Cli, repo: str, tmp_path: Path) -> None:
    _upload(cli, tmp_path, repo)
    expected = sorted(f"skipping p/{path}: {why}" for path, why in SKIPPED.items())

    target = tmp_path / "download"
    downloaded = cli("fs", "download", "-r", f"lakefs://{repo}/main/p/", str(target))
    assert _skip_lines(downloaded) == expected, downloaded.stderr
    assert "Traceback" not in downloaded.stderr
    assert read_tree(target) == WRITTEN
    assert not any(part.lower() == ".git" for p in target.rglob("*") for part in p.parts)

    work = tmp_path / "work"
    cloned = cli("local", "clone", f"lakefs://{repo}/main/p/", str(work))
    assert _skip_lines(cloned) == expected, cloned.stderr
    assert read_tree(work) == {**WRITTEN, ".lakefs_ref.yaml": (work / ".lakefs_ref.yaml").read_bytes()}
    # What the directory cannot hold is not a local change: a commit from it never deletes those objects.
    assert cli("local", "status", str(work)).stdout.strip() == "No diff found."
    (work / "sub" / "ok.txt").write_text("edited\n")
    cli("local", "commit", str(work), "-m", "edit")
    listed = cli("fs", "ls", "-r", f"lakefs://{repo}/main/p/").stdout
    assert all(f"p/{path}" in listed for path in SKIPPED), listed
    pulled = cli("local", "pull", str(work))
    assert "Traceback" not in pulled.stderr and not (work / ".git").exists()
