"""The stack's own AWS calls reach moto's response callbacks without Flask (issue 43).

Why: a profile of ``lakelet up`` uploading through the API (four AWS calls an upload) put Flask, werkzeug and
moto's domain dispatcher at about 13% of the CPU, beside moto's own work: per request, the dispatcher infers the
service from the signature and walks moto's host patterns (S3's comes late), and Flask pushes an application and a
request context, opens a session, sends its signals, routes, and pops it all again, for a callback that reads
nothing of it. moto's ``mock_aws`` mode calls the same callbacks without Flask.

What changes: :func:`install` puts :func:`_call` in place of ``DomainDispatcherApplication.__call__``, the
innermost layer of the stack's moto server (under the key-pair guard and the journal, which see every request as
before). A request this process answers in process (marked ``IN_PROCESS`` by lakelet/stack/inprocess_aws.py:
no socket's request can carry the mark) and signed for a service of :data:`DIRECT_SERVICES` goes straight to the
callback that the service's Flask app would have run:

- the service's Flask app is the one the dispatcher itself picks, asked once per (service, region, target
  prefix): for these services the dispatcher's choice depends on nothing else (S3 Control's paths and hosts are
  left to it);
- the route is the app's own URL map, matched as Flask matches it; a request it would not route plainly (no
  match, a redirect, a method it does not allow) goes the WSGI way, before anything has run;
- the request object is the one Flask would build (the app's request class over the same environ); the callback
  gets it, its raw URL and its headers, as moto's Flask view passes them; the answer is the same Flask response,
  called as Flask calls it, so HEAD, 204 and 304 answers and Content-Length come out as before;
- moto's HTTP errors answer as Flask answers them in debug mode (moto's apps are): the error's own response;
  anything else, and a ``BadRequestKeyError`` (which debug mode traps), propagates, as through Flask.

A plain S3 PutObject or DynamoDB PutItem (an upload's two writes) does not reach the callback: moto_fast_writes.py
answers it from moto's backends, as the callback would.

Requests without the mark (moto's port: the CLI, Spark, browsers) and journal replays (recovery.py, whose
environs never carry the mark) take the WSGI path unchanged. :func:`uninstall` gives moto its ``__call__`` back.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from botocore.exceptions import ClientError
from moto.core.utils import convert_to_flask_response
from moto.moto_api import recorder
from moto.moto_server.werkzeug_app import DomainDispatcherApplication
from werkzeug.exceptions import BadRequestKeyError, HTTPException
from werkzeug.http import HTTP_STATUS_CODES

from lakelet.stack import moto_fast_writes

#: The services whose in-process calls skip Flask: those the stack's clients call. For each, moto's dispatcher
#: picks the backend from the signature's service and region (and DynamoDB's target prefix) alone.
DIRECT_SERVICES = frozenset({"dynamodb", "s3", "states", "kms", "sts", "iam", "lambda"})
#: Requests answered without Flask, and in-process requests that went the WSGI way (tests read them).
counters = {"direct": 0, "wsgi": 0}
_ROUTES = "_lakelet_direct_apps"
_lock = threading.Lock()
_saved: list[Callable[..., Any]] = []
_WSGI_CALL: Callable[..., Any] = DomainDispatcherApplication.__call__
# The environ key that marks a request as this process's own (inprocess_aws.IN_PROCESS, handed to install: this
# module does not import inprocess_aws, which installs it).
_mark: list[str] = []

StartResponse = Callable[..., Any]


def install(mark: str) -> None:
    """Idempotent. ``mark``: the environ key of the process's own requests."""
    with _lock:
        _mark[:] = [mark]
        if not _saved:
            _saved.append(DomainDispatcherApplication.__call__)
            DomainDispatcherApplication.__call__ = _call  # type: ignore[method-assign,assignment]


def uninstall() -> None:
    with _lock:
        if _saved:
            DomainDispatcherApplication.__call__ = _saved.pop()  # type: ignore[method-assign]


def installed() -> bool:
    return bool(_saved)


def _call(dispatcher: DomainDispatcherApplication, environ: dict[str, Any], start_response: StartResponse) -> Any:
    if _mark and environ.get(_mark[0]) is True:
        answer = _direct(dispatcher, environ, start_response)
        if answer is not None:
            return answer
        counters["wsgi"] += 1
    return _WSGI_CALL(dispatcher, environ, start_response)


