"""What a month of Lakelet costs on AWS, beside a lakeFS server on EC2 doing the same work (issue 35, item 6).

Usage: .venv/bin/python bench/cost.py [--results bench/results.json] [--json]

Three workloads (idle; a team; heavy) are priced from the us-east-1 list prices written below, each with the page
it comes from. The prices were copied by hand from those pages as the author knew them on PRICES_AS_OF; they are
not fetched, so check them before relying on a figure (a price change is a one-line edit here).

Lakelet's AWS calls per operation are the ones ``make bench`` counted at moto (bench/stack.py, "aws_calls": each
DynamoDB and S3 request one warm API or gateway call made through the official lakeFS client), read from
bench/results.json when it holds them; MEASURED_REQUESTS below is a copy of those lists from a full run, used when
it does not. What is not counted but assumed (durations, item sizes, the mix of operations, GC's size) is in
ASSUMPTIONS, and docs/performance.md repeats it.

lakeFS is priced the way its docs size it (docs.lakefs.io, "Sizing guide": 1 core and 512 MB at least, more cores
for throughput, fast local NVMe disks as a metadata cache): an NVMe instance (c5d), two of them behind a load
balancer for the heavy workload, with its KV store either in DynamoDB on demand or in RDS for PostgreSQL. lakeFS's
KV makes the same kind of reads and writes per operation as Lakelet (its graveler is the model Lakelet follows), so
its DynamoDB calls are taken to be Lakelet's; that is an assumption, not a count of lakeFS.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HOURS_PER_MONTH = 730
PRICES_AS_OF = "2025-11 (us-east-1 list prices, on-demand, no free tier, no savings plans)"
# (price in USD, unit, source page)
PRICES: dict[str, tuple[float, str, str]] = {
    "lambda_gb_s": (0.0000166667, "GB-second (x86)", "https://aws.amazon.com/lambda/pricing/"),
    "lambda_request": (0.20 / 1e6, "request", "https://aws.amazon.com/lambda/pricing/"),
    "apigw_rest_request": (3.50 / 1e6, "REST API request (first 333M)", "https://aws.amazon.com/api-gateway/pricing/"),
    "ddb_rru": (0.125 / 1e6, "read request unit, on demand", "https://aws.amazon.com/dynamodb/pricing/on-demand/"),
    "ddb_wru": (0.625 / 1e6, "write request unit, on demand", "https://aws.amazon.com/dynamodb/pricing/on-demand/"),
    "ddb_storage_gb": (0.25, "GB-month", "https://aws.amazon.com/dynamodb/pricing/on-demand/"),
    "s3_storage_gb": (0.023, "GB-month, Standard, first 50 TB", "https://aws.amazon.com/s3/pricing/"),
    "s3_storage_gb_over_50tb": (0.022, "GB-month, Standard, next 450 TB", "https://aws.amazon.com/s3/pricing/"),
    "s3_write_request": (0.005 / 1000, "PUT, COPY, POST, LIST request", "https://aws.amazon.com/s3/pricing/"),
    "s3_read_request": (0.0004 / 1000, "GET, HEAD and other requests", "https://aws.amazon.com/s3/pricing/"),
    "sfn_transition": (0.025 / 1000, "state transition, standard", "https://aws.amazon.com/step-functions/pricing/"),
    "emr_vcpu_h": (0.052624, "vCPU-hour, EMR Serverless", "https://aws.amazon.com/emr/pricing/"),
    "emr_gb_h": (0.0057785, "GB-hour, EMR Serverless", "https://aws.amazon.com/emr/pricing/"),
    "logs_ingest_gb": (0.50, "GB ingested, CloudWatch Logs", "https://aws.amazon.com/cloudwatch/pricing/"),
    "kms_key_month": (1.00, "customer managed key-month", "https://aws.amazon.com/kms/pricing/"),
    "kms_request": (0.03 / 10000, "request", "https://aws.amazon.com/kms/pricing/"),
    "ec2_c5d_large_h": (
        0.096,
        "hour, c5d.large (2 vCPU, 4 GiB, 50 GB NVMe)",
        "https://aws.amazon.com/ec2/pricing/on-demand/",
    ),
    "ec2_c5d_xlarge_h": (
        0.192,
        "hour, c5d.xlarge (4 vCPU, 8 GiB, 100 GB NVMe)",
        "https://aws.amazon.com/ec2/pricing/on-demand/",
    ),
    "ebs_gp3_gb": (0.08, "GB-month gp3 (root volume)", "https://aws.amazon.com/ebs/pricing/"),
    "alb_h": (0.0225, "hour, Application Load Balancer", "https://aws.amazon.com/elasticloadbalancing/pricing/"),
    "alb_lcu_h": (0.008, "LCU-hour", "https://aws.amazon.com/elasticloadbalancing/pricing/"),
    "rds_pg_t4g_micro_h": (
        0.016,
        "hour, db.t4g.micro PostgreSQL single-AZ",
        "https://aws.amazon.com/rds/postgresql/pricing/",
    ),
    "rds_pg_m6g_large_h": (
        0.152,
        "hour, db.m6g.large PostgreSQL single-AZ",
        "https://aws.amazon.com/rds/postgresql/pricing/",
    ),
    "rds_gp3_gb": (0.115, "GB-month RDS gp3 storage", "https://aws.amazon.com/rds/postgresql/pricing/"),
}


def price(name: str) -> float:
    return PRICES[name][0]


@dataclass(frozen=True)
class Workload:
    name: str
    api_calls: int  # lakeFS API requests a month (commits not included)
    commits: int
    data_tb: float
    # lakeFS: instances, and the RDS class for the PostgreSQL KV
    ec2_price: str
    instances: int
    rds_price: str
    gc_run_minutes: float  # one scheduled GC run (driver and executors busy), once a day


WORKLOADS = (
    Workload("idle", 0, 0, 0.0, "ec2_c5d_large_h", 1, "rds_pg_t4g_micro_h", 2.0),
    Workload("team", 50_000, 2_000, 1.0, "ec2_c5d_large_h", 1, "rds_pg_t4g_micro_h", 5.0),
    Workload("heavy", 20_000_000, 100_000, 100.0, "ec2_c5d_xlarge_h", 2, "rds_pg_m6g_large_h", 30.0),
)

# The share of each counted operation in a workload's API calls.
MIX = {
    "stat": 0.30,
    "list 100": 0.20,
    "presigned upload + link": 0.20,
    "upload": 0.05,
    "create branch": 0.05,
    "gateway get": 0.15,
    "gateway put": 0.05,
}
ASSUMPTIONS = {
    "lambda_memory_gb": 1.0,  # .chalice/config.json lambda_memory_size 1024
    "api_ms": 60,  # billed duration of a warm API or gateway call (not measured on AWS)
    "commit_ms": 400,  # an inline commit: the calls of "commit of 1 change" plus writing two small range files
    "log_bytes_per_invocation": 1500,  # the START/END/REPORT lines and one structured log line
    "item_kb": 1.0,  # DynamoDB items are at most 1 KB: one RRU per strongly consistent read, one WRU per write
    "list_rru": 8,  # a Query of 100 staged entries (~300 B each) reads about 30 KB: 8 RRU
    "transact_items": 2,  # create branch writes the branch and its staging token; a transaction costs 2 WRU an item
    "metadata_bytes_per_tb": 2e9,  # DynamoDB bytes (staging, refs) per TB of data; commits live in S3 range files
    "gc_vcpu": 16,  # EMR Serverless defaults: a 4 vCPU / 16 GB driver and three executors of the same size
    "gc_gb": 64,
    "lakefs_root_gb": 20,
    "lakefs_rds_gb": 20,
    "heavy_alb_lcu": 2,  # average LCUs of 20M requests a month (~8 a second at peak)
}

# A copy of the request lists a full `make bench` recorded (bench/results.json, row "aws_calls", details.requests),
# with the paths left out.
MEASURED_REQUESTS: dict[str, list[str]] = {
    "stat": ["DynamoDB GetItem"] * 2,
    "upload": ["DynamoDB GetItem", "S3 PUT", "DynamoDB PutItem", "DynamoDB GetItem"],
    "list 100": ["DynamoDB GetItem", "DynamoDB Query"],
    "create branch": ["DynamoDB GetItem", "DynamoDB TransactWriteItems"],
    "commit of 1 change": ["DynamoDB GetItem"]
    + ["DynamoDB Query"] * 3
    + ["DynamoDB PutItem", "DynamoDB Query", "S3 GET", "S3 PUT", "S3 PUT", "DynamoDB PutItem", "DynamoDB PutItem"]
    + ["DynamoDB BatchWriteItem"],
    "presigned upload + link": ["DynamoDB GetItem", "S3 HEAD", "S3 PUT", "DynamoDB PutItem", "DynamoDB GetItem"]
    + ["S3 DELETE"],
    "gateway put": ["DynamoDB GetItem", "S3 PUT", "DynamoDB PutItem", "DynamoDB GetItem"],
    "gateway get": ["DynamoDB GetItem", "DynamoDB GetItem", "S3 GET"],
}
ASSUMPTIONS |= {"workflow_commit_share": 0.01, "transitions_per_workflow": 20}


def measured_requests(results: Path | None) -> tuple[dict[str, list[str]], str]:
    """The request lists of ``make bench``'s aws_calls row, as "Service VERB" strings; the copy above without one."""
    if results is not None and results.is_file():
        for row in json.loads(results.read_text()).get("rows", []):
            requests = row.get("details", {}).get("requests") if row.get("id") == "aws_calls" else None
            if requests and set(MIX) | {"commit of 1 change"} <= set(requests):
                short = {op: [_short(r) for r in calls] for op, calls in requests.items()}
                shown = results.name if results.resolve().parent == Path(__file__).resolve().parent else results
                return short, f"bench/{shown} (make bench, aws_calls)"
    return MEASURED_REQUESTS, "bench/cost.py MEASURED_REQUESTS (a copy of a full make bench run)"


