"""The Chalice app, its wiring only: the lakeFS API v1 blueprints under /api/v1, the web UI at /, the S3 gateway's
Lambda (behind a Function URL), the daily GC schedule, and one Lambda function per workflow task (the commit and
merge state machines' steps, from chalicelib/workflows/tasks.py). No logic lives here."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chalice import Chalice
from chalice.app import CloudWatchEvent, Rate

from chalicelib import observability
from chalicelib.api import BLUEPRINTS, URL_PREFIX
from chalicelib.api.diff_merge import bp as diff_merge_blueprint
from chalicelib.api.endpoint import BINARY_TYPES, accept_anything_by_default, lakefs_error_shape
from chalicelib.api.gc import bp as gc_blueprint
from chalicelib.api.iceberg_endpoint import ICEBERG_PREFIX
from chalicelib.api.iceberg_routes import bp as iceberg_blueprint
from chalicelib.gc.schedule import on_drop_schedule as drop_retired_everywhere
from chalicelib.gc.schedule import on_schedule as collect_garbage_everywhere
from chalicelib.webui import bp as webui_blueprint
from chalicelib.workflows.tasks import HANDLERS as WORKFLOW_TASKS

app = Chalice(app_name="lakelet")
app.api.binary_types = list(BINARY_TYPES)
# First, so it sees every event type and the final answer of the others: logs, metrics, traces.
app.register_middleware(observability.middleware(app), "all")
app.register_middleware(accept_anything_by_default, "http")
app.register_middleware(lakefs_error_shape, "http")
for blueprint in BLUEPRINTS:
    app.register_blueprint(blueprint, url_prefix=URL_PREFIX)
app.register_blueprint(gc_blueprint, url_prefix=URL_PREFIX)
app.register_blueprint(diff_merge_blueprint, url_prefix=URL_PREFIX)
# The Iceberg REST catalog (chalicelib/iceberg, docs/iceberg.md).
app.register_blueprint(iceberg_blueprint, url_prefix=ICEBERG_PREFIX)
# The web UI's files at / and /assets/{name} (chalicelib/webui.py).
app.register_blueprint(webui_blueprint)


@app.schedule(Rate(1, unit=Rate.DAYS), name="collect_garbage")
def collect_garbage(event: CloudWatchEvent) -> dict[str, object]:
    """EventBridge, daily: prepare every repository with GC rules and start its EMR Serverless job run."""
    return collect_garbage_everywhere()


@app.schedule(Rate(5, unit=Rate.MINUTES), name="drop_retired")
def drop_retired(event: CloudWatchEvent) -> dict[str, object]:
    """EventBridge, every 5 minutes: drop the staging rows of tokens retired longer ago than their grace, within
    a budget (chalicelib/graveler/writes/deferred_drop.py); no commit ever drops them itself."""
    return drop_retired_everywhere()


@app.lambda_function(name="s3_gateway")
def s3_gateway(event: dict[str, object], context: object) -> dict[str, object]:
    """The S3 gateway, deployed behind a Lambda Function URL (README, "S3 gateway"); chalicelib/s3proxy."""
    from chalicelib.s3proxy.function_url import handle_event

    return handle_event(event)


def _workflow_task(name: str, step: Callable[[dict[str, Any]], Any]) -> Callable[[dict[str, Any], object], Any]:
    def handle(event: dict[str, Any], context: object) -> Any:
        return step(event)

    # Chalice names a Lambda function's handler "app.<function name>": each must be this module's attribute.
    handle.__name__ = handle.__qualname__ = name
    return handle


# The tasks of the commit and merge workflows (stepfunctions/*.asl.json name them "${commit_seal}", ...), one
# Lambda function each, registered from the one table of chalicelib/workflows/tasks.py.
for _name, _step in WORKFLOW_TASKS.items():
    globals()[_name] = app.lambda_function(name=_name)(_workflow_task(_name, _step))
