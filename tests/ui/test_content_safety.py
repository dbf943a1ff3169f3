"""Stored content never runs as a page on Lakelet's origin (issue 20, point 1), replayed in a real browser.

A Developer uploads ``docs/report.html`` whose script, run with an admin's session, would create a user in
Admins and mint a key, and a README.md that links to it relatively (to the object, and to its raw API URL). The
admin previews the README and follows the links, downloads the file, and opens the raw API URL itself: no
script runs and no user is created. Image previews of an SVG with a script, and of HTML named .png, make no
page either. And the quickstart README renders: a table, code, intraword underscores.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests
from playwright.sync_api import Download, expect
from playwright.sync_api import Error as PlaywrightError

from .conftest import UI, Stack
from .test_flows import arrange_repository

MARKER = "LAKELET-XSS-RAN"


def payload(user: str) -> str:
    """What the attacker's script does with the reader's session: a new user in Admins, with a key."""
    return f"""
console.log('{MARKER}');
const h = {{'X-Lakelet-CSRF': '1', 'Content-Type': 'application/json'}};
fetch('/api/v1/auth/users', {{method: 'POST', credentials: 'include', headers: h,
                              body: JSON.stringify({{id: '{user}'}})}})
  .then(() => fetch('/api/v1/auth/groups/Admins/members/{user}', {{method: 'PUT', credentials: 'include', headers: h}}))
  .then(() => fetch('/api/v1/auth/users/{user}/credentials', {{method: 'POST', credentials: 'include', headers: h}}))
  .then(() => {{ document.title = 'pwned' }});
