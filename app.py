"""The Chalice app: the lakeFS API v1 blueprints under /api/v1 and the web UI at /. No logic lives here."""

from __future__ import annotations

from chalice import Chalice
from chalice.app import CloudWatchEvent, Rate

from chalicelib import observability
from chalicelib.api import BLUEPRINTS, URL_PREFIX
from chalicelib.api.endpoint import BINARY_TYPES, accept_anything_by_default, lakefs_error_shape
from chalicelib.api.gc import bp as gc_blueprint
from chalicelib.api.diff_merge import bp as diff_merge_blueprint
from chalicelib.gc.schedule import on_schedule as collect_garbage_everywhere
from chalicelib.webui import bp as webui_blueprint

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
# The web UI's files at / and /assets/{name} (chalicelib/webui.py).
app.register_blueprint(webui_blueprint)


@app.schedule(Rate(1, unit=Rate.DAYS), name="collect_garbage")
def collect_garbage(event: CloudWatchEvent) -> dict[str, object]:
    """EventBridge, daily: prepare every repository with GC rules and start its EMR Serverless job run."""
    return collect_garbage_everywhere()


@app.lambda_function(name="s3_gateway")
def s3_gateway(event: dict[str, object], context: object) -> dict[str, object]:
    """The S3 gateway, deployed behind a Lambda Function URL (README, "S3 gateway"); chalicelib/s3proxy."""
    from chalicelib.s3proxy.function_url import handle_event

    return handle_event(event)


# The commit workflow's tasks (stepfunctions/commit.asl.json names them "${commit_seal}", ...).
@app.lambda_function(name="commit_seal")
def commit_seal(event: dict[str, object], context: object) -> dict[str, object]:
    from chalicelib.workflows import commit

    return commit.seal(event)


@app.lambda_function(name="commit_plan")
def commit_plan(event: dict[str, object], context: object) -> dict[str, object]:
    from chalicelib.workflows import commit

    return commit.plan(event)


@app.lambda_function(name="commit_build_slice")
def commit_build_slice(event: dict[str, object], context: object) -> dict[str, object]:
    from chalicelib.workflows import commit

    return commit.build_slice(event)


@app.lambda_function(name="commit_finish")
def commit_finish(event: dict[str, object], context: object) -> dict[str, object]:
    from chalicelib.workflows import commit

    return commit.finish(event)


@app.lambda_function(name="commit_drop")
def commit_drop(event: dict[str, object], context: object) -> dict[str, object]:
    from chalicelib.workflows import commit

    return commit.drop(event)


# The merge workflow's tasks (stepfunctions/merge.asl.json).
@app.lambda_function(name="merge_plan")
def merge_plan(event: dict[str, object], context: object) -> dict[str, object]:
    from chalicelib.workflows import merge

    return merge.plan(event)


@app.lambda_function(name="merge_build_slice")
def merge_build_slice(event: dict[str, object], context: object) -> dict[str, object]:
    from chalicelib.workflows import merge

    return merge.build_slice(event)


@app.lambda_function(name="merge_finish")
def merge_finish(event: dict[str, object], context: object) -> dict[str, object]:
    from chalicelib.workflows import merge

    return merge.finish(event)


@app.lambda_function(name="merge_drop")
def merge_drop(event: dict[str, object], context: object) -> dict[str, object]:
    from chalicelib.workflows import merge

    return merge.drop(event)
