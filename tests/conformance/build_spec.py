"""Builds tests/conformance/lakefs-served.json: the lakeFS OpenAPI description of the routes Lakelet serves.

Source: the lakefs-sdk package pinned in requirements-dev.txt (1.88.0). openapi-generator built it from
treeverse/lakeFS api/swagger.yml, and it is exactly what the official clients send and expect, so it is
read back out of the SDK rather than copied from a swagger.yml of some other version: each API method gives
its path, HTTP method, path/query/header parameters, body model and response models; each model gives its
JSON schema (pydantic). The output is trimmed to the (method, path) pairs app.py serves.

    .venv/bin/python -m tests.conformance.build_spec   # rewrites lakefs-served.json

test_spec.py checks the committed file is what this script builds, so the two never drift apart.
"""

from __future__ import annotations

import inspect
import json
import re
import sys
from pathlib import Path
from typing import Any

import lakefs_sdk
from lakefs_sdk import api as sdk_api

HERE = Path(__file__).resolve().parent
SPEC_FILE = HERE / "lakefs-served.json"
# What the API serves at /api/v1/openapi.json (chalicelib/api/openapi.py): the lakeFS operations above plus
# Lakelet's extensions, each marked "x-lakelet".
SERVED_FILE = HERE.parents[1] / "chalicelib" / "api" / "openapi.json"

_LAKEFS_NOT_IN_SDK = "lakefs-operation-not-in-sdk"
_EXTENSION = "lakelet-extension"
# (method, path with blank parameters) -> (operationId, kind, description) of every served route that lakefs-sdk
# does not describe.
EXTENSION_OPERATIONS: dict[tuple[str, str], tuple[str, str, str]] = {
    ("GET", "/auth/groups/{}/acl"): ("getGroupACL", _LAKEFS_NOT_IN_SDK, "lakeFS OSS answers 501; so does Lakelet."),
    ("POST", "/auth/groups/{}/acl"): ("setGroupACL", _LAKEFS_NOT_IN_SDK, "lakeFS OSS answers 501; so does Lakelet."),
    ("GET", "/oidc/callback"): ("oauthCallback", _LAKEFS_NOT_IN_SDK, "lakeFS OSS answers 501; so does Lakelet."),
    ("GET", "/auth/capabilities"): (
        "getAuthCapabilities",
        _LAKEFS_NOT_IN_SDK,
        "AuthCapabilities: invite_user and forgot_password, both false (Lakelet sends no mail).",
    ),
    ("GET", "/openapi.json"): ("getOpenAPI", _EXTENSION, "This document (public, as lakeFS's /openapi.json)."),
    ("POST", "/auth/logout"): ("logout", _EXTENSION, "Ends the web UI's cookie session."),
    ("GET", "/user/permissions"): ("getUserPermissions", _EXTENSION, "The web UI's hints of what the caller may do."),
    ("POST", "/repositories/{}/branches/{}/commits/async"): (
        "commitAsync",
        _EXTENSION,
        "Newer lakeFS API: starts a commit, answers TaskCreation {id}.",
    ),
    ("GET", "/repositories/{}/branches/{}/commits/status"): (
        "commitAsyncStatus",
        _EXTENSION,
        "Newer lakeFS API: the status of an asynchronous commit (?id=).",
    ),
    ("POST", "/repositories/{}/refs/{}/merge/{}/async"): (
        "mergeIntoBranchAsync",
        _EXTENSION,
        "Newer lakeFS API: starts a merge, answers TaskCreation {id}.",
    ),
    ("GET", "/repositories/{}/refs/{}/merge/{}/status"): (
        "mergeIntoBranchAsyncStatus",
        _EXTENSION,
        "Newer lakeFS API: the status of an asynchronous merge (?id=).",
    ),
    ("POST", "/repositories/{}/branches/{}/objects/batch"): (
        "uploadObjects",
        _EXTENSION,
        "Lakelet's batch upload of small objects (docs/api.md).",
    ),
}
PREFIX = "/api/v1"
_CALL = re.compile(r"call_api\(\s*'(?P<path>[^']+)', '(?P<method>[A-Z]+)'")
_QUERY = re.compile(r"_query_params\.append\(\('(?P<name>\w+)', _params\['(?P<arg>\w+)'\]")
_HEADER = re.compile(r"_header_params\['(?P<name>[\w-]+)'\] = _params\['(?P<arg>\w+)'\]")
_BODY = re.compile(r"_body_params = _params\['(?P<arg>\w+)'\]")
_FORM = re.compile(r"_form_params\.append\(\('(?P<name>\w+)', _params\['(?P<arg>\w+)'\]")
_RESPONSES = re.compile(r"_response_types_map = \{(?P<body>.*?)\}", re.DOTALL)
_RESPONSE = re.compile(r"'(?P<status>\d+)': (?:\"(?P<type>[^\"]+)\"|None)")
_PATH_PARAMETER = re.compile(r"\{(\w+)\}")
_PRIMITIVES: dict[str, dict[str, Any]] = {
    "str": {"type": "string"},
    "int": {"type": "integer"},
    "bool": {"type": "boolean"},
}


