"""One module per S3 operation. Each takes the request's Context and returns a Response (or raises)."""
