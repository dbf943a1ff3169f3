"""The one place that reads os.environ: every knob of a Lakelet deployment, read once into a frozen object.

Explicit arguments win over the environment: ``Settings.from_env(environ)`` takes any mapping, and tests build
``Settings(...)`` directly. Stages set these variables in .chalice/config.json; resource names come from infra/.
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass

ENV_REGION = "AWS_REGION"
ENV_DEFAULT_REGION = "AWS_DEFAULT_REGION"
ENV_ENDPOINT_URL = "LAKELET_AWS_ENDPOINT_URL"  # set only locally: the moto server
ENV_TABLE_PREFIX = "LAKELET_TABLE_PREFIX"
ENV_BUCKET = "LAKELET_BUCKET"
# The Lambda functions lambda hooks may invoke (comma-separated names or ARNs): infra/ sets it from the stack.
ENV_HOOK_FUNCTIONS = "LAKELET_HOOK_FUNCTIONS"
# Where webhooks may be sent besides public addresses (comma-separated networks: 10.1.0.0/16, 203.0.113.7, ::1/128).
# Unset: public addresses only. The local stack lists loopback (LOCAL_WEBHOOK_DESTINATIONS) so hooks can be tried
# against servers on the developer's machine.
ENV_WEBHOOK_DESTINATIONS = "LAKELET_WEBHOOK_ALLOWED_DESTINATIONS"
LOCAL_WEBHOOK_DESTINATIONS = ("127.0.0.0/8", "::1/128")
# Set by Lambda itself: the runtime API's host:port, which webhooks never reach whatever is listed.
ENV_LAMBDA_RUNTIME_API = "AWS_LAMBDA_RUNTIME_API"
ENV_PRESIGN_EXPIRY = "LAKELET_PRESIGN_EXPIRY_SECONDS"
ENV_RANGE_MAX_BYTES = "LAKELET_RANGE_MAX_BYTES"
ENV_RANGE_MIN_BYTES = "LAKELET_RANGE_MIN_BYTES"
ENV_RANGE_RAGGEDNESS = "LAKELET_RANGE_RAGGEDNESS"
ENV_PRE_SIGN_SUPPORT = "LAKELET_PRE_SIGN_SUPPORT"
ENV_KMS_KEY_ID = "LAKELET_KMS_KEY_ID"  # the KMS key that encrypts secrets at rest (id, ARN or alias)
ENV_LOGIN_TOKEN_SECONDS = "LAKELET_LOGIN_TOKEN_SECONDS"
# The S3 gateway's URL as engines reach it: the Iceberg catalog gives it to them as the tables' s3.endpoint
# (docs/iceberg.md). Unset: clients configure s3.endpoint themselves.
ENV_ICEBERG_S3_ENDPOINT = "LAKELET_ICEBERG_S3_ENDPOINT"
# The role the Iceberg catalog assumes to vend engines credentials for one table's files (docs/iceberg.md): set,
# new tables keep their files in the store and engines reach them with those credentials; unset, through the gateway.
ENV_ICEBERG_DATA_ROLE_ARN = "LAKELET_ICEBERG_DATA_ROLE_ARN"
ENV_STAGE = "LAKELET_STAGE"  # the deployment stage (dev, prod): a dimension of every metric
DEFAULT_STAGE = "local"
# Where imports may read from, comma-separated: each location as bucket:prefix/ (bucket: for a whole bucket), the
# form the stack parameter ImportLocations takes and passes here unchanged, or as s3://bucket/prefix/ (the local
# stack's form). The Lambda roles may read and list exactly these (infra/access.py). Empty: every import is refused
# with a 403 that names this setting.
ENV_IMPORT_ALLOWED_LOCATIONS = "LAKELET_IMPORT_ALLOWED_LOCATIONS"
# The stack grants s3:ListBucket with one policy per location (a policy holds one s3:prefix condition, and a
# template has no loop), so it has this many slots: more locations are refused, never allowed without a grant.
IMPORT_LOCATIONS_MAX = 10
# S3's bucket naming rules: 3-63 lowercase letters, digits, dots and hyphens, a letter or digit at each end, no
# two adjacent dots, not an IP address, none of the reserved prefixes and suffixes. Written once for Python and for
# the template's AllowedPattern (Java regex): fixed-width lookbehinds only, no named groups.
IMPORT_BUCKET_PATTERN = (
    r"(?!xn--|sthree-|amzn-s3-demo-|[0-9]+(?:[.][0-9]+){3}:)"
    r"[a-z0-9](?:[a-z0-9-]|[.](?![.])){1,61}[a-z0-9]"
    r"(?<!-s3alias)(?<!--ol-s3)(?<![.]mrap)(?<!--x-s3)(?<!--table-s3)"
)
# A prefix is "directories": segments ending in "/", none empty, "." or ".."; no IAM wildcard (* ?), no policy
# variable ($), no ":" (the template splits an entry at it) or "," (the list separator), no space or control
# character. An empty prefix is the whole bucket.
IMPORT_PREFIX_PATTERN = r"(?:(?![.][.]?/)[^\x00-\x20\x7f/,:*?$]+/)*"
IMPORT_LOCATION_PATTERN = IMPORT_BUCKET_PATTERN + ":" + IMPORT_PREFIX_PATTERN
# The stack parameter's AllowedPattern: empty, or 1 to IMPORT_LOCATIONS_MAX entries.
IMPORT_LOCATIONS_PARAMETER_PATTERN = (
    f"^$|^{IMPORT_LOCATION_PATTERN}(?:,{IMPORT_LOCATION_PATTERN}){{0,{IMPORT_LOCATIONS_MAX - 1}}}$"
)


def _flag(value: str) -> bool:
    return value.strip().lower() in {"1", "true", "yes", "on"}


def _location(part: str) -> str:
    """One allowed location as s3://bucket/prefix/, from either form, or a ValueError saying what is wrong. An s3://
    location names a "directory": a missing trailing "/" is added, so s3://bucket/data never admits
    s3://bucket/database; a bucket:prefix entry must carry its "/" already, as the stack's pattern demands."""
    if part.startswith("s3://"):
        bucket, _, prefix = part.removeprefix("s3://").partition("/")
        if prefix and not prefix.endswith("/"):
            prefix += "/"
    elif ":" in part:
        bucket, _, prefix = part.partition(":")
    else:
        raise ValueError(f"{ENV_IMPORT_ALLOWED_LOCATIONS}: {part!r} is neither s3://bucket/prefix/ nor bucket:prefix/")
    if not bucket:
        raise ValueError(f"{ENV_IMPORT_ALLOWED_LOCATIONS}: {part!r} names no bucket")
    if any(c in part for c in "*?"):
        raise ValueError(f"{ENV_IMPORT_ALLOWED_LOCATIONS}: {part!r} holds a wildcard (* or ?); name a prefix")
    if not re.fullmatch(IMPORT_BUCKET_PATTERN + ":", bucket + ":"):
        raise ValueError(
            f"{ENV_IMPORT_ALLOWED_LOCATIONS}: {bucket!r} is not an S3 bucket name (3-63 lowercase letters, digits,"
            " dots and hyphens, a letter or digit at each end, no '..', not an IP address)"
        )
    if not re.fullmatch(IMPORT_PREFIX_PATTERN, prefix):
        raise ValueError(
            f"{ENV_IMPORT_ALLOWED_LOCATIONS}: {part!r}: the prefix must be empty or segments ending in '/' (no"
            " empty, '.' or '..' segment; no ':', ',', '$', space or control character)"
        )
    return f"s3://{bucket}/{prefix}"


