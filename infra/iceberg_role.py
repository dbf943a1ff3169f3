"""The role the Iceberg catalog assumes to vend engines credentials for one table's files (docs/iceberg.md, "Data
files"; chalicelib/adapters/sts_credentials.py). Only the API's role may assume it. Its own policy reaches the
objects under every repository's ``data/`` (where tables keep their files) and the listing of the bucket; each
AssumeRole narrows that with a session policy to one table's root, read-only for a reader."""

from __future__ import annotations

from typing import Any

from chalicelib.settings import ENV_ICEBERG_DATA_ROLE_ARN

__all__ = ["ICEBERG_DATA_ROLE", "add_iceberg_data_role"]

ICEBERG_DATA_ROLE = "IcebergDataRole"
TABLE_FILE_ACTIONS = [
    "s3:AbortMultipartUpload",
    "s3:DeleteObject",
    "s3:GetObject",
    "s3:ListMultipartUploadParts",
    "s3:PutObject",
]


def add_iceberg_data_role(resources: dict[str, Any], api_role: str, api_policy: str, api_function: str) -> None:
    """Adds the role, lets the API's role assume it, and names it to the API (LAKELET_ICEBERG_DATA_ROLE_ARN)."""
    role_arn = {"Fn::GetAtt": [ICEBERG_DATA_ROLE, "Arn"]}
    resources[ICEBERG_DATA_ROLE] = {
        "Type": "AWS::IAM::Role",
        "Properties": {
            "Description": "Assumed by the Iceberg catalog, with a session policy per table: engines' table files.",
            "MaxSessionDuration": 3600,
            "AssumeRolePolicyDocument": {
                "Version": "2012-10-17",
                "Statement": [
                    {
                        "Effect": "Allow",
                        "Principal": {"AWS": {"Fn::GetAtt": [api_role, "Arn"]}},
                        "Action": "sts:AssumeRole",
                    }
                ],
            },
            "Policies": [
                {
                    "PolicyName": "iceberg-table-files",
                    "PolicyDocument": {
                        "Version": "2012-10-17",
                        "Statement": [
                            {
                                "Sid": "ListTableFiles",
                                "Effect": "Allow",
                                "Action": "s3:ListBucket",
                                "Resource": {"Fn::GetAtt": ["DataBucket", "Arn"]},
                            },
                            {
                                "Sid": "ReadWriteTableFiles",
                                "Effect": "Allow",
                                "Action": TABLE_FILE_ACTIONS,
                                "Resource": [
                                    {"Fn::Sub": "${DataBucket.Arn}/data/*"},
                                    {"Fn::Sub": "${DataBucket.Arn}/*/data/*"},
                                ],
                            },
                        ],
                    },
                }
            ],
        },
    }
    statements = resources[api_policy]["Properties"]["PolicyDocument"]["Statement"]
    statements.append(
        {"Sid": "VendIcebergCredentials", "Effect": "Allow", "Action": ["sts:AssumeRole"], "Resource": [role_arn]}
    )
    variables = resources[api_function]["Properties"]["Environment"]["Variables"]
    variables[ENV_ICEBERG_DATA_ROLE_ARN] = role_arn
