"""``lakelet config`` (write ~/.lakectl.yaml interactively) and ``lakelet doctor`` (endpoint, credentials and
clock, with what is wrong in one line)."""

import email.utils
import time

import typer

from lakelet.commands.context import session
from lakelet.commands.errors import CLIError
from lakelet.commands.output import out
from lakelet.commands.settings import default_config_path, normalize_endpoint, read_config_file, write_config_file

MAX_SKEW_SECONDS = 300


def register(app: typer.Typer) -> None:
    app.command("config", help="Write the lakectl configuration file (~/.lakectl.yaml) interactively.")(config)
    app.command("doctor", help="Check the endpoint, the credentials and the clock.")(doctor)


def config() -> None:
    path = session().config_path or default_config_path()
    current = read_config_file(path)
    creds, server = current.get("credentials") or {}, current.get("server") or {}
    key = typer.prompt("Access key ID", default=creds.get("access_key_id") or None)
    secret = typer.prompt("Secret access key", default=creds.get("secret_access_key") or None, hide_input=True)
    endpoint = typer.prompt(
        "Server endpoint URL (e.g. http://127.0.0.1:8000)", default=server.get("endpoint_url") or None
    )
    normalize_endpoint(endpoint)
    write_config_file(path, endpoint, key, secret)
    out().info(f"wrote {path}")


def doctor() -> None:
    import urllib3

    s = session().settings
    http = urllib3.PoolManager(retries=urllib3.Retry(total=0, redirect=0))
    try:
        health = http.request("GET", s.api_url + "/healthcheck", timeout=10)
    except urllib3.exceptions.HTTPError:
        raise CLIError(
            f"cannot reach {s.endpoint} (from {s.source})",
            "check server.endpoint_url / LAKECTL_SERVER_ENDPOINT_URL, or start 'lakelet up'",
        ) from None
    if health.status >= 400:
        raise CLIError(
            f"{s.api_url}/healthcheck answered {health.status}: is this a lakeFS server?",
            "point server.endpoint_url at the server's root URL",
        )
    me = http.request(
        "GET",
        s.api_url + "/user",
        timeout=10,
        headers=urllib3.make_headers(basic_auth=f"{s.access_key_id}:{s.secret_access_key}"),
    )
    if me.status == 401:
        raise CLIError(
            f"the server refuses access key {s.access_key_id} (from {s.source})",
            "fix credentials.access_key_id/secret_access_key ('lakelet config')",
        )
    if me.status >= 400:
        raise CLIError(f"GET /user answered {me.status}", "check the server's logs")
    date = me.headers.get("Date") or health.headers.get("Date")
    if date:
        skew = abs(email.utils.parsedate_to_datetime(date).timestamp() - time.time())
        if skew > MAX_SKEW_SECONDS:
            raise CLIError(
                f"your clock is {skew:.0f} s off the server's",
                "sync it (NTP): signed URLs and S3 signatures fail beyond 15 min",
            )
    out().line(
        f"ok: {s.endpoint} reachable, credentials of {s.access_key_id} valid, clock in step "
        f"(configuration from {s.source})"
    )
