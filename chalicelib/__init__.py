"""Everything the Lambda functions import: the graveler engine, its AWS adapters and the HTTP glue."""
