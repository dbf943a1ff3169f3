"""Users and access keys: who may call the API. The store is a port; adapters implement it."""
