"""chaos.py --self-test: the checkers on made-up records. A clean record must give no anomaly;
each planted violation must be found by the check meant to find it, as the kind it is."""
import copy
import sys

import checkers

W0 = 1_800_000_000  # the server's wall clock (s) when the client's monotonic clock read 0


def us(t):
    """Server microseconds at client monotonic time t (one clock, as on one machine)."""
    return int((W0 + t) * 1e6)


def call(w, c, op, kind, f, sent, answered, v=None, status="ok", args=None, pid=None, conn=1):
    return {"w": w, "c": c, "op": op, "kind": kind, "f": f, "sent": sent, "answered": answered,
            "status": status, "v": v, "code": None, "err": None, "args": args or {},
            "pid": pid if pid is not None else 100 + w, "conn": conn}


def lease_op(w, op, cid, t, k=0, name="r0", release_v=True, calls=None):
    """A fenced lease write: claim at t, write, release at t + 0.4."""
    a = {"names": [name], "ns": [1], "permits": [1], "lease": 2.0}
    seq = [("claim", t, t + 0.1, cid, a), ("begin", t + 0.11, t + 0.12, None, {}),
           ("fence", t + 0.13, t + 0.14, us(t + 0.135), {"id": cid}),
           ("read", t + 0.15, t + 0.16, 0, {"k": k}), ("write", t + 0.2, t + 0.21, 1, {"k": k}),
           ("commit", t + 0.3, t + 0.31, None, {}),
           ("release", t + 0.4, t + 0.41, release_v, {"id": cid})]
    out = calls if calls is not None else []
    for i, (f, s, e, v, args) in enumerate(seq):
        out.append(call(w, op * 10 + i, op, "lease_write", f, s, e, v, args=args))
    return out


def history_row(cid, name, t_claim, t_end=None, outcome=None, slot=0, n=1, rate=False,
                lease=2.0, pid=100):
    return {"id": cid, "name": name, "slot": slot, "n": n, "claimed_at": us(t_claim),
            "expires_at": us(t_claim + lease), "ended_at": us(t_end) if t_end else None,
            "outcome": outcome, "pid": pid, "app": "x", "permits": 1, "rate": rate,
            "read_at": us(100)}