def served_routes() -> set[tuple[str, str]]:
    """(method, path) of every API route app.py serves, path without the /api/v1 prefix (the web UI's files at
    / and /assets/{name} are not API routes)."""
    root = str(HERE.parents[1])
    if root not in sys.path:
        sys.path.insert(0, root)
    from app import app

    return {(m, p.removeprefix(PREFIX)) for p, methods in app.routes.items() if p.startswith(PREFIX) for m in methods}


def _normalize(path: str) -> str:
    return _PATH_PARAMETER.sub("{}", path)


def _scalar(annotation: Any) -> dict[str, Any]:
    text = str(annotation)
    if "List[" in text:
        return {"type": "array", "items": {"type": "string"}}
    if "Bool" in text:
        return {"type": "boolean"}
    if "Int" in text or "int" in text:
        schema: dict[str, Any] = {"type": "integer"}
        for key, bound in (("ge", "minimum"), ("le", "maximum")):
            value = getattr(getattr(annotation, "__metadata__", [None])[0], key, None)
            if value is not None:
                schema[bound] = value
        return schema
    return {"type": "string"}


def _annotation_of(parameter: inspect.Parameter) -> Any:
    annotation = parameter.annotation
    args = getattr(annotation, "__args__", None)
    # Annotated[Optional[X], Field(...)] and Optional[X]: the first argument is what matters.
    while args and type(None) not in args and hasattr(annotation, "__origin__") and annotation.__origin__ is not list:
        annotation = args[0]
        args = getattr(annotation, "__args__", None)
    return annotation


def _model_ref(name: str, models: set[str]) -> dict[str, Any]:
    if name.startswith("Dict[str, str]"):
        return {"type": "object", "additionalProperties": {"type": "string"}}
    if name == "bytearray":
        return {"type": "string", "format": "binary"}
    if name in _PRIMITIVES:
        return dict(_PRIMITIVES[name])
    match = re.fullmatch(r"List\[(\w+)\]", name)
    if match:
        return {"type": "array", "items": _model_ref(match.group(1), models)}
    models.add(name)
    return {"$ref": f"#/components/schemas/{name}"}


def _body_schema(annotation: Any, models: set[str]) -> dict[str, Any]:
    """The schema of a body parameter: a model class, possibly inside Optional[...] or Annotated[...]."""
    if isinstance(annotation, type) and hasattr(lakefs_sdk, annotation.__name__):
        return _model_ref(annotation.__name__, models)
    for arg in getattr(annotation, "__args__", ()):
        if arg is not type(None):
            return _body_schema(arg, models)
    text = str(annotation)
    if "Dict[str, str]" in text or "Dict[StrictStr, StrictStr]" in text:
        return {"type": "object", "additionalProperties": {"type": "string"}}
    raise ValueError(f"unknown body type {annotation!r}")


def _operation(function: Any, method: str, path: str, models: set[str]) -> dict[str, Any]:
    source = inspect.getsource(function)
    signature = inspect.signature(function)
    parameters: list[dict[str, Any]] = []
    for name in _PATH_PARAMETER.findall(path):
        parameters.append({"name": name, "in": "path", "required": True, "schema": {"type": "string"}})
    for kind, pattern in (("query", _QUERY), ("header", _HEADER)):
        for match in pattern.finditer(source):
            if kind == "header" and match["name"] in ("Accept", "Content-Type"):
                continue
            parameter = signature.parameters[match["arg"]]
            parameters.append(
                {
                    "name": match["name"],
                    "in": kind,
                    "required": parameter.default is inspect.Parameter.empty,
                    "schema": _scalar(_annotation_of(parameter)),
                }
            )
    operation: dict[str, Any] = {"operationId": function.__name__.removesuffix("_with_http_info")}
    if parameters:
        operation["parameters"] = parameters
    body = _BODY.search(source)
    if body:
        parameter = signature.parameters[body["arg"]]
        operation["requestBody"] = {
            "required": parameter.default is inspect.Parameter.empty,
            "content": {"application/json": {"schema": _body_schema(parameter.annotation, models)}},
        }
    forms = list(_FORM.finditer(source))
    if forms:
        properties = {m["name"]: {"type": "string", "format": "binary"} for m in forms}
        operation["requestBody"] = {
            "content": {"multipart/form-data": {"schema": {"type": "object", "properties": properties}}}
        }
    responses: dict[str, Any] = {}
    for match in _RESPONSE.finditer(_RESPONSES.search(source)["body"]):  # type: ignore[index]
        response: dict[str, Any] = {"description": match["status"]}
        if match["type"]:
            media = "application/octet-stream" if match["type"] == "bytearray" else "application/json"
            response["content"] = {media: {"schema": _model_ref(match["type"], models)}}
        responses[match["status"]] = response
    operation["responses"] = responses or {"default": {"description": "any"}}
    return operation


