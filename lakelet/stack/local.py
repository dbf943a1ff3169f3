"""The embedded local stack: a moto server standing in for AWS, and the Chalice app served next to it.

``LocalStack`` does, in order: start moto's ThreadedMotoServer on loopback, behind a guard that takes only
requests signed with the stack's key pair and CORS from the stack's UI only (lakelet/stack/moto_guard.py); point
chalicelib's settings at it through the environment (before the app or its services are built, since they read
the environment once); create the bucket and the DynamoDB tables; create the admin credentials; serve ``app.py``
with the de-chunking dev server; check that ``/api/v1/healthcheck`` answers; and serve the S3 gateway over the
same services (lakelet/stack/s3server.py); with ``sample_data``, create the ``quickstart`` repository
(lakelet/stack/samples.py); and, with a ``data_dir``, write the state file through which the CLI and ``lakelet gc
run`` find the stack (lakelet/stack/statefile.py; removed again on stop). While it runs, moto's DynamoDB queries
read only the queried partition (lakelet/stack/moto_speedups.py), and the process's own AWS calls reach moto
without a socket, through a short pipeline, and the stack's own PutItem past the WSGI chain (inprocess.py).
``stop`` undoes all of it, including the environment, so tests can start a stack
in-process. ``lakelet up`` (cli.py) is a shell around it.

With a ``data_dir``, moto's state is recovered from that directory before moto serves, every change is journaled
there while it runs, and a snapshot is written on stop (lakelet/persistence/); provisioning then finds what an
earlier run created and leaves it as it is. Without one (``--ephemeral``), everything lives in memory.
"""

from __future__ import annotations

import os
import sys
from collections.abc import MutableMapping
from pathlib import Path
from types import TracebackType
from typing import Self

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
from lakelet.persistence.middleware import WrappedMotoServer, WriteLock, WsgiApp
from lakelet.stack import app_environment, gc_policy, inprocess, inprocess_direct, probes, stack_keys
from lakelet.stack.app_environment import PROJECT_DIR, Credentials
from lakelet.stack.aws_limits import AwsLimits
from lakelet.stack.devserver import ApiServer
from lakelet.stack.moto_guard import MotoGuard, ui_origins
from lakelet.stack.moto_partitions import MotoPartitions
from lakelet.stack.s3server import S3Server
from lakelet.stack.schedules import Schedule, drop_retired_schedule
from lakelet.stack.stack_keys import StackKeys
from lakelet.stack.table_writes import TableWrites

LOCAL_BUCKET = "lakelet-local"
LOCAL_TABLE_PREFIX = "lakelet-local-"
API_BASE_PATH = "/api/v1"