def clean():
    cfg = {"run": "t", "prefix": "", "fenced": True, "lease": 2.0, "wait": 1.0, "resources": 1,
           "names": {"res": ["r0"], "pool_a": "p", "pool_b": "q", "rate": "rl",
                     "bucket": "bk"},
           "n": {"r0": 1, "p": 4, "q": 4}, "rate": {"n": 2, "per": 1.0},
           "bucket": {"n": 10, "per": 1.0, "burst": 2}, "workers": 3, "seconds": 10,
           "faults": "all"}
    calls = []
    lease_op(0, 1, 10, 1.0, calls=calls)          # worker 0 holds r0 over [1.1, 1.4]
    x = {"names": ["r0"], "ns": [1], "permits": [1]}
    for i, (f, s, e, v, args) in enumerate([("begin", 2.0, 2.01, None, {}),
                                           ("claim_xact", 2.02, 2.1, 0, x),
                                           ("read", 2.11, 2.12, 1, {"k": 0}),
                                           ("write", 2.13, 2.14, 1, {"k": 0}),
                                           ("commit", 2.2, 2.21, None, {})]):
        calls.append(call(1, 20 + i, 2, "xact_write", f, s, e, v, args=args))
    # A pool of 4: a lease of 2 permits and a set holding one slot of it, at once.
    calls.append(call(2, 30, 3, "permits_lease", "claim", 1.0, 1.05, 11,
                      args={"names": ["p"], "ns": [4], "permits": [2], "lease": 2.0}))
    calls.append(call(2, 31, 3, "permits_lease", "release", 1.5, 1.51, True, args={"id": 11}))
    calls.append(call(1, 40, 4, "pool_set", "claim_all", 1.0, 1.05, [12, 12],
                      args={"names": ["p", "q"], "ns": [4, 4], "permits": [1, 2],
                            "lease": 2.0}))
    calls.append(call(1, 41, 4, "pool_set", "release", 1.5, 1.51, True, args={"id": 12}))
    # Two rate grants a window apart, and bucket grants within burst + rate.
    calls.append(call(1, 50, 5, "rate", "rate", 3.0, 3.01, us(3.005),
                      args={"names": ["rl"], "permits": [1]}))
    calls.append(call(1, 51, 6, "rate", "rate", 3.5, 3.51, us(3.505),
                      args={"names": ["rl"], "permits": [1]}))
    calls.append(call(1, 52, 7, "bucket", "bucket", 3.0, 3.01, us(3.005),
                      args={"names": ["bk"], "permits": [2]}))
    calls.append(call(1, 53, 8, "bucket", "bucket", 3.2, 3.21, us(3.205),
                      args={"names": ["bk"], "permits": [2]}))
    # A restart at 8 s; worker 0 claims again after it, with a higher id.
    lease_op(0, 9, 40, 10.0, calls=calls)
    faults = [{"ev": "fault", "kind": "kill_backend", "t": 8.0, "wall": W0 + 8.0, "pids": [100],
               "recovered": 9.0, "recovered_wall": W0 + 9.0},
              {"ev": "fault", "kind": "terminate", "t": 12.0, "wall": W0 + 12.0, "pids": [101],
               "recovered": None}]
    history = [history_row(10, "r0", 1.05, 1.405, "released"),
               history_row(11, "p", 1.02, 1.505, "released", slot=0, n=4),
               history_row(11, "p", 1.02, 1.505, "released", slot=1, n=4),
               history_row(12, "p", 1.03, 1.505, "released", slot=2, n=4),
               history_row(12, "q", 1.03, 1.505, "released", slot=0, n=4),
               history_row(12, "q", 1.03, 1.505, "released", slot=1, n=4),
               history_row(40, "r0", 10.05, 10.405, "released"),
               history_row(30, "rl", 3.004, rate=True, lease=1.0, pid=101),
               history_row(31, "rl", 3.504, rate=True, lease=1.0, pid=101, slot=1)]
    writes = [{"k": 0, "op": 1, "prev": 0, "claim": 10, "kind": "lease_write", "at": us(1.205),
               "fence_at": us(1.135), "pid": 100},
              {"k": 0, "op": 2, "prev": 1, "claim": 0, "kind": "xact_write", "at": us(2.135),
               "fence_at": None, "pid": 101},
              {"k": 0, "op": 9, "prev": 2, "claim": 40, "kind": "lease_write", "at": us(10.205),
               "fence_at": us(10.135), "pid": 100}]
    grants = [{"name": "rl", "kind": "rate", "op": 5, "permits": 1, "pid": 101,
               "s_at": us(3.001), "c_at": us(3.006)},
              {"name": "rl", "kind": "rate", "op": 6, "permits": 1, "pid": 101,
               "s_at": us(3.501), "c_at": us(3.506)},
              {"name": "bk", "kind": "bucket", "op": 7, "permits": 2, "pid": 101,
               "s_at": us(3.001), "c_at": us(3.006)},
              {"name": "bk", "kind": "bucket", "op": 8, "permits": 2, "pid": 101,
               "s_at": us(3.201), "c_at": us(3.206)}]
    connects = [{"ev": "connect", "w": w, "conn": 1, "pid": 100 + w, "t": 0.5, "wall": W0 + 0.5,
                 "server": {"addr": "127.0.0.1", "port": 5432, "started": 1, "sysid": "1"}}
                for w in range(3)]
    return {"config": cfg, "calls": calls, "connects": connects, "faults": faults,
            "server": {"history": history, "resources": [{"k": 0, "v": 9, "token": 40,
                                                          "claim": 40}],
                       "writes": writes, "grants": grants}}


# ---- the plants: each changes a clean record so that one check must find one kind ----------

def second_holder(d):
    lease_op(2, 60, 50, 1.15, calls=d["calls"])       # holds r0 while worker 0 does
    d["server"]["history"].append(history_row(50, "r0", 1.2, 1.56, "released", slot=0))


def slot_taken_from_fenced(d):
    # Worker 2 fences claim 60 of r1 at 20.14 and stalls past its lease (2 s from 20.0) until its
    # COMMIT at 23.0; worker 1's lease of r1 answered at 22.5 took the slot the fence still held.
    # Only the fence's hold (to the COMMIT) makes the two overlap: the lease alone ends at 22.0.
    d["config"]["n"]["r1"] = 1
    a = {"names": ["r1"], "ns": [1], "permits": [1], "lease": 2.0}
    for i, (f, s_, e, v, args) in enumerate([
            ("claim", 20.0, 20.1, 60, a), ("begin", 20.11, 20.12, None, {}),
            ("fence", 20.13, 20.14, us(20.135), {"id": 60}),
            ("commit", 23.0, 23.01, None, {}), ("release", 23.1, 23.11, False, {"id": 60})]):
        d["calls"].append(call(2, 640 + i, 64, "lease_write", f, s_, e, v, args=args))
    for i, (f, s_, e, v, args) in enumerate([
            ("claim", 22.4, 22.5, 61, a), ("release", 22.8, 22.81, True, {"id": 61})]):
        d["calls"].append(call(1, 650 + i, 65, "lease_write", f, s_, e, v, args=args))
    d["server"]["history"] += [history_row(60, "r1", 20.05, 22.05, "timed out"),
                               history_row(61, "r1", 22.45, 22.805, "released")]