def _schemas(names: set[str]) -> dict[str, Any]:
    """JSON schemas of the models and of every model they refer to; Optional fields are nullable."""
    schemas: dict[str, Any] = {}
    pending = sorted(names)
    while pending:
        name = pending.pop()
        if name in schemas:
            continue
        model = getattr(lakefs_sdk, name)
        # pydantic caches the schema it returns: a copy, so that popping its definitions leaves the next build whole.
        schema = json.loads(json.dumps(model.schema(ref_template="#/components/schemas/{model}")))
        for definition in schema.pop("definitions", {}):
            if definition not in schemas:
                pending.append(definition)
        for field_name, field in model.__fields__.items():
            prop = schema["properties"].get(field.alias or field_name)
            if prop is not None and field.allow_none and not field.required:
                prop["nullable"] = True
        schemas[name] = schema
    return dict(sorted(schemas.items()))


def build() -> dict[str, Any]:
    served = {(method, _normalize(path)) for method, path in served_routes()}
    paths: dict[str, dict[str, Any]] = {}
    models: set[str] = set()
    for _, api_class in sorted(inspect.getmembers(sdk_api, inspect.isclass)):
        for name, function in sorted(inspect.getmembers(api_class, inspect.isfunction)):
            if not name.endswith("_with_http_info"):
                continue
            call = _CALL.search(inspect.getsource(function))
            if call is None or (call["method"], _normalize(call["path"])) not in served:
                continue
            paths.setdefault(call["path"], {})[call["method"].lower()] = _operation(
                function, call["method"], call["path"], models
            )
    return {
        "openapi": "3.0.3",
        "info": {
            "title": "lakeFS API (the routes Lakelet serves)",
            "version": lakefs_sdk.__version__,
            "x-source": f"derived from lakefs-sdk {lakefs_sdk.__version__} (generated from treeverse/lakeFS "
            "api/swagger.yml) by tests/conformance/build_spec.py",
        },
        "servers": [{"url": PREFIX}],
        "components": {
            "securitySchemes": {
                "basic_auth": {"type": "http", "scheme": "basic"},
                "jwt_token": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"},
            },
            "schemas": _schemas(models),
        },
        "security": [{"basic_auth": []}, {"jwt_token": []}],
        "paths": dict(sorted(paths.items())),
    }


def served_document(spec: dict[str, Any]) -> dict[str, Any]:
    """``spec`` plus an operation for each served extension, marked ``x-lakelet`` with what it is."""
    document = json.loads(json.dumps(spec))
    document["info"] = {
        **spec["info"],
        "title": "Lakelet: the lakeFS API it serves, and its extensions",
        "description": "lakeFS's operations as lakefs-sdk describes them; operations marked x-lakelet are "
        "lakeFS operations the SDK lacks or Lakelet's own extensions (docs/api.md).",
    }
    paths = document["paths"]
    for method, path in sorted(served_routes()):
        found = EXTENSION_OPERATIONS.get((method, _normalize(path)))
        if found is None:
            continue
        operation_id, kind, description = found
        operation: dict[str, Any] = {"operationId": operation_id, "x-lakelet": kind, "description": description}
        parameters = [
            {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
            for name in _PATH_PARAMETER.findall(path)
        ]
        if parameters:
            operation["parameters"] = parameters
        operation["responses"] = {"default": {"description": "see the description"}}
        paths.setdefault(path, {})[method.lower()] = operation
    document["paths"] = dict(sorted(paths.items()))
    return document


def render(spec: dict[str, Any]) -> str:
    return json.dumps(spec, indent=1, sort_keys=False) + "\n"


if __name__ == "__main__":
    built = build()
    SPEC_FILE.write_text(render(built))
    SERVED_FILE.write_text(render(served_document(built)))
    print(f"wrote {SPEC_FILE} and {SERVED_FILE}")
