"""Settings for the whole suite: no test may reach real AWS with a developer's own credentials.

moto accepts any key pair, so fixed fake ones are set before any test builds a boto3 or PynamoDB client: the
local stack's default pair, which the e2e stack's moto requires (lakelet/moto_guard.py), so that a Spark session
started by any test of the process (its workers keep the environment they started with) can sign for it.
"""

import os

from lakelet.defaults import DEFAULT_ACCESS_KEY_ID, DEFAULT_SECRET_ACCESS_KEY

os.environ["AWS_ACCESS_KEY_ID"] = DEFAULT_ACCESS_KEY_ID
os.environ["AWS_SECRET_ACCESS_KEY"] = DEFAULT_SECRET_ACCESS_KEY
for _name in ("AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN", "AWS_PROFILE"):
    os.environ.pop(_name, None)