def _direct(dispatcher: DomainDispatcherApplication, environ: dict[str, Any], start_response: StartResponse) -> Any:
    """The callback's answer, or None (nothing has run) when the request should go the WSGI way."""
    found = _app_for(dispatcher, environ)
    if found is None:
        return None
    app, service = found
    fast = moto_fast_writes.answer(service, environ)
    if fast is not None:  # a plain PutObject or PutItem, answered as moto answers it
        counters["direct"] += 1
        method = environ["REQUEST_METHOD"]
        return _plain_response(fast, start_response) or _response(app, method, fast)(environ, start_response)
    request = app.request_class(environ)
    try:
        rule, _ = app.create_url_adapter(request).match(return_rule=True)
    except HTTPException:  # not found, a redirect (merged slashes), a method not allowed: Flask's answer
        return None
    view = app.view_functions.get(rule.endpoint)
    if not isinstance(view, convert_to_flask_response) or request.method == "OPTIONS":
        return None
    counters["direct"] += 1
    try:
        response = _respond(app, request, view.callback)
    except BadRequestKeyError:
        raise  # debug mode traps it (Flask.trap_http_exception): it propagates, as it would through Flask
    except HTTPException as error:
        # Flask.handle_http_exception returns it (no handler is registered), finalize_request makes it a response.
        response = app.response_class.force_type(error, environ)
    return response(environ, start_response)


def _respond(app: Any, request: Any, callback: Callable[..., Any]) -> Any:
    """What moto's Flask view (convert_to_flask_response) answers, without Flask's request context."""
    try:
        recorder._record_request(request)
        result = callback(request, request.raw_url, dict(request.headers))
    except ClientError as exc:
        result = 400, {}, exc.response["Error"]["Message"]
    return _response(app, request.method, result)


def _response(app: Any, method: str, result: Any) -> Any:
    """The Flask response moto's view makes of a callback's answer."""
    if len(result) == 3:
        status, headers, content = result
    else:
        status, headers, content = 200, {}, result
    response = app.response_class(response=content, status=status, headers=headers)
    if method == "HEAD" and "content-length" in headers:
        response.headers["Content-Length"] = headers["content-length"]
    return response


def _plain_response(result: tuple[int, dict[str, Any], str], start_response: StartResponse) -> list[bytes] | None:
    answer = plain_answer(*result)
    if answer is None:
        return None
    start_response(answer[0], answer[1])
    return answer[2]


def plain_answer(status: int, headers: dict[str, Any], text: str) -> tuple[str, list[Any], list[bytes]] | None:
    """What Flask's response of a (status, headers, text) answer to a PUT or POST sends, without building it: the
    headers as given, then a Content-Type of text/html when there is none, then the Content-Length. None (Flask
    answers) for headers Flask would treat otherwise: a Content-Length, or a line break in a value."""
    pairs = [(name, str(value)) for name, value in headers.items()]
    names = {name.lower() for name, _ in pairs}
    if "content-length" in names or any("\n" in value or "\r" in value for _, value in pairs):
        return None
    if "content-type" not in names:
        pairs.append(("Content-Type", "text/html; charset=utf-8"))
    data = text.encode()
    pairs.append(("Content-Length", str(len(data))))
    return f"{status} {HTTP_STATUS_CODES[status]}", pairs, [data]


def _app_for(dispatcher: DomainDispatcherApplication, environ: dict[str, Any]) -> tuple[Any, str] | None:
    """The Flask app the dispatcher would hand the request to, with the signature's service, when the app depends
    only on the signature's service and region and the target's prefix; else None."""
    path = str(environ.get("PATH_INFO", ""))
    if path.startswith(("/moto-api", "/latest/")) or path == "/favicon.ico":
        return None
    authorization = environ.get("HTTP_AUTHORIZATION")
    if not authorization:
        return None  # unsigned or presigned: the dispatcher reads the body or the path
    try:  # as the dispatcher reads a SigV4 scope
        _, _, region, service, _ = authorization.split(",")[0].split()[1].split("/")
    except (ValueError, IndexError):
        return None
    service = service.lower()
    if service not in DIRECT_SERVICES:
        return None
    target = str(environ.get("HTTP_X_AMZ_TARGET", ""))
    if service == "dynamodb" and not target:
        return None
    if service == "s3" and (path.startswith("/v20180820/") or "s3-control" in str(environ.get("HTTP_HOST", ""))):
        return None
    key = (service, region, target.split(".", 1)[0])
    apps: dict[tuple[str, str, str], Any] = vars(dispatcher).setdefault(_ROUTES, {})
    app = apps.get(key)
    if app is None:
        app = apps[key] = dispatcher.get_application(environ)
    return app, service