"""


@dataclass
class Developer:
    user: str
    key: str
    secret: str


@pytest.fixture
def developer(ui_stack: Stack) -> Iterator[Developer]:
    user = f"dev-{uuid.uuid4().hex[:8]}"
    assert ui_stack.api("POST", "/auth/users", json={"id": user}).status_code == 201
    assert ui_stack.api("PUT", f"/auth/groups/Developers/members/{user}").status_code == 201
    created = ui_stack.api("POST", f"/auth/users/{user}/credentials")
    assert created.status_code == 201, created.text
    yield Developer(user, created.json()["access_key_id"], created.json()["secret_access_key"])
    ui_stack.api("DELETE", f"/auth/users/{user}")


def upload_as(stack: Stack, who: Developer, repo: str, path: str, data: bytes, content_type: str) -> None:
    response = requests.post(
        f"{stack.local.api_url}/repositories/{repo}/branches/main/objects",
        params={"path": path},
        data=data,
        headers={"Content-Type": content_type},
        auth=(who.key, who.secret),
        timeout=30,
    )
    assert response.status_code == 201, response.text


def user_exists(stack: Stack, user: str) -> bool:
    status = stack.api("GET", f"/auth/users/{user}").status_code
    assert status in (200, 404), status
    return status == 200


def test_an_uploaded_page_never_runs_with_the_admins_session(
    ui: UI, ui_stack: Stack, repo_name: str, developer: Developer
) -> None:
    attacker_user = f"pwned-{uuid.uuid4().hex[:8]}"
    arrange_repository(ui_stack, repo_name, {"seed.txt": b"seed"})
    report = (
        f"<!doctype html><html><body><h1>Quarterly report</h1><script>{payload(attacker_user)}</script></body></html>"
    )
    raw_api = f"api/v1/repositories/{repo_name}/refs/main/objects?path=docs%2Freport.html"
    readme = f"# Reports\n\nRead [the report](docs/report.html) or [the raw file]({raw_api}).\n"
    upload_as(ui_stack, developer, repo_name, "docs/report.html", report.encode(), "text/html")
    upload_as(ui_stack, developer, repo_name, "README.md", readme.encode(), "text/markdown")

    console: list[str] = []
    ui.context.on("console", lambda message: console.append(message.text))
    ui.login()
    ui.open(f"repositories/{repo_name}/objects")
    ui.page.get_by_role("link", name="README.md", exact=True).click()
    preview = ui.page.get_by_role("region", name="Preview")
    expect(preview.get_by_role("heading", name="Reports")).to_be_visible()

    # The relative link is a route of the UI: the HTML shows as its source text, in the UI's own page.
    link = preview.get_by_role("link", name="the report")
    assert link.get_attribute("href", timeout=1_000).startswith("#/repositories/")
    link.click()
    panel = ui.page.get_by_role("region", name="Object docs/report.html")
    expect(panel).to_contain_text("text/html")
    expect(panel.get_by_role("region", name="Preview")).to_contain_text("<script>")
    assert ui.page.url.startswith(ui_stack.url + "#/repositories/")

    # So is the link written as the raw API URL.
    ui.page.go_back()
    raw = ui.page.get_by_role("region", name="Preview").get_by_role("link", name="the raw file")
    assert raw.get_attribute("href", timeout=1_000).startswith("#/repositories/")
    raw.click()
    expect(ui.page.get_by_role("region", name="Object docs/report.html")).to_be_visible()

    # Download saves the file; the UI stays where it is.
    with ui.page.expect_download() as download:
        ui.page.get_by_role("region", name="Object docs/report.html").get_by_role("link", name="Download").click()
    assert Path(download.value.path()).read_text(encoding="utf-8") == report
    assert ui.page.url.startswith(ui_stack.url + "#/repositories/")

    # The admin opens the raw API URL itself, as the link of the old UI did: a download, never a page.
    opened = ui.context.new_page()
    downloads: list[Download] = []
    # Playwright marks a handler with an attribute, which a builtin method like list.append cannot take.
    opened.on("download", lambda d: downloads.append(d))  # noqa: PLW0108
    try:
        opened.goto(ui_stack.url + raw_api)
    except PlaywrightError as e:
        assert "Download is starting" in str(e)

    ui.page.wait_for_timeout(1_500)  # time for a script that did run to finish its requests
    admins = ui_stack.api("GET", "/auth/groups/Admins/members").json()["results"]
    assert attacker_user not in [member["id"] for member in admins]
    assert not user_exists(ui_stack, attacker_user)
    assert MARKER not in console
    assert [d.suggested_filename for d in downloads] == ["report.html"]
    opened.close()


def test_a_sandboxed_object_runs_no_script_even_when_rendered(
    browser: object, ui_stack: Stack, repo_name: str, developer: Developer
) -> None:
    """Were a browser to render the bytes anyway (inline asked, a type it sniffs), the CSP sandbox keeps the
    script from running; and the payload itself is live: run in the UI's origin it does create the user."""
    attacker_user = f"pwned-{uuid.uuid4().hex[:8]}"
    arrange_repository(ui_stack, repo_name, {"seed.txt": b"seed"})
    page_bytes = f"<script>{payload(attacker_user)}</script>".encode()
    upload_as(ui_stack, developer, repo_name, "notes.txt", page_bytes, "text/plain")
    admin = UI(browser, ui_stack)
    console: list[str] = []
    admin.context.on("console", lambda message: console.append(message.text))
    try:
        admin.login()
        shown = admin.context.new_page()
        response = shown.goto(
            ui_stack.url + f"api/v1/repositories/{repo_name}/refs/main/objects?path=notes.txt&disposition=inline"
        )
        assert response is not None and response.headers["content-security-policy"] == "sandbox; default-src 'none'"
        expect(shown.locator("body")).to_contain_text(MARKER)  # shown as text: nosniff, text/plain
        shown.wait_for_timeout(1_000)
        assert MARKER not in console and not user_exists(ui_stack, attacker_user)
        shown.close()

        # The control: the same script in the UI's own origin does what the attack wants.
        control = f"ctl-{attacker_user}"
        admin.page.evaluate(payload(control).replace("document.title = 'pwned'", "window.controlDone = true"))
        admin.page.wait_for_function("window.controlDone === true")
        assert user_exists(ui_stack, control)
        ui_stack.api("DELETE", f"/auth/users/{control}")
    finally:
        admin.close()


# Wider than any code block of the page, so the test below sees it scroll inside its block.
LONG_CODE_LINE = (
    'rows = repo.branch("main").object("lakes.parquet").reader(mode="rb").read()'
    "  # a long line that must scroll inside its own block rather than widen the page"
)

QUICKSTART = f"""# Lakes quickstart

The table `lakes` has the columns lake_id, name, area_km2 and max_depth_m.

| lake_id | name | area_km2 | max_depth_m |
|--------:|:-----|---------:|------------:|
| 1 | Superior | 82100 | 406 |
| 2 | Victoria | 68870 | 84 |
| 3 | Baikal | 31500 | 1642 |

```python
import lakefs
repo = lakefs.repository("quickstart")
{LONG_CODE_LINE}
```

- [x] load the lakes
- [ ] check the areas

See https://docs.lakefs.io and [the data](lakes.parquet). Words_with_underscores stay as they are.
"""


