"""Settings for the whole suite: no test may reach real AWS with a developer's own credentials.

moto accepts any key pair, so fixed fake ones are set before any test builds a boto3 or PynamoDB client.
"""

import os

for _name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
    os.environ[_name] = "testing"
for _name in ("AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN", "AWS_PROFILE"):
    os.environ.pop(_name, None)