class LocalStack:
    """moto plus the Lakelet API on loopback. Use as a context manager, or call :meth:`start` and :meth:`stop`.

    Ports of 0 pick free ones; read :attr:`api_port`, :attr:`api_url`, :attr:`s3_url` and :attr:`moto_url` after
    starting. The S3 gateway takes any free port unless ``s3_port`` names one (the CLI passes 8001).
    The stack changes ``os.environ`` (or the mapping given) while it runs and restores it on stop. Only one stack
    should run per process: the app and its services are process-wide."""

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
        project_dir: Path = PROJECT_DIR,
        environ: MutableMapping[str, str] | None = None,
        s3_port: int = 0,
        data_dir: Path | None = None,
        sample_data: bool = False,
        verbose: bool = False,
        accept_journal_loss: bool = False,
        aws_limits: AwsLimits | None = None,
    ) -> None:
        self.credentials = credentials
        # AWS's limits enforced in front of the API, the gateway and the workflow tasks (lakelet up --aws-limits).
        self.aws_limits = aws_limits
        # None keeps everything in memory (ephemeral); a directory keeps the state across restarts.
        self.data_dir = data_dir
        # Start even when a journal of the data directory is damaged, setting its files aside (store.py).
        self.accept_journal_loss = accept_journal_loss
        self.persistence: Persistence | None = None
        # What reads the staging table's partitions from moto's memory (set at start).
        self.partitions: MotoPartitions | None = None
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
        self._table_writes: TableWrites | None = None
        self._write_lock = WriteLock()  # without a data directory, what serializes moto's writes (the journal's lock)
        self._moto_app: WsgiApp | None = None  # moto's app under the journal
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

    def start(self) -> Self:
        """Bring the stack up; on any failure, tear down what was started and re-raise."""
        if self._moto is not None:
            raise RuntimeError("LocalStack already started")
        try:
            probes.check_ports_free(
                self.host, (self._requested_moto_port, self._requested_api_port, self._requested_s3_port)
            )
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
            if self.aws_limits is not None:
                from lakelet.stack import dynamodb_limits

                dynamodb_limits.install()
            self._saved_environ = app_environment.apply_environ(
                self._environ,
                app_environment.local_environment(
                    self.moto_url,
                    self.bucket,
                    self.table_prefix,
                    self.region,
                    metrics=self._verbose,
                    keys=self.aws_credentials,
                    s3_gateway_url=f"http://{self.host}:{self._requested_s3_port}" if self._requested_s3_port else None,
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

            set_services(None)  # they hold clients of a moto server about to go away
        if self._moto is not None:
            from lakelet.stack.stepfunctions_local import stop_local_workflows

            stop_local_workflows()
            if self.aws_limits is not None:
                from lakelet.stack import dynamodb_limits

                dynamodb_limits.uninstall()
            if self._installed_speedups:
                from lakelet.stack import moto_speedups

                moto_speedups.uninstall()
                self._installed_speedups = False
            inprocess.uninstall()  # before moto goes: its clients would send to a closed port
            gc_policy.uninstall()
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
            app_environment.restore_environ(self._environ, self._saved_environ)
            app_environment.forget_default_session()
            self._saved_environ = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.stop()

    # -- steps --------------------------------------------------------------------------------------------

    def _open_data_dir(self) -> None:
        if self.data_dir is not None:
            from lakelet.stack import moto_memory

            persistence = Persistence(
                self.data_dir, accept_journal_loss=self.accept_journal_loss, keep_files=moto_memory.files_kept
            )
            persistence.open()  # raises DataDirError, before anything else is started, if it cannot be used
            self.persistence = persistence

    def _guarded(self, app: WsgiApp) -> WsgiApp:
        # Outermost: a refused request is neither journaled nor seen by moto. Next, what tells the ref cache.
        inner = self.persistence.wrap(app) if self.persistence is not None else self._write_lock.wrap(app)
        self._table_writes = TableWrites.of_refs(inner, self.table_prefix)
        keys = self.aws_credentials
        self._guard = MotoGuard(self._table_writes, keys.access_key_id, keys.secret_access_key)
        self._moto_app = app
        return self._guard

    def _start_moto(self) -> None:
        self._moto = WrappedMotoServer(self._guarded, self.host, self._requested_moto_port)
        self._moto.start()
        _, port = self._moto.get_host_and_port()
        self._moto_url = f"http://{self.host}:{port}"
        assert self._moto_app is not None
        writes = (self.persistence.journaled if self.persistence is not None else None, self._write_lock.run)
        chain = inprocess_direct.Chain(self._moto._server, self._guard, self._table_writes, self._moto_app, *writes)
        inprocess.install(self._moto_url, chain, self.aws_credentials.access_key_id)

    def _provision(self) -> None:
        # Imported here, after the environment points at moto: these modules build clients from Settings.
        import boto3

        from chalicelib.adapters.dynamodb.tables import TableNames, create_tables
        from chalicelib.settings import Settings
        from chalicelib.wiring import aws_services, freeze_long_lived, get_services, set_services

        s3 = boto3.client("s3", region_name=self.region, endpoint_url=self.moto_url)
        probes.ensure_buckets(s3, (self.bucket, LOCAL_IMPORT_BUCKET), self.region)
        create_tables(TableNames.from_prefix(self.table_prefix), self.region, self.moto_url)
        # Secrets are encrypted at rest with KMS (moto's here), and the Iceberg catalog vends credentials by assuming
        # a role (moto's STS): the key id and the role reach the settings as on AWS.
        for name, value in app_environment.local_aws_ids(self.region, self.moto_url).items():
            if self._saved_environ is not None:
                self._saved_environ.setdefault(name, self._environ.get(name))
            self._environ[name] = value
        # The state machines, from the same ASL files that deploy.
        from lakelet.stack.stepfunctions_local import start_local_workflows

        start_local_workflows(self.moto_url, self.region, self._environ, self._saved_environ, self.aws_limits)
        # Built afresh from the environment set above (not an earlier stack's), with the witness of every write and the
        # staging table's partitions read from moto's memory.
        assert self._table_writes is not None
        self.partitions = MotoPartitions(self.region, self.credentials.access_key_id)
        set_services(aws_services(Settings.from_env(), self._table_writes.witness, staged_partitions=self.partitions))
        freeze_long_lived()  # as get_services does for the services it builds
        gc_policy.install()  # from now on, full collections walk only what is new (gc_policy.py)
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
        app = app_environment.load_app(self._project_dir)
        if self.persistence is not None:
            refusals.explain_in(app, self.persistence)  # a 503 while the disk refuses writes says what to do
        handler = None
        if self.aws_limits is not None:
            from lakelet.stack.limited_api import limited_handler

            handler = limited_handler(self.aws_limits)
        self._api = ApiServer(
            app, self.host, self._requested_api_port, app_environment.chalice_config(self._project_dir), handler
        )
        self._api.start()
        probes.check_health(self.api_url)
        from chalicelib.s3proxy import S3Gateway
        from chalicelib.s3proxy.function_url import MAX_RESPONSE_BYTES
        from chalicelib.wiring import get_services

        # The gateway a Lambda would run, over the same services: with the deployed read cap under --aws-limits,
        # else with no payload limit.
        gateway = S3Gateway.from_services(get_services(), MAX_RESPONSE_BYTES if self.aws_limits is not None else None)
        if self.persistence is not None:
            gateway = refusals.ExplainingGateway(gateway)  # type: ignore[assignment]
        self._s3 = S3Server(gateway, self.host, self._requested_s3_port, self.aws_limits)
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

    def _write_state(self) -> None:
        # The file says "the API answers": it must not exist before the API and the gateway are served.
        if self.data_dir is None:
            return
        from lakelet.stack.statefile import stack_state, write_state

        write_state(self.data_dir, stack_state(self))
        self._wrote_state = True