def _short(request: str) -> str:
    """ "DynamoDB POST DynamoDB_20120810.GetItem" -> "DynamoDB GetItem"; "S3 PUT /bucket/key" -> "S3 PUT"."""
    service, verb, target = request.split(" ", 2)
    return f"DynamoDB {target.rsplit('.', 1)[-1]}" if service == "DynamoDB" else f"{service} {verb}"


@dataclass(frozen=True)
class Units:
    """What one operation consumes of each priced unit."""

    rru: float = 0.0
    wru: float = 0.0
    s3_write: int = 0
    s3_read: int = 0

    def __add__(self, other: Units) -> Units:
        return Units(
            self.rru + other.rru, self.wru + other.wru, self.s3_write + other.s3_write, self.s3_read + other.s3_read
        )

    def times(self, n: float) -> Units:
        return Units(self.rru * n, self.wru * n, int(self.s3_write * n), int(self.s3_read * n))


def units(operation: str, requests: list[str]) -> Units:
    total = Units()
    for request in requests:
        if request == "DynamoDB Query" and operation == "list 100":
            total += Units(rru=ASSUMPTIONS["list_rru"])
        elif request in ("DynamoDB GetItem", "DynamoDB Query"):
            total += Units(rru=1)
        elif request in ("DynamoDB PutItem", "DynamoDB UpdateItem", "DynamoDB DeleteItem", "DynamoDB BatchWriteItem"):
            total += Units(wru=1)
        elif request == "DynamoDB TransactWriteItems":
            total += Units(wru=2 * ASSUMPTIONS["transact_items"])
        elif request in ("S3 PUT", "S3 POST"):
            total += Units(s3_write=1)
        elif request in ("S3 GET", "S3 HEAD"):
            total += Units(s3_read=1)
        elif request == "S3 DELETE":
            pass  # S3 does not charge DELETE requests
        else:
            raise ValueError(f"no price for {request!r} ({operation}): add it to bench/cost.py units()")
    return total


