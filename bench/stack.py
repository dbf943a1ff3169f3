"""The figures of the performance table that need a running stack, measured on one embedded local stack.

Used by bench/run.py (``make bench``); each function returns plain numbers. The stack runs in this process
(moto, the API and the S3 gateway on loopback ports, as ``lakelet up`` runs them), so moto's requests can be
counted at its WSGI entry: every request moto serves is one AWS call (S3, DynamoDB, Step Functions) that the
deployed stack would make. Subprocesses (the CLI, ``aws s3 sync``, a fresh interpreter importing the app) reach
the same stack over its ports.
"""

from __future__ import annotations

import base64
import gc
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

PROJECT = Path(__file__).resolve().parent.parent
AWS = Path(sys.executable).parent / "aws"
REPOSITORY = "bench"


class MotoCounter:
    """WSGI middleware in front of moto that counts the requests it serves, by service."""

    def __init__(self, app: Callable[..., Any]) -> None:
        self.app = app
        self.lock = threading.Lock()
        self.calls: list[str] = []

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        target = environ.get("HTTP_X_AMZ_TARGET", "")
        service = target.split(".")[0].split("_")[0] if target else "S3"
        with self.lock:
            self.calls.append(f"{service} {environ.get('REQUEST_METHOD')} {target or environ.get('PATH_INFO', '')}")
        return self.app(environ, start_response)

    def page_read(self, table: str) -> None:
        """A staging page the stack read from moto's memory (lakelet/stack/moto_partitions.py): deployed, the same
        page is a Query, so it counts as one."""
        with self.lock:
            self.calls.append("DynamoDB POST DynamoDB_20120810.Query")

    @contextmanager
    def counting(self) -> Iterator[list[str]]:
        """The calls made inside the block (filled when it exits)."""
        seen: list[str] = []
        with self.lock:
            start = len(self.calls)
        yield seen
        time.sleep(0.05)  # a request moto is still answering counts for the block that caused it
        with self.lock:
            seen.extend(self.calls[start:])


@contextmanager
def running_stack(api_port: int, s3_port: int, moto_port: int) -> Iterator[tuple[Any, MotoCounter]]:
    import logging

    from lakelet.stack.local import LocalStack

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    with LocalStack(api_port=api_port, s3_port=s3_port, moto_port=moto_port) as stack:
        # The stack logs every request it serves at INFO; the figures are what this run prints.
        for name in ("lakelet", "werkzeug", ""):
            logging.getLogger(name).setLevel(logging.WARNING)
        assert stack._moto is not None and stack._moto._server is not None
        server = stack._moto._server  # werkzeug reads server.app for every request
        counter = MotoCounter(server.app)
        server.app = counter
        assert stack.partitions is not None
        stack.partitions.on_page = counter.page_read
        from chalicelib.wiring import get_services

        get_services().engine.repositories.create_repository(
            REPOSITORY, f"{stack.default_namespace_prefix}/{REPOSITORY}"
        )
        yield stack, counter


def lakefs_client(stack: Any) -> Any:
    from lakefs.client import Client

    return Client(
        host=stack.endpoint, username=stack.credentials.access_key_id, password=stack.credentials.secret_access_key
    )


# Each operation runs once to warm caches, then once counted: the counted run's index (its key's suffix).
MEASURED = 1


