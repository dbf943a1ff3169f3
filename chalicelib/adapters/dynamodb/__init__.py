"""DynamoDB adapters (PynamoDB): the RefStore, StagingStore and AuthStore ports, and the tables behind them.

Every driver error is translated into a graveler error here (translate.py); none leaves the package.
"""

from .auth import DynamoAuthStore
from .refs import DynamoRefStore
from .staging import DynamoStagingStore
from .tables import TableNames, create_tables

__all__ = [
    "DynamoAuthStore",
    "DynamoRefStore",
    "DynamoStagingStore",
    "TableNames",
    "branch_protection",
    "create_tables",
    "pull_requests",
    "repository_metadata",
    "tables",
    "usage",
]
