"""The Lambda handlers of the Step Functions workflows: each parses its input, runs one step and returns small
JSON. The state machines are stepfunctions/<name>.asl.json; the steps are chalicelib/graveler/commit_steps.py."""