def aws_calls(stack: Any, counter: MotoCounter) -> dict[str, Any]:
    """AWS calls of one operation each through the official lakeFS client, after the same operation once (so
    caches that a warm Lambda keeps are warm)."""
    import lakefs

    repo = lakefs.Repository(REPOSITORY, client=lakefs_client(stack))
    main = repo.branch("main")
    for i in range(100):
        main.object(f"list/{i:03d}").upload(b"x", pre_sign=False)
    main.commit(message="seed")
    counts: dict[str, int] = {}
    seen: dict[str, list[str]] = {}

    def count(name: str, operation: Callable[[int], Any]) -> None:
        operation(0)
        with counter.counting() as calls:
            operation(MEASURED)
        counts[name] = len(calls)
        seen[name] = calls

    count("stat", lambda i: main.object(f"list/{i:03d}").stat())
    # Through the API (the client's default is the presigned path, counted on its own below).
    count("upload", lambda i: main.object(f"up/{i}").upload(b"data", pre_sign=False))
    count("list 100", lambda i: list(main.objects(prefix="list/", max_amount=100)))
    count("create branch", lambda i: repo.branch(f"b{i}").create(source_reference="main"))

    # The commit alone: its one change is staged before counting starts.
    main.object("c/warm").upload(b"c")
    main.commit(message="warm")
    main.object("c/measured").upload(b"c")
    with counter.counting() as calls:
        main.commit(message="one change")
    counts["commit of 1 change"] = len(calls)
    seen["commit of 1 change"] = calls
    count("presigned upload + link", lambda i: main.object(f"pre/{i}").upload(b"presigned", pre_sign=True))
    # The S3 gateway's PUT and GET, for the gateway row: each of its AWS calls is a request to moto, against the
    # one request of the same operation on moto directly.
    s3 = gateway_client(stack)
    count("gateway put", lambda i: s3.put_object(Bucket=REPOSITORY, Key=f"main/gw/{i}", Body=b"g"))
    count("gateway get", lambda i: s3.get_object(Bucket=REPOSITORY, Key=f"main/gw/{i}")["Body"].read())
    # The client's own PUT of the bytes to the presigned URL is no call of the server's (the figure leaves
    # it out too): it is the PUT of the key the link then HEADs as the copy's source.
    calls = seen["presigned upload + link"]
    uploads = {c.removeprefix("S3 HEAD ") for c in calls if c.startswith("S3 HEAD ")}
    server = [c for c in calls if not (c.startswith("S3 PUT ") and c.removeprefix("S3 PUT ") in uploads)]
    counts["presigned upload + link"] = len(server)
    seen["presigned upload + link"] = server
    # The keys the counted runs staged, by the operation's own key pattern.
    staged = {"upload": f"up/{MEASURED}", "presigned upload + link": f"pre/{MEASURED}", "gateway put": f"gw/{MEASURED}"}
    return {"counts": counts, "requests": seen, "sketch_writes": sketch_writes(staged)}


def sketch_writes(staged: dict[str, str]) -> dict[str, int]:
    """Per operation that stages a key (the key its counted run staged): 1 when that key is one of the one in
    SKETCH_ODDS also written to its shard's key sketch (one more PutItem), by a hash of the key, as
    tests/perf/test_aws_calls.py counts it. A goal of N calls for a write is N + this."""
    from chalicelib.graveler.writes import staging_shards

    return {name: int(staging_shards.sketch_rank(key) is not None) for name, key in staged.items()}


def gateway_client(stack: Any) -> Any:
    import boto3

    return boto3.client(
        "s3",
        endpoint_url=stack.s3_url,
        region_name=stack.region,
        aws_access_key_id=stack.credentials.access_key_id,
        aws_secret_access_key=stack.credentials.secret_access_key,
    )


def seed(stack: Any, objects: int) -> None:
    """``objects`` committed objects on main, linked straight through the engine (uploading them would time
    the gateway, not the listing)."""
    from chalicelib.graveler.records import Entry
    from chalicelib.wiring import get_services

    engine = get_services().engine
    namespace = f"{stack.default_namespace_prefix}/{REPOSITORY}"
    for i in range(objects):
        engine.objects.link_object(
            REPOSITORY,
            "main",
            f"listing/part-{i:08d}.parquet",
            Entry(f"{namespace}/data/seed/{i:08d}", 100, f"{i:032x}", 1_700_000_000),
        )
    engine.commits.commit(REPOSITORY, "main", "bench", "listing seed")