def monthly_units(workload: Workload, requests: dict[str, list[str]]) -> Units:
    total = units("commit of 1 change", requests["commit of 1 change"]).times(workload.commits)
    for operation, share in MIX.items():
        total += units(operation, requests[operation]).times(workload.api_calls * share)
    return total


def _storage(workload: Workload) -> dict[str, float]:
    gb = workload.data_tb * 1000
    first = min(gb, 50_000)
    return {"S3 storage": first * price("s3_storage_gb") + (gb - first) * price("s3_storage_gb_over_50tb")}


def _requests(u: Units, kv: str) -> dict[str, float]:
    lines = {"S3 requests": u.s3_write * price("s3_write_request") + u.s3_read * price("s3_read_request")}
    if kv == "dynamodb":
        lines["DynamoDB requests"] = u.rru * price("ddb_rru") + u.wru * price("ddb_wru")
    return lines


def _metadata_storage(workload: Workload) -> float:
    return workload.data_tb * ASSUMPTIONS["metadata_bytes_per_tb"] / 1e9 * price("ddb_storage_gb")


def lakelet(workload: Workload, requests: dict[str, list[str]]) -> dict[str, float]:
    """Lakelet's monthly bill, by line."""
    u = monthly_units(workload, requests)
    api_share = 1 - MIX["gateway get"] - MIX["gateway put"]  # the gateway is a Lambda function URL: no API Gateway
    invocations = workload.api_calls + workload.commits
    gb_s = (
        ASSUMPTIONS["lambda_memory_gb"]
        * (workload.api_calls * ASSUMPTIONS["api_ms"] + workload.commits * ASSUMPTIONS["commit_ms"])
        / 1000
    )
    workflows = workload.commits * ASSUMPTIONS["workflow_commit_share"]
    gc_hours = 30 * workload.gc_run_minutes / 60
    lines = {
        **_storage(workload),
        **_requests(u, "dynamodb"),
        "DynamoDB storage": _metadata_storage(workload),
        "API Gateway": (workload.api_calls * api_share + workload.commits) * price("apigw_rest_request"),
        "Lambda": invocations * price("lambda_request") + gb_s * price("lambda_gb_s"),
        "Step Functions": workflows * ASSUMPTIONS["transitions_per_workflow"] * price("sfn_transition"),
        "EMR Serverless (GC)": gc_hours
        * (ASSUMPTIONS["gc_vcpu"] * price("emr_vcpu_h") + ASSUMPTIONS["gc_gb"] * price("emr_gb_h")),
        "CloudWatch Logs": invocations * ASSUMPTIONS["log_bytes_per_invocation"] / 1e9 * price("logs_ingest_gb"),
        "KMS": price("kms_key_month"),
    }
    return {k: round(v, 2) for k, v in lines.items()}