def _networks(value: str) -> tuple[str, ...]:
    """The webhook destinations as given, each checked to be a network or an address (ValueError naming the
    setting otherwise), so a mistyped entry fails the services at their start rather than every hook later."""
    found = tuple(part for part in value.replace(",", " ").split())
    for part in found:
        try:
            ipaddress.ip_network(part, strict=False)
        except ValueError:
            raise ValueError(
                f"{ENV_WEBHOOK_DESTINATIONS}: {part!r} is not a network (10.1.0.0/16) or an address (203.0.113.7);"
                " host names are not accepted: list the addresses they resolve to"
            ) from None
    return found


def _locations(value: str) -> tuple[str, ...]:
    """Comma- or space-separated locations in either form, at most IMPORT_LOCATIONS_MAX of them."""
    found = tuple(_location(part) for part in value.replace(",", " ").split())
    if len(found) > IMPORT_LOCATIONS_MAX:
        raise ValueError(
            f"{ENV_IMPORT_ALLOWED_LOCATIONS}: {len(found)} locations, at most {IMPORT_LOCATIONS_MAX}"
            " (the stack grants listing to that many)"
        )
    return found


def _not_internal(locations: tuple[str, ...], bucket: str) -> tuple[str, ...]:
    """The locations, unless one is the deployment's own where the setting can tell: the whole of its bucket (every
    repository's namespace and _lakelet/), _lakelet/ or a _lakefs/ directory anywhere. Imports refuse any
    repository's namespace whatever is listed (graveler/imports/internal.py); this refuses a setting that could
    only ever mean that, when the functions start."""
    for location in locations:
        loc_bucket, _, prefix = location.removeprefix("s3://").partition("/")
        segments = prefix.split("/")[:-1]
        if "_lakefs" in segments or segments[:1] == ["_lakelet"]:
            raise ValueError(
                f"{ENV_IMPORT_ALLOWED_LOCATIONS}: {location} lies in Lakelet's own files (_lakelet/, _lakefs/)"
            )
        if loc_bucket.lower() == bucket.lower() and not prefix:
            raise ValueError(
                f"{ENV_IMPORT_ALLOWED_LOCATIONS}: {location} is the whole of the deployment's bucket, which holds "
                "every repository's data; list a prefix that holds no repository"
            )
    return locations