def app_listing(stack: Any, objects: int, rounds: int = 25) -> dict[str, Any]:
    """Every seeded object 1,000 a page, through the app in process and through ``engine.objects.list_objects``.

    The app's side is what its Lambda does for a page: Chalice's handler called with API Gateway's event for
    ``objects/ls`` (routing, middleware, authentication, authorization, the view, ObjectStats, orjson and the
    base64 body), timed from the event to the response dict. Building the event (API Gateway's work), decoding
    the base64 body and parsing the JSON (the client's work) happen outside the timed part, and every page's
    answer is checked against the engine's. The same pages also go through ``chalice.test.Client`` with the
    client's parse, reported apart (``ratio_through_client``) for comparison with earlier figures.

    The ratio is of CPU time: the process's, which includes moto's threads answering either side's AWS calls.
    Wall time on a shared machine measures its load as much as the code (the same pages swung 0.67-1.28 in one
    hour); it is reported too (``ratio_wall``). Pages are interleaved one by one, the order of the sides swapped
    every round, and each side's time is the sum over pages of that page's median over ``rounds``.

    Full collections are counted (with their wall time) during the app's calls. moto's tables, filled by the
    seed, live in this process and not in a Lambda's: they are frozen out of the collector's sight after the
    seed, before any listing, so a full collection walks what the app's listing keeps and allocates, as it
    would in a Lambda container after wiring's own freezes. They stay frozen for the stack's later rows, whose
    two sides share this process alike."""
    import orjson
    from chalice.local import LambdaContext, LambdaEventConverter, RouteMatcher
    from chalice.test import Client

    from chalicelib.wiring import get_services
    from lakelet.stack.app_environment import load_app

    seed(stack, objects)
    gc.collect()
    gc.freeze()
    engine = get_services().engine
    app = load_app()
    token = base64.b64encode(f"{stack.credentials.access_key_id}:{stack.credentials.secret_access_key}".encode())
    headers = {"Authorization": f"Basic {token.decode()}"}
    # API Gateway's side: the event of a request, as chalice.test.Client makes it.
    events = LambdaEventConverter(RouteMatcher(list(app.routes)), app.api.binary_types)

    def path(after: str) -> str:
        return f"/api/v1/repositories/{REPOSITORY}/refs/main/objects/ls?prefix=listing/&amount=1000&after={after}"

    def engine_page(after: str) -> tuple[int, bool, str]:
        page = engine.objects.list_objects(REPOSITORY, "main", prefix="listing/", after=after, amount=1000)
        return len(page.results), page.has_more, page.next_offset

    def parsed(body: dict[str, Any]) -> tuple[int, bool, str]:
        return len(body["results"]), body["pagination"]["has_more"], body["pagination"]["next_offset"]

    pauses: list[float] = []
    starts: dict[int, float] = {}

    def watch(phase: str, info: dict[str, int]) -> None:
        if info["generation"] == 2:
            if phase == "start":
                starts[2] = time.perf_counter()
            else:
                pauses.append(time.perf_counter() - starts.pop(2, time.perf_counter()))

    def timed(what: Callable[[], Any]) -> tuple[tuple[float, float], Any]:
        cpu, wall = time.process_time(), time.perf_counter()
        result = what()
        return (time.process_time() - cpu, time.perf_counter() - wall), result

    with Client(app) as client:
        # The offsets of the pages, from a first pass through the engine (which also warms the range cache).
        offsets, after, count = [], "", 0
        while True:
            offsets.append(after)
            results, more, after = engine_page(after)
            count += results
            if not more:
                break
        assert count == objects, (count, objects)
        expected = {offset: engine_page(offset) for offset in offsets}

        def through_handler(after: str) -> tuple[float, float]:
            event = events.create_lambda_event("GET", path(after), headers, b"")
            context = LambdaContext("api_handler", 1024)
            gc.callbacks.append(watch)
            try:
                took, response = timed(lambda: app(event, context))
            finally:
                gc.callbacks.remove(watch)
            assert response["statusCode"] == 200, str(response["body"])[:300]
            body = base64.b64decode(response["body"]) if response.get("isBase64Encoded") else response["body"]
            assert parsed(orjson.loads(body)) == expected[after]
            return took

        def through_client(after: str) -> tuple[float, float]:
            took, body = timed(lambda: orjson.loads(client.http.get(path(after), headers=headers).body))
            assert parsed(body) == expected[after], str(body)[:300]
            return took

        def through_engine(after: str) -> tuple[float, float]:
            took, page = timed(lambda: engine_page(after))
            assert page == expected[after]
            return took

        sides = {"engine": through_engine, "app": through_handler, "client": through_client}
        for offset in offsets:  # warm: the first requests load what the app keeps (service models, policies)
            through_handler(offset)
            through_client(offset)
        times: dict[str, dict[str, list[tuple[float, float]]]] = {side: {o: [] for o in offsets} for side in sides}
        pauses.clear()
        for round_ in range(rounds):
            order = list(sides) if round_ % 2 == 0 else list(reversed(sides))
            for offset in offsets:
                for side in order:
                    times[side][offset].append(sides[side](offset))

    def total(side: str, clock: int) -> float:
        return sum(statistics.median(t[clock] for t in times[side][o]) for o in offsets)

    cpu = {side: total(side, 0) for side in sides}
    wall = {side: total(side, 1) for side in sides}
    return {
        "objects": objects,
        "pages": len(offsets),
        "rounds": rounds,
        "app_cpu_seconds": cpu["app"],
        "client_cpu_seconds": cpu["client"],
        "list_objects_cpu_seconds": cpu["engine"],
        "ratio": cpu["engine"] / cpu["app"],
        "ratio_through_client": cpu["engine"] / cpu["client"],
        "app_seconds": wall["app"],
        "list_objects_seconds": wall["engine"],
        "ratio_wall": wall["engine"] / wall["app"],
        "full_collections": len(pauses),
        "max_pause_ms": max(pauses, default=0.0) * 1000,
    }


