"""The largest object each S3 client family writes and reads through the S3 gateway as deployed: run against
``lakelet up --aws-limits`` (the deployed Lambda's 6 MB payload, the gateway's 4 MiB reads), each client with its
defaults and with the settings docs/s3-gateway.md gives, at sizes around the limits. Prints one line per probe and
the table of docs/s3-gateway.md ("Limits per client").

    python -m bench.gateway_limits            # starts its own stack (tests/e2e's launcher)
    python -m bench.gateway_limits s3a        # S3A in Spark (the jars of tests/spark)
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

MiB = 1024 * 1024
SIZES = [4 * MiB, 4_500_000, 5 * MiB, 6 * MiB, 16 * MiB, 64 * MiB]


class Target:
    def __init__(self, gateway: str, key: str, secret: str, repo: str) -> None:
        self.gateway, self.key, self.secret, self.repo = gateway, key, secret, repo

    def boto3(self) -> Any:
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.gateway,
            aws_access_key_id=self.key,
            aws_secret_access_key=self.secret,
            region_name="us-east-1",
        )

    def put_in_parts(self, key: str, data: bytes) -> None:
        s3 = self.boto3()
        upload = s3.create_multipart_upload(Bucket=self.repo, Key=key)["UploadId"]
        parts = [
            {
                "PartNumber": n,
                "ETag": s3.upload_part(
                    Bucket=self.repo, Key=key, PartNumber=n, UploadId=upload, Body=data[i : i + 4 * MiB]
                )["ETag"],
            }
            for n, i in enumerate(range(0, len(data), 4 * MiB), start=1)
        ]
        s3.complete_multipart_upload(Bucket=self.repo, Key=key, UploadId=upload, MultipartUpload={"Parts": parts})

    def aws_cli(self, args: list[str], config: str = "") -> None:
        with tempfile.NamedTemporaryFile("w", suffix=".cfg") as cfg:
            cfg.write("[default]\nregion = us-east-1\n" + config)
            cfg.flush()
            env = {
                **os.environ,
                "AWS_ACCESS_KEY_ID": self.key,
                "AWS_SECRET_ACCESS_KEY": self.secret,
                "AWS_CONFIG_FILE": cfg.name,
                "AWS_SHARED_CREDENTIALS_FILE": "/dev/null",
            }
            aws = str(Path(sys.executable).with_name("aws"))
            subprocess.run(
                [aws, "--endpoint-url", self.gateway, "s3", *args],
                env=env,
                check=True,
                capture_output=True,
                timeout=600,
            )

    def pyarrow_fs(self) -> Any:
        from pyarrow import fs

        host = self.gateway.split("://", 1)[1]
        return fs.S3FileSystem(
            access_key=self.key, secret_key=self.secret, endpoint_override=host, scheme="http", region="us-east-1"
        )

    def duckdb(self) -> Any:
        import duckdb

        from tests.spark import duckdb_support

        con = duckdb_support.connect()
        host = self.gateway.split("://", 1)[1]
        con.execute(
            f"CREATE SECRET s (TYPE s3, KEY_ID '{self.key}', SECRET '{self.secret}', REGION 'us-east-1', "
            f"ENDPOINT '{host}', URL_STYLE 'path', USE_SSL false)"
        )
        del duckdb
        return con

    def polars_options(self) -> dict[str, str]:
        return {
            "aws_access_key_id": self.key,
            "aws_secret_access_key": self.secret,
            "aws_region": "us-east-1",
            "aws_endpoint_url": self.gateway,
            "aws_allow_http": "true",
            "aws_virtual_hosted_style_request": "false",
        }


def csv_bytes(size: int) -> bytes:
    line = os.urandom(32).hex() + "\n"  # 65 bytes
    rows = max(1, size // len(line))
    return ("v\n" + "".join(os.urandom(32).hex() + "\n" for _ in range(rows))).encode()


def parquet_bytes(size: int) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = max(1, size // 1024)
    table = pa.table({"b": pa.array([os.urandom(1024) for _ in range(rows)], pa.binary())})
    out = io.BytesIO()
    pq.write_table(table, out, compression="none", row_group_size=rows)
    return out.getvalue()


def probes(t: Target, tmp: Path) -> dict[str, Callable[[int], None]]:
    import boto3.s3.transfer as transfer

    small = transfer.TransferConfig(multipart_threshold=4 * MiB, multipart_chunksize=4 * MiB)
    r = t.repo

    def key(size: int, kind: str) -> str:
        return f"main/limits/{kind}-{size}-{uuid.uuid4().hex[:6]}"

    def staged(size: int, data: bytes | None = None) -> str:
        k = key(size, "src")
        t.put_in_parts(k, data if data is not None else os.urandom(size))
        return k

    def local_file(size: int) -> Path:
        path = tmp / f"f-{size}"
        if not path.exists():
            path.write_bytes(os.urandom(size))
        return path

    def polars_csv_write(size: int) -> None:
        import polars as pl

        pl.read_csv(io.BytesIO(csv_bytes(size))).write_csv(
            f"s3://{r}/{key(size, 'pl')}.csv", storage_options=t.polars_options()
        )

    def duck_write(size: int) -> None:
        rows = size // 33
        t.duckdb().execute(
            f"COPY (SELECT md5(random()::VARCHAR) AS v FROM range({rows})) TO 's3://{r}/{key(size, 'dk')}.csv'"
        )

    return {
        "write aws-cli default (aws s3 cp)": lambda n: t.aws_cli(
            ["cp", str(local_file(n)), f"s3://{r}/{key(n, 'cli')}"]
        ),
        "write aws-cli multipart_chunksize=4MB": lambda n: t.aws_cli(
            ["cp", str(local_file(n)), f"s3://{r}/{key(n, 'cli')}"],
            "s3 =\n  multipart_threshold = 4MB\n  multipart_chunksize = 4MB\n",
        ),
        "write boto3 upload_file default": lambda n: t.boto3().upload_file(str(local_file(n)), r, key(n, "b3")),
        "write boto3 upload_file 4 MiB chunks": lambda n: t.boto3().upload_file(
            str(local_file(n)), r, key(n, "b3"), Config=small
        ),
        "write boto3 multipart, 4 MiB parts by hand": lambda n: t.put_in_parts(key(n, "b3"), os.urandom(n)),
        "write pyarrow S3FileSystem": lambda n: _pyarrow_write(t, f"{r}/{key(n, 'pa')}", os.urandom(n)),
        "write duckdb COPY TO (csv)": duck_write,
        "write polars write_csv": polars_csv_write,
        "read aws-cli default (aws s3 cp)": lambda n: t.aws_cli(["cp", f"s3://{r}/{staged(n)}", str(tmp / "out")]),
        "read aws-cli multipart_chunksize=4MB": lambda n: t.aws_cli(
            ["cp", f"s3://{r}/{staged(n)}", str(tmp / "out")],
            "s3 =\n  multipart_threshold = 4MB\n  multipart_chunksize = 4MB\n",
        ),
        "read boto3 get_object": lambda n: t.boto3().get_object(Bucket=r, Key=staged(n))["Body"].read(),
        "read boto3 download_file default": lambda n: t.boto3().download_file(r, staged(n), str(tmp / "out")),
        "read boto3 download_file 4 MiB chunks": lambda n: t.boto3().download_file(
            r, staged(n), str(tmp / "out"), Config=small
        ),
        "read pyarrow open_input_file().read()": lambda n: t.pyarrow_fs().open_input_file(f"{r}/{staged(n)}").read(),
        "read pyarrow open_input_stream(4 MiB buffer)": lambda n: _pyarrow_stream(t, f"{r}/{staged(n)}"),
        "read pyarrow parquet (one column chunk)": lambda n: _pyarrow_parquet(t, f"{r}/{staged(n, parquet_bytes(n))}"),
        "read duckdb read_csv": lambda n: (
            t.duckdb().execute(f"SELECT count(*) FROM read_csv('s3://{r}/{staged(n, csv_bytes(n))}')").fetchall()
        ),
        "read duckdb read_parquet (one column chunk)": lambda n: (
            t.duckdb()
            .execute(f"SELECT count(*) FROM read_parquet('s3://{r}/{staged(n, parquet_bytes(n))}')")
            .fetchall()
        ),
        "read polars read_csv": lambda n: _polars_read(t, f"s3://{r}/{staged(n, csv_bytes(n))}", "csv"),
        "read polars scan_parquet (one column chunk)": lambda n: _polars_read(
            t, f"s3://{r}/{staged(n, parquet_bytes(n))}", "parquet"
        ),
    }


def s3a_probes(t: Target) -> dict[str, Callable[[int], None]]:
    """S3A (hadoop-aws 3.3.4 in Spark, the jars of tests/spark) through the gateway, by Hadoop's FileSystem API."""
    from tests.spark.support import s3a_settings, start_spark

    spark = start_spark(s3a_settings(t.gateway, t.key, t.secret))
    jvm, conf = spark._jvm, spark._jsc.hadoopConfiguration()

    def filesystem(**settings: str) -> Any:
        copy = jvm.org.apache.hadoop.conf.Configuration(conf)
        for name, value in settings.items():
            copy.set(name, value)
        return jvm.org.apache.hadoop.fs.FileSystem.newInstance(jvm.java.net.URI(f"s3a://{t.repo}/"), copy)

    def path(size: int, kind: str) -> Any:
        return jvm.org.apache.hadoop.fs.Path(f"s3a://{t.repo}/main/limits/{kind}-{size}-{uuid.uuid4().hex[:6]}")

    def write(size: int) -> None:
        out = filesystem().create(path(size, "s3a"), True)
        out.write(bytearray(os.urandom(size)))
        out.close()

    def read(size: int, **settings: str) -> None:
        key = f"main/limits/s3a-src-{size}-{uuid.uuid4().hex[:6]}"
        t.put_in_parts(key, os.urandom(size))
        stream = filesystem(**settings).open(jvm.org.apache.hadoop.fs.Path(f"s3a://{t.repo}/{key}"))
        data = jvm.org.apache.commons.io.IOUtils.toByteArray(stream)
        stream.close()
        assert len(data) == size

    return {
        "write s3a (fs.s3a.multipart.size 5M, its least)": write,
        "read s3a default (sequential)": read,
        "read s3a fadvise=random, readahead.range=4M": lambda n: read(
            n, **{"fs.s3a.experimental.input.fadvise": "random", "fs.s3a.readahead.range": "4M"}
        ),
    }


