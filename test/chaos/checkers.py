"""The checkers: pure functions over a loaded record (record.load), each returning its anomalies.

Client times are monotonic seconds; server times are microseconds of the server's wall clock
(the same machine's clock for a local run). A client interval of holding is built so that the
server surely held the claim for all of it: it starts when the claim's answer arrived and ends
no later than the first of: the release (or commit, rollback) being sent, the claim's send time
plus its lease (extended by each renewal answered true, from that renewal's send time), and --
for transaction and session claims, which end with their backend -- the first fault that
surely ended that backend (a terminate of its pid, a SIGKILL of any backend, an immediate stop)
or, when the connection was lost some other way (a failover), the last answer that connection
gave. So overlapping client intervals mean a real excess of holders, with no timing margin.
"""
import bisect
from collections import defaultdict

RESTARTS = ("kill_backend", "stop_immediate")
BACKEND_ENDERS = ("terminate", "kill_backend", "stop_immediate")
# A transaction whose only writes are releases commits without waiting for its WAL flush, so a
# crash soon after may lose it (README, Guarantees and limits): a release answered true may come
# back as a claim that timed out or still holds when it was sent within this many seconds
# before a restart, or during one -- after a SIGKILL of one backend, the others run on until the
# postmaster's reset reaches them (a chaos run saw a release answered true 14 ms after the kill
# come back timed out).
RELEASE_LOSS_SECONDS = 5.0
# Whether a fenced claim's interval runs to the end of its fencing transaction (the self-test
# turns it off to see the plant that needs it go unfound).
FENCE_HOLDS = True


def anomaly(kind, **details):
    details["kind"] = kind
    return details


# ---- shared views of the record -------------------------------------------------------------

def ops_of(calls):
    """{(worker, op): [calls in order]}."""
    ops = defaultdict(list)
    for c in sorted(calls, key=lambda c: (c["w"], c["c"])):
        ops[(c["w"], c["op"])].append(c)
    return ops


def claim_id(call):
    """The lease or set id a claim call answered, or None."""
    if call["status"] != "ok" or call["v"] is None:
        return None
    if call["f"] == "claim_all":
        return call["v"][0] if call["v"] else None
    return call["v"]


def last_answers(calls):
    """{(worker, conn): sorted answer times} for bounding a lost connection's life."""
    out = defaultdict(list)
    for c in calls:
        if c["answered"] is not None:
            out[(c["w"], c["conn"])].append(c["answered"])
    for v in out.values():
        v.sort()
    return out


def server_key(connect):
    ident = connect.get("server") or {}
    return (ident.get("sysid"), ident.get("addr"), ident.get("port"), ident.get("started"))


def restarts(data):
    """[(fault time, recovered time or None, wall of the fault, wall recovered, what)]: the
    injector's restarts and, from the workers' connections, every change of server (a restart
    or a failover from outside). The old server went away at its last answer at the earliest,
    so that is such a change's time; the first connection to the new one is its recovery."""
    out = []
    for f in data["faults"]:
        if f["kind"] in RESTARTS:
            out.append((f["t"], f.get("recovered"), f.get("wall"), f.get("recovered_wall"),
                        f["kind"]))
    server_of = {(k["w"], k["conn"]): server_key(k) for k in data["connects"]}
    last_answer = defaultdict(float)
    for c in data["calls"]:
        if c["answered"] is not None:
            key = server_of.get((c["w"], c["conn"]))
            last_answer[key] = max(last_answer[key], c["answered"])
    seen = None
    for k in sorted(data["connects"], key=lambda e: e["t"]):
        key = server_key(k)
        if seen is not None and key != seen:
            gone = min(last_answer.get(seen) or k["t"], k["t"])
            out.append((gone, k["t"], None, None, "server changed"))
        seen = key
    return sorted(out, key=lambda r: r[0])


# ---- 1. never more than n holders -----------------------------------------------------------

