"""The chaos run's record: JSON lines written as things happen, loaded back for the checkers.

Every process writes its own file in the record directory (worker-NN.jsonl, injector.jsonl);
the run adds the server's state read at the end (server.json) and its configuration
(config.json). Times are time.monotonic() (CLOCK_MONOTONIC, one clock for every process on the
machine) in seconds, plus the wall clock where a server time must be compared with them. Server
times are microseconds since the epoch.

A call is written twice: an "invoke" line before it is sent and a completion line ("ok",
"fail" or "info") once its answer arrived. "info" is an indeterminate outcome: the connection
was lost with the call in flight, so it may or may not have taken effect. A call with no
completion line at all (its process was killed) is loaded as "info" too.
"""
import json
import os
import time


class Recorder:
    """Appends JSON lines to one file, flushed per line so a killed process loses nothing it
    wrote."""

    def __init__(self, path):
        self._f = open(path, "a", encoding="utf-8", buffering=1)

    def write(self, **event):
        event.setdefault("t", time.monotonic())
        self._f.write(json.dumps(event, separators=(",", ":"), default=str) + "\n")

    def close(self):
        self._f.close()


def read_lines(path):
    events = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                events.append(json.loads(line))
            except json.JSONDecodeError:
                # A line cut short by a kill: the call it would have completed stays in flight.
                continue
    return events


def merge_calls(events):
    """Worker events to (calls, connects): each call one dict with its invoke's fields and
    'status' ('ok', 'fail', 'info'), 'answered' (None when no answer arrived), 'v', 'code',
    'err'. Calls keep their worker's order."""
    calls = {}
    order = []
    connects = []
    for e in events:
        ev = e.get("ev")
        if ev == "connect":
            connects.append(e)
        elif ev == "invoke":
            call = dict(e)
            call.update(status="info", answered=None, v=None, code=None, err="no answer recorded")
            call["sent"] = e["t"]
            key = (e["w"], e["c"])
            calls[key] = call
            order.append(key)
        elif ev in ("ok", "fail", "info"):
            call = calls.get((e["w"], e["c"]))
            if call is None:
                continue
            call["status"] = ev
            call["v"] = e.get("v")
            call["code"] = e.get("code")
            call["err"] = e.get("err")
            if ev != "info":
                call["answered"] = e["t"]
            else:
                call["lost_at"] = e["t"]
    return [calls[k] for k in order], connects


def read_faults(path):
    """The injector's faults, each restart with 'recovered' (monotonic, and 'recovered_wall'):
    when the server answered again, None if it never did."""
    faults = []
    by_t = {}
    for e in read_lines(path):
        if e.get("ev") == "fault":
            e.setdefault("recovered", None)
            faults.append(e)
            by_t[e["t"]] = e
        elif e.get("ev") == "recovered" and e.get("fault_t") in by_t:
            fault = by_t[e["fault_t"]]
            fault["recovered"] = e["t"] if e.get("ok") else None
            fault["recovered_wall"] = e.get("wall")
    return faults


def load(record_dir):
    """Everything the checkers read, from a record directory."""
    with open(os.path.join(record_dir, "config.json"), encoding="utf-8") as f:
        config = json.load(f)
    calls, connects, faults = [], [], []
    for name in sorted(os.listdir(record_dir)):
        path = os.path.join(record_dir, name)
        if name.startswith("worker-") and name.endswith(".jsonl"):
            c, k = merge_calls(read_lines(path))
            calls.extend(c)
            connects.extend(k)
        elif name == "injector.jsonl":
            faults = read_faults(path)
    server = {"history": [], "resources": [], "writes": [], "grants": []}
    server_path = os.path.join(record_dir, "server.json")
    if os.path.exists(server_path):
        with open(server_path, encoding="utf-8") as f:
            server = json.load(f)
    return {"config": config, "calls": calls, "connects": connects, "faults": faults,
            "server": server}
