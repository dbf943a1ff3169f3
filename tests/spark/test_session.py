"""The tier's sessions carry the pinned jars whatever Spark state the process already holds.

In a whole ``make test`` run the GC tests and the stack's local GC leave sessions behind, some started on other
threads (where ``getActiveSession`` does not see them); reusing their JVM without the jars broke every test of this
tier once.
"""

from __future__ import annotations

import threading

from lakelet.stack.spark_local import local_session
from tests.spark.support import JARS_DIR, start_spark


def test_a_session_left_on_another_thread_does_not_hide_the_jars() -> None:
    worker = threading.Thread(target=lambda: local_session(address_partitions=2).range(3).count())
    worker.start()
    worker.join()

    spark = start_spark({})
    try:
        assert spark.range(5).count() == 5
        jars = spark.sparkContext.getConf().get("spark.jars", "")
        assert str(JARS_DIR / "hadoop-aws-3.3.4.jar") in jars.split(",")
    finally:
        spark.stop()
