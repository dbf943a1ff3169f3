"""Builds the services once per warm Lambda container; tests swap in their own with ``set_services``.

Assembly knows no faces: the API's routes, the S3 gateway (``S3Gateway.from_services``) and the workflows'
handlers each take what they need from these services; nothing here imports them.
"""

from __future__ import annotations

import gc as garbage_collector  # the standard library's, not chalicelib.gc
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from .auth.service import AuthService
from .gc.ports import JobStarter
from .graveler.actions import HookInvoker, HookRunner
from .graveler.branches.protection import BranchProtection
from .graveler.engine import CommittedManager, Engine, RangeParams, build_engine, build_hook_runner
from .graveler.errors import GravelerError
from .graveler.imports import ImportParts, ImportRecords, SourceLister
from .graveler.parts import EngineParts, Workflows, engine_parts
from .graveler.ports import (
    BlockStore,
    BranchProtectionStore,
    PullRequestStore,
    RefStore,
    StagingStore,
    WorkflowRunner,
)
from .graveler.reads.collected import CollectedCheck
from .graveler.storage.cached_refs import CachedRefStore
from .graveler.storage.ports import ChangeWitness
from .settings import ENV_IMPORT_ALLOWED_LOCATIONS, GCSettings, Settings
from .usage import UsageMeter, UsageStore

if TYPE_CHECKING:
    from .adapters.dynamodb.ports import PartitionReader
    from .auth.ports import Signer
    from .auth.records import Credential
    from .iceberg import Catalog
    from .iceberg.ports import Vendor
    from .repository_metadata import RepositoryMetadataStore


@dataclass
class Services:
    settings: Settings
    engine: Engine
    auth: AuthService
    repository_metadata: RepositoryMetadataStore | None = None
    # The SigV4 arithmetic the S3 gateway verifies signatures with; None: botocore's, built on first use.
    signer: Signer | None = None
    # The usage report's counter of API and S3 gateway requests (assemble builds it; None counts nothing).
    usage: UsageMeter | None = None
    # The Iceberg catalog's credential vendor (STS with LAKELET_ICEBERG_DATA_ROLE_ARN); built on first use.
    vendor: Vendor | None = None
    # The Iceberg catalog over the engine; built on first use, then shared by every request (iceberg_catalog). Not
    # an argument: a copy of these services (dataclasses.replace) builds its own, over its own engine and vendor.
    iceberg: Catalog | None = field(default=None, init=False, repr=False, compare=False)

    def vending(self) -> Vendor | None:
        """The catalog's vendor of table credentials, built when first asked for; None where no role is named."""
        role = self.settings.iceberg_data_role_arn
        if self.vendor is None and role:
            from .adapters.sts_credentials import sts_vendor  # boto3's STS client: on a catalog's first use

            self.vendor = sts_vendor(role, self.settings.region, self.settings.endpoint_url)
        return self.vendor

    def iceberg_catalog(self) -> Catalog:
        """The Iceberg catalog over this engine, built when first asked for and kept: it holds nothing of a
        request (each call takes its caller's permissions), so every request shares it."""
        if self.iceberg is None:
            from .iceberg import Catalog  # the API's catalog routes only: not at the gateway's or a task's cold start

            self.iceberg = Catalog(self.engine, self.vending)
        return self.iceberg

    def setup(
        self, username: str, access_key_id: str | None = None, secret: str | None = None
    ) -> tuple[Credential, str]:
        """First-time setup (AuthService.setup), then the installation's id, kept from now on as lakeFS writes its
        own at setup. Should storing the id fail, the setup stands: the first usage report creates it."""
        created = self.auth.setup(username, access_key_id, secret)
        if self.usage is not None:
            try:
                self.usage.installation_id()
            except GravelerError as e:
                log.warning("installation id not stored at setup (the usage report will store it): %s", e)
        return created

    def signing(self) -> Signer:
        """The signer, botocore's unless one was given: built when first asked for (the API never needs it)."""
        if self.signer is None:
            from .adapters.sigv4 import BotocoreSigner

            self.signer = BotocoreSigner()
        return self.signer


log = logging.getLogger(__name__)

_lock = threading.Lock()
_services: Services | None = None
_freezes_left = 2


def range_params(settings: Settings) -> RangeParams:
    return RangeParams(
        max_range_bytes=settings.range_max_bytes,
        min_range_bytes=settings.range_min_bytes,
        raggedness=settings.range_raggedness,
    )