def client_intervals(data):
    """[(name, start, end, weight, what)] of every claim a client knew it held."""
    cfg = data["config"]
    lease_of = cfg["lease"]
    faults = [f for f in data["faults"] if f["kind"] in BACKEND_ENDERS]
    answers = last_answers(data["calls"])
    out = []
    for (w, op), calls in ops_of(data["calls"]).items():
        for i, c in enumerate(calls):
            if c["status"] != "ok" or c["v"] is None:
                continue
            f = c["f"]
            if f not in ("claim", "claim_all", "claim_xact", "claim_session", "claim_xact_all",
                         "claim_session_all"):
                continue
            start = c["answered"]
            rest = calls[i + 1:]
            if f in ("claim", "claim_all"):
                cid = claim_id(c)
                end = c["sent"] + c["args"].get("lease", lease_of)
                for r in rest:
                    if r["f"] == "renew" and r["status"] == "ok" and r["v"] is True:
                        end = max(end, r["sent"] + r["args"].get("lease", lease_of))
                # A fence that answered keeps the claim's slots, past its lease too, until the
                # fencing transaction ends (README: nobody can take its slot until then).
                if FENCE_HOLDS:
                    for j, r in enumerate(rest):
                        if r["f"] == "fence" and r["status"] == "ok":
                            end = max(end, transaction_end(rest[j + 1:], c, faults, answers, w))
                            break
                for r in rest:
                    if r["f"] == "release" and r["args"].get("id") == cid:
                        end = min(end, r["sent"])
                        break
            else:
                # A set of session claims ends at its first release sent: an end that comes
                # early keeps the check sound.
                enders = (("commit", "rollback") if f in ("claim_xact", "claim_xact_all")
                          else ("release_session",))
                end = None
                for r in rest:
                    if r["f"] in enders:
                        end = r["sent"]
                        break
                    if r["status"] == "info":
                        break
                for fl in faults:
                    if fl["t"] >= start and (fl["kind"] != "terminate" or c["pid"] in fl["pids"]):
                        end = fl["t"] if end is None else min(end, fl["t"])
                        break
                # Lost otherwise (or never ended in the record): its last answer is still inside.
                times = answers.get((w, c["conn"]), [])
                last = times[-1] if times else start
                lost = any(r["status"] == "info" for r in rest)
                if end is None or lost:
                    end = last if end is None else min(end, max(last, start))
            for name, permits in zip(c["args"]["names"], c["args"]["permits"]):
                out.append((name, start, end, permits, "w%d op %d %s" % (w, op, f)))
    return out


def transaction_end(rest, claim, faults, answers, w):
    """How long the open transaction surely lasted, from the calls after one in it: until its
    COMMIT or ROLLBACK was sent, or, its connection lost first, its last answer; never past the
    first fault that ended its backend."""
    end = None
    for r in rest:
        if r["f"] in ("commit", "rollback"):
            end = r["sent"]
            break
        if r["status"] == "info":
            times = answers.get((w, r["conn"]), [])
            end = times[-1] if times else r["sent"]
            break
    if end is None:
        times = answers.get((w, claim["conn"]), [])
        end = times[-1] if times else claim["answered"]
    for fl in faults:
        if fl["t"] >= claim["answered"] and (fl["kind"] != "terminate" or
                                             claim["pid"] in fl["pids"]):
            return min(end, fl["t"])
    return end


def sweep(intervals, capacity, source):
    """Anomalies where the weights of the intervals open at one instant exceed the name's n.
    Ends sort before starts at the same instant (the intervals are half-open)."""
    by_name = defaultdict(list)
    for name, start, end, weight, what in intervals:
        if end > start:
            by_name[name].append((start, end, weight, what))
    found = []
    for name, ivs in by_name.items():
        n = capacity.get(name)
        if n is None:
            continue
        events = []
        for start, end, weight, what in ivs:
            events.append((start, 1, weight, what, end))
            events.append((end, 0, weight, what, end))
        events.sort(key=lambda e: (e[0], e[1]))
        open_, total = {}, 0
        for t, is_start, weight, what, end in events:
            key = (what, end)
            if is_start:
                open_[key] = weight
                total += weight
                if total > n:
                    found.append(anomaly("too-many-holders", source=source, name=name, at=t,
                                         holders=total, n=n, who=sorted(k[0] for k in open_)))
            elif key in open_:
                total -= open_.pop(key)
    return found


def check_holders_client(data):
    return sweep(client_intervals(data), data["config"]["n"], "client")


def history_end(row):
    return row["ended_at"] if row["ended_at"] is not None else row["expires_at"]


def check_holders_server(data):
    rows = [r for r in data["server"]["history"] if not r["rate"]]
    found = []
    intervals = [(r["name"], r["claimed_at"], history_end(r), 1, "id %d slot %d" % (r["id"],
                                                                                   r["slot"]))
                 for r in rows]
    found.extend(sweep(intervals, data["config"]["n"], "server history"))
    by_slot = defaultdict(list)
    for r in rows:
        if r["slot"] >= r["n"] or r["slot"] < 0:
            found.append(anomaly("slot-out-of-range", name=r["name"], id=r["id"], slot=r["slot"],
                                 n=r["n"]))
        by_slot[(r["name"], r["slot"])].append((r["claimed_at"], history_end(r), r["id"]))
    for (name, slot), ivs in by_slot.items():
        ivs.sort()
        for (s1, e1, id1), (s2, e2, id2) in zip(ivs, ivs[1:]):
            if s2 < e1:
                found.append(anomaly("slot-held-twice", name=name, slot=slot, ids=[id1, id2]))
    return found