def lakefs(workload: Workload, requests: dict[str, list[str]], kv: str) -> dict[str, float]:
    """A lakeFS server on EC2 for the same work, its KV in DynamoDB (``kv="dynamodb"``) or RDS PostgreSQL."""
    u = monthly_units(workload, requests)
    hours = HOURS_PER_MONTH * workload.instances
    lines = {
        **_storage(workload),
        **_requests(u, kv),
        "EC2": hours * price(workload.ec2_price)
        + workload.instances * ASSUMPTIONS["lakefs_root_gb"] * price("ebs_gp3_gb"),
        # The same scheduled GC: lakeFS's is a Spark job too (its docs run it on EMR or Databricks).
        "EMR Serverless (GC)": 30
        * workload.gc_run_minutes
        / 60
        * (ASSUMPTIONS["gc_vcpu"] * price("emr_vcpu_h") + ASSUMPTIONS["gc_gb"] * price("emr_gb_h")),
    }
    if workload.instances > 1:
        lines["Load balancer"] = HOURS_PER_MONTH * (price("alb_h") + ASSUMPTIONS["heavy_alb_lcu"] * price("alb_lcu_h"))
    if kv == "dynamodb":
        lines["DynamoDB storage"] = _metadata_storage(workload)
    else:
        lines["RDS PostgreSQL"] = HOURS_PER_MONTH * price(workload.rds_price) + ASSUMPTIONS["lakefs_rds_gb"] * price(
            "rds_gp3_gb"
        )
    return {k: round(v, 2) for k, v in lines.items()}