def test_the_quickstart_readme_renders(ui: UI, ui_stack: Stack, repo_name: str) -> None:
    arrange_repository(ui_stack, repo_name, {"README.md": QUICKSTART.encode(), "lakes.parquet": b"PAR1"})
    ui.login()
    ui.open(f"repositories/{repo_name}/objects?path=README.md")
    preview = ui.page.get_by_role("region", name="Preview")
    table = preview.locator("table")
    expect(table.locator("th")).to_have_text(["lake_id", "name", "area_km2", "max_depth_m"])
    expect(table.locator("tbody tr")).to_have_count(3)
    expect(table.locator("tbody tr").nth(2).locator("td")).to_have_text(["3", "Baikal", "31500", "1642"])
    expect(table.locator("tbody td").nth(2)).to_have_css("text-align", "right")  # the ---: column
    expect(table.locator("th").first).to_have_css("text-transform", "none")  # names as written
    assert "|" not in preview.inner_text()
    expect(preview.get_by_text(re.compile("columns lake_id, name, area_km2 and max_depth_m"))).to_be_visible()
    expect(preview.locator("em")).to_have_count(0)
    expect(preview.get_by_text("Words_with_underscores stay")).to_be_visible()
    expect(preview.locator("pre code")).to_contain_text('repo = lakefs.repository("quickstart")')
    expect(preview.get_by_role("checkbox")).to_have_count(2)
    external = preview.get_by_role("link", name="https://docs.lakefs.io")
    expect(external).to_have_attribute("href", "https://docs.lakefs.io")
    expect(preview.get_by_role("link", name="the data")).to_have_attribute(
        "href", re.compile(r"^#/repositories/.+path=lakes\.parquet")
    )
    # The long code line scrolls inside its block: the block is narrower than its content, the page is not.
    block = preview.locator("pre").first
    assert block.evaluate("e => e.scrollWidth > e.clientWidth")
    assert ui.page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    ui.shot("preview-markdown")


def test_image_previews_never_make_a_page_of_the_uis_origin(
    ui: UI, ui_stack: Stack, repo_name: str, developer: Developer
) -> None:
    """An SVG is previewed from a data: URL (an opaque origin if opened), a raster image from a blob: URL whose
    type the UI chose: neither can become a document that runs script with the admin's session."""
    attacker_user = f"pwned-{uuid.uuid4().hex[:8]}"
    arrange_repository(ui_stack, repo_name, {"seed.txt": b"seed"})
    svg = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="40" height="40"><rect width="40" height="40" fill="teal"/>'
        f"<script>{payload(attacker_user)}</script></svg>"
    ).encode()
    upload_as(ui_stack, developer, repo_name, "logo.svg", svg, "image/svg+xml")
    # A "PNG" whose stored type says HTML: its blob must not carry that type.
    upload_as(
        ui_stack, developer, repo_name, "photo.png", f"<script>{payload(attacker_user)}</script>".encode(), "text/html"
    )
    console: list[str] = []
    ui.context.on("console", lambda message: console.append(message.text))
    ui.login()
    ui.open(f"repositories/{repo_name}/objects?path=logo.svg")
    image = ui.page.get_by_role("img", name="Preview of logo.svg")
    expect(image).to_have_attribute("src", re.compile(r"^data:image/svg\+xml;base64,"))
    ui.page.wait_for_function("document.querySelector('img.preview-image').naturalWidth === 40")
    ui.open(f"repositories/{repo_name}/objects?path=photo.png")
    photo = ui.page.get_by_role("img", name="Preview of photo.png")
    expect(photo).to_have_attribute("src", re.compile(r"^blob:"))
    # Opened in a tab (as "Open image in new tab" does), the blob is an image, not the HTML it holds.
    opened = ui.context.new_page()
    opened.goto(str(photo.get_attribute("src")))
    assert opened.evaluate("document.contentType") == "image/png"
    opened.close()
    ui.page.wait_for_timeout(1_000)
    assert MARKER not in console
    assert not user_exists(ui_stack, attacker_user)
