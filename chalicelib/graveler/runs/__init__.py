"""Long operations, inline or as workflows: the one place that decides (``workflow_runner``), the slices a commit or
merge is cut into (``slicing``) and the JSON form of the plans the workflow's steps hand each other
(``plan_json``).
"""

__all__ = [
    "plan_json",
    "slicing",
    "workflow_runner",
]
