"""A data directory crosses a moto upgrade: ``lakelet local export`` writes it in AWS's wire formats, the old
directory is then refused by a Lakelet whose moto differs (simulated by the snapshot's version stamp) with one
line naming the commands, and ``lakelet local import`` brings every repository, ref, commit, staged entry,
object, user and credential back on the new version."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import boto3
import lakefs
import lakefs_sdk
import pytest
from lakefs.client import Client
from lakefs_sdk.models import GarbageCollectionRule, GarbageCollectionRules

from lakelet import cli
from lakelet.stack.app_environment import Credentials
from lakelet.stack.local import LocalStack

pytestmark = pytest.mark.e2e  # starts the embedded stack in this process

KEYS = Credentials("AKIAEXPORTTESTADMIN", "export/test+secret")
BIG = bytes(range(256)) * (6 * 1024 * 1024 // 256 + 7)  # > 5 MiB: two parts through the gateway


def _client(stack: LocalStack, keys: Credentials = KEYS) -> Client:
    return Client(host=stack.endpoint, username=keys.access_key_id, password=keys.secret_access_key)


def _sdk(stack: LocalStack, keys: Credentials = KEYS) -> lakefs_sdk.ApiClient:
    return lakefs_sdk.ApiClient(
        lakefs_sdk.Configuration(host=stack.api_url, username=keys.access_key_id, password=keys.secret_access_key)
    )


def _state(stack: LocalStack) -> dict[str, Any]:
    """What a user sees: refs, commit logs, the bytes and checksums of every object, uncommitted changes."""
    client = _client(stack)
    repo = lakefs.Repository("upg", client=client)
    seen: dict[str, Any] = {
        "branches": sorted(b.id for b in repo.branches()),
        "tags": {t.id: t.get_commit().id for t in repo.tags()},
    }
    for ref in ("main", "dev", "v1"):
        seen[f"log:{ref}"] = [(c.id, c.message, c.meta_range_id) for c in repo.ref(ref).log()]
        seen[f"objects:{ref}"] = {
            o.path: (o.checksum, repo.ref(ref).object(o.path).reader(mode="rb").read()) for o in repo.ref(ref).objects()
        }
    seen["uncommitted:dev"] = sorted((c.path, c.type) for c in repo.branch("dev").uncommitted())
    seen["gc_rules"] = lakefs_sdk.RepositoriesApi(_sdk(stack)).get_gc_rules("upg").to_dict()
    return seen


def _fill(stack: LocalStack) -> Credentials:
    repo = lakefs.Repository("upg", client=_client(stack)).create(
        storage_namespace=f"{stack.default_namespace_prefix}/upg"
    )
    main = repo.branch("main")
    main.object("data/a.csv").upload(b"a,b\n1,2\n", content_type="text/csv", metadata={"owner": "ana"})
    gateway = boto3.client(
        "s3",
        endpoint_url=stack.s3_url,
        region_name=stack.region,
        aws_access_key_id=KEYS.access_key_id,
        aws_secret_access_key=KEYS.secret_access_key,
    )
    gateway.upload_fileobj(
        __import__("io").BytesIO(BIG),
        "upg",
        "main/data/big.bin",
        Config=boto3.s3.transfer.TransferConfig(
            multipart_threshold=5 * 1024 * 1024, multipart_chunksize=5 * 1024 * 1024
        ),
    )
    main.commit(message="first data", metadata={"source": "test"})
    repo.tag("v1").create(main)
    dev = repo.branch("dev").create(source_reference="main")
    dev.object("data/staged.txt").upload(b"not committed yet")
    dev.object("data/a.csv").delete()
    sdk = _sdk(stack)
    lakefs_sdk.RepositoriesApi(sdk).set_gc_rules(
        "upg",
        GarbageCollectionRules(
            default_retention_days=7, branches=[GarbageCollectionRule(branch_id="main", retention_days=30)]
        ),
    )
    auth = lakefs_sdk.AuthApi(sdk)
    auth.create_user(lakefs_sdk.UserCreation(id="alice"))
    auth.add_group_membership("Viewers", "alice")
    key = auth.create_credentials("alice")
    return Credentials(key.access_key_id, key.secret_access_key)


def _stamp_another_moto(data_dir: Path) -> None:
    """What a moto upgrade does to a data directory: its snapshots now carry another version than the one that
    runs (the pickles after the header are left as they are)."""
    snapshots = sorted((data_dir / "moto").glob("snapshot-*.bin"))
    assert snapshots
    for path in snapshots:
        header, _, rest = path.read_bytes().partition(b"\n")
        stamped = json.loads(header) | {"moto": "0.0.1"}
        path.write_bytes(json.dumps(stamped).encode() + b"\n" + rest)


def _kept_files(data_dir: Path) -> dict[Path, bytes]:
    """What a stack keeps in its data directory: not the lock, nor spill/, where this process's moto (stopped
    stacks' keys live on in it) keeps big values as scratch copies that come and go with its keys."""
    return {
        p: p.read_bytes()
        for p in data_dir.rglob("*")
        if p.is_file() and p.name != "lock" and "spill" not in p.relative_to(data_dir).parts[:1]
    }


