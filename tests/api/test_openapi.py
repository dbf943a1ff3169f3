"""GET /api/v1/openapi.json (api/openapi.py): the document of what the API serves, public as lakeFS's."""

from __future__ import annotations

import json

from .support import Api, body_of


def test_the_document_is_served_without_credentials(anonymous: Api) -> None:
    response = anonymous.get("/openapi.json")
    assert response.status_code == 200 and response.headers["Content-Type"] == "application/json"
    document = body_of(response)
    assert document["openapi"].startswith("3.") and document["servers"] == [{"url": "/api/v1"}]
    create = document["paths"]["/repositories/{repository}/branches/{branch}/staging/pmpu"]["post"]
    assert create["operationId"] == "create_presign_multipart_upload"
    batch = document["paths"]["/repositories/{repository}/branches/{branch}/objects/batch"]["post"]
    assert batch["x-lakelet"] == "lakelet-extension"
    assert json.loads(json.dumps(document)) == document
