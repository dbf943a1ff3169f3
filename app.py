"""The Chalice app: the lakeFS API v1 blueprints under /api/v1. No logic lives here."""

from __future__ import annotations

from chalice import Chalice

from chalicelib.api import BLUEPRINTS, URL_PREFIX
from chalicelib.api.endpoint import BINARY_TYPES, accept_anything_by_default, lakefs_error_shape

app = Chalice(app_name="lakelet")
app.api.binary_types = list(BINARY_TYPES)
app.register_middleware(accept_anything_by_default, "http")
app.register_middleware(lakefs_error_shape, "http")
for blueprint in BLUEPRINTS:
    app.register_blueprint(blueprint, url_prefix=URL_PREFIX)
