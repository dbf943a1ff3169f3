"""The sample repository's README runs as pasted: its Python block, in a fresh interpreter configured only
through the lakectl environment variables it names, against a repository created with include_samples."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

import lakefs
import pyarrow.parquet as pq
import pytest
from lakefs.client import Client

from .conftest import LocalProcess

pytestmark = pytest.mark.e2e


def test_the_quickstart_readme_code_branches_commits_and_merges(
    client: Client, local_stack: LocalProcess, tmp_path: Path
) -> None:
    name = f"quickstart-{uuid.uuid4().hex[:8]}"
    prefix = client.storage_config.default_namespace_prefix
    repo = lakefs.Repository(name, client=client).create(
        storage_namespace=prefix.rstrip("/") + "/" + name, include_samples=True
    )
    main = repo.branch("main")
    with main.object("README.md").reader(mode="r") as handle:
        readme = handle.read()
    blocks = re.findall(r"^```python\n(.*?)^```$", readme, re.MULTILINE | re.DOTALL)
    assert len(blocks) == 1 and f'lakefs.repository("{name}")' in blocks[0]
    before = main.get_commit().id

    env = {key: value for key, value in os.environ.items() if not key.startswith(("LAKECTL_", "LAKEFS_"))}
    env.update(
        {
            "HOME": str(tmp_path),  # no ~/.lakectl.yaml: the variables the README names are the only configuration
            "LAKECTL_SERVER_ENDPOINT_URL": local_stack.endpoint,
            "LAKECTL_CREDENTIALS_ACCESS_KEY_ID": local_stack.access_key_id,
            "LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY": local_stack.secret_access_key,
        }
    )
    done = subprocess.run(
        [sys.executable, "-c", blocks[0]],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "[('lakes.parquet', 'changed')]" in done.stdout

    assert "Keep the lakes deeper than 100 m" in [commit.message for commit in main.log(max_amount=5)]
    assert main.get_commit().id != before
    with main.object("lakes.parquet").reader(mode="rb") as handle:
        table = pq.read_table(io.BytesIO(handle.read()))
    depths = table.column("max_depth_m").to_pylist()
    assert depths and min(depths) > 100
    with repo.ref(before).object("lakes.parquet").reader(mode="rb") as handle:
        assert pq.read_table(io.BytesIO(handle.read())).num_rows > len(depths)  # the old table is still there
