"""The entry point of Lakelet's garbage collection on EMR Serverless (``sparkSubmit.entryPoint``): the job itself
is the package emr/lakelet_gc/, shipped beside this file as the zip named by ``--conf spark.submit.pyFiles``
(``make package`` builds it, ``make deploy`` uploads both; docs/gc.md). Run from the checkout
(``spark-submit emr/gc_job.py ...``), Python finds the package in this file's own directory.

Python 3.9 compatible (the default Python of EMR 7 images), as is the package.
"""

import sys

from lakelet_gc import main

if __name__ == "__main__":
    sys.exit(main())
