"""The embedded local stack: a moto server standing in for AWS, and the Chalice app served next to it.

``LocalStack`` does, in order: start moto's ThreadedMotoServer on loopback, behind a guard that takes only
requests signed with the stack's key pair and CORS from the stack's UI only (lakelet/stack/moto_guard.py); point
chalicelib's settings at it through the environment (before the app or its services are built, since they read
the environment once); create the bucket and the DynamoDB tables; create the admin credentials; serve ``app.py``
with the de-chunking dev server; check that ``/api/v1/healthcheck`` answers; and serve the S3 gateway over the
same services (lakelet/stack/s3server.py); with ``sample_data``, create the ``quickstart`` repository
(lakelet/stack/samples.py); and, with a ``data_dir``, write the state file through which the CLI and ``lakelet gc
run`` find the stack (lakelet/stack/statefile.py; removed again on stop). While it runs, moto's DynamoDB queries
read only the queried partition (lakelet/stack/moto_speedups.py), so their cost does not grow with the table.
``stop`` undoes all of it, including the environment, so tests can start a stack in-process. ``lakelet up``
(see cli.py) is a thin shell around it.

With a ``data_dir``, moto's state is recovered from that directory before moto serves, every change is journaled
there while it runs, and a snapshot is written on stop (lakelet/persistence/); provisioning then finds what an
earlier run created and leaves it as it is. Without one (``--ephemeral``), everything lives in memory.
"""

from __future__ import annotations

import importlib
import json
import os
import socket
import sys
import time
import urllib.error
import urllib.request
from collections.abc import MutableMapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from chalice.app import Chalice
from chalice.config import Config
from moto.server import ThreadedMotoServer

from lakelet.defaults import (  # noqa: F401 - also importable from here, as before
    DEFAULT_ACCESS_KEY_ID,
    DEFAULT_API_PORT,
    DEFAULT_S3_PORT,
    DEFAULT_SECRET_ACCESS_KEY,
    LOCAL_HOST,
    LOCAL_IMPORT_BUCKET,
    LOCAL_REGION,
)
from lakelet.persistence import Persistence, refusals
from lakelet.persistence.middleware import WrappedMotoServer, WsgiApp
from lakelet.stack import stack_keys
from lakelet.stack.devserver import ApiServer
from lakelet.stack.moto_guard import MotoGuard, ui_origins
from lakelet.stack.s3server import S3Server
from lakelet.stack.schedules import Schedule, drop_retired_schedule
from lakelet.stack.stack_keys import StackKeys

LOCAL_BUCKET = "lakelet-local"
LOCAL_TABLE_PREFIX = "lakelet-local-"
API_BASE_PATH = "/api/v1"
_PROJECT_DIR = Path(__file__).resolve().parents[2]


@dataclass(frozen=True, slots=True)
class Credentials:
    """The admin key pair of the local stack (HTTP Basic username and password for the lakeFS API)."""

    access_key_id: str
    secret_access_key: str


def local_environment(
    moto_url: str,
    bucket: str,
    table_prefix: str,
    region: str,
    *,
    metrics: bool = False,
    keys: Credentials | None = None,
) -> dict[str, str]:
    """The variables chalicelib.settings reads, pointing every AWS call at the moto server.

    The AWS key pair is the stack's own (``keys``: LocalStack passes the pair it generated,
    lakelet/stack/stack_keys.py, never the admin's lakeFS key): moto's port takes requests signed with it only
    (lakelet/stack/moto_guard.py), and a developer's real AWS credentials never reach a local call.
    """
    from chalicelib.settings import ENV_WEBHOOK_DESTINATIONS, LOCAL_WEBHOOK_DESTINATIONS

    keys = keys if keys is not None else Credentials(DEFAULT_ACCESS_KEY_ID, DEFAULT_SECRET_ACCESS_KEY)
    environment = {
        "LAKELET_AWS_ENDPOINT_URL": moto_url,
        "LAKELET_BUCKET": bucket,
        "LAKELET_TABLE_PREFIX": table_prefix,
        "AWS_REGION": region,
        "AWS_DEFAULT_REGION": region,
        "AWS_ACCESS_KEY_ID": keys.access_key_id,
        "AWS_SECRET_ACCESS_KEY": keys.secret_access_key,
        # Hooks are tried against servers on the developer's machine: loopback is a webhook destination here
        # (a deployment allows public addresses only unless it lists more; docs/hooks.md).
        ENV_WEBHOOK_DESTINATIONS: ",".join(LOCAL_WEBHOOK_DESTINATIONS),
    }
    # Imports may read the stack's own import source bucket, besides whatever the environment allows.
    allowed = os.environ.get("LAKELET_IMPORT_ALLOWED_LOCATIONS", "").strip().strip(",")
    local_source = f"s3://{LOCAL_IMPORT_BUCKET}/"
    if local_source not in allowed.split(","):
        allowed = f"{allowed},{local_source}" if allowed else local_source
    environment["LAKELET_IMPORT_ALLOWED_LOCATIONS"] = allowed
    # The app's EMF line per request (several KB) is for CloudWatch; in a terminal it would bury the request log,
    # so it is printed only when asked for (lakelet up --verbose).
    environment["POWERTOOLS_METRICS_DISABLED"] = "false" if metrics else "true"
    return environment