def _timed(what: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    result = what()
    return time.perf_counter() - started, result


def cli_env(stack: Any, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LAKELET_", "LAKECTL_", "AWS_"))}
    return env | {
        "HOME": str(home),
        "PYTHONPATH": str(PROJECT),
        "LAKECTL_SERVER_ENDPOINT_URL": stack.endpoint,
        "LAKECTL_CREDENTIALS_ACCESS_KEY_ID": stack.credentials.access_key_id,
        "LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY": stack.credentials.secret_access_key,
        "AWS_ACCESS_KEY_ID": stack.credentials.access_key_id,
        "AWS_SECRET_ACCESS_KEY": stack.credentials.secret_access_key,
        "AWS_DEFAULT_REGION": stack.region,
        "AWS_CONFIG_FILE": "/dev/null",
        "AWS_SHARED_CREDENTIALS_FILE": "/dev/null",
    }


def run_timed(args: list[str], env: dict[str, str], cwd: Path = PROJECT) -> float:
    started = time.perf_counter()
    done = subprocess.run(args, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args[:5])} failed: {done.stderr.decode()[-2000:]}")
    return elapsed


def _run_cpu(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one run of ``args`` to its end."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = run_timed(args, env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def cli_start(stack: Any, repeats: int) -> dict[str, float]:
    """Median wall and CPU times of a bare interpreter, ``lakelet --help`` and ``lakelet repo list``, in fresh
    processes, run one after the other ``repeats`` times.

    The CLI runs with its byte-code compiled, as pip leaves an installed package: the environment's
    PYTHONDONTWRITEBYTECODE is dropped and the byte-code goes to a directory of this run's (PYTHONPYCACHEPREFIX),
    written by a first, untimed run of each command. Without it every run compiled the ``lakelet`` package
    again (some 30 ms of CPU, a fifth of ``repo list``), which no installed CLI does.
    ``help`` is the screen as a user sees it from the second time on (printed from lakelet/help_cache.py);
    ``help_first`` is the one run that renders it with typer and records it, in a fresh cache.
    """
    with tempfile.TemporaryDirectory(prefix="lakelet-bench-") as home:
        env = cli_env(stack, Path(home))
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(Path(home) / "pycache")
        lakelet = [sys.executable, "-m", "lakelet"]
        commands = {
            "bare": [sys.executable, "-c", "pass"],
            "help": [*lakelet, "--help"],
            "repo_list": [*lakelet, "repo", "list"],
        }
        # Compiles every module the runs below import, the whole command tree's included; its screen is
        # recorded in a cache of its own, so that help_first still renders.
        run_timed(commands["help"], env | {"XDG_CACHE_HOME": str(Path(home) / "warm-up")})
        run_timed(commands["repo_list"], env)
        help_first = run_timed(commands["help"], env)
        runs: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        for _ in range(repeats):  # interleaved, so that a burst of load falls on every figure alike
            for name, args in commands.items():
                runs[name].append(_run_cpu(args, env))
        figures = {"help_first": help_first, "runs": float(repeats)}
        for name, timed in runs.items():
            figures[name] = statistics.median(wall for wall, _ in timed)
            figures[f"{name}_cpu"] = statistics.median(cpu for _, cpu in timed)
        return figures


def import_app(repeats: int) -> dict[str, float]:
    """CPU and wall seconds of ``import app`` in a fresh interpreter, from the source tree (median)."""
    code = (
        "import time; c = time.process_time(); w = time.perf_counter(); import app; "
        "print(time.process_time() - c, time.perf_counter() - w)"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("LAKELET_")} | {"PYTHONPATH": str(PROJECT)}
    cpu, wall = [], []
    for _ in range(repeats):
        out = subprocess.run([sys.executable, "-c", code], env=env, cwd=PROJECT, capture_output=True, check=True)
        c, w = out.stdout.split()[-2:]
        cpu.append(float(c))
        wall.append(float(w))
    return {"cpu": statistics.median(cpu), "wall": statistics.median(wall)}


def transfer(stack: Any, files: int, size: int) -> dict[str, float] | None:
    """``lakelet fs upload -r`` / ``download -r`` against ``aws s3 sync`` through the S3 gateway, same files.
    None when the AWS CLI is not installed."""
    if not AWS.exists():
        return None
    work = Path(tempfile.mkdtemp(prefix="lakelet-bench-cli-"))
    try:
        env = cli_env(stack, work)
        source = work / "src"
        for i in range(files):
            path = source / f"d{i % 10}" / f"f{i:05d}.bin"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(os.urandom(size))
        lakelet = [sys.executable, "-m", "lakelet"]
        aws = [str(AWS), "s3", "sync", "--only-show-errors", "--endpoint-url", stack.s3_url]
        up_cli = run_timed(
            [*lakelet, "fs", "upload", "-r", "--source", str(source), f"lakefs://{REPOSITORY}/main/cli/"], env
        )
        up_aws = run_timed([*aws, str(source), f"s3://{REPOSITORY}/main/aws/"], env)
        down_cli = run_timed(
            [*lakelet, "fs", "download", "-r", f"lakefs://{REPOSITORY}/main/cli/", str(work / "cli-back")], env
        )
        down_aws = run_timed([*aws, f"s3://{REPOSITORY}/main/aws/", str(work / "aws-back")], env)
        for back in ("cli-back", "aws-back"):
            assert sum(1 for p in (work / back).rglob("*") if p.is_file()) == files, f"{back} is incomplete"
        return {
            "files": files,
            "size": size,
            "upload_cli": up_cli,
            "upload_aws": up_aws,
            "download_cli": down_cli,
            "download_aws": down_aws,
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)


def gateway(stack: Any, count: int, size: int) -> dict[str, float]:
    """Small PUTs and GETs through the S3 gateway and on moto directly, interleaved (bench/s3_gateway.py)."""
    sys.path.insert(0, str(Path(__file__).parent))
    import s3_gateway

    return s3_gateway.measure_on(stack, count, size)
