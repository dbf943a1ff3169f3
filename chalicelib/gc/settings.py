"""The knobs of scheduled garbage collection. They are read with the rest in chalicelib/settings.py (the one
place that reads os.environ); this module names them for the gc package."""

from chalicelib.settings import (  # noqa: F401
    ENV_APPLICATION_ID,
    ENV_EXECUTION_ROLE_ARN,
    ENV_ENTRY_POINT,
    ENV_ARCHIVE,
    ENV_LOG_URI,
    ENV_SPARK_PARAMETERS,
    ENV_MODE,
    ENV_MIN_AGE_SECONDS,
    ENV_COMMIT_PARTITIONS,
    ENV_ADDRESS_PARTITIONS,
    ENV_TIMEOUT_MINUTES,
    MODES,
    DAY_SECONDS,
    GCSettings,
)