def _apply_environ(environ: MutableMapping[str, str], values: dict[str, str]) -> dict[str, str | None]:
    """Sets ``values`` in ``environ`` and returns what to give :func:`_restore_environ` to undo it."""
    saved = {name: environ.get(name) for name in values}
    # A session token or profile left over from real AWS work must not ride along with the stack's keys.
    for name in ("AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN", "AWS_PROFILE"):
        saved.setdefault(name, environ.get(name))
        environ.pop(name, None)
    environ.update(values)
    _forget_default_session()
    return saved


def _forget_default_session() -> None:
    # boto3's default session keeps the credentials it first resolved: clients built after the environment
    # changed would still sign with the old keys, which the stack's moto refuses (lakelet/stack/moto_guard.py).
    import boto3

    boto3.DEFAULT_SESSION = None


def _restore_environ(environ: MutableMapping[str, str], saved: dict[str, str | None]) -> None:
    for name, value in saved.items():
        if value is None:
            environ.pop(name, None)
        else:
            environ[name] = value


def _chalice_config(project_dir: Path) -> Config:
    """The dev stage of .chalice/config.json (timeout, memory), so local runs under the deployed limits."""
    config_file = project_dir / ".chalice" / "config.json"
    from_disk: dict[str, Any] = json.loads(config_file.read_text()) if config_file.is_file() else {}
    return Config(chalice_stage="dev", config_from_disk=from_disk)


def load_app(project_dir: Path = _PROJECT_DIR) -> Chalice:
    """Import ``app.py`` of the Lakelet checkout (it is not an installed module) and return its Chalice app."""
    root = str(project_dir)
    if root not in sys.path:
        sys.path.insert(0, root)
    module = importlib.import_module("app")
    app = getattr(module, "app", None)
    if not isinstance(app, Chalice):
        raise RuntimeError(f"{project_dir / 'app.py'} defines no Chalice app named 'app'")
    return app