@dataclass(frozen=True, slots=True)
class Settings:
    region: str = "us-east-1"
    endpoint_url: str | None = None
    table_prefix: str = "lakelet-"
    # The bucket repositories are created in by default (reported as default_namespace_prefix by /config).
    bucket: str = "lakelet-data"
    presign_expiry_seconds: int = 900
    # Range boundaries are content-defined (fnv64a(key) % raggedness == 0) within [min, max] bytes. These are
    # the current range format's (2, graveler/committed/params.py), what repositories created from now on cut
    # with; repositories of format 1 keep its fixed values (8 MiB, 64 KiB, 10,000) whatever is set here.
    range_max_bytes: int = 2 * 1024 * 1024 + 256 * 1024
    range_min_bytes: int = 1536 * 1024
    range_raggedness: int = 1_500
    # Reported by GET /config: the official clients then read and write object data through presigned S3 URLs,
    # so large objects never pass through API Gateway or Lambda. LAKELET_PRE_SIGN_SUPPORT=false turns it off.
    pre_sign_support: bool = True
    kms_key_id: str | None = None
    # How long a token from POST /auth/login stays valid.
    login_token_seconds: int = 24 * 3600
    iceberg_s3_endpoint: str = ""
    iceberg_data_role_arn: str = ""
    stage: str = DEFAULT_STAGE
    # Commits with more staged changes than this run as the commit state machine (when one is configured,
    # LAKELET_COMMIT_STATE_MACHINE_ARN, set by infra/); smaller ones run inline in the API Lambda. 25,000: an inline
    # commit at the threshold takes about 7 s on bench/aws_model.py, a quarter of API Gateway's 29 s.
    commit_workflow_threshold: int = 25_000
    commit_state_machine_arn: str | None = None
    # Merges whose source and destination ranges not shared with the merge base hold more entries than this run
    # as the merge state machine (LAKELET_MERGE_STATE_MACHINE_ARN, set by infra/); smaller ones run inline.
    merge_workflow_threshold: int = 50_000
    merge_state_machine_arn: str | None = None
    # How long a synchronous commit or merge waits for its workflow before it answers 202 with the task id:
    # under API Gateway's 29 s integration timeout.
    workflow_wait_seconds: float = 25.0
    # How long a container trusts the branch protection rules it read (graveler/branches/protection.py): a rule
    # change reaches every container within this time.
    branch_protection_ttl_seconds: float = 5.0
    # How long a container trusts what it read of GC's sweep records (graveler/reads/collected.py). The GC job
    # waits longer than this between recording a sweep and deleting anything (emr/gc_job.py, --record-lead-seconds).
    gc_record_ttl_seconds: float = 5.0
    # Imports (chalicelib/graveler/imports): where they may read from (ENV_IMPORT_ALLOWED_LOCATIONS), the import
    # state machine (set by infra/), and the size below which an import runs inline in the API Lambda: the
    # sources are probed up to this many objects first.
    import_allowed_locations: tuple[str, ...] = ()
    import_state_machine_arn: str | None = None
    import_inline_threshold: int = 5_000
    import_max_slices: int = 16
    # Repository dump and restore tasks (graveler/usecases/dump_tasks.py): the state machines (set by infra/), and
    # the sizes in commits above which a dump or a restore runs as one rather than inline in the API Lambda.
    dump_state_machine_arn: str | None = None
    restore_state_machine_arn: str | None = None
    dump_inline_threshold: int = 5_000
    restore_inline_threshold: int = 5_000
    # The usage report (chalicelib/usage): how often, at most, a container adds the requests it counted to the stored
    # monthly counter (one DynamoDB update each time). lakeFS's usage_report.flush_interval is 5 minutes; a Lambda
    # container may be retired without notice, so a shorter interval loses less.
    usage_flush_seconds: float = 60.0
    # Hooks (chalicelib/graveler/actions): the Lambda functions lambda hooks may invoke (names or ARNs; IAM grants
    # lambda:InvokeFunction on exactly these, infra/), and the time limits of one hook and of one event's run.
    # An inline commit or merge answers through API Gateway (29 s), so a run is capped below that; lakeFS's default
    # hook timeout (1 minute) is cut to it. Workflow steps (Lambda, 15 min) take the same limits.
    hook_functions: tuple[str, ...] = ()
    hook_max_seconds: float = 20.0
    hook_run_max_seconds: float = 20.0
    # The networks webhooks may reach besides public addresses (ENV_WEBHOOK_DESTINATIONS; adapters/hooks/
    # destinations.py), and the Lambda runtime API's host:port, refused whatever is listed.
    webhook_allowed_destinations: tuple[str, ...] = ()
    lambda_runtime_api: str = ""

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if environ is None else environ
        defaults = cls()
        return cls(
            region=env.get(ENV_REGION) or env.get(ENV_DEFAULT_REGION) or defaults.region,
            endpoint_url=env.get(ENV_ENDPOINT_URL) or None,
            table_prefix=env.get(ENV_TABLE_PREFIX, defaults.table_prefix),
            bucket=env.get(ENV_BUCKET, defaults.bucket),
            presign_expiry_seconds=int(env.get(ENV_PRESIGN_EXPIRY, defaults.presign_expiry_seconds)),
            range_max_bytes=int(env.get(ENV_RANGE_MAX_BYTES, defaults.range_max_bytes)),
            range_min_bytes=int(env.get(ENV_RANGE_MIN_BYTES, defaults.range_min_bytes)),
            range_raggedness=int(env.get(ENV_RANGE_RAGGEDNESS, defaults.range_raggedness)),
            pre_sign_support=_flag(env.get(ENV_PRE_SIGN_SUPPORT, "true")),
            kms_key_id=env.get(ENV_KMS_KEY_ID) or None,
            login_token_seconds=int(env.get(ENV_LOGIN_TOKEN_SECONDS, defaults.login_token_seconds)),
            iceberg_s3_endpoint=env.get(ENV_ICEBERG_S3_ENDPOINT, "").strip(),
            iceberg_data_role_arn=env.get(ENV_ICEBERG_DATA_ROLE_ARN, "").strip(),
            stage=stage_from_env(env),
            commit_workflow_threshold=int(
                env.get("LAKELET_COMMIT_WORKFLOW_THRESHOLD", defaults.commit_workflow_threshold)
            ),
            commit_state_machine_arn=env.get("LAKELET_COMMIT_STATE_MACHINE_ARN") or None,
            merge_workflow_threshold=int(
                env.get("LAKELET_MERGE_WORKFLOW_THRESHOLD", defaults.merge_workflow_threshold)
            ),
            merge_state_machine_arn=env.get("LAKELET_MERGE_STATE_MACHINE_ARN") or None,
            workflow_wait_seconds=float(env.get("LAKELET_WORKFLOW_WAIT_SECONDS", defaults.workflow_wait_seconds)),
            branch_protection_ttl_seconds=float(
                env.get("LAKELET_BRANCH_PROTECTION_TTL_SECONDS", defaults.branch_protection_ttl_seconds)
            ),
            gc_record_ttl_seconds=float(env.get("LAKELET_GC_RECORD_TTL_SECONDS", defaults.gc_record_ttl_seconds)),
            import_allowed_locations=_not_internal(
                _locations(env.get(ENV_IMPORT_ALLOWED_LOCATIONS, "")), env.get(ENV_BUCKET, defaults.bucket)
            ),
            import_state_machine_arn=env.get("LAKELET_IMPORT_STATE_MACHINE_ARN") or None,
            import_inline_threshold=int(env.get("LAKELET_IMPORT_INLINE_THRESHOLD", defaults.import_inline_threshold)),
            import_max_slices=int(env.get("LAKELET_IMPORT_MAX_SLICES", defaults.import_max_slices)),
            dump_state_machine_arn=env.get("LAKELET_DUMP_STATE_MACHINE_ARN") or None,
            restore_state_machine_arn=env.get("LAKELET_RESTORE_STATE_MACHINE_ARN") or None,
            dump_inline_threshold=int(env.get("LAKELET_DUMP_INLINE_THRESHOLD", defaults.dump_inline_threshold)),
            restore_inline_threshold=int(
                env.get("LAKELET_RESTORE_INLINE_THRESHOLD", defaults.restore_inline_threshold)
            ),
            usage_flush_seconds=float(env.get("LAKELET_USAGE_FLUSH_SECONDS", defaults.usage_flush_seconds)),
            hook_functions=tuple(f.strip() for f in env.get(ENV_HOOK_FUNCTIONS, "").split(",") if f.strip()),
            hook_max_seconds=float(env.get("LAKELET_HOOK_MAX_SECONDS", defaults.hook_max_seconds)),
            hook_run_max_seconds=float(env.get("LAKELET_HOOK_RUN_MAX_SECONDS", defaults.hook_run_max_seconds)),
            webhook_allowed_destinations=_networks(env.get(ENV_WEBHOOK_DESTINATIONS, "")),
            lambda_runtime_api=env.get(ENV_LAMBDA_RUNTIME_API, ""),
        )


