"""What each Lambda function of the app may do: the one table of function permissions, and the IAM statements
and environment it turns into.

Every function the Chalice app defines must have an entry in FUNCTION_ACCESS: infra/build.py refuses to build a
template for a function nobody has decided the permissions of. Each statement names the resources it touches
(a table, the bucket or a prefix of it, the key, the application, a state machine); no statement has a wildcard
action, and no write or delete is allowed on "*". The only statement on "*" is X-Ray's, in
.chalice/policy-xray.json, because X-Ray has no resources to name.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

from chalicelib import settings
from chalicelib import settings as gc_settings  # the GC settings live in chalicelib/settings.py now
from chalicelib.graveler.runs.plan_json import Json

from .state_machines import StateMachine

# The logical ids of the tables in lakelet.yaml, by the field of chalicelib's TableNames that names them.
TABLES: dict[str, str] = {
    "repositories": "RepositoriesTable",
    "branches": "BranchesTable",
    "tags": "TagsTable",
    "commits": "CommitsTable",
    "staging": "StagingTable",
    "auth": "AuthTable",
    "pulls": "PullsTable",
}
DATA_BUCKET = "DataBucket"
SECRETS_KEY = "SecretsKey"
GC_APPLICATION = "GCApplication"
GC_JOB_ROLE = "GCJobRole"
# The stack parameter listing the functions lambda hooks may invoke, and the condition that it is not empty.
HOOK_FUNCTIONS = "HookFunctions"
HOOK_FUNCTIONS_GIVEN = "HookFunctionsGiven"
WEBHOOK_DESTINATIONS = "WebhookDestinations"
# Where make deploy puts the GC job and its Python environment, and where the job writes its logs.
ARTIFACT_PREFIX = "lakelet/${Stage}/emr"
# The GC job's package as make package builds it (infra/gc_bundle.py) and make deploy uploads it.
GC_BUNDLE = "lakelet_gc.zip"

_METADATA_READ = [
    "dynamodb:BatchGetItem",
    "dynamodb:ConditionCheckItem",
    "dynamodb:DescribeTable",
    "dynamodb:GetItem",
    "dynamodb:Query",
    "dynamodb:Scan",
]
_METADATA_WRITE = ["dynamodb:BatchWriteItem", "dynamodb:DeleteItem", "dynamodb:PutItem", "dynamodb:UpdateItem"]
# GC reads and writes its own files only: <namespace>/_lakefs/retention/gc/..., wherever the namespace is in
# the bucket (at its root or under a prefix).
_GC_FILES = ["_lakefs/retention/gc/*", "*/_lakefs/retention/gc/*"]
# Every file of Lakelet's own (ranges, metaranges, workflow files): <namespace>/_lakefs/...
_LAKELET_FILES = ["_lakefs/*", "*/_lakefs/*"]
# A refs dump's files, and its scratch chunks among them.
_DUMP_FILES = ["_lakefs/refs_dump/*", "*/_lakefs/refs_dump/*"]
_DUMP_SCRATCH = ["_lakefs/refs_dump/scratch/*", "*/_lakefs/refs_dump/scratch/*"]


class Metadata(Enum):
    """Access to the DynamoDB tables."""

    NONE = "none"
    READ = "read"
    READ_WRITE = "read-write"


class Data(Enum):
    """Access to the data bucket."""

    NONE = "none"
    # Objects, ranges and metaranges of every repository: the API and the S3 gateway.
    READ_WRITE = "read-write"
    # Read any object (the workflow steps that only read ranges and metaranges).
    READ = "read"
    # Read any object, write only Lakelet's own files under <namespace>/_lakefs/ (ranges, metaranges, the
    # conflicts of a failed merge): the workflow steps that write ranges never touch object data.
    READ_WRITE_RANGES = "read-write-ranges"
    # Only the files of garbage collection: rules.json, the prepared inputs of a run.
    GC_FILES = "gc-files"


@dataclass(frozen=True, slots=True)
class FunctionAccess:
    """What one function may touch."""

    metadata: Metadata = Metadata.NONE
    data: Data = Data.NONE
    # Encrypt and decrypt with the secrets key (secret access keys, the server key).
    secrets: bool = False
    # Start EMR Serverless job runs of the GC application, passing the GC job role.
    starts_gc_jobs: bool = False
    # Start and describe executions of the state machines built from stepfunctions/*.asl.json.
    starts_workflows: bool = False
    # Answer HTTP on a Lambda Function URL (the S3 gateway: its paths are beyond what Chalice routes express).
    function_url: bool = False
    # Its schedule (if it has one) is the GCSchedule parameter rather than the expression in app.py.
    gc_schedule: bool = False
    # List and read the import sources: exactly the ImportLocations parameter's locations, nothing else.
    reads_import_sources: bool = False
    # Runs hooks of actions (commits, merges, branch and tag operations): invokes the HookFunctions, and only
    # those (a separate policy that exists only when the parameter is not empty: hook_statements).
    runs_hooks: bool = False
    # Removes a refs dump's scratch chunks and aborts its commits file's multipart upload (the dump workflow's last
    # and failure steps; chalicelib/graveler/dumps/dump_files.py): only under <namespace>/_lakefs/refs_dump/.
    dump_scratch: bool = False


# Keyed by the Chalice function name (the REST API's handler is "api_handler").
FUNCTION_ACCESS: dict[str, FunctionAccess] = {
    # Both serve imported objects' data from their sources (reads, presigned URLs); the API also runs small
    # imports inline.
    "api_handler": FunctionAccess(
        Metadata.READ_WRITE,
        Data.READ_WRITE,
        secrets=True,
        starts_workflows=True,
        runs_hooks=True,
        reads_import_sources=True,
    ),
    "s3_gateway": FunctionAccess(
        Metadata.READ_WRITE, Data.READ_WRITE, secrets=True, function_url=True, reads_import_sources=True
    ),
    "collect_garbage": FunctionAccess(Metadata.READ, Data.GC_FILES, starts_gc_jobs=True, gc_schedule=True),
    # The sweep of retired staging tokens (every 5 minutes): reads repositories and branches, deletes staging rows,
    # strikes dropped tokens from branch records. No data.
    "drop_retired": FunctionAccess(Metadata.READ_WRITE),
    # The commit workflow (stepfunctions/commit.asl.json).
    # Seal runs the pre-commit hooks on the sealed changes: it reads the action files (objects of the branch, through
    # its ranges), records each run under _lakefs/actions/, and invokes lambda hooks (found missing by
    # tests/infra/test_iam_sufficiency.py once the pre-commit hooks moved here).
    "commit_seal": FunctionAccess(Metadata.READ_WRITE, Data.READ_WRITE_RANGES, runs_hooks=True),
    "commit_plan": FunctionAccess(Metadata.READ, Data.READ),
    "commit_build_slice": FunctionAccess(Metadata.READ, Data.READ_WRITE_RANGES),
    "commit_finish": FunctionAccess(Metadata.READ_WRITE, Data.READ_WRITE_RANGES),
    # Landed is the last step: it runs the post-commit hooks, and records their run under _lakefs/actions/.
    "commit_landed": FunctionAccess(Metadata.READ_WRITE, Data.READ_WRITE_RANGES, runs_hooks=True),
    # The merge workflow (stepfunctions/merge.asl.json). Plan seals the destination's staging token.
    "merge_plan": FunctionAccess(Metadata.READ_WRITE, Data.READ),
    "merge_build_slice": FunctionAccess(Metadata.READ, Data.READ_WRITE_RANGES),
    "merge_finish": FunctionAccess(Metadata.READ_WRITE, Data.READ_WRITE_RANGES),
    "merge_landed": FunctionAccess(Metadata.READ_WRITE, Data.READ_WRITE_RANGES, runs_hooks=True),
    # The import workflow (stepfunctions/import.asl.json). Plan moves the import branch and writes the slice
    # manifest the Distributed Map reads (<namespace>/_lakefs/imports/<id>/slices-*.json: found missing by
    # tests/infra/test_iam_sufficiency.py, as an AccessDenied on the first import would have); build slice reads the
    # sources (only the allowed import locations) and writes ranges; commit moves the import branch; merge goes
    # through the one merge entry (hooks included) and may start the merge workflow.
    "import_plan": FunctionAccess(Metadata.READ_WRITE, Data.READ_WRITE_RANGES, reads_import_sources=True),
    "import_build_slice": FunctionAccess(Metadata.READ, Data.READ_WRITE_RANGES, reads_import_sources=True),
    "import_commit": FunctionAccess(Metadata.READ_WRITE, Data.READ_WRITE_RANGES),
    "import_merge": FunctionAccess(Metadata.READ_WRITE, Data.READ_WRITE_RANGES, runs_hooks=True, starts_workflows=True),
    "import_fail": FunctionAccess(Metadata.READ, Data.READ_WRITE_RANGES),
    # The repository dump and restore workflows (stepfunctions/dump.asl.json, restore.asl.json). Every step reads the
    # dump files and writes only under <namespace>/_lakefs/ (the dump files, the manifest, the task's status record,
    # whose update_time each step moves); the restore's load steps and its roll-back write the target's commits,
    # branches and tags (and the roll-back drops a restored branch's staging area).
    "dump_run": FunctionAccess(Metadata.READ, Data.READ_WRITE_RANGES),
    "dump_finish": FunctionAccess(Metadata.READ, Data.READ_WRITE_RANGES, dump_scratch=True),
    "dump_fail": FunctionAccess(Metadata.READ, Data.READ_WRITE_RANGES, dump_scratch=True),
    "restore_check": FunctionAccess(Metadata.READ, Data.READ_WRITE_RANGES),
    "restore_commits": FunctionAccess(Metadata.READ_WRITE, Data.READ_WRITE_RANGES),
    "restore_refs": FunctionAccess(Metadata.READ_WRITE, Data.READ_WRITE_RANGES),
    "restore_rollback": FunctionAccess(Metadata.READ_WRITE, Data.READ_WRITE_RANGES),
}


def _sub(text: str) -> Json:
    return {"Fn::Sub": text}


def _arn(logical_id: str) -> Json:
    return {"Fn::GetAtt": [logical_id, "Arn"]}


def _statement(sid: str, actions: list[str], resources: list[Any] | Json, condition: Json | None = None) -> Json:
    statement: Json = {"Sid": sid, "Effect": "Allow", "Action": sorted(actions), "Resource": resources}
    if condition:
        statement["Condition"] = condition
    return statement


# The one parameter that says where imports may read from: "bucket:prefix/" entries ("bucket:" for a whole
# bucket), comma-separated. CloudFormation cannot split "s3://bucket/prefix" into its bucket and its prefix
# (Fn::Split takes a literal delimiter, and a prefix holds "/" too), and s3:ListBucket is granted on a bucket with
# the prefix as a condition: hence this form. The Lambdas get the same string as LAKELET_IMPORT_ALLOWED_LOCATIONS,
# which chalicelib/settings.py reads into s3:// locations; its AllowedPattern is settings'
# IMPORT_LOCATIONS_PARAMETER_PATTERN (set by infra/build.py), so the stack refuses what the app would.
# A String, not a CommaDelimitedList: a pattern over the whole value can count the entries.
IMPORT_LOCATIONS = "ImportLocations"
IMPORTS_ALLOWED = "ImportsAllowed"  # the template's condition: ImportLocations is not empty
# How many entries get a listing grant: one policy per slot (a policy has one condition set, and CloudFormation
# has no loop over a list). The parameter's pattern and the settings refuse more.
IMPORT_LISTING_SLOTS = settings.IMPORT_LOCATIONS_MAX
IMPORT_LOCATIONS_PATTERN = settings.IMPORT_LOCATIONS_PARAMETER_PATTERN


def _arn_list(values: Json, suffix: str) -> Json:
    """["arn:*:s3:::<v><suffix>", ...] for each value of a comma-joined list, in template functions (CloudFormation
    has no map over a list: join with the ARN in the separator, then split). The partition is left open since the
    separator must be a literal."""
    joined = {"Fn::Join": [f"{suffix},arn:*:s3:::", values]}
    return {"Fn::Split": [",", {"Fn::Join": ["", ["arn:*:s3:::", joined, suffix]]}]}


def import_statements() -> list[Json]:
    """Read exactly the allowed import locations. With none allowed, the statement names only what the data bucket
    grants already (a statement needs a resource), so it adds nothing. Listing is import_listing_resources'."""
    # "bucket:prefix/,..." -> ["bucket/prefix/", ...]: an entry holds one ":" (the parameter's pattern).
    as_paths = {"Fn::Split": [",", {"Fn::Join": ["/", {"Fn::Split": [":", {"Ref": IMPORT_LOCATIONS}]}]}]}
    nothing_to_read = [_sub("${DataBucket.Arn}/_lakefs/imports/no-sources-allowed")]
    return [
        _statement(
            "ReadImportSources",
            ["s3:GetObject"],
            {"Fn::If": [IMPORTS_ALLOWED, _arn_list(as_paths, "*"), nothing_to_read]},
        ),  # type: ignore[arg-type]
    ]