def pool_over_n(d):
    # A third holder of 2 permits of p while 2 (lease 11) + 1 (set 12) are held: 5 > 4.
    d["calls"].append(call(0, 70, 61, "permits_lease", "claim", 1.1, 1.2, 51,
                           args={"names": ["p"], "ns": [4], "permits": [2], "lease": 2.0}))


def xact_overlaps_lease(d):
    # A transaction claim of r0 answered while the lease of worker 0 is held, ended by a
    # terminate of its backend at 1.3 (never by a commit): it still overlaps [1.1, 1.4).
    d["calls"].append(call(2, 80, 62, "xact_write", "begin", 1.0, 1.01, None, pid=555))
    d["calls"].append(call(2, 81, 62, "xact_write", "claim_xact", 1.02, 1.12, 0, pid=555,
                           args={"names": ["r0"], "ns": [1], "permits": [1]}))
    d["calls"].append(call(2, 82, 62, "xact_write", "read", 1.35, None, status="info", pid=555))
    d["faults"].insert(0, {"ev": "fault", "kind": "terminate", "t": 1.3, "wall": W0 + 1.3,
                           "pids": [555], "recovered": None})


def server_slot_twice(d):
    d["server"]["history"].append(history_row(13, "r0", 1.2, 1.3, "released", slot=0))


def server_slot_range(d):
    d["server"]["history"].append(history_row(14, "p", 4.0, 4.1, "released", slot=4, n=4))


def release_not_recorded(d):
    d["server"]["history"][0].update(outcome="timed out", ended_at=us(3.05))


def released_late(d):
    d["server"]["history"][0].update(ended_at=us(3.5))


def refused_live_release(d):
    for c in d["calls"]:
        if c["op"] == 1 and c["f"] == "release":
            c["v"] = False


def lost_update(d):
    d["calls"].append(call(2, 90, 63, "xact_write", "begin", 2.3, 2.31))
    d["calls"].append(call(2, 91, 63, "xact_write", "write", 2.4, 2.41, 1, args={"k": 0}))
    d["calls"].append(call(2, 92, 63, "xact_write", "commit", 2.5, 2.51))
    d["server"]["writes"].append({"k": 0, "op": 63, "prev": 2, "claim": 0, "kind": "xact_write",
                                  "at": us(2.45), "fence_at": None, "pid": 102})


def stale_write(d):
    d["server"]["writes"][2]["fence_at"] = us(12.5)  # claim 40 ended at 10.405


def token_decreased(d):
    d["server"]["writes"][2]["claim"] = 9            # after claim 10 on the chain
    d["server"]["history"].append(history_row(9, "r0", 10.05, 10.405, "released"))


def ack_write_missing(d):
    d["server"]["writes"].pop(1)                    # op 2 committed, and nowhere
    d["server"]["writes"][1]["prev"] = 1


def uncommitted_write(d):
    d["calls"] = [c for c in d["calls"] if not (c["op"] == 2 and c["f"] == "commit")]


def claim_missing(d):
    d["server"]["history"] = [r for r in d["server"]["history"] if r["id"] != 11]


def released_by_nobody(d):
    d["calls"] = [c for c in d["calls"] if not (c["op"] == 3 and c["f"] == "release")]


def id_below_restart(d):
    for c in d["calls"]:
        if c["op"] == 9 and c["f"] == "claim":
            c["v"] = 8


def history_id_below_restart(d):
    d["server"]["history"].append(history_row(5, "q", 9.5, 9.6, "timed out", slot=3, n=4,
                                              lease=0.1))


def failover_id_below(d):
    # Worker 2 finds another server at 11.0 (a failover from outside) and is answered id 35
    # there: above every id before the kill at 8 s, below id 40 answered before the failover.
    d["connects"].append({"ev": "connect", "w": 2, "conn": 2, "pid": 300, "t": 11.0,
                          "wall": W0 + 11.0, "server": {"addr": "127.0.0.2", "port": 5432,
                                                        "started": 2, "sysid": "1"}})
    d["calls"].append(call(2, 95, 67, "permits_lease", "claim", 11.5, 11.6, 35, pid=300, conn=2,
                           args={"names": ["p"], "ns": [4], "permits": [2], "lease": 2.0}))
    d["server"]["history"].append(history_row(35, "p", 11.55, None, slot=0, n=4, pid=300))
    d["server"]["history"].append(history_row(35, "p", 11.55, None, slot=1, n=4, pid=300))


def release_lost_in_restart(d):
    # README: a transaction whose only writes are releases may be lost just before a crash;
    # the claim then times out. Released at 10.4, the server killed at 10.45: no anomaly.
    d["server"]["history"][6].update(outcome="timed out", ended_at=us(12.05))
    d["faults"].insert(1, {"ev": "fault", "kind": "stop_immediate", "t": 10.45,
                           "wall": W0 + 10.45, "pids": [], "recovered": 11.5,
                           "recovered_wall": W0 + 11.5})