def test_repositories_survive_a_moto_upgrade_through_export_and_import(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old_dir, export_dir, new_dir = tmp_path / "old", tmp_path / "export", tmp_path / "new"
    with LocalStack(api_port=0, s3_port=0, credentials=KEYS, data_dir=old_dir) as stack:
        alice = _fill(stack)
        before = _state(stack)
    assert before["objects:main"]["data/big.bin"][1] == BIG and "-" in before["objects:main"]["data/big.bin"][0]

    assert cli.main(["local", "export", str(export_dir), "--data-dir", str(old_dir)]) == 0
    out = capsys.readouterr().out
    assert "Exported" in out and "objects" in out
    assert (export_dir / "EXPORT.json").stat().st_mode & 0o077 == 0
    assert (export_dir / "secrets.jsonl").stat().st_mode & 0o077 == 0
    # Nothing in the export is a pickle: every line of the tables is JSON.
    for table in (export_dir / "dynamodb").glob("*.jsonl"):
        for line in table.read_text().splitlines():
            json.loads(line)

    _stamp_another_moto(old_dir)
    files_before = _kept_files(old_dir)
    assert cli.main(["up", "--data-dir", str(old_dir), "--api-port", "0", "--s3-port", "0"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err  # one line, naming what to run
    assert "moto 0.0.1" in err and "lakelet local export" in err and "lakelet local import" in err
    # Refused, not started empty: the directory is as it was.
    assert _kept_files(old_dir) == files_before

    assert cli.main(["local", "import", str(export_dir), "--data-dir", str(new_dir)]) == 0
    imported = capsys.readouterr().out
    assert "Imported" in imported and "new S3 ETag" not in imported
    with LocalStack(api_port=0, s3_port=0, credentials=KEYS, data_dir=new_dir) as stack:
        assert _state(stack) == before
        # alice's secret was sealed again under the new stack's KMS key: her key pair still signs in.
        me = lakefs_sdk.AuthApi(_sdk(stack, alice)).get_current_user()
        assert me.user.id == "alice"
        # and the repository takes new work on its old history.
        repo = lakefs.Repository("upg", client=_client(stack))
        repo.branch("dev").commit(message="after the upgrade")
        assert [c.message for c in repo.ref("dev").log()][:2] == ["after the upgrade", "first data"]


def test_export_and_import_refuse_what_they_cannot_do_safely(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "notes.txt").write_text("mine")
    assert cli.main(["local", "export", str(tmp_path / "out"), "--data-dir", str(tmp_path / "nothing")]) == 1
    assert "holds no Lakelet data" in capsys.readouterr().err
    assert cli.main(["local", "import", str(tmp_path / "full"), "--data-dir", str(tmp_path / "new")]) == 1
    assert "not a finished Lakelet export" in capsys.readouterr().err
    (tmp_path / "export").mkdir()
    (tmp_path / "export" / "EXPORT.json").write_text(json.dumps({"kind": "lakelet-export", "format": 99}))
    assert cli.main(["local", "import", str(tmp_path / "export"), "--data-dir", str(tmp_path / "new")]) == 1
    assert "format 99" in capsys.readouterr().err
    (tmp_path / "export" / "EXPORT.json").write_text(json.dumps({"kind": "lakelet-export", "format": 1, "tables": []}))
    assert cli.main(["local", "import", str(tmp_path / "export"), "--data-dir", str(tmp_path / "full")]) == 1
    assert "not empty" in capsys.readouterr().err
    assert (tmp_path / "full" / "notes.txt").read_text() == "mine"
    assert not (tmp_path / "new").exists()


def _crafted_export(root: Path, lines: list[dict[str, Any]], buckets: list[str] | None) -> Path:
    export = root / "export"
    (export / "objects").mkdir(parents=True)
    (export / "objects" / "0").write_bytes(b"plain")
    manifest: dict[str, Any] = {"kind": "lakelet-export", "format": 1, "tables": []}
    if buckets is not None:
        manifest["buckets"] = buckets
    (export / "EXPORT.json").write_text(json.dumps(manifest))
    (export / "objects.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return export


def test_an_import_reads_only_the_files_of_its_export(tmp_path: Path) -> None:
    """A crafted objects.jsonl must not copy files from outside the export's objects/ into a bucket: no
    relative path out, no absolute path, no symbolic link, and no bucket the export's manifest does not list."""
    from lakelet.stack.export import Endpoint, ExportError
    from lakelet.stack.export_import import import_stack
    from lakelet.stack.local import LOCAL_BUCKET, LOCAL_TABLE_PREFIX

    victim = tmp_path / "victim-home" / ".aws" / "credentials"
    victim.parent.mkdir(parents=True)
    victim.write_bytes(b"[default]\naws_secret_access_key=stolen\n")
    size = len(victim.read_bytes())

    def line(file: str, bucket: str = LOCAL_BUCKET, key: str = "stolen") -> dict[str, Any]:
        return {"bucket": bucket, "key": key, "file": file, "size": size, "etag": '"x"', "metadata": {}}

    cases: list[tuple[str, list[dict[str, Any]], list[str] | None, str]] = [
        ("dotdot", [line("../../victim-home/.aws/credentials")], [LOCAL_BUCKET], "not a file of objects/"),
        ("absolute", [line(str(victim))], [LOCAL_BUCKET], "not a file of objects/"),
        ("symlink", [line("7")], [LOCAL_BUCKET], "cannot be read as a plain file"),
        ("bucket", [line("0", bucket="another-bucket") | {"size": 5}], [LOCAL_BUCKET], "not in the export's list"),
        ("bad list", [line("0") | {"size": 5}], ["../x"], "not S3 bucket names"),
        ("old export", [line("0", bucket="elsewhere") | {"size": 5}], None, "not in the export's list"),
    ]
    with LocalStack(api_port=0, s3_port=0, credentials=KEYS) as stack:
        keys = stack.aws_credentials
        endpoint = Endpoint(
            stack.moto_url, keys.access_key_id, keys.secret_access_key, stack.region, LOCAL_TABLE_PREFIX
        )
        s3 = endpoint.client("s3")
        for number, (_, lines, buckets, said) in enumerate(cases):
            export = _crafted_export(tmp_path / f"case{number}", lines, buckets)
            (export / "objects" / "7").symlink_to(victim)
            with pytest.raises(ExportError, match=said):
                import_stack(endpoint, export)
        # (moto's state is the process's: other tests' objects may be there, never this test's keys)
        listed = s3.list_objects_v2(Bucket=LOCAL_BUCKET, Prefix="stolen").get("Contents", [])
        assert listed == [], "a file outside the export was copied"
        assert not {"another-bucket", "elsewhere"} & {b["Name"] for b in s3.list_buckets()["Buckets"]}
        # The same export with a plain file of its own imports.
        export = _crafted_export(tmp_path / "good", [line("0", key="plain") | {"size": 5}], [LOCAL_BUCKET])
        import_stack(endpoint, export)
        assert s3.get_object(Bucket=LOCAL_BUCKET, Key="plain")["Body"].read() == b"plain"