def assemble(
    settings: Settings,
    refs: RefStore,
    staging: StagingStore,
    blocks: BlockStore,
    auth: AuthService,
    repository_metadata: RepositoryMetadataStore | None = None,
    branch_protection: BranchProtectionStore | None = None,
    any_namespace: bool = False,
    pull_request_store: PullRequestStore | None = None,
    usage_store: UsageStore | None = None,
    *,
    import_sources: SourceLister | None = None,
    import_records: ImportRecords | None = None,
    clock: Callable[[], float] = time.time,
    sleep: Callable[[float], None] = time.sleep,
    invokers: dict[str, HookInvoker] | None = None,
) -> Services:
    """``any_namespace``: let repositories live in any bucket (unit tests of the engine), not only in the
    deployment's ``s3://<bucket>/``. ``pull_request_store``: None keeps pull requests in memory (tests);
    ``usage_store``: None keeps the usage counters in memory. ``import_sources`` and ``import_records``: the
    import's ports (without both, imports answer Unsupported). ``clock`` and ``sleep``: the engine's (tests give
    theirs); ``invokers``: the hooks' (hook_runner's)."""
    committed = CommittedManager(blocks, range_params(settings))
    protection = None
    if branch_protection is not None:
        protection = BranchProtection(branch_protection, ttl_seconds=settings.branch_protection_ttl_seconds)
    collected = CollectedCheck(blocks, ttl_seconds=settings.gc_record_ttl_seconds)
    prefix = None if any_namespace else f"s3://{settings.bucket}/"
    parts = engine_parts(
        refs,
        staging,
        blocks,
        committed,
        clock=clock,
        sleep=sleep,
        protection=protection,
        collected=collected,
        namespace_prefix=prefix,
        workflows=workflows(settings),
    )
    imports = None
    if import_sources is not None and import_records is not None:
        imports = ImportParts(
            import_sources, import_records, settings.import_allowed_locations, ENV_IMPORT_ALLOWED_LOCATIONS
        )
    if pull_request_store is None:
        from .adapters.memory_pulls import MemoryPullRequestStore

        pull_request_store = MemoryPullRequestStore()
    # The hooks read action files through the same parts (and cache); reading them needs no hooks.
    engine = build_engine(replace(parts, hooks=hook_runner(settings, parts, invokers)), imports, pull_request_store)
    return Services(settings, engine, auth, repository_metadata, usage=usage_meter(settings, usage_store))


def usage_meter(settings: Settings, store: UsageStore | None) -> UsageMeter:
    """The request counter of the usage report, over ``store`` (None: in memory)."""
    if store is None:
        from .adapters.memory_usage import MemoryUsageStore

        store = MemoryUsageStore()
    return UsageMeter(store, settings.usage_flush_seconds)


def _runner(settings: Settings, arn: str | None) -> WorkflowRunner | None:
    from .adapters.stepfunctions import StepFunctionsWorkflows

    return StepFunctionsWorkflows(arn, settings.region, settings.endpoint_url) if arn else None


def workflows(settings: Settings) -> Workflows:
    """The state machines large commits, merges, imports, dumps and restores run as (Step Functions, or moto's
    locally), when configured."""
    return Workflows(
        _runner(settings, settings.commit_state_machine_arn),
        _runner(settings, settings.merge_state_machine_arn),
        settings.commit_workflow_threshold,
        settings.merge_workflow_threshold,
        settings.workflow_wait_seconds,
        _runner(settings, settings.import_state_machine_arn),
        settings.import_inline_threshold,
        settings.import_max_slices,
        _runner(settings, settings.dump_state_machine_arn),
        _runner(settings, settings.restore_state_machine_arn),
        settings.dump_inline_threshold,
        settings.restore_inline_threshold,
    )


def job_starter(settings: Settings, gc: GCSettings) -> JobStarter:
    """The GC job starter of the deployment: EMR Serverless (or moto's) with the application and role of ``gc``."""
    from .adapters.emr import EmrServerlessStarter

    return EmrServerlessStarter.connect(
        settings.region,
        settings.endpoint_url,
        application_id=gc.emr_application_id,
        execution_role_arn=gc.emr_execution_role_arn,
        log_uri=gc.log_uri,
        timeout_minutes=gc.timeout_minutes,
    )


def hook_runner(settings: Settings, parts: EngineParts, invokers: dict[str, HookInvoker] | None = None) -> HookRunner:
    """The hooks of actions over an engine's parts (graveler builds them: build_hook_runner) with the adapters
    chosen here: webhooks always, Lambda hooks when functions are configured, the YAML decoder."""
    from .adapters.action_yaml import load_action_yaml
    from .adapters.hooks import Destinations, LambdaHooks, WebhookHooks

    if invokers is None:
        destinations = Destinations(settings.webhook_allowed_destinations, [settings.lambda_runtime_api])
        invokers = {"webhook": WebhookHooks(destinations)}
        if settings.hook_functions:
            invokers["lambda"] = LambdaHooks(settings.hook_functions, settings.region, settings.endpoint_url)
    return build_hook_runner(
        parts,
        invokers,
        load_action_yaml,
        max_hook_seconds=settings.hook_max_seconds,
        max_run_seconds=settings.hook_run_max_seconds,
    )


def s3_client(settings: Settings) -> Any:
    """The S3 client of the block store. SigV4 for everything it signs: left to itself, botocore presigns with
    SigV2 in us-east-1 (for backward compatibility), which S3 refuses for buckets created since 2020 and which
    leaves headers such as If-None-Match out of the signature."""
    import boto3
    from botocore.config import Config

    return boto3.client(
        "s3", region_name=settings.region, endpoint_url=settings.endpoint_url, config=Config(signature_version="s3v4")
    )