def window_over_n(d):
    d["server"]["history"].append(history_row(32, "rl", 3.9, rate=True, lease=1.0, pid=102,
                                              slot=2))
    d["server"]["grants"].append({"name": "rl", "kind": "rate", "op": 64, "permits": 1,
                                  "pid": 102, "s_at": us(3.89), "c_at": us(3.91)})
    d["server"]["history"].append(history_row(33, "rl", 3.95, rate=True, lease=1.0, pid=102,
                                              slot=3))
    d["server"]["grants"].append({"name": "rl", "kind": "rate", "op": 65, "permits": 1,
                                  "pid": 102, "s_at": us(3.94), "c_at": us(3.96)})


def grant_missing(d):
    d["server"]["history"].pop()                    # grant 901 (op 6) gone from the history


def ack_grant_missing(d):
    d["server"]["grants"] = [g for g in d["server"]["grants"] if g["op"] != 8]


def bucket_over(d):
    d["server"]["grants"].append({"name": "bk", "kind": "bucket", "op": 66, "permits": 2,
                                  "pid": 102, "s_at": us(3.21), "c_at": us(3.22)})


PLANTS = [
    (second_holder, "holders-client", "too-many-holders"),
    (pool_over_n, "holders-client", "too-many-holders"),
    (xact_overlaps_lease, "holders-client", "too-many-holders"),
    (slot_taken_from_fenced, "holders-client", "too-many-holders"),
    (second_holder, "holders-server", "too-many-holders"),
    (server_slot_twice, "holders-server", "slot-held-twice"),
    (server_slot_range, "holders-server", "slot-out-of-range"),
    (release_not_recorded, "releases", "release-true-not-recorded"),
    (released_late, "releases", "released-after-expiry"),
    (refused_live_release, "releases", "live-claim-refused-release"),
    (lost_update, "writes", "lost-update"),
    (stale_write, "writes", "stale-write"),
    (token_decreased, "writes", "token-decreased"),
    (ack_write_missing, "writes", "acknowledged-write-missing"),
    (uncommitted_write, "writes", "uncommitted-write-applied"),
    (claim_missing, "claims-kept", "acknowledged-claim-missing"),
    (released_by_nobody, "claims-kept", "released-by-nobody"),
    (id_below_restart, "ids-after-restart", "id-not-above-restart"),
    (history_id_below_restart, "ids-after-restart", "id-not-above-restart"),
    (failover_id_below, "ids-after-restart", "id-not-above-restart"),
    (window_over_n, "rates", "window-over-n"),
    (grant_missing, "rates", "grant-missing-in-history"),
    (ack_grant_missing, "rates", "acknowledged-grant-missing"),
    (bucket_over, "rates", "bucket-over-rate"),
]


def release_lost_in_crash(d):
    # Sent 10 ms after another backend was SIGKILLed, answered true before the postmaster's
    # reset reached its backend, lost with the WAL buffers: no anomaly either.
    d["server"]["history"][6].update(outcome="timed out", ended_at=us(12.05))
    d["faults"].insert(1, {"ev": "fault", "kind": "kill_backend", "t": 10.39,
                           "wall": W0 + 10.39, "pids": [101], "recovered": 10.6,
                           "recovered_wall": W0 + 10.6})


TOLERATED = [release_lost_in_restart, release_lost_in_crash]


def found_by(data):
    return {r["check"]: r["anomalies"] for r in checkers.check_all(data)}


def main():
    passed = failed = 0
    base = found_by(clean())
    noise = [a for found in base.values() for a in found]
    if noise:
        print("FAILED: the clean record gave anomalies: %s" % noise[:5])
        failed += 1
    else:
        print("ok: the clean record gives no anomaly")
        passed += 1
    for plant, check, kind in PLANTS:
        d = copy.deepcopy(clean())
        plant(d)
        kinds = [a["kind"] for a in found_by(d)[check]]
        if kind in kinds:
            print("ok: %s: %s finds %s" % (plant.__name__, check, kind))
            passed += 1
        else:
            print("FAILED: %s: %s found %s, not %s" % (plant.__name__, check, kinds or "nothing",
                                                      kind))
            failed += 1
    # What the README allows must not be reported.
    for plant in TOLERATED:
        d = copy.deepcopy(clean())
        plant(d)
        noise = [a for found in found_by(d).values() for a in found]
        if noise:
            print("FAILED: %s: reported %s" % (plant.__name__, noise[:3]))
            failed += 1
        else:
            print("ok: %s: no anomaly" % plant.__name__)
            passed += 1
    covered = {c for _, c, _ in PLANTS}
    missing = [name for name, _, _ in checkers.CHECKS if name not in covered]
    if missing:
        print("FAILED: no plant for the checks %s" % ", ".join(missing))
        failed += 1
    print("chaos-self-test: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