def listing_condition(slot: int) -> str:
    return f"ImportSourceListing{slot}"


def listing_prefixed_condition(slot: int) -> str:
    return f"ImportSourceListing{slot}Prefixed"


def import_listing_resources(roles: list[str]) -> tuple[Json, Json]:
    """(conditions, resources): per slot of ImportLocations, a policy on ``roles`` that exists only when the
    slot is given and grants s3:ListBucket on its bucket, restricted by the s3:prefix condition key to its prefix
    (StringLike "prefix" and "prefix*", as the GetObject grant reads "prefix*"); a whole bucket keeps the bucket.
    Each slot names its own bucket and prefix, so no location's prefix opens another location's bucket."""
    # Padded with empty entries, so that every slot's Fn::Select finds one.
    padded = {
        "Fn::Split": [
            ",",
            {"Fn::Join": [",", [{"Ref": IMPORT_LOCATIONS}, "," * IMPORT_LISTING_SLOTS]]},
        ]
    }
    conditions: Json = {}
    resources: Json = {}
    for slot in range(IMPORT_LISTING_SLOTS):
        entry = {"Fn::Select": [slot, padded]}
        # "bucket:prefix:" split at ":" is [bucket, prefix, ""] (the parameter's pattern allows no ":" in a prefix).
        pair = {"Fn::Split": [":", {"Fn::Join": ["", [entry, ":"]]}]}
        bucket = {"Fn::Select": [0, pair]}
        prefix = {"Fn::Select": [1, pair]}
        given, prefixed = listing_condition(slot), listing_prefixed_condition(slot)
        conditions[given] = {"Fn::Not": [{"Fn::Equals": [entry, ""]}]}
        conditions[prefixed] = {"Fn::And": [{"Condition": given}, {"Fn::Not": [{"Fn::Equals": [prefix, ""]}]}]}
        statement = _statement(
            "ListImportSource",
            ["s3:ListBucket"],
            [{"Fn::Sub": ["arn:${AWS::Partition}:s3:::${Bucket}", {"Bucket": bucket}]}],
        )
        statement["Condition"] = {
            "Fn::If": [
                prefixed,
                {"StringLike": {"s3:prefix": [prefix, {"Fn::Join": ["", [prefix, "*"]]}]}},
                {"Ref": "AWS::NoValue"},
            ]
        }
        resources[f"ImportListSource{slot}Access"] = {
            "Type": "AWS::IAM::Policy",
            "Condition": given,
            "Properties": {
                "PolicyName": f"lakelet-import-list-{slot}",
                "Roles": [{"Ref": role} for role in roles],
                "PolicyDocument": {"Version": "2012-10-17", "Statement": [statement]},
            },
        }
    return conditions, resources