def _pyarrow_write(t: Target, path: str, data: bytes) -> None:
    with t.pyarrow_fs().open_output_stream(path) as out:
        out.write(data)


def _pyarrow_stream(t: Target, path: str) -> None:
    with t.pyarrow_fs().open_input_stream(path, buffer_size=4 * MiB) as stream:
        while stream.read(4 * MiB):
            pass


def _pyarrow_parquet(t: Target, path: str) -> None:
    import pyarrow.parquet as pq

    pq.read_table(path, filesystem=t.pyarrow_fs())


def _polars_read(t: Target, url: str, kind: str) -> None:
    import polars as pl

    if kind == "csv":
        pl.read_csv(url, storage_options=t.polars_options())
    else:
        pl.scan_parquet(url, storage_options=t.polars_options()).collect()


def main() -> None:
    import lakefs
    from lakefs.client import Client

    from tests.e2e.conftest import launch_local
    from tests.e2e.s3support import s3_endpoint

    with tempfile.TemporaryDirectory() as scratch:
        tmp = Path(scratch)
        local = launch_local(tmp / "stack")
        try:
            client = Client(host=local.endpoint, username=local.access_key_id, password=local.secret_access_key)
            prefix = client.storage_config.default_namespace_prefix
            repo = lakefs.Repository("limits", client=client).create(storage_namespace=f"{prefix}/limits")
            target = Target(s3_endpoint(local), local.access_key_id, local.secret_access_key, repo.id)
            wanted = sys.argv[1:]
            chosen = probes(target, tmp)
            if "s3a" in wanted:
                chosen = s3a_probes(target)
            for name, probe in chosen.items():
                if wanted and not any(w in name for w in wanted):
                    continue
                largest = "none"
                for size in SIZES:
                    try:
                        probe(size)
                    except Exception as e:  # noqa: BLE001 -- a refusal is the measurement
                        print(f"{name:48} {size:>10} FAIL {type(e).__name__}: {str(e)[:120]!r}", flush=True)
                        break
                    largest = f"{size}"
                    print(f"{name:48} {size:>10} ok", flush=True)
                print(f"== {name}: largest ok {largest}", flush=True)
        finally:
            local.stop()


if __name__ == "__main__":
    main()