class LocalStack:
    """moto plus the Lakelet API on loopback. Use as a context manager, or call :meth:`start` and :meth:`stop`.

    Ports of 0 pick free ones; read :attr:`api_port`, :attr:`api_url`, :attr:`s3_url` and :attr:`moto_url` after
    starting. The S3 gateway takes any free port unless ``s3_port`` names one (the CLI passes 8001).
    The stack changes ``os.environ`` (or the mapping given) while it runs and restores it on stop.
    Only one stack should run per process: the app and its services are process-wide.
    """

    def __init__(
        self,
        api_port: int = DEFAULT_API_PORT,
        moto_port: int = 0,
        credentials: Credentials = Credentials(DEFAULT_ACCESS_KEY_ID, DEFAULT_SECRET_ACCESS_KEY),
        *,
        host: str = LOCAL_HOST,
        region: str = LOCAL_REGION,
        bucket: str = LOCAL_BUCKET,
        table_prefix: str = LOCAL_TABLE_PREFIX,
        project_dir: Path = _PROJECT_DIR,
        environ: MutableMapping[str, str] | None = None,
        s3_port: int = 0,
        data_dir: Path | None = None,
        sample_data: bool = False,
        verbose: bool = False,
        accept_journal_loss: bool = False,
    ) -> None:
        self.credentials = credentials
        # None keeps everything in memory (ephemeral); a directory keeps the state across restarts.
        self.data_dir = data_dir
        # Start even when a journal of the data directory is damaged, setting its files aside (store.py).
        self.accept_journal_loss = accept_journal_loss
        self.persistence: Persistence | None = None
        self.host = host
        self.region = region
        self.bucket = bucket
        self.table_prefix = table_prefix
        self._requested_api_port = api_port
        self._requested_moto_port = moto_port
        self._project_dir = project_dir
        self._environ: MutableMapping[str, str] = os.environ if environ is None else environ
        self._moto: ThreadedMotoServer | None = None
        self._moto_url: str | None = None
        self._api: ApiServer | None = None
        self._requested_s3_port = s3_port
        self._s3: S3Server | None = None
        self._drops: Schedule | None = None
        self._saved_environ: dict[str, str | None] | None = None
        self._installed_speedups = False
        self._guard: MotoGuard | None = None
        self._sample_data = sample_data
        self._verbose = verbose
        self._wrote_state = False
        self._keys: StackKeys | None = None
        #: A line for the user about the admin key (created again, or deleted and not re-created), else None.
        self.admin_notice: str | None = None
        #: The sample repository created or found at start (``--sample-data``), else None.
        self.sample_repository: str | None = None

    # -- what to connect to -------------------------------------------------------------------------------

    @property
    def moto_url(self) -> str:
        if self._moto_url is None:
            raise RuntimeError("LocalStack not started")
        return self._moto_url

    @property
    def aws_credentials(self) -> Credentials:
        """The key pair the stack's AWS stand-in takes (lakelet/stack/stack_keys.py), not the admin's."""
        if self._keys is None:
            raise RuntimeError("LocalStack not started")
        return Credentials(self._keys.aws_access_key_id, self._keys.aws_secret_access_key)

    @property
    def api_port(self) -> int:
        if self._api is None:
            raise RuntimeError("LocalStack not started")
        return self._api.port

    @property
    def endpoint(self) -> str:
        """The server root, e.g. ``http://127.0.0.1:8000``: what lakectl and ``lakefs.Client(host=...)`` take."""
        return f"http://{self.host}:{self.api_port}"

    @property
    def api_url(self) -> str:
        """The lakeFS API base, e.g. ``http://127.0.0.1:8000/api/v1``."""
        return self.endpoint + API_BASE_PATH

    @property
    def s3_url(self) -> str:
        """The S3 gateway's endpoint, e.g. ``http://127.0.0.1:8001``: what S3 clients take as endpoint URL."""
        if self._s3 is None:
            raise RuntimeError("LocalStack not started")
        return self._s3.url

    @property
    def default_namespace_prefix(self) -> str:
        """Where repositories go by default, as GET /config reports it: ``s3://<bucket>`` on the moto server
        (without a trailing ``/``, as lakeFS: a repository's namespace is ``f"{prefix}/{name}"``)."""
        return f"s3://{self.bucket}"

    # -- lifecycle ----------------------------------------------------------------------------------------

    def start(self) -> LocalStack:
        """Bring the stack up; on any failure, tear down what was started and re-raise."""
        if self._moto is not None:
            raise RuntimeError("LocalStack already started")
        try:
            self._check_ports_free()
            from lakelet.stack import moto_memory

            # Before the data directory's snapshot is loaded, so that the keys it holds spill too. It stays
            # installed for the process's life: moto's keys outlive a stack stopped in-process (tests).
            moto_memory.install(self.data_dir)
            self._open_data_dir()
            if self.data_dir is not None:
                moto_memory.remove_leftovers(self.data_dir)  # the directory's lock is ours now
            self._keys = stack_keys.load_or_create(self.data_dir)
            self._start_moto()
            from lakelet.stack import moto_speedups

            self._installed_speedups = not moto_speedups.installed()
            moto_speedups.install()
            self._saved_environ = _apply_environ(
                self._environ,
                local_environment(
                    self.moto_url,
                    self.bucket,
                    self.table_prefix,
                    self.region,
                    metrics=self._verbose,
                    keys=self.aws_credentials,
                ),
            )
            self._provision()
            self._serve()
            # Published as soon as the API answers: a command run while the sample data is being written finds
            # the stack (and sees the quickstart repository appear).
            self._write_state()
            if self._sample_data:
                self._create_samples()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Stop serving, forget the services built against moto, stop moto, restore the environment."""
        if self._wrote_state and self.data_dir is not None:
            from lakelet.stack.statefile import remove_state

            # First: from now on nobody should be sent here.
            remove_state(self.data_dir, os.getpid())
            self._wrote_state = False
        if self._drops is not None:
            self._drops.stop()
            self._drops = None
        if self._s3 is not None:
            self._s3.stop()
            self._s3 = None
        if self._api is not None:
            self._api.stop()
            self._api = None
        if self._saved_environ is not None:
            from chalicelib.wiring import set_services

            set_services(None)  # they hold clients of a moto server that is about to go away
        if self._moto is not None:
            from lakelet.stack.stepfunctions_local import stop_local_workflows

            stop_local_workflows()
            if self._installed_speedups:
                from lakelet.stack import moto_speedups

                moto_speedups.uninstall()
                self._installed_speedups = False
            self._moto.stop()
            # ThreadedMotoServer.stop() shuts the loop down but leaves the socket open: free the port too.
            server = getattr(self._moto, "_server", None)
            if server is not None:
                server.server_close()
            self._moto = None
            self._moto_url = None
            self._guard = None
            self._keys = None
        if self.persistence is not None:
            self.persistence.close()  # moto no longer serves: the last snapshot sees everything
            self.persistence = None
        if self._saved_environ is not None:
            _restore_environ(self._environ, self._saved_environ)
            _forget_default_session()
            self._saved_environ = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.stop()

    # -- steps --------------------------------------------------------------------------------------------

    def _check_ports_free(self) -> None:
        # Fail before any work: ThreadedMotoServer binds on its own thread and would wait forever for a port
        # in use, and the API port is bound only after provisioning.
        for requested in (self._requested_moto_port, self._requested_api_port, self._requested_s3_port):
            if requested:
                with socket.socket() as probe:
                    probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                    try:
                        probe.bind((self.host, requested))
                    except OSError as error:
                        raise OSError(f"{self.host}:{requested} is not available: {error.strerror}") from error

    def _open_data_dir(self) -> None:
        if self.data_dir is not None:
            from lakelet.stack import moto_memory

            persistence = Persistence(
                self.data_dir, accept_journal_loss=self.accept_journal_loss, keep_files=moto_memory.files_kept
            )
            persistence.open()  # raises DataDirError, before anything else is started, if it cannot be used
            self.persistence = persistence

    def _guarded(self, app: WsgiApp) -> WsgiApp:
        # Outermost: a refused request is neither journaled nor seen by moto.
        inner = self.persistence.wrap(app) if self.persistence is not None else app
        keys = self.aws_credentials
        self._guard = MotoGuard(inner, keys.access_key_id, keys.secret_access_key)
        return self._guard

    def _start_moto(self) -> None:
        self._moto = WrappedMotoServer(self._guarded, self.host, self._requested_moto_port)
        self._moto.start()
        _, port = self._moto.get_host_and_port()
        self._moto_url = f"http://{self.host}:{port}"

    def _provision(self) -> None:
        # Imported here, after the environment points at moto: these modules build clients from Settings.
        import boto3

        from chalicelib.adapters.dynamodb.tables import TableNames, create_tables
        from chalicelib.wiring import get_services, set_services

        s3 = boto3.client("s3", region_name=self.region, endpoint_url=self.moto_url)
        existing = {bucket["Name"] for bucket in s3.list_buckets().get("Buckets", [])}
        for name in (self.bucket, LOCAL_IMPORT_BUCKET):
            if name in existing:
                continue
            # us-east-1 takes no LocationConstraint; every other region requires one.
            if self.region == "us-east-1":
                s3.create_bucket(Bucket=name)
            else:
                s3.create_bucket(Bucket=name, CreateBucketConfiguration={"LocationConstraint": self.region})
        create_tables(TableNames.from_prefix(self.table_prefix), self.region, self.moto_url)
        # Secrets are encrypted at rest with KMS (moto's here); the key id reaches the settings as on AWS.
        from chalicelib.settings import ENV_KMS_KEY_ID

        kms_key_id = _local_kms_key(boto3.client("kms", region_name=self.region, endpoint_url=self.moto_url))
        if self._saved_environ is not None:
            self._saved_environ.setdefault(ENV_KMS_KEY_ID, self._environ.get(ENV_KMS_KEY_ID))
        self._environ[ENV_KMS_KEY_ID] = kms_key_id
        # The state machines, from the same ASL files that deploy.
        from lakelet.stack.stepfunctions_local import start_local_workflows

        start_local_workflows(self.moto_url, self.region, self._environ, self._saved_environ)
        set_services(None)  # built afresh from the environment set above, not from an earlier stack's
        assert self._keys is not None
        recovered = self.persistence.recovery if self.persistence is not None else None
        kept, self.admin_notice = stack_keys.ensure_admin_key(
            get_services().auth,
            self.credentials.access_key_id,
            self.credentials.secret_access_key,
            self._keys,
            fresh=recovered is None or (recovered.snapshot is None and not recovered.replayed),
        )
        if kept != self._keys and self.data_dir is not None:
            stack_keys.save(self.data_dir, kept)
        self._keys = kept

    def _serve(self) -> None:
        app = load_app(self._project_dir)
        if self.persistence is not None:
            refusals.explain_in(app, self.persistence)  # a 503 while the disk refuses writes says what to do
        self._api = ApiServer(app, self.host, self._requested_api_port, _chalice_config(self._project_dir))
        self._api.start()
        self._check_health()
        from chalicelib.wiring import get_services, s3_gateway

        # The gateway a Lambda would run, over the same services, with no payload limit.
        gateway = s3_gateway(get_services())
        if self.persistence is not None:
            gateway = refusals.ExplainingGateway(gateway)  # type: ignore[assignment]
        self._s3 = S3Server(gateway, self.host, self._requested_s3_port)
        self._s3.start()
        # moto fires no schedules: the sweep of retired staging tokens runs here (lakelet/stack/schedules.py).
        self._drops = drop_retired_schedule().start()
        if self._guard is not None:
            self._guard.allow_origins(ui_origins(self.endpoint))  # the UI's uploads go to presigned URLs on moto

    def _create_samples(self) -> None:
        from lakelet.stack.samples import ensure_quickstart

        try:
            self.sample_repository = ensure_quickstart(self)
        except Exception as error:  # noqa: BLE001 - the stack itself works: say what failed and serve anyway
            print(f"lakelet up: could not create the quickstart repository: {error}", file=sys.stderr)

    def state(self) -> dict[str, Any]:
        """What the state file says about this started stack (format: lakelet/stack/statefile.py)."""
        return {
            "pid": os.getpid(),
            "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "data_dir": str(self.data_dir) if self.data_dir is not None else "",
            "api_url": self.endpoint,
            "ui_url": self.endpoint + "/",
            "s3_gateway_url": self.s3_url,
            "moto_url": self.moto_url,
            "access_key_id": self.credentials.access_key_id,
            "secret_access_key": self.credentials.secret_access_key,
            "aws_access_key_id": self.aws_credentials.access_key_id,
            "aws_secret_access_key": self.aws_credentials.secret_access_key,
            "bucket": self.bucket,
            "region": self.region,
        }

    def _write_state(self) -> None:
        # The file says "the API answers": it must not exist before the API and the gateway are served.
        if self.data_dir is None:
            return
        from lakelet.stack.statefile import write_state

        write_state(self.data_dir, self.state())
        self._wrote_state = True

    def _check_health(self) -> None:
        url = self.api_url + "/healthcheck"
        # A proxy from the environment must not see (or swallow) a loopback request.
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        try:
            with opener.open(url, timeout=10) as response:
                status = response.status
        except urllib.error.HTTPError as error:
            status = error.code
        if not 200 <= status < 300:
            raise RuntimeError(f"the local API is up but GET {url} answered {status}")


LOCAL_KMS_ALIAS = "alias/lakelet-local-secrets"


def _local_kms_key(kms: Any) -> str:
    """The id of the key that seals the stack's secrets: the one an earlier run of a persistent stack created
    (found by its alias: the secrets stored with it are sealed under it), else a new one."""
    from chalicelib.adapters.kms import create_local_key

    try:
        return str(kms.describe_key(KeyId=LOCAL_KMS_ALIAS)["KeyMetadata"]["KeyId"])
    except kms.exceptions.NotFoundException:
        pass
    key_id = create_local_key(kms)
    kms.create_alias(AliasName=LOCAL_KMS_ALIAS, TargetKeyId=key_id)
    return key_id