def statements(access: FunctionAccess, log_group: str, state_machines: list[StateMachine]) -> list[Json]:
    """The IAM statements of one function: its log group, then what ``access`` grants."""
    out = [_statement("WriteOwnLogs", ["logs:CreateLogStream", "logs:PutLogEvents"], [_arn(log_group)])]
    tables = [_arn(logical_id) for logical_id in TABLES.values()]
    if access.metadata is Metadata.READ:
        out.append(_statement("ReadMetadata", _METADATA_READ, tables))
    elif access.metadata is Metadata.READ_WRITE:
        out.append(_statement("ReadWriteMetadata", _METADATA_READ + _METADATA_WRITE, tables))
    if access.data is Data.READ_WRITE:
        out.append(_statement("ListData", ["s3:ListBucket"], [_arn(DATA_BUCKET)]))
        out.append(
            _statement(
                "ReadWriteData",
                [
                    "s3:AbortMultipartUpload",
                    "s3:DeleteObject",
                    "s3:GetObject",
                    "s3:ListMultipartUploadParts",
                    "s3:PutObject",
                ],
                [_sub("${DataBucket.Arn}/*")],
            )
        )
    elif access.data is Data.READ:
        out.append(_statement("ReadData", ["s3:GetObject"], [_sub("${DataBucket.Arn}/*")]))
    elif access.data is Data.READ_WRITE_RANGES:
        out.append(_statement("ReadData", ["s3:GetObject"], [_sub("${DataBucket.Arn}/*")]))
        out.append(
            _statement(
                "WriteRanges", ["s3:PutObject"], [_sub(f"${{DataBucket.Arn}}/{prefix}") for prefix in _LAKELET_FILES]
            )
        )
    elif access.data is Data.GC_FILES:
        out.append(
            _statement(
                "ReadWriteGCFiles",
                ["s3:GetObject", "s3:PutObject"],
                [_sub(f"${{DataBucket.Arn}}/{prefix}") for prefix in _GC_FILES],
            )
        )
    if access.secrets:
        out.append(_statement("UseSecretsKey", ["kms:Decrypt", "kms:Encrypt"], [_arn(SECRETS_KEY)]))
    if access.starts_gc_jobs:
        application = (
            "arn:${AWS::Partition}:emr-serverless:${AWS::Region}:${AWS::AccountId}:/applications/${GCApplication}"
        )
        out.append(_statement("StartGCJobRuns", ["emr-serverless:StartJobRun"], [_sub(application)]))
        # StartJobRun with tags needs TagResource on the job run it creates.
        out.append(_statement("TagGCJobRuns", ["emr-serverless:TagResource"], [_sub(application + "/jobruns/*")]))
        out.append(
            _statement(
                "PassGCJobRole",
                ["iam:PassRole"],
                [_arn(GC_JOB_ROLE)],
                {"StringEquals": {"iam:PassedToService": "emr-serverless.amazonaws.com"}},
            )
        )
    if access.dump_scratch:
        out.append(
            _statement(
                "DeleteDumpScratch", ["s3:DeleteObject"], [_sub(f"${{DataBucket.Arn}}/{p}") for p in _DUMP_SCRATCH]
            )
        )
        out.append(
            _statement(
                "AbortDumpUploads", ["s3:AbortMultipartUpload"], [_sub(f"${{DataBucket.Arn}}/{p}") for p in _DUMP_FILES]
            )
        )
    if access.reads_import_sources:
        out.extend(import_statements())
    if access.starts_workflows and state_machines:
        out.append(_statement("StartWorkflows", ["states:StartExecution"], [sm.arn() for sm in state_machines]))
        out.append(
            _statement(
                "DescribeWorkflows", ["states:DescribeExecution"], [sm.executions_arn() for sm in state_machines]
            )
        )
    return out


