"""Garbage collection: retention rules, the prepare step (active commits and staged addresses written as files
for the Spark job), and the scheduled handler that prepares every repository with rules and starts the job on
EMR Serverless. The job itself is emr/lakelet_gc/ (entry point emr/gc_job.py); its only contract with this package
is the file layout in layout.py and the range format of graveler/committed/format.py."""

__all__ = ["ports", "prepare", "prepare_status", "rules", "schedule"]