def stage_from_env(environ: Mapping[str, str] | None = None) -> str:
    """The stage alone, as Settings.from_env reads it: the metrics read it after every request, and the whole of
    the settings (their checks included) costs more than the rest of a stat's bookkeeping."""
    env = os.environ if environ is None else environ
    return env.get(ENV_STAGE) or DEFAULT_STAGE


# Scheduled garbage collection (chalicelib/gc): the EMR Serverless job the schedule starts.
ENV_APPLICATION_ID = "LAKELET_GC_EMR_APPLICATION_ID"
ENV_EXECUTION_ROLE_ARN = "LAKELET_GC_EMR_EXECUTION_ROLE_ARN"
ENV_ENTRY_POINT = "LAKELET_GC_JOB_ENTRY_POINT"
ENV_ARCHIVE = "LAKELET_GC_JOB_ARCHIVE"
ENV_PY_FILES = "LAKELET_GC_JOB_PY_FILES"
ENV_LOG_URI = "LAKELET_GC_LOG_URI"
ENV_SPARK_PARAMETERS = "LAKELET_GC_SPARK_PARAMETERS"
ENV_MODE = "LAKELET_GC_MODE"
ENV_MIN_AGE_SECONDS = "LAKELET_GC_MIN_AGE_SECONDS"
ENV_COMMIT_PARTITIONS = "LAKELET_GC_COMMIT_PARTITIONS"
ENV_ADDRESS_PARTITIONS = "LAKELET_GC_ADDRESS_PARTITIONS"
ENV_TIMEOUT_MINUTES = "LAKELET_GC_TIMEOUT_MINUTES"