def table(requests: dict[str, list[str]]) -> list[dict[str, Any]]:
    rows = []
    for workload in WORKLOADS:
        bills = {
            "Lakelet": lakelet(workload, requests),
            "lakeFS + DynamoDB": lakefs(workload, requests, "dynamodb"),
            "lakeFS + RDS": lakefs(workload, requests, "rds"),
        }
        rows.append(
            {"workload": workload.name, **{k: round(sum(v.values()), 2) for k, v in bills.items()}, "lines": bills}
        )
    return rows


SERVERLESS_LINES = ("API Gateway", "Lambda", "CloudWatch Logs", "Step Functions")


def break_even_calls(requests: dict[str, list[str]]) -> tuple[float, float, float]:
    """Lakelet's serverless lines per million API calls (the mix, no commits), the heavy lakeFS servers' fixed
    compute (EC2 and the load balancer), and the calls a month at which the first passes the second."""
    million = Workload("probe", 1_000_000, 0, 0.0, "ec2_c5d_large_h", 1, "rds_pg_t4g_micro_h", 0.0)
    per_million = sum(lakelet(million, requests)[k] for k in SERVERLESS_LINES)
    heavy = lakefs(WORKLOADS[-1], requests, "dynamodb")
    fixed = heavy["EC2"] + heavy.get("Load balancer", 0.0)
    return per_million, fixed, fixed / per_million * 1e6


def render(rows: list[dict[str, Any]], source: str) -> str:
    names = ("Lakelet", "lakeFS + DynamoDB", "lakeFS + RDS")
    out = [f"Monthly AWS bill, USD ({PRICES_AS_OF}; AWS calls per operation from {source})", ""]
    out.append("| workload | " + " | ".join(names) + " | S3 storage (all three) |")
    out.append("|---|" + "---:|" * (len(names) + 1))
    for r in rows:
        storage = r["lines"]["Lakelet"]["S3 storage"]
        out.append(f"| {r['workload']} | " + " | ".join(f"{r[n]:,.2f}" for n in names) + f" | {storage:,.2f} |")
    out.append("")
    for r in rows:
        out.append(f"{r['workload']}:")
        for name in names:
            parts = ", ".join(f"{k} {v:,.2f}" for k, v in r["lines"][name].items() if v)
            out.append(f"  {name}: {parts}")
    return "\n".join(out)


def render_break_even(requests: dict[str, list[str]]) -> str:
    per_million, fixed, calls = break_even_calls(requests)
    return (
        f"Lakelet's API Gateway, Lambda and logs: {per_million:.2f} USD per million API calls; the heavy lakeFS "
        f"servers (2 x c5d.xlarge and a load balancer): {fixed:.2f} USD a month whatever the calls; Lakelet's "
        f"per-call lines pass them from about {calls / 1e6:.0f} million calls a month ({calls / 2.628e6:.0f} a "
        "second on average)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", type=Path, default=Path(__file__).resolve().parent / "results.json")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON instead of the table")
    args = parser.parse_args(argv)
    requests, source = measured_requests(args.results)
    rows = table(requests)
    print(json.dumps(rows, indent=2) if args.json else render(rows, source) + "\n\n" + render_break_even(requests))
    return 0 if all(math.isfinite(r["Lakelet"]) for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
