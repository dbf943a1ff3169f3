"""Implementations of the graveler and auth ports: AWS (DynamoDB, S3) and in-memory twins for tests.

The AWS adapters are the only modules that import boto3 or pynamodb; they translate driver errors into
graveler errors (``raise ... from e``).
"""

__all__ = [
    "action_yaml",
    "dynamodb",
    "emr",
    "hooks",
    "import_records",
    "kms",
    "memory",
    "memory_auth",
    "memory_blocks",
    "memory_cipher",
    "memory_jobs",
    "memory_metadata",
    "memory_pages",
    "memory_protection",
    "memory_pulls",
    "memory_refs",
    "memory_source",
    "memory_staging",
    "memory_usage",
    "memory_workflows",
    "s3",
    "s3_source",
    "sigv4",
    "stepfunctions",
    "sts_credentials",
]
