"""The Lambda handlers of the Step Functions workflows: each parses its input, runs one step and returns small
JSON. The state machines are stepfunctions/<name>.asl.json; the steps are chalicelib/graveler/commit/steps.py and
chalicelib/graveler/merge/steps.py. (launch.py, which decides between inline and a workflow, is still here; it is
meant to move behind a WorkflowRunner port in graveler.)"""

__all__ = ["commit", "merge", "tasks"]
