"""JobStarter on EMR Serverless: StartJobRun of emr/gc_job.py on a Spark application, through boto3.

The application, the job's runtime role, the log location and the timeout are fixed per deployment (given at
construction); each request brings the script, its arguments and its spark-submit flags.
"""

from __future__ import annotations

from typing import Any

from botocore.client import BaseClient
from botocore.exceptions import BotoCoreError, ClientError

from chalicelib.gc.ports import JobRunRequest
from chalicelib.graveler import errors

__all__ = ["EmrServerlessStarter"]


class EmrServerlessStarter:
    """The JobStarter port on an EMR Serverless application, through a boto3 ``emr-serverless`` client."""

    def __init__(
        self,
        client: BaseClient,
        application_id: str,
        execution_role_arn: str,
        log_uri: str = "",
        timeout_minutes: int = 0,
    ) -> None:
        self._client = client
        self._application_id = application_id
        self._execution_role_arn = execution_role_arn
        self._log_uri = log_uri
        self._timeout_minutes = timeout_minutes

    @classmethod
    def connect(
        cls,
        region: str,
        endpoint_url: str | None,
        *,
        application_id: str,
        execution_role_arn: str,
        log_uri: str = "",
        timeout_minutes: int = 0,
    ) -> EmrServerlessStarter:
        import boto3

        client = boto3.client("emr-serverless", region_name=region, endpoint_url=endpoint_url)
        return cls(client, application_id, execution_role_arn, log_uri, timeout_minutes)

    def start(self, request: JobRunRequest) -> str:
        spark_submit: dict[str, Any] = {
            "entryPoint": request.entry_point,
            "entryPointArguments": list(request.arguments),
        }
        if request.spark_submit_parameters:
            spark_submit["sparkSubmitParameters"] = request.spark_submit_parameters
        params: dict[str, Any] = {
            "applicationId": self._application_id,
            "executionRoleArn": self._execution_role_arn,
            "name": request.name,
            "jobDriver": {"sparkSubmit": spark_submit},
            "tags": dict(request.tags),
        }
        if request.idempotency_token:
            params["clientToken"] = request.idempotency_token
        if self._log_uri:
            params["configurationOverrides"] = {
                "monitoringConfiguration": {"s3MonitoringConfiguration": {"logUri": self._log_uri}}
            }
        if self._timeout_minutes:
            params["executionTimeoutMinutes"] = self._timeout_minutes
        try:
            response = self._client.start_job_run(**params)
        except ClientError as e:
            code = e.response.get("Error", {}).get("Code", "")
            raise errors.StorageError(f"EMR Serverless StartJobRun failed ({code}): {e}") from e
        except BotoCoreError as e:
            raise errors.StorageError(f"EMR Serverless StartJobRun failed: {e}") from e
        return str(response["jobRunId"])
