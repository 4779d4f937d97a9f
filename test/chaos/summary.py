"""The one-screen summary of a checked run. Its last line is exactly
"chaos: <N> operations, <N> faults, <N> anomalies"."""
import json
from collections import Counter

import faults
import workload

SHOWN = 8  # anomalies shown in full; all are in anomalies.json


def counts(counter):
    return ", ".join("%s %d" % kv for kv in sorted(counter.items())) or "none"


def summarize(data, results):
    cfg = data["config"]
    calls = data["calls"]
    ops = {}
    for c in calls:
        ops[(c["w"], c["op"])] = c["kind"]
    op_kinds = Counter(ops.values())
    fault_kinds = Counter(f["kind"] for f in data["faults"])
    lost = Counter(c["f"] for c in calls if c["status"] == "info")
    failed = Counter(c["code"] or "none" for c in calls if c["status"] == "fail")
    writes = data["server"]["writes"]
    lines = [
        "chaos: run %s, %s, %d workers, %g s, faults %s, pgsem %s" % (
            cfg["run"], "fenced" if cfg["fenced"] else "UNFENCED", cfg["workers"],
            cfg["seconds"], cfg["faults"], cfg.get("pgsem_version")),
        "operations by kind: " + counts(op_kinds),
        "operation kinds run: %d of %d%s" % (
            len(set(op_kinds) & set(workload.KINDS)), len(workload.KINDS),
            missing(workload.KINDS, op_kinds)),
        "calls: %d; failed with an error, by SQLSTATE: %s" % (len(calls), counts(failed)),
        "indeterminate (no answer: connection lost), by call: " + counts(lost),
        "faults by kind: " + counts(fault_kinds),
        "fault kinds run: %d of %d%s" % (len(set(fault_kinds) & set(faults.KINDS)),
                                         len(faults.KINDS), missing(faults.KINDS, fault_kinds)),
        "server: %d history rows, %d writes on %d resources, %d grants logged" % (
            len(data["server"]["history"]), len(writes), len(data["server"]["resources"]),
            len(data["server"]["grants"])),
    ]
    by_kind = Counter()
    shown = []
    for r in results:
        found = r["anomalies"]
        lines.append("check %s: %s (%s)" % (r["check"], "%d anomalies" % len(found) if found
                                           else "ok", r["what"]))
        by_kind.update(a["kind"] for a in found)
        shown.extend(found[:SHOWN - len(shown)] if len(shown) < SHOWN else [])
    total = sum(by_kind.values())
    lines.append("anomalies by kind: " + counts(by_kind))
    for a in shown:
        lines.append("  " + json.dumps(a, default=str)[:300])
    lines.append("chaos: %d operations, %d faults, %d anomalies" % (len(ops), len(data["faults"]),
                                                                 total))
    return "\n".join(lines)


def missing(kinds, seen):
    gone = [k for k in kinds if k not in seen]
    return " (missing: %s)" % ", ".join(gone) if gone else ""


def unexercised(data):
    """The kinds of operation, and with --faults all in a fenced run the kinds of fault, that
    the run never got to."""
    cfg = data["config"]
    ops = {c["kind"] for c in data["calls"]}
    gone = ["operation " + k for k in workload.KINDS if k not in ops]
    if cfg["faults"] == "all" and cfg["fenced"]:
        seen = {f["kind"] for f in data["faults"]}
        gone += ["fault " + k for k in faults.KINDS if k not in seen]
    return gone
