"""Users and access keys: who may call the API. The store is a port; adapters implement it."""

__all__ = ["addresses", "conditions", "errors", "policies", "ports", "records", "service", "tokens"]