def hook_statements() -> list[Json]:
    """What a function that runs hooks gets when HookFunctions is given: a synchronous invoke of exactly the
    listed functions (the parameter's pattern admits full ARNs only, never a wildcard)."""
    return [_statement("InvokeHookFunctions", ["lambda:InvokeFunction"], {"Ref": HOOK_FUNCTIONS})]


def environment(access: FunctionAccess, state_machines: list[StateMachine]) -> Json:
    """The environment variables infra/ adds to a function: the names and ids AWS chooses at deploy time.

    The names are chalicelib's settings contract (chalicelib/settings.py).
    """
    env: Json = {
        settings.ENV_BUCKET: {"Ref": DATA_BUCKET},
        # Every function builds the same services (chalicelib/wiring.py), which need the key's id even where
        # nothing is decrypted.
        settings.ENV_KMS_KEY_ID: _arn(SECRETS_KEY),
    }
    if access.starts_gc_jobs:
        env.update(
            {
                gc_settings.ENV_APPLICATION_ID: {"Ref": GC_APPLICATION},
                gc_settings.ENV_EXECUTION_ROLE_ARN: _arn(GC_JOB_ROLE),
                gc_settings.ENV_ENTRY_POINT: _sub(f"s3://${{ArtifactBucket}}/{ARTIFACT_PREFIX}/gc_job.py"),
                gc_settings.ENV_PY_FILES: _sub(f"s3://${{ArtifactBucket}}/{ARTIFACT_PREFIX}/{GC_BUNDLE}"),
                gc_settings.ENV_ARCHIVE: {"Ref": "GCJobArchive"},
                gc_settings.ENV_LOG_URI: _sub(f"s3://${{ArtifactBucket}}/{ARTIFACT_PREFIX}/logs/"),
                gc_settings.ENV_MODE: {"Ref": "GCMode"},
            }
        )
    if access.starts_workflows:
        env.update({sm.environment_variable: sm.arn() for sm in state_machines})
    if access.runs_hooks:
        env[settings.ENV_HOOK_FUNCTIONS] = {"Fn::Join": [",", {"Ref": HOOK_FUNCTIONS}]}
        env[settings.ENV_WEBHOOK_DESTINATIONS] = {"Ref": WEBHOOK_DESTINATIONS}
    if access.reads_import_sources or access.starts_workflows:
        env[settings.ENV_IMPORT_ALLOWED_LOCATIONS] = {"Ref": IMPORT_LOCATIONS}
    return env
