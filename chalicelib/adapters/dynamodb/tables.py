"""The DynamoDB tables Lakelet uses: their names, and creating them where they do not exist yet.

Deployed stacks get their tables from infra/ (CloudFormation); the local stack and the tests call
``create_tables`` with the same key schemas (the PynamoDB models in models.py are the one definition).
"""

from __future__ import annotations

from .models import model_set

# The names live in names.py (models.py builds its models from them); named here, where callers find them.
from .names import TableNames
from .translate import storage_errors

__all__ = ["TableNames", "create_tables"]


def create_tables(names: TableNames, region: str, endpoint_url: str | None = None) -> None:
    """Creates every table that does not exist yet (on-demand billing) and waits until each is active.

    Idempotent: existing tables are left as they are. Raises StorageError when DynamoDB refuses.
    """
    models = model_set(names, region, endpoint_url)
    for model in models.all():
        with storage_errors():
            # create_table checks existence itself; wait=True polls DescribeTable until ACTIVE.
            model.create_table(wait=True, billing_mode="PAY_PER_REQUEST")
