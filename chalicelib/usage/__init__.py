"""The usage report (lakeFS's getUsageReportSummary): the installation's id, kept from setup on, and how many API
and S3 gateway requests it served each month.

Requests are counted in the container that serves them and added to the stored monthly counter (an atomic add)
at most once every flush interval, so that no request pays a write of its own: meter.py. The store is a port
(ports.py) with a memory twin and a DynamoDB adapter.
"""

from .meter import UsageMeter
from .ports import InstallationReport, UsageRecord, UsageStore

__all__ = ["InstallationReport", "UsageMeter", "UsageRecord", "UsageStore", "meter", "ports"]