# A scheduled run always prepares afresh, so there is never an earlier mark of it to sweep alone.
MODES = ("mark", "mark-and-sweep")
DAY_SECONDS = 86_400


@dataclass(frozen=True, slots=True)
class GCSettings:
    # The EMR Serverless Spark application and the role its job runs as (infra/ creates both).
    emr_application_id: str = ""
    emr_execution_role_arn: str = ""
    # s3://.../gc_job.py, and the packed Python environment (pyarrow, boto3) it runs with; see docs/gc.md.
    job_entry_point: str = ""
    job_archive: str = ""
    log_uri: str = ""
    # More spark-submit flags, e.g. the Python of a custom EMR Serverless image (see README).
    spark_parameters: str = ""
    # "mark" makes every scheduled run a dry run (nothing deleted; the summary says what would be reclaimed).
    mode: str = "mark-and-sweep"
    # Objects younger than this are never collected: uploads in flight are staged only after their data lands.
    min_age_seconds: int = DAY_SECONDS
    commit_partitions: int = 16
    address_partitions: int = 64
    timeout_minutes: int = 720
    # s3://.../lakelet_gc.zip: the job's package (emr/lakelet_gc/, built by `make package`), which the entry point
    # imports; EMR Serverless puts it on the driver's and the executors' path (spark.submit.pyFiles).
    job_py_files: str = ""

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"{ENV_MODE} must be one of {', '.join(MODES)}, got {self.mode!r}")
        if self.min_age_seconds < 0 or self.commit_partitions < 1 or self.address_partitions < 1:
            raise ValueError("GC min age must be >= 0 and partition counts >= 1")

    @property
    def configured(self) -> bool:
        """Whether scheduled runs can start a job at all."""
        return bool(
            self.emr_application_id and self.emr_execution_role_arn and self.job_entry_point and self.job_py_files
        )

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> GCSettings:
        env = os.environ if environ is None else environ
        defaults = cls()
        return cls(
            emr_application_id=env.get(ENV_APPLICATION_ID, ""),
            emr_execution_role_arn=env.get(ENV_EXECUTION_ROLE_ARN, ""),
            job_entry_point=env.get(ENV_ENTRY_POINT, ""),
            job_archive=env.get(ENV_ARCHIVE, ""),
            job_py_files=env.get(ENV_PY_FILES, ""),
            log_uri=env.get(ENV_LOG_URI, ""),
            spark_parameters=env.get(ENV_SPARK_PARAMETERS, ""),
            mode=env.get(ENV_MODE, defaults.mode),
            min_age_seconds=int(env.get(ENV_MIN_AGE_SECONDS, defaults.min_age_seconds)),
            commit_partitions=int(env.get(ENV_COMMIT_PARTITIONS, defaults.commit_partitions)),
            address_partitions=int(env.get(ENV_ADDRESS_PARTITIONS, defaults.address_partitions)),
            timeout_minutes=int(env.get(ENV_TIMEOUT_MINUTES, defaults.timeout_minutes)),
        )