# ---- 2. releases that answered true were of live claims -------------------------------------

def caps(data):
    """{(worker, op, id): the client's lower bound of the claim's expiry (monotonic)}."""
    lease = data["config"]["lease"]
    out = {}
    for (w, op), calls in ops_of(data["calls"]).items():
        cid, cap = None, None
        for c in calls:
            if c["f"] in ("claim", "claim_all") and claim_id(c) is not None:
                cid, cap = claim_id(c), c["sent"] + c["args"].get("lease", lease)
            elif c["f"] == "renew" and c["status"] == "ok" and c["v"] is True and cid is not None:
                cap = max(cap, c["sent"] + c["args"].get("lease", lease))
            elif c["f"] in ("release", "renew") and cid is not None:
                out[(w, op, c["c"])] = cap
    return out


def near_restart(rs, t):
    """Whether a commit sent at t may have been lost in a restart."""
    return any(r[0] - RELEASE_LOSS_SECONDS <= t <= (r[1] if r[1] is not None else
                                                   r[0] + RELEASE_LOSS_SECONDS) for r in rs)


def check_releases(data):
    history = defaultdict(list)
    for r in data["server"]["history"]:
        history[r["id"]].append(r)
    rs = restarts(data)
    cap_of = caps(data)
    found = []
    for c in data["calls"]:
        if c["f"] not in ("release", "renew") or c["status"] != "ok":
            continue
        cid = c["args"]["id"]
        cap = cap_of.get((c["w"], c["op"], c["c"]))
        if c["v"] is False and cap is not None and c["answered"] < cap:
            found.append(anomaly("live-claim-refused-" + c["f"], id=cid, worker=c["w"],
                                 answered=c["answered"], lease_lasts_until=cap))
        if c["f"] != "release" or c["v"] is not True:
            continue
        rows = history.get(cid, [])
        if not rows:
            found.append(anomaly("released-claim-missing", id=cid, worker=c["w"]))
            continue
        # One verdict per claim and name (a claim of k permits has k rows).
        # A set's rate grant is not released: it counts until its window has passed.
        rows = list({r["name"]: r for r in rows if not r["rate"]}.values())
        for r in rows:
            if r["outcome"] == "released":
                if r["ended_at"] > r["expires_at"]:
                    found.append(anomaly("released-after-expiry", id=cid, name=r["name"],
                                         ended_at=r["ended_at"], expires_at=r["expires_at"]))
            elif not near_restart(rs, c["sent"]):
                found.append(anomaly("release-true-not-recorded", id=cid, name=r["name"],
                                     outcome=r["outcome"], worker=c["w"]))
    return found


# ---- 3. writes: no stale token applied, no update lost --------------------------------------