def aws_services(
    settings: Settings,
    ref_witness: Callable[[str], ChangeWitness] | None = None,
    staged_partitions: PartitionReader | None = None,
) -> Services:
    """The deployed wiring: DynamoDB and S3 (or the moto server that stands in for them locally). ``ref_witness``:
    where every write of the tables is seen (the embedded stack: lakelet/stack/table_writes.py), the witness of a
    table by name, under which branch and tag reads are remembered (storage/cached_refs.py); ``staged_partitions``:
    where the process holds the staging table (the embedded stack: lakelet/stack/moto_partitions.py), what reads a
    token's rows without a Query. Deployed, neither."""
    import boto3

    from .adapters.dynamodb import DynamoAuthStore, DynamoRefStore, DynamoStagingStore
    from .adapters.dynamodb.branch_protection import DynamoBranchProtectionStore
    from .adapters.dynamodb.pull_requests import DynamoPullRequestStore
    from .adapters.dynamodb.repository_metadata import DynamoRepositoryMetadataStore
    from .adapters.dynamodb.tables import TableNames
    from .adapters.dynamodb.usage import DynamoUsageStore
    from .adapters.import_records import BlockImportRecords
    from .adapters.kms import KmsCipher
    from .adapters.s3 import S3BlockStore
    from .adapters.s3_source import S3SourceLister

    if not settings.kms_key_id:
        raise RuntimeError("LAKELET_KMS_KEY_ID is not set: secrets are encrypted at rest with a KMS key")
    names = TableNames.from_prefix(settings.table_prefix)
    s3 = s3_client(settings)
    kms = boto3.client("kms", region_name=settings.region, endpoint_url=settings.endpoint_url)
    blocks = S3BlockStore(s3)
    return assemble(
        settings,
        # Commits (immutable) and repositories (a short TTL) are remembered per container: fewer DynamoDB reads.
        CachedRefStore(
            DynamoRefStore(names, settings.region, settings.endpoint_url),
            branch_witness=ref_witness(names.branches) if ref_witness is not None else None,
            tag_witness=ref_witness(names.tags) if ref_witness is not None else None,
        ),
        DynamoStagingStore(names, settings.region, settings.endpoint_url, partitions=staged_partitions),
        blocks,
        AuthService(
            DynamoAuthStore(names, settings.region, settings.endpoint_url), KmsCipher(kms, settings.kms_key_id)
        ),
        DynamoRepositoryMetadataStore(names, settings.region, settings.endpoint_url),
        DynamoBranchProtectionStore(names, settings.region, settings.endpoint_url),
        pull_request_store=DynamoPullRequestStore(names, settings.region, settings.endpoint_url),
        import_sources=S3SourceLister(s3),
        import_records=BlockImportRecords(blocks),
        usage_store=DynamoUsageStore(names, settings.region, settings.endpoint_url),
    )


def memory_services(
    settings: Settings | None = None,
    *,
    clock: Callable[[], float] = time.time,
    sleep: Callable[[float], None] = time.sleep,
    invokers: dict[str, HookInvoker] | None = None,
) -> Services:
    """Every port on its in-memory twin: for unit and API tests. Without settings, repositories may live in any
    bucket; with them, only in ``s3://<settings.bucket>/`` as deployed. ``clock``, ``sleep``, ``invokers``: as
    assemble takes them."""
    from .adapters.import_records import MemoryImportRecords
    from .adapters.memory import (
        MemoryAuthStore,
        MemoryBlockStore,
        MemoryBranchProtectionStore,
        MemoryCipher,
        MemoryRefStore,
        MemoryRepositoryMetadataStore,
        MemoryStagingStore,
    )
    from .adapters.memory_source import MemorySourceLister

    refs = MemoryRefStore()
    blocks = MemoryBlockStore()
    # Import sources are objects put into the same memory store (s3://<bucket>/<key>), as S3 holds them.
    return assemble(
        settings or Settings(),
        refs,
        MemoryStagingStore(refs),
        blocks,
        AuthService(MemoryAuthStore(), MemoryCipher()),
        MemoryRepositoryMetadataStore(refs),
        MemoryBranchProtectionStore(refs),
        any_namespace=settings is None,
        import_sources=MemorySourceLister(blocks),
        import_records=MemoryImportRecords(),
        clock=clock,
        sleep=sleep,
        invokers=invokers,
    )


def get_services() -> Services:
    global _services
    with _lock:
        if _services is None:
            _services = aws_services(Settings.from_env())
            freeze_long_lived()
        return _services


def freeze_long_lived() -> None:
    """Moves every object alive now out of the collector's sight: called when the services are built (modules,
    the AWS clients) and after the first API request (what it loaded lazily: service models, caches), and a no-op
    after those two. A full collection then walks only what later requests allocate: without this, walking some
    400,000 long-lived objects paused a listing for 150-210 ms every ~20 pages."""
    global _freezes_left
    if _freezes_left > 0:
        _freezes_left -= 1
        garbage_collector.freeze()


def set_services(services: Services | None) -> None:
    global _services
    with _lock:
        _services = services
