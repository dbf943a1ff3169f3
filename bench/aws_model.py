"""A paper model of the commit workflow on AWS (issue 36, item 5): for 100,000, 500,000 and 1,000,000 staged objects,
each step's time against its deployed timeout, when the branch moves, when the execution ends, the inline commit at
the inline threshold against API Gateway's 29 s, and the staging rate of one branch.

Usage: .venv/bin/python bench/aws_model.py [--rows N] [--template PATH] [--json]

Nothing here has run on AWS. The inputs are:
- the deployed template: build/<stage>/package/sam.json when ``make package`` wrote it (each function's Timeout and
  MemorySize, the commit state machine's MaxConcurrency), else the sources it is built from (.chalice/config.json
  and stepfunctions/commit.asl.json); the result says which;
- CPU per row measured here in the same run, at ``--rows`` rows: decoding a staged row from a DynamoDB Query
  response (botocore's parser, PynamoDB, the adapter's _staged; not the HTTP and TLS below them) and writing a row
  into range files (the engine's writer, as bench/engine.py's base build does), scaled to a Lambda by its CPU
  share (memory / 1,769 MB) and LAMBDA_VS_HERE;
- the code's own constants (slices per commit, the inline threshold, the grace of retired tokens, the drop's
  threads, the query page size), imported, not copied;
- AWS's published limits and latencies, in AWS below, each with the documentation page it comes from.

The steps (stepfunctions/commit.asl.json, chalicelib/workflows/commit.py, chalicelib/graveler/commit/steps.py):
the API counts staged rows up to the threshold and starts the execution; Seal (a conditional update); Plan (reads the
base metarange; when the base has fewer ranges than slices, e.g. a first load, it reads every staged row to sample
keys: the case modelled, the worst); BuildSlices (a Map: each slice queries its share of the one staging partition
and writes its ranges to S3); Finish (joins the slices' metaranges, writes the metarange and the commit, swaps the
branch: the branch moves here); Drop (drops the tokens retired more than RETIRED_GRACE_SECONDS ago: this commit's
own rows stay, the previous commit's are due if it landed that long ago, the steady state of a branch taking a large
commit every quarter of an hour, which is the case modelled; a Drop over its timeout is retried 4 times, then the
execution fails after the branch moved).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
PROJECT = BENCH.parent
sys.path[:0] = [str(PROJECT), str(BENCH)]

from chalicelib.adapters.dynamodb.staging import DEFAULT_PAGE_SIZE, DROP_WORKERS  # noqa: E402
from chalicelib.graveler.branch_moves import RETIRED_GRACE_SECONDS  # noqa: E402
from chalicelib.graveler.commit import DEFAULT_MAX_SLICES  # noqa: E402
from chalicelib.graveler.workflow_runner import Workflows  # noqa: E402

SIZES = (100_000, 500_000, 1_000_000)
STEPS = ("Seal", "Plan", "BuildSlices (one slice)", "Finish", "Drop")
FUNCTIONS = {"Seal": "commit_seal", "Plan": "commit_plan", "BuildSlices (one slice)": "commit_build_slice",
             "Finish": "commit_finish", "Drop": "commit_drop"}  # fmt: skip
# A Lambda vCPU against one core of this machine. Not measured (nothing ran on AWS): 1.0 says a full Lambda vCPU
# runs this Python as fast as a core here; a real deployment confirms or corrects it.
LAMBDA_VS_HERE = 1.0

# AWS's published figures: (value, source page, as read). Pages as published in 2024 (API Gateway's timeout
# paragraph after its June 2024 change), not fetched again in this run.
AWS: dict[str, tuple[float, str]] = {
    "partition_wcu": (
        1000,
        "Amazon DynamoDB Developer Guide, 'Service, account, and table quotas' (partition "
        "throughput: 1,000 WCU/s, 3,000 RCU/s per partition), 2024",
    ),
    "partition_rcu": (3000, "same page, 2024"),
    "wcu_bytes": (
        1024,
        "Amazon DynamoDB Developer Guide, 'DynamoDB throughput capacity' (one WCU: one write of up "
        "to 1 KB a second), 2024",
    ),
    "rcu_bytes": (
        4096,
        "same page (one RCU: one strongly consistent read of up to 4 KB; a Query is charged on the "
        "summed size of the items it reads, rounded up to 4 KB), 2024",
    ),
    "batch_write_items": (
        25,
        "Amazon DynamoDB API Reference, 'BatchWriteItem' (up to 25 put or delete requests), 2024",
    ),
    "query_page_bytes": (1 << 20, "Amazon DynamoDB Developer Guide, 'Query operations' (1 MB per page), 2024"),
    "ddb_call_s": (
        0.005,
        "Amazon DynamoDB Developer Guide, 'What is Amazon DynamoDB?' (single-digit millisecond "
        "performance at any scale): 5 ms taken for a point read, write or conditional update, 2024",
    ),
    "ddb_page_s": (
        0.02,
        "same page: single-digit ms plus transfer, 20 ms taken for a full Query page of up to 1 MB "
        "(an assumption within the published figure), 2024",
    ),
    "lambda_vcpu_mb": (
        1769,
        "AWS Lambda Developer Guide, 'Configure Lambda function memory' (at 1,769 MB a "
        "function has the equivalent of one vCPU), 2024",
    ),
    "s3_request_s": (
        0.1,
        "Amazon S3 User Guide, 'Best practices design patterns: optimizing Amazon S3 performance' "
        "(small object latencies of roughly 100-200 ms): 100 ms per PUT or GET, 2024",
    ),
    "sfn_transition_s": (
        0.05,
        "AWS Step Functions Developer Guide, 'Step Functions service quotas' (standard "
        "workflows: state transitions are throttled, no latency published): 50 ms per state and "
        "Lambda invoke taken as an assumption, 2024",
    ),
    "sfn_map_inline_max": (
        40,
        "AWS Step Functions Developer Guide, 'Map state in inline mode' (up to 40 concurrent iterations), 2024",
    ),
    "apigw_timeout_s": (
        29,
        "Amazon API Gateway Developer Guide, 'Amazon API Gateway quotas' (integration timeout "
        "29 s by default for REST APIs), 2024",
    ),
}
RETRY_ATTEMPTS = 5  # commit.asl.json: one try and MaxAttempts 4 on States.ALL
RETRY_WAITS = 1 + 2 + 4 + 8  # IntervalSeconds 1, BackoffRate 2.0


def aws(name: str) -> float:
    return AWS[name][0]


@dataclass(frozen=True)
class Deployed:
    """What the template deploys: per workflow function (timeout s, memory MB), the API's, the Map's concurrency."""

    functions: dict[str, tuple[float, int]]
    api: tuple[float, int]
    sweep: tuple[float, int]
    map_concurrency: int
    source: str


@dataclass(frozen=True)
class Cpu:
    """Seconds of CPU per row on this machine, and the bytes of one staged row as DynamoDB sizes it."""

    decode_s: float  # a staged row out of a Query response
    write_s: float  # a row into range files
    rows_per_range: int
    row_bytes: int


def _chalice_function(config: dict[str, Any], stage: str, name: str) -> tuple[float, int]:
    own = config["stages"][stage].get("lambda_functions", {}).get(name, {})
    return float(own.get("lambda_timeout", config["lambda_timeout"])), int(
        own.get("lambda_memory_size", config["lambda_memory_size"])
    )


def deployed(template: Path | None = None, stage: str = "dev") -> Deployed:
    """The figures from the packaged template when it exists, else from the sources it is built from."""
    path = template or PROJECT / "build" / stage / "package" / "sam.json"
    names = [*FUNCTIONS.values(), "api_handler", "collect_garbage"]
    if path.exists():
        resources = json.loads(path.read_text())["Resources"]
        found: dict[str, tuple[float, int]] = {}
        for logical, res in resources.items():
            props = res.get("Properties", {})
            for name in names:  # chalice names commit_seal CommitSeal and the API's function APIHandler
                if logical.lower() == name.replace("_", "").lower():
                    found[name] = (float(props["Timeout"]), int(props["MemorySize"]))
        machine = resources["CommitStateMachine"]["Properties"]  # infra/state_machines.py: <Name>StateMachine
        # The definition is a string inside Fn::Sub: its MaxConcurrency is read out of the text.
        concurrency = int(re.findall(r'MaxConcurrency\\*"\s*:\s*(\d+)', json.dumps(machine))[0])
        source = f"{path.relative_to(PROJECT) if path.is_relative_to(PROJECT) else path} (packaged template)"
    else:
        config = json.loads((PROJECT / ".chalice" / "config.json").read_text())
        found = {name: _chalice_function(config, stage, name) for name in names}
        asl = json.loads((PROJECT / "stepfunctions" / "commit.asl.json").read_text())
        concurrency = int(asl["States"]["BuildSlices"]["MaxConcurrency"])
        source = ".chalice/config.json and stepfunctions/commit.asl.json (no packaged template: run make package)"
    return Deployed(
        {step: found[f] for step, f in FUNCTIONS.items()},
        found["api_handler"],
        found["collect_garbage"],
        concurrency,
        source,
    )


def measure_cpu(rows: int) -> Cpu:
    """Per row, on this machine: a Query page decoded as the adapter decodes it, and rows written into ranges."""
    from fixture_repo import CountingBlockStore, build, entry_of, key_of

    from chalicelib.adapters.dynamodb.models import StagedRow
    from chalicelib.adapters.dynamodb.staging import _staged
    from chalicelib.graveler.committed import CommittedManager

    items = []
    for n in range(rows):
        e = entry_of(n)
        row = StagedRow(staging_token="repo-main:6f1c0d9e-4a3b-4c55-9a51-0c2a1b7d9e11", key=key_of(n),
                        physical_address=e.physical_address, size=e.size, etag=e.etag, mtime=e.mtime,
                        content_type=e.content_type, user_metadata=dict(e.user_metadata) or None)  # fmt: skip
        items.append(row.serialize())
    wire = json.dumps({"Items": items}).encode()
    row_bytes = math.ceil(len(wire) / rows)  # attribute names and values: about DynamoDB's item size
    # PynamoDB calls botocore's client, whose parser walks the Query output shape before PynamoDB sees the items.
    import botocore.session
    from botocore.parsers import create_parser

    shape = botocore.session.get_session().get_service_model("dynamodb").operation_model("Query").output_shape
    response = {"body": wire, "headers": {}, "status_code": 200}
    started = time.process_time()
    parsed = create_parser("json").parse(response, shape)
    decoded = [_staged(StagedRow.from_raw_data(item)) for item in parsed["Items"]]
    decode_s = (time.process_time() - started) / rows
    assert len(decoded) == rows
    manager = CommittedManager(CountingBlockStore())
    started = time.process_time()
    metarange = build(manager, rows)
    write_s = (time.process_time() - started) / rows
    ranges = manager.ranges("s3://bucket/repos/one", metarange)
    return Cpu(decode_s, write_s, max(1, rows // max(1, len(ranges))), row_bytes)


@dataclass(frozen=True)
class Model:
    deployed: Deployed
    cpu: Cpu
    threshold: int = Workflows().commit_threshold
    slices: int = DEFAULT_MAX_SLICES
    page_rows: int = DEFAULT_PAGE_SIZE

    def scale(self, memory: int) -> float:
        """CPU seconds here -> seconds on a Lambda of ``memory`` MB."""
        return LAMBDA_VS_HERE / min(1.0, memory / aws("lambda_vcpu_mb"))

    def query(self, rows: int, memory: int, readers: int = 1) -> float:
        """``readers`` Lambdas each reading rows/readers of one partition, pages in sequence, decoded as read;
        together they share the partition's read capacity."""
        own = rows / readers
        page_rows = min(self.page_rows, max(1, int(aws("query_page_bytes") // self.cpu.row_bytes)))
        each = math.ceil(own / page_rows) * aws("ddb_page_s") + own * self.cpu.decode_s * self.scale(memory)
        capacity = rows * self.cpu.row_bytes / aws("rcu_bytes") / aws("partition_rcu")
        return max(each, capacity)

    def drop(self, rows: int, memory: int) -> float:
        """Deleting ``rows`` of one partition: keys read, DROP_WORKERS threads of 25-item batches, capped by the
        partition's write capacity (a delete costs the WCU of the item's size)."""
        wcu = math.ceil(self.cpu.row_bytes / aws("wcu_bytes"))
        batches = rows / aws("batch_write_items") / DROP_WORKERS * aws("ddb_call_s")
        return max(self.query(rows, memory), batches, rows * wcu / aws("partition_wcu"))

    def staging_rate(self) -> float:
        """Writes a second on one branch: one staging token is one partition key."""
        return aws("partition_wcu") / math.ceil(self.cpu.row_bytes / aws("wcu_bytes"))

    def slice_time(self, rows: int, memory: int) -> float:
        own = rows / self.slices
        ranges = math.ceil(own / self.cpu.rows_per_range)
        read = self.query(rows, memory, readers=min(self.slices, self.deployed.map_concurrency))
        s3 = aws("s3_request_s") * (1 + ranges + 1)  # base metarange, its ranges, its own metarange
        return read + own * self.cpu.write_s * self.scale(memory) + s3

    def commit(self, rows: int, previous: int | None = None) -> dict[str, Any]:
        """The workflow at ``rows`` staged rows, the previous commit's ``previous`` rows (default: as many) due."""
        previous = rows if previous is None else previous
        d, hop = self.deployed, aws("sfn_transition_s")
        api_mem = d.api[1]
        start = self.query(self.threshold + 1, api_mem) + aws("ddb_call_s") * 2 + hop  # count, then StartExecution
        need = {
            "Seal": aws("ddb_call_s") * 4,  # repository, branch, emptiness query, conditional update
            "Plan": aws("ddb_call_s") * 3 + aws("s3_request_s") + self.query(rows, d.functions["Plan"][1]),
            "BuildSlices (one slice)": self.slice_time(rows, d.functions["BuildSlices (one slice)"][1]),
            "Finish": aws("s3_request_s") * (self.slices + 1) + aws("ddb_call_s") * 4,
            "Drop": aws("ddb_call_s") + self.drop(previous, d.functions["Drop"][1]),
        }
        steps, t, moved = [], start, 0.0
        failed, reached = False, True
        for name in STEPS:
            timeout = d.functions[name][0]
            took = need[name]
            if name.startswith("BuildSlices"):
                waves = math.ceil(self.slices / max(1, min(d.map_concurrency, aws("sfn_map_inline_max"))))
                wall = waves * (took + hop) + hop
            else:
                wall = took + hop
            over = took > timeout
            if not reached:
                wall = 0.0
            elif over:
                # Cut at the timeout and retried; the Drop's deletes stick between tries, the others start over.
                wall = RETRY_ATTEMPTS * (timeout + hop) + RETRY_WAITS
                failed = True
            t += wall
            if name == "Finish" and reached and not failed:
                moved = t
            steps.append({"step": name, "seconds": took, "timeout": timeout, "ratio": took / timeout, "over": over,
                          "reached": reached})  # fmt: skip
            reached = reached and not failed
        return {"rows": rows, "started": start, "steps": steps, "branch_moved": moved or None,
                "execution_ends": t, "failed": failed}  # fmt: skip

    def inline(self, rows: int, previous_due: int = 0) -> float:
        """The inline commit in the API's Lambda: count, seal, plan, every slice in turn, finish, drop."""
        mem = self.deployed.api[1]
        work = self.query(rows, mem) * 3 + rows * self.cpu.write_s * self.scale(mem)  # count, plan, slices
        s3 = aws("s3_request_s") * (2 * self.slices + 3 + math.ceil(rows / self.cpu.rows_per_range))
        drop = self.drop(previous_due, mem) if previous_due else 0.0
        return work + s3 + aws("ddb_call_s") * 12 + drop


def run(rows: int, template: Path | None = None) -> dict[str, Any]:
    model = Model(deployed(template), measure_cpu(rows))
    commits = [model.commit(n) for n in SIZES]
    first = [model.commit(n, previous=0) for n in SIZES]
    worst = max((s for s in commits[-1]["steps"]), key=lambda s: s["ratio"])
    return {
        "deployed": asdict(model.deployed),
        "cpu": asdict(model.cpu),
        "lambda_vs_here": LAMBDA_VS_HERE,
        "aws": {k: {"value": v, "source": s} for k, (v, s) in AWS.items()},
        "grace_seconds": RETIRED_GRACE_SECONDS,
        "threshold": model.threshold,
        "commits": commits,
        "first_commits": first,
        "inline": model.inline(model.threshold),
        "inline_with_drop": model.inline(model.threshold, model.threshold),
        "staging_per_branch": model.staging_rate(),
        "worst_1m": worst,
    }


def figures(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The three rows of ``make bench`` (bench/run.py's ``row`` arguments), as the model computes them today."""
    at = {c["rows"]: c for c in result["commits"]}
    c = at[500_000]
    steps = {s["step"]: s for s in c["steps"]}
    over = [f"{s['step']} needs {s['seconds']:.1f} s of its {s['timeout']:.0f} s" for s in c["steps"] if s["over"]]
    moved = c["branch_moved"]
    end = f"execution {'fails' if c['failed'] else 'ends'} at {c['execution_ends']:.1f} s"
    source = result["deployed"]["source"]
    worst = result["worst_1m"]
    late = [f"{s['step']} {s['ratio']:.2f}" for s in at[1_000_000]["steps"] if s["ratio"] > 0.5]
    rate = result["staging_per_branch"]
    return [
        {
            "id": "aws_commit_500k",
            "what": "commit of 500,000 staged objects on AWS, modelled (bench/aws_model.py): branch moved / execution",
            "measured": f"branch moved {f'at {moved:.1f} s' if moved else 'never'}; {end} (plan "
            f"{steps['Plan']['seconds']:.1f} s, one slice {steps['BuildSlices (one slice)']['seconds']:.1f} s, drop "
            f"of the previous commit's rows {steps['Drop']['seconds']:.0f} s; template: {source})",
            "value": moved,
            "op": "<=",
            "goal": 15.0,
            "goal_text": "branch moved <= 15 s, execution <= 60 s",
            "reason": "; ".join(over) or f"branch moved at {moved:.1f} s, {end}",
            "details": {"commit": c, "first_commit": result["first_commits"][1], "deployed": result["deployed"]},
            "extra_ok": not c["failed"] and c["execution_ends"] <= 60,
        },
        {
            "id": "aws_staging_per_branch",
            "what": "staged writes a second on one branch on AWS, modelled (bench/aws_model.py)",
            "measured": f"{rate:,.0f}/s: one staging token is one DynamoDB partition key, "
            f"{result['cpu']['row_bytes']} B a row",
            "value": rate,
            "op": ">=",
            "goal": 10_000.0,
            "goal_text": ">= 10,000/s",
            "reason": "one partition key takes 1,000 WCU/s (DynamoDB's per-partition limit); staging is not sharded",
            "details": {"row_bytes": result["cpu"]["row_bytes"]},
        },
        {
            "id": "aws_steps_within_timeouts",
            "what": "commit workflow at 1,000,000 staged objects on AWS, modelled: worst step / its deployed timeout",
            "measured": f"{worst['step']} {worst['seconds']:.1f} s of {worst['timeout']:.0f} s "
            f"({worst['ratio']:.2f}); over half: {', '.join(late) or 'none'}",
            "value": worst["ratio"],
            "op": "<=",
            "goal": 0.5,
            "goal_text": "every step <= half its timeout",
            "reason": f"over half their timeout at 1M: {', '.join(late)}",
            "details": {"steps": at[1_000_000]["steps"]},
        },
    ]


def table(result: dict[str, Any]) -> str:
    lines = ["| staged | " + " | ".join(STEPS) + " | branch moved | execution ends |", "|" + "---|" * (len(STEPS) + 3)]
    for c in result["commits"]:
        cells = {
            s["step"]: f"{s['seconds']:.1f} / {s['timeout']:.0f}{' over' if s['over'] else ''}"
            f"{'' if s['reached'] else ' (not reached)'}"
            for s in c["steps"]
        }
        moved = f"{c['branch_moved']:.1f} s" if c["branch_moved"] else "never"
        end = f"{c['execution_ends']:.0f} s{' Failed' if c['failed'] else ''}"
        lines.append(f"| {c['rows']:,} | " + " | ".join(cells[s] for s in STEPS) + f" | {moved} | {end} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=20_000, help="rows of the CPU measurement")
    parser.add_argument("--template", type=Path, default=None, help="a packaged sam.json")
    parser.add_argument("--json", action="store_true", help="print the result as one JSON line")
    args = parser.parse_args()
    result = run(args.rows, args.template)
    if args.json:
        print(json.dumps(result))
        return
    cpu = result["cpu"]
    print(f"template: {result['deployed']['source']}; Map concurrency {result['deployed']['map_concurrency']}")
    print(f"CPU here per row: decode {cpu['decode_s'] * 1e6:.0f} us, write {cpu['write_s'] * 1e6:.0f} us; "
          f"{cpu['row_bytes']} B a staged row; Lambda vCPU / this core {LAMBDA_VS_HERE}")  # fmt: skip
    print(
        "each step: seconds needed / deployed timeout (the Drop drops the previous commit's rows, due after "
        f"{RETIRED_GRACE_SECONDS:.0f} s)"
    )
    print(table(result))
    print(
        f"inline commit at the threshold ({result['threshold']:,}): {result['inline']:.1f} s, with the previous "
        f"inline commit's rows due {result['inline_with_drop']:.1f} s, against API Gateway's "
        f"{aws('apigw_timeout_s'):.0f} s"
    )
    quiet = ", ".join(
        f"{c['rows']:,}: " + (f"moved at {c['branch_moved']:.1f} s, " if c["branch_moved"] else "never moves, ")
        + f"{'fails' if c['failed'] else 'ends'} at {c['execution_ends']:.1f} s"
        for c in result["first_commits"]
    )  # fmt: skip
    print(
        f"with nothing due for the Drop (no large commit on the branch {RETIRED_GRACE_SECONDS:.0f} s before): {quiet}"
    )
    print(f"staging on one branch: {result['staging_per_branch']:,.0f} writes/s")


if __name__ == "__main__":
    main()