def check_writes(data):
    found = []
    server = data["server"]
    history = defaultdict(list)
    for r in server["history"]:
        history[r["id"]].append(r)
    ops = ops_of(data["calls"])
    # What each writing op's client knows of its commit: 'ok', 'info' (indeterminate), or None
    # (never committed: failed, rolled back, or refused before COMMIT was sent).
    committed = {}
    op_kind = {}
    for (w, op), calls in ops.items():
        if not any(c["f"] == "write" for c in calls):
            continue
        op_kind[op] = calls[0]["kind"]
        commit = [c for c in calls if c["f"] == "commit"]
        committed[op] = commit[-1]["status"] if commit else None
        if committed[op] == "fail":
            committed[op] = "info"  # an error at COMMIT is no proof that nothing committed
    by_k = defaultdict(list)
    for row in server["writes"]:
        by_k[row["k"]].append(row)
    logged = defaultdict(int)
    for row in server["writes"]:
        logged[row["op"]] += 1
    for op, count in logged.items():
        if count > 1:
            found.append(anomaly("write-applied-twice", op=op, times=count))
        state = committed.get(op, "unknown")
        if state == "unknown":
            found.append(anomaly("write-by-nobody", op=op))
        elif state is None:
            found.append(anomaly("uncommitted-write-applied", op=op, op_kind=op_kind.get(op)))
    for op, state in committed.items():
        if state == "ok" and op not in logged:
            found.append(anomaly("acknowledged-write-missing", op=op, op_kind=op_kind.get(op)))
    for res in server["resources"]:
        k = res["k"]
        entries = {row["op"]: row for row in by_k[k]}
        chain, cur, seen = [], res["v"], set()
        while cur:
            if cur in seen:
                found.append(anomaly("write-chain-cycle", k=k, op=cur))
                break
            seen.add(cur)
            row = entries.get(cur)
            if row is None:
                found.append(anomaly("head-not-logged", k=k, op=cur))
                break
            chain.append(row)
            cur = row["prev"]
        chain.reverse()
        for op, row in entries.items():
            if op not in seen:
                found.append(anomaly("lost-update", k=k, op=op, op_kind=row["kind"],
                                     claim=row["claim"], prev=row["prev"],
                                     acknowledged=committed.get(op) == "ok"))
        last = None
        for row in chain:
            if row["claim"]:
                if last is not None and row["claim"] < last["claim"]:
                    found.append(anomaly("token-decreased", k=k, op=row["op"],
                                         claim=row["claim"], after_claim=last["claim"],
                                         after_op=last["op"]))
                last = row
        for row in entries.values():
            if not row["claim"]:
                continue
            t = row["fence_at"] if row["fence_at"] is not None else row["at"]
            rows = history.get(row["claim"], [])
            if not rows:
                found.append(anomaly("write-by-unknown-claim", k=k, op=row["op"],
                                     claim=row["claim"]))
            elif not all(h["claimed_at"] <= t < history_end(h) for h in rows):
                found.append(anomaly("stale-write", k=k, op=row["op"], claim=row["claim"],
                                     written_at=t, claim_ended_at=min(history_end(h)
                                                                      for h in rows),
                                     fenced=row["fence_at"] is not None))
    return found


# ---- 4. acknowledged claims survive ---------------------------------------------------------

def check_claims_kept(data):
    history = defaultdict(list)
    for r in data["server"]["history"]:
        history[r["id"]].append(r)
    releases = defaultdict(list)
    for c in data["calls"]:
        if c["f"] == "release":
            releases[c["args"]["id"]].append(c)
    found = []
    for c in data["calls"]:
        if c["f"] not in ("claim", "claim_all"):
            continue
        cid = claim_id(c)
        if cid is None:
            continue
        rows = history.get(cid, [])
        want = defaultdict(int)
        for name, permits in zip(c["args"]["names"], c["args"]["permits"]):
            want[name] += permits
        have = defaultdict(int)
        for r in rows:
            have[r["name"]] += 1
        if dict(have) != dict(want):
            found.append(anomaly("acknowledged-claim-missing" if not rows else
                                 "claim-rows-wrong", id=cid, worker=c["w"], want=dict(want),
                                 have=dict(have)))
        for r in rows:
            if r["rate"]:
                continue  # a grant: held for its window, ended by nobody's release
            if r["outcome"] == "released":
                if not any(x["status"] == "info" or (x["status"] == "ok" and x["v"] is True)
                           for x in releases[cid]):
                    found.append(anomaly("released-by-nobody", id=cid, name=r["name"]))
            elif r["outcome"] == "timed out" and r["ended_at"] != r["expires_at"]:
                found.append(anomaly("timeout-not-at-expiry", id=cid, name=r["name"],
                                     ended_at=r["ended_at"], expires_at=r["expires_at"]))
    return found


# ---- 5. ids after a restart exceed those before it ------------------------------------------

def check_ids_after_restart(data):
    found = []
    answered = sorted((c["answered"], c["sent"], claim_id(c), c["w"], c["conn"])
                      for c in data["calls"]
                      if c["f"] in ("claim", "claim_all") and claim_id(c) is not None)
    times = [a[0] for a in answered]
    prefix_max = []
    best = None
    for a in answered:
        best = a[2] if best is None else max(best, a[2])
        prefix_max.append(best)
    for t_fault, t_rec, wall, wall_rec, what in restarts(data):
        i = bisect.bisect_left(times, t_fault)
        before = prefix_max[i - 1] if i > 0 else None
        if t_rec is None:
            continue
        after = [a[2] for a in answered if a[1] > t_rec]
        if before is not None and after and min(after) <= before:
            found.append(anomaly("id-not-above-restart", source="client", restart=what,
                                 at=t_fault, max_before=before, min_after=min(after)))
        if wall is None or wall_rec is None:
            continue
        hist = data["server"]["history"]
        before_h = [r["id"] for r in hist if r["claimed_at"] < wall * 1e6]
        after_h = [r["id"] for r in hist if r["claimed_at"] > wall_rec * 1e6]
        if before_h and after_h and min(after_h) <= max(before_h):
            found.append(anomaly("id-not-above-restart", source="server history", restart=what,
                                 at=t_fault, max_before=max(before_h), min_after=min(after_h)))
    return found


