"""lakelet/stack/moto_dispatch.py: moto's service apps built while it is installed carry no flask-cors hook (the
guard in front of moto writes the stack's CORS headers), and uninstall gives moto its switch back."""

from __future__ import annotations

from moto.moto_server.werkzeug_app import create_backend_app

from lakelet.stack import moto_dispatch


def _hooks() -> int:
    app = create_backend_app("dynamodb")
    return sum(len(hooks) for hooks in app.after_request_funcs.values())


def test_service_apps_are_built_without_flask_cors_while_installed() -> None:
    was = bool(moto_dispatch._saved)
    moto_dispatch.uninstall()
    try:
        with_cors = _hooks()
        assert with_cors >= 1
        moto_dispatch.install()
        assert _hooks() == with_cors - 1
        moto_dispatch.install()  # idempotent
        moto_dispatch.uninstall()
        assert _hooks() == with_cors
    finally:
        if was:
            moto_dispatch.install()
