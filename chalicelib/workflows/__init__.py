"""The Lambda handlers of the Step Functions workflows, and nothing else: each parses its input, runs one step and
returns small JSON. The state machines are stepfunctions/<name>.asl.json; the steps are
chalicelib/graveler/commit/steps.py and chalicelib/graveler/merge/steps.py. Which work runs as a workflow and
which inline is decided in graveler (workflow_runner.py, behind the WorkflowRunner port); ``tasks.HANDLERS`` is
the one table app.py registers the handlers from."""

__all__ = ["commit", "dumps", "imports", "merge", "tasks"]