# ---- 6. rate limits -------------------------------------------------------------------------

def check_rates(data):
    cfg = data["config"]
    server = data["server"]
    found = []
    rate_name, bucket_name = cfg["names"]["rate"], cfg["names"]["bucket"]
    n, per = cfg["rate"]["n"], int(cfg["rate"]["per"] * 1e6)
    grants = sorted(r["claimed_at"] for r in server["history"]
                    if r["rate"] and r["name"] == rate_name)
    j = 0
    for i, t in enumerate(grants):
        while grants[j] <= t - per:
            j += 1
        if i - j + 1 > n:
            found.append(anomaly("window-over-n", name=rate_name, at=t, permits=i - j + 1, n=n))
    # Every grant logged by its statement is in the history once, and nothing else is: matched
    # by backend and time (the grant's time lies within its statement).
    hist = defaultdict(list)
    for r in server["history"]:
        if r["rate"] and r["name"] == rate_name:
            hist[r["pid"]].append(r["claimed_at"])
    for v in hist.values():
        v.sort()
    log_ops = defaultdict(int)
    for g in server["grants"]:
        log_ops[(g["kind"], g["op"])] += 1
        if g["name"] != rate_name:
            continue
        times = hist.get(g["pid"], [])
        lo = bisect.bisect_left(times, g["s_at"])
        hi = bisect.bisect_right(times, g["c_at"])
        if hi - lo < g["permits"]:
            found.append(anomaly("grant-missing-in-history", op=g["op"], permits=g["permits"],
                                 found=hi - lo))
        del times[lo:lo + min(g["permits"], hi - lo)]
    for pid, times in hist.items():
        for t in times:
            found.append(anomaly("grant-not-logged", name=rate_name, pid=pid, at=t))
    for (kind, op), count in log_ops.items():
        if count > 1:
            found.append(anomaly("grant-logged-twice", op=op, grant_kind=kind))
    for c in data["calls"]:
        if c["f"] not in ("rate", "bucket"):
            continue
        logged = log_ops.get((c["f"], c["op"]), 0)
        if c["status"] == "ok" and c["v"] is not None and not logged:
            found.append(anomaly("acknowledged-grant-missing", op=c["op"], grant_kind=c["f"]))
        if logged and (c["status"] == "fail" or (c["status"] == "ok" and c["v"] is None)):
            found.append(anomaly("refused-grant-logged", op=c["op"], grant_kind=c["f"]))
    # Buckets keep no history: from the log, the grants of any stretch [s_a, max c] (in order of
    # their statements' starts) must fit burst + length x rate.
    b = cfg["bucket"]
    rate_us = b["n"] / (b["per"] * 1e6)
    logs = sorted((g for g in server["grants"] if g["name"] == bucket_name),
                  key=lambda g: (g["s_at"], g["c_at"]))
    total, max_c, low = 0, None, None
    for g in logs:
        start_term = total - rate_us * g["s_at"]  # P(a-1) - rate x s_a, with a = this grant
        low = start_term if low is None else min(low, start_term)
        total += g["permits"]
        max_c = g["c_at"] if max_c is None else max(max_c, g["c_at"])
        excess = (total - rate_us * max_c) - low
        if excess > b["burst"] + 1e-6:
            found.append(anomaly("bucket-over-rate", name=bucket_name, op=g["op"],
                                 over_by=round(excess - b["burst"], 3)))
    return found


CHECKS = [
    ("holders-client", "never more than n holders (client record)", check_holders_client),
    ("holders-server", "never more than n holders, no slot twice (server history)",
     check_holders_server),
    ("releases", "releases and renewals answered true were of live claims", check_releases),
    ("writes", "no stale write applied, no update lost, tokens never decrease", check_writes),
    ("claims-kept", "acknowledged claims are in the history, ended only by release or expiry",
     check_claims_kept),
    ("ids-after-restart", "ids after each restart above all ids before it",
     check_ids_after_restart),
    ("rates", "rate windows within n, buckets within burst + rate, grants logged once",
     check_rates),
]


def check_all(data):
    results = []
    for name, what, fn in CHECKS:
        try:
            found = fn(data)
        except Exception as e:  # a checker that breaks is a failure of the run, shown as such
            found = [anomaly("checker-crashed", error="%s: %s" % (type(e).__name__, e))]
        results.append({"check": name, "what": what, "anomalies": found})
    return results
